"""Fine-tuning a causal LM on Q&A blocks: ECGTrainer, its arguments, the model card."""
