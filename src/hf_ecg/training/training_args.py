"""``ECGTrainingArguments``: :class:`~transformers.TrainingArguments` plus what ECG-QALM training needs,
every field with help text so that ``HfArgumentParser`` and YAML configs work."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from transformers import TrainingArguments

from ..runtime.blocks import MENTION_LAYOUTS, default_mention_layout
from ..runtime.layout import LAYOUTS

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
            "help": "Training samples: 'qa' (ECG-QALM: one contextual Q&A sample per block, its question the tag "
            "the block ends with; default), 'qa-plan' (the same, each question also holding the tags still to come "
            "and the end of the sentence, so a block is written knowing how many entities are left: on JNLPBA's first "
            "186 sentences, three training seeds, 1-8 points fewer of the drawn tokens were drawn again than with qa "
            "at the same seed (means 29 and 34 percent), labels as good; no gain on 50 sentences; downstream F1 not "
            "measured yet, docs/results.md) or 'lm' "
            "(the paper's ECG-LM ablation: the whole template after the list of its entity tags).",
            "choices": list(LAYOUT_CHOICES),
        },
    )
    lora: bool = field(
        default=True,
        metadata={
            "help": "Train LoRA adapters (peft; the new tag tokens' embeddings too) instead of all weights: the "
            "default recipe, measured against full fine-tuning in docs/results.md (a better tagger from its data, "
            "half the tag pieces in its text). false: fine-tune every weight."
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
            "help": "Also train the generator to write the mentions of a sentence's entity slots (laid out as "
            "--mention-layout says: by default a row a slot, the last block then each slot's tag and mention up to "
            "it), so "
            "that generation writes "
            "new mentions in context (`hf-ecg generate`'s default for such a model) instead of recycling the "
            "training mention bank: on BC5CDR 45 and JNLPBA 186 a better tagger from the same templates "
            "(docs/results.md). false: blocks only (the paper's training)."
        },
    )
    mention_layout: str | None = field(
        default=None,
        metadata={
            "help": "How the mention samples show their slots. 'after-sentence' (the default; 'in-sentence' with "
            "layout 'lm'): a row a slot, the sentence's last block sample as the decoder writes it, then a "
            "tag/mention pair per slot up to this one (only its mention carries loss), so the writer goes on from "
            "the decoder's own last row and is fed about four ids a slot (on JNLPBA 186, ten times: mentions "
            "written in 0.47 of the templates' time against 0.91, 84 percent new against 82, a tagger 0.465 +- "
            "0.002 against 0.458 +- 0.002; on BC5CDR 45 its mentions in fixed templates gave a tagger of 0.566 "
            "+- 0.010 against 0.549 +- 0.001, but its own sets 0.539 and 0.522 against 0.554: on a corpus that "
            "small, where the tagger matters more than generation time, use 'in-sentence'; docs/results.md, "
            "seventeenth session)."
            " 'in-sentence': a row a slot, the sentence up to it with the mentions before it, a slot marker, "
            "the rest of the template (each slot's prompt holds the sentence again). 'after-template': a row "
            "a slot, the whole template, then the slots before it as tag/mention pairs. 'after-sentence' "
            "continues a Q&A block row, so it does not go with layout 'lm'.",
            "choices": list(MENTION_LAYOUTS),
        },
    )
    validation_split: float = field(
        default=0.1,
        metadata={
            "help": "Share of the training sentences held out as validation Q&A blocks when no validation corpus is "
            "given (0 = none). Their answer loss is logged at every evaluation, and the checkpoint with the lowest "
            "one is kept (load_best_model_at_end). Whole sentences are held out, so no held-out block has its "
            "sentence's other blocks in training."
        },
    )
    own_sentences: int | None = field(
        default=None,
        metadata={
            "help": "Train twice: after the first training the generator writes this many sentences, the whole ones "
            "are kept (no tag spelled, nothing forced or cut, no second sentence, complete) and it is trained again "
            "from the base model on the gold sentences and the templates of those (mention samples, held-out split "
            "and decoding rules stay the gold sentences'; the sentences are left in OUTPUT/own-sentences). "
            "Default: twice the training sentences, at least 400, for corpora under 500 sentences, else 0 (on "
            "BC5CDR's first 45 sentences 16 percent of the drawn tokens were drawn again instead of 41-43, on "
            "JNLPBA's first 186 13 instead of 38-39, with fewer second sentences and more new mentions, but a higher "
            "held-out loss on the gold sentences, and a second training about twice the first: docs/results.md). "
            "0: train once (the paper's training)."
        },
    )
    # Defaults that differ from TrainingArguments.
    learning_rate: float | None = field(
        default=None,
        metadata={
            "help": "Initial learning rate (AdamW). Default: 1e-3 with LoRA (the lowest held-out loss in 3 epochs on "
            "JNLPBA's first 186 sentences), 5e-4 for full fine-tuning (lora false)."
        },
    )
    num_train_epochs: float = field(
        default=3.0,
        metadata={
            "help": "Total number of training epochs (default 3, the epoch with the lowest held-out loss kept: with "
            "LoRA at 1e-3 that loss is lowest by epoch 2 on BC5CDR's and JNLPBA's first 45 to 186 sentences, and "
            "by epoch 1-2 of a 6- or 10-epoch run on their first 50, after which it rises (docs/results.md); "
            "JNLPBA 186 trains in about 12 minutes on 2 CPU cores)."
        },
    )
    per_device_train_batch_size: int = field(default=8, metadata={"help": "Batch size per device for training."})
    logging_steps: float = field(default=10, metadata={"help": "Log every X update steps."})
    train_sampling_strategy: str = field(
        default="group_by_length",
        metadata={
            "help": "Sampler for training: 'group_by_length' (default: batches of Q&A samples of similar length; "
            "block samples range from a few tokens to max_length, and random batches of 8 are about half "
            "padding), 'random', 'sequential' or 'batch_rebalance'.",
            "choices": ["random", "sequential", "group_by_length", "batch_rebalance"],
        },
    )

    @property
    def hub_repo_id(self) -> str:
        """The repo ``push_to_hub`` publishes to: ``hub_model_id``, else the output folder's name."""
        return self.hub_model_id or Path(self.output_dir).name

    def __post_init__(self) -> None:
        if self.layout not in LAYOUT_CHOICES:
            raise ValueError(f"layout must be one of {LAYOUT_CHOICES}, got {self.layout!r}")
        if self.mention_layout is None:
            self.mention_layout = default_mention_layout(self.layout)
        if self.mention_layout not in MENTION_LAYOUTS:
            raise ValueError(f"mention_layout must be one of {MENTION_LAYOUTS}, got {self.mention_layout!r}")
        if self.mention_samples and self.mention_layout == "after-sentence" and self.layout == "lm":
            raise ValueError("mention_layout 'after-sentence' continues a Q&A block row: use layout 'qa' or 'qa-plan'")
        if self.loss_on not in LOSS_CHOICES:
            raise ValueError(f"loss_on must be one of {LOSS_CHOICES}, got {self.loss_on!r}")
        if self.learning_rate is None:  # not given: the recipe's rate for the kind of training
            self.learning_rate = LORA_LEARNING_RATE if self.lora else FULL_LEARNING_RATE
        if not 0 <= self.validation_split < 1:
            raise ValueError(f"validation_split must be in [0, 1), got {self.validation_split}")
        if self.own_sentences is not None and self.own_sentences < 0:
            raise ValueError(f"own_sentences must be >= 0 (0: train once), got {self.own_sentences}")
        if self.max_length < 8:
            raise ValueError(f"max_length={self.max_length} is too short for a Q&A sample")
        # ECGTrainer._encode turns the Q&A text columns into exactly input_ids and labels, so there is nothing
        # for the Trainer to remove; a dataset given already tokenized passes through with the caller's columns.
        self.remove_unused_columns = False
        super().__post_init__()
        if self.device.type == "cpu":
            self.dataloader_pin_memory = False  # pinning needs an accelerator (torch warns otherwise)
