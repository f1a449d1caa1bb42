"""What a trained ECG model runs, and nothing else (see the module map in the README)."""
