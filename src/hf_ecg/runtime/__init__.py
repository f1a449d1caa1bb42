"""What a trained ECG model runs to write samples, and nothing else: the tag and block format, the prompt
layout, the model's :class:`ECGConfig`, the constrained decoders, mention filling and the pipeline.

These modules are *remote code*: a saved or pushed model folder carries them, joined into the one file
``ecg_pipeline.py`` by ``scripts/bundle_remote_code.py`` (a test keeps the committed file current), so that
``pipeline(model=repo, trust_remote_code=True)`` works without hf_ecg installed and a reader audits one file.
The join needs a flat package whose modules import nothing of hf_ecg outside it and define each name once; the
set is the pipeline and every module it reaches by a relative import, pinned below, and a test computes it the
way transformers does and compares. This ``__init__`` is not shipped.
"""

#: The modules a model folder's one code file joins (``pipeline.py`` and everything it imports), in import order
#: from the pipeline down.
REMOTE_CODE_MODULES = (
    "pipeline.py",
    "ecg_config.py",
    "engine.py",
    "filling.py",
    "mention_sources.py",
    "mentions.py",
    "text_files.py",
    "mention_writer.py",
    "mention_prompts.py",
    "mention_runner.py",
    "mention_rules.py",
    "decoding.py",
    "decoding_batched.py",
    "decoding_lm.py",
    "decoding_sequential.py",
    "decoding_base.py",
    "decoding_config.py",
    "decoding_constraint.py",
    "decoding_rules.py",
    "decoding_sampler.py",
    "char_boundaries.py",
    "sampler.py",
    "vocabulary.py",
    "decoding_cache.py",
    "decoding_scheduler.py",
    "decoding_slots.py",
    "layout.py",
    "tag_pieces.py",
    "words.py",
    "sketches.py",
    "blocks.py",
    "tags.py",
    "files.py",
)
