"""Labelled data on disk: corpora read in, Q&A block splits, the generated-dataset format."""
