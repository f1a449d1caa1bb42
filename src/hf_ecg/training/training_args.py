"""``ECGTrainingArguments``: :class:`~transformers.TrainingArguments` plus what ECG-QALM training needs,
every field with help text so that ``HfArgumentParser`` and YAML configs work."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from transformers import TrainingArguments

from ..runtime.blocks import MENTION_LAYOUTS, continues_block
from ..runtime.layout import LAYOUTS, layout_named
from ..synthetic.sketching import SketchConfig

__all__ = ["FULL_LEARNING_RATE", "LORA_LEARNING_RATE", "ECGTrainingArguments"]

LOSS_CHOICES = ("answer", "all")
LAYOUT_CHOICES = LAYOUTS
#: Default learning rates (``learning_rate`` left unset): LoRA adapters, and all weights.
LORA_LEARNING_RATE = 1e-3
FULL_LEARNING_RATE = 5e-4


@dataclass
class ECGTrainingArguments(TrainingArguments):
    """:class:`~transformers.TrainingArguments` plus what ECG-QALM needs.

    Every field has help text, so ``HfArgumentParser(ECGTrainingArguments)`` builds a full
    command line and ``parse_yaml_file`` reads YAML configs.
    """

    max_length: int = field(
        default=256,
        metadata={"help": "Longest sample in tokens; the context is truncated from the left to fit."},
    )
    loss_on: str = field(
        default="answer",
        metadata={
            "help": "Which tokens carry loss: 'answer' (only the answer block, default) or 'all' "
            "(the paper's plain whole-sequence loss).",
            "choices": list(LOSS_CHOICES),
        },
    )
    layout: str = field(
        default="qa",
        metadata={
            "help": "Training samples: 'qa' (ECG-QALM, a Q&A sample per block; default), 'qa-plan' (questions hold the "
            "tags to come), 'lm' (ECG-LM: the template after its tags) or 'sketch' (GeniusAug: questions are "
            "sketches). See docs/ablations.md.",
            "choices": list(LAYOUT_CHOICES),
        },
    )
    lora: bool = field(
        default=True,
        metadata={
            "help": "Train LoRA adapters (the new tag tokens' embeddings too) instead of all weights; false fine-tunes "
            "every weight. See docs/ablations.md."
        },
    )
    lora_r: int = field(default=16, metadata={"help": "LoRA rank."})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA scaling alpha."})
    lora_dropout: float = field(default=0.05, metadata={"help": "Dropout on the LoRA path."})
    lora_target_modules: list[str] | None = field(
        default=None,
        metadata={"help": "Module names to adapt with LoRA; default: every linear layer but the output head."},
    )
    merge_lora: bool = field(
        default=True,
        metadata={
            "help": "On the final save, merge LoRA adapters into the base weights so the folder loads with "
            "plain from_pretrained and pipeline(); checkpoints keep the adapters for resuming."
        },
    )
    save_mention_bank: bool = field(
        default=True,
        metadata={
            "help": "Write the training mention bank into ecg_config.json, so generation can fill tags the "
            "paper's way with no other input. It holds real mentions of the training corpus: set it to false "
            "for private data and give generation your own mentions instead."
        },
    )
    mention_samples: bool = field(
        default=True,
        metadata={
            "help": "Also train the generator to write each entity slot's mention in its sentence, so that generation "
            "writes new mentions instead of reusing the training bank; false trains blocks only (the paper's "
            "training)."
        },
    )
    mention_layout: str | None = field(
        default=None,
        metadata={
            "help": "How mention samples show their slots: 'after-sentence' (default; the writer goes on from the "
            "decoder's last row), 'in-sentence' (the default with layout 'lm') or 'after-template'. See "
            "docs/ablations.md.",
            "choices": list(MENTION_LAYOUTS),
        },
    )
    sketch_kept_share: float = field(
        default=0.2,
        metadata={
            "help": "With --layout sketch: the share of a sentence's words outside its mentions that its sketch "
            "keeps, in (0, 1) (default 0.2)."
        },
    )
    sketch_variants: int = field(
        default=3,
        metadata={
            "help": "With --layout sketch: sketches of each sentence, each keeping other key phrases (default 3)."
        },
    )
    validation_split: float = field(
        default=0.1,
        metadata={
            "help": "Share of the training sentences held out, whole, for validation when no validation "
            "corpus is given; "
            "the checkpoint with the lowest held-out loss is kept (0: none)."
        },
    )
    own_sentences: int | None = field(
        default=None,
        metadata={
            "help": "Train twice: the first generator writes this many sentences and is trained again on the gold ones "
            "and the whole ones it wrote (0: once). Default: twice the corpus, at least 400, under 500 sentences "
            "and without --max-steps; else 0."
        },
    )
    text_sentences: int | None = field(
        default=None,
        metadata={
            "help": "With --unlabelled and --dictionary: how many sentences of your text become templates. Default: "
            "twice the corpus, at least 400."
        },
    )
    # Defaults that differ from TrainingArguments.
    learning_rate: float | None = field(
        default=None,
        metadata={"help": "Initial AdamW learning rate. Default: 1e-3 with LoRA, 5e-4 for full fine-tuning."},
    )
    num_train_epochs: float = field(
        default=3.0,
        metadata={"help": "Training epochs; the epoch with the lowest held-out loss is kept (default 3)."},
    )
    per_device_train_batch_size: int = field(default=8, metadata={"help": "Batch size per device for training."})
    logging_steps: float = field(default=10, metadata={"help": "Log every X update steps."})
    train_sampling_strategy: str = field(
        default="group_by_length",
        metadata={
            "help": "Sampler for training: 'group_by_length' (default: batches of samples of similar length, less "
            "padding), 'random', 'sequential' or 'batch_rebalance'.",
            "choices": ["random", "sequential", "group_by_length", "batch_rebalance"],
        },
    )

    def own_sentences_asked(self, *, with_text: bool) -> int | None:
        """The own sentences asked: none by default with the user's text, or for a sketch generator (it learns from
        real sentences only); else ``own_sentences`` (``None``: the default count)."""
        unasked = with_text or layout_named(self.layout).sketch
        return 0 if unasked and self.own_sentences is None else self.own_sentences

    @property
    def hub_repo_id(self) -> str:
        """The repo ``push_to_hub`` publishes to: ``hub_model_id``, else the output folder's name."""
        return self.hub_model_id or Path(self.output_dir).name

    def __post_init__(self) -> None:
        if self.layout not in LAYOUT_CHOICES:
            raise ValueError(f"layout must be one of {LAYOUT_CHOICES}, got {self.layout!r}")
        try:  # the sketches' own check, at the start of a training
            SketchConfig(kept_share=self.sketch_kept_share)
        except ValueError as err:
            raise ValueError(f"sketch_kept_share: {err}") from None
        if self.sketch_variants < 1:
            raise ValueError(f"sketch_variants must be >= 1, got {self.sketch_variants}")
        if self.mention_layout is None:
            self.mention_layout = layout_named(self.layout).mention_layout
        if self.mention_layout not in MENTION_LAYOUTS:
            raise ValueError(f"mention_layout must be one of {MENTION_LAYOUTS}, got {self.mention_layout!r}")
        if self.mention_samples and continues_block(self.mention_layout) and not layout_named(self.layout).per_block:
            raise ValueError("mention_layout 'after-sentence' continues a Q&A block row: use layout 'qa' or 'qa-plan'")
        if self.loss_on not in LOSS_CHOICES:
            raise ValueError(f"loss_on must be one of {LOSS_CHOICES}, got {self.loss_on!r}")
        if self.learning_rate is None:  # not given: the recipe's rate for the kind of training
            self.learning_rate = LORA_LEARNING_RATE if self.lora else FULL_LEARNING_RATE
        if not 0 <= self.validation_split < 1:
            raise ValueError(f"validation_split must be in [0, 1), got {self.validation_split}")
        if self.own_sentences is not None and self.own_sentences < 0:
            raise ValueError(f"own_sentences must be >= 0 (0: train once), got {self.own_sentences}")
        if self.text_sentences is not None and self.text_sentences < 1:
            raise ValueError(f"text_sentences must be >= 1, got {self.text_sentences}")
        if self.max_length < 8:
            raise ValueError(f"max_length={self.max_length} is too short for a Q&A sample")
        if self.max_steps <= 0 and not self.num_train_epochs > 0:  # the Trainer would save an untrained model
            raise ValueError(
                f"num_train_epochs must be above 0, got {self.num_train_epochs} (--num-train-epochs; or give "
                "--max-steps)"
            )
        # ECGTrainer._encode turns the Q&A text columns into exactly input_ids and labels, so there is nothing
        # for the Trainer to remove; a dataset given already tokenized passes through with the caller's columns.
        self.remove_unused_columns = False
        super().__post_init__()
        if self.device.type == "cpu":
            self.dataloader_pin_memory = False  # pinning needs an accelerator (torch warns otherwise)
