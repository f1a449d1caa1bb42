"""Tiny real models for tests: a byte-level BPE tokenizer trained in a second and a 2-layer GPT-2."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

EOS = "<|endoftext|>"

TOY_CORPUS = """\
Aspirin\tB-Chemical
cures\tO
headache\tB-Disease
.\tO

Ibuprofen\tB-Chemical
relieves\tO
severe\tB-Disease
pain\tI-Disease
.\tO

Patients\tO
with\tO
fever\tB-Disease
received\tO
paracetamol\tB-Chemical
.\tO

No\tO
effect\tO
was\tO
seen\tO
.\tO
"""


def toy_corpus(path: Path, repeat: int = 1) -> Path:
    """Write the toy CoNLL corpus (``repeat`` times) to ``path``."""
    path.write_text((TOY_CORPUS + "\n") * repeat, encoding="utf-8")
    return path


def tiny_tokenizer(texts: Iterable[str] = (), vocab_size: int = 400) -> PreTrainedTokenizerFast:
    """A GPT-2-style byte-level BPE tokenizer trained on ``texts`` (plus the toy corpus)."""
    words = [line.split("\t")[0] for line in TOY_CORPUS.splitlines() if line]
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=[EOS], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    backend.train_from_iterator([" ".join(words), *texts] * 3, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token=EOS, pad_token=EOS, bos_token=EOS)


def tiny_gpt2(vocab_size: int, seed: int = 0, n_positions: int = 128) -> GPT2LMHeadModel:
    """A randomly initialised 2-layer GPT-2 (tied embeddings)."""
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=vocab_size,
        n_positions=n_positions,
        n_embd=32,
        n_layer=2,
        n_head=2,
        n_inner=64,
        bos_token_id=0,
        eos_token_id=0,
    )
    return GPT2LMHeadModel(config)


def save_tiny_model(directory: Path, n_positions: int = 256, dtype: torch.dtype = torch.float32) -> Path:
    """A tiny GPT-2 and its tokenizer saved as a model folder (for CLI and subprocess tests), with as many
    positions as ``hf-ecg train``'s default ``max_length`` (training refuses a base model with fewer); weights
    in ``dtype``."""
    tokenizer = tiny_tokenizer()
    tiny_gpt2(len(tokenizer), n_positions=n_positions).to(dtype).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def tiny_ecg_model(entity_types: Iterable[str] = ("Chemical", "Disease"), seed: int = 0, *, mention: bool = False):
    """An untrained tiny GPT-2 with the ECG tokens of ``entity_types`` added (and, with ``mention``, the mention
    samples' slot marker): (model, tokenizer, ECGConfig)."""
    from hf_ecg.modeling import add_ecg_tokens
    from hf_ecg.runtime.ecg_config import ECGConfig

    tokenizer = tiny_tokenizer()
    model = tiny_gpt2(len(tokenizer), seed=seed)
    add_ecg_tokens(tokenizer, model, list(entity_types), mention=mention)
    return model, tokenizer, ECGConfig(entity_types=list(entity_types), max_length=128)


def save_tiny_ecg_model(
    directory: Path, entity_types: Iterable[str] = ("Chemical", "Disease"), mentions: dict | None = None
) -> Path:
    """An untrained tiny ECG model saved as `hf-ecg train` writes it: weights, tokenizer and an
    ``ecg_config.json`` with corpus statistics (of the toy corpus) and a mention bank (``mentions``)."""
    from hf_ecg.data.corpus import read_conll
    from hf_ecg.data.statistics import CorpusStatistics
    from hf_ecg.runtime.mentions import MentionBank

    model, tokenizer, config = tiny_ecg_model(entity_types)
    directory.mkdir(parents=True, exist_ok=True)
    corpus = read_conll(toy_corpus(directory / "toy.tsv"))
    config.mention_bank = MentionBank.from_lists(mentions or {t: [t.lower()] for t in entity_types}).to_dict()
    config.corpus_statistics = CorpusStatistics.from_corpus(corpus).to_dict()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    config.save(directory)
    return directory


def save_tiny_bert(directory: Path, seed: int = 0, dtype: torch.dtype = torch.float32) -> Path:
    """A randomly initialised 2-layer BERT and a WordPiece tokenizer trained on the toy corpus, saved (weights in
    ``dtype``)."""
    from transformers import BertConfig, BertModel

    words = [line.split("\t")[0] for line in TOY_CORPUS.splitlines() if line]
    backend = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.decoder = decoders.WordPiece()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    trainer = trainers.WordPieceTrainer(vocab_size=200, special_tokens=specials)
    backend.train_from_iterator([" ".join(words)] * 3, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).to(dtype).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


#: The entity types and mentions of the generation tests' tiny model (conftest's ``tiny``, ``model_dir``, ``gen``).
GENERATION_TYPES = ("Chemical", "Disease", "Gene")
GENERATION_MENTIONS = {
    "Chemical": ["aspirin", "acetyl salicylic acid"],
    "Disease": ["fever", "severe pain"],
    "Gene": ["BRCA1"],
}
