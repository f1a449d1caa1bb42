"""The Hugging Face Hub: the model and dataset cards (rendered where the model and the data are written,
again at push) and the uploads."""
