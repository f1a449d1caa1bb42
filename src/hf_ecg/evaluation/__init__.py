"""Evaluation: how good synthetic data is (``quality``), how much it helps a tagger (``ner``), how right its labels
are (``labels``) and how fairly it names (``fairness``). The inputs are read by :mod:`hf_ecg.data.sources`."""
