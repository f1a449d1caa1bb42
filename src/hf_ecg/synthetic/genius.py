"""The sketch family (GeniusAug) as a :class:`~hf_ecg.synthetic.sample_source.SampleSource`: a sketch generator
(trained with ``--layout sketch``) writes a new sentence around each sketch of a labelled corpus's sentences (the
gold by default), cycled over the sample ids, and its tags are filled with the sketch's own mentions (or, given
``mentions``, from any mention source ECG-QALM's slots take).

The decoder forces the sketch's tags in order, so each mention is where a tag of its type stands: its label is
exact by construction. Each sample records, beside the decoder's columns, how much of its source sentence it shares
(:func:`source_overlap`): the longest run of words outside the mentions shared with it, and the share of its words
outside the mentions that the source lacks.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..data.corpus import Corpus
from ..data.dataset_format import FAMILY_COLUMNS, TRANSFER_COLUMNS, dataset_features, ner_label_names
from ..data.groups import Balance
from ..data.manifest import GenerationManifest, MentionsRecord
from ..data.silver import silver_record
from ..runtime.blocks import tag_label
from ..runtime.decoding import DecodingConfig
from ..runtime.decoding_config import DecodedTemplate, ShardSeeds
from ..runtime.engine import SampleEngine, SampleRun
from ..runtime.mention_sources import MentionOrigin, Mentions
from ..runtime.mention_writer import WrittenMentions
from ..runtime.mentions import MentionBank
from ..runtime.sketches import Sketch
from ..runtime.vocabulary import VocabularyTables
from ..runtime.words import DEFAULT_SENTENCE_ENDINGS, has_repetition, sentence_breaks
from .balance import balance_setting
from .run_config import DatasetRunConfig
from .sample_source import Progress
from .sketching import PhraseScorer, SketchConfig, SketchedSentence, excluding, mixed_sketch, sketch_of
from .transfer import TargetDomain, TransferScore, TransferSelection, filled_text

__all__ = ["GENIUS", "CandidateScore", "SketchSource", "candidate_score", "generate_from_sketches", "source_overlap"]

#: The family's name in a manifest's ``method``.
GENIUS = "geniusaug"


def source_overlap(sample: Sequence[str], source: Sequence[str]) -> tuple[int, float]:
    """Of two templates' tokens (tags in place of mentions): the longest run of words outside the tags both hold in a
    row, and the share of ``sample``'s words outside the tags that ``source`` does not hold (case aside)."""
    words = [w.lower() if tag_label(w) is None else None for w in sample]
    other = [w.lower() if tag_label(w) is None else None for w in source]
    longest = 0
    previous = [0] * (len(other) + 1)
    for a in words:
        current = [0] * (len(other) + 1)
        for j, b in enumerate(other, 1):
            if a is not None and a == b:
                current[j] = previous[j - 1] + 1
                longest = max(longest, current[j])
        previous = current
    own = [w for w in words if w is not None]
    known = {w for w in other if w is not None}
    return longest, (sum(w not in known for w in own) / len(own) if own else 0.0)


@dataclass(frozen=True, order=True)
class CandidateScore:
    """How well a sentence written for a sketch reads, compared in this order (a higher key is better): whether it
    is whole (ends as the training sentences end; no tag forced, no block cut, no loop, no second sentence), then the
    share of its words outside the tags that are odd (a number, or letters no known word spells: ``asewareness``;
    fewer is better), then whether it keeps the sketch's words where the sketch keeps them
    (:meth:`~hf_ecg.runtime.sketches.Sketch.fits`). A tagger learns from the words around the mentions, so reading
    well comes before keeping the sketch."""

    whole: bool
    keeps_sketch: bool
    odd_share: float

    def key(self) -> tuple[bool, float, bool]:
        return self.whole, -self.odd_share, self.keeps_sketch


def candidate_score(
    decoded: DecodedTemplate,
    sketch: Sketch,
    known_words: frozenset[str],
    endings: Sequence[str],
    words: Sequence[str] | None = None,
) -> CandidateScore:
    """The :class:`CandidateScore` of ``decoded``, a template written for ``sketch``; ``known_words`` lower-cased
    (the tokenizer's whole words and the sketched corpus's), ``endings`` the training sentences' last tokens. The odd
    words are counted among ``words`` (the filled sample's tokens, its mentions' words among them: an invented name
    counts) or, without them, among the template's words outside its tags."""
    tokens = decoded.template.tokens
    tags = {i for i, token in enumerate(tokens) if tag_label(token) is not None}
    if words is None:
        words = [w for i, w in enumerate(tokens) if i not in tags]
    whole = (
        decoded.complete
        and not decoded.forced_tags
        and not decoded.cut_blocks
        and not has_repetition(tokens)
        and not sentence_breaks(tokens, endings, tags)
    )
    odd = sum(any(c.isdigit() for c in w) or (w.isalpha() and w.lower() not in known_words) for w in words)
    return CandidateScore(whole, sketch.fits(decoded.template), round(odd / len(words), 6) if words else 0.0)


@dataclass
class SketchSource:
    """What a GeniusAug run writes with: the sketch generator, the sketches of ``data``'s sentences (with their
    mentions and source templates) and the engine run that decodes them."""

    model: str
    dtype: str
    engine_run: SampleRun
    data: str
    sketches: list[SketchedSentence]
    config: SketchConfig
    own_mentions: bool = True
    known_words: frozenset[str] = frozenset()  # lower-cased: the tokenizer's whole words and the sketched corpus's
    method: str = GENIUS
    transfer: TransferSelection | None = None  # a target domain's selection among the candidates

    @property
    def endings(self) -> Sequence[str]:
        return self.ecg_config.sentence_endings or DEFAULT_SENTENCE_ENDINGS

    @classmethod
    def load(
        cls,
        model: Any,
        data: Corpus,
        config: SketchConfig,
        mentions: Mentions | None,
        decoding: DecodingConfig,
        run: DatasetRunConfig,
        device: Any,
        target: TargetDomain | None = None,
    ) -> SketchSource:
        """Check that ``model`` is a sketch generator of ``data``'s types, score ``data``'s key phrases (never a
        word of ``data``'s unknown ones), fit the ``target`` domain's selection, load the generator."""
        import torch

        from ..modeling import inference_dtype, load_ecg_model
        from ..runtime.ecg_config import ECGConfig

        ecg_config = ECGConfig.from_pretrained(model)  # refused before the weights load
        if not ecg_config.prompt_layout.sketch:
            raise ValueError(
                f"{model} is not a sketch generator (layout {ecg_config.layout!r}): train one with --layout sketch"
            )
        sentences = [s for s in data if s.spans]
        if not sentences:
            raise ValueError(f"{data.name}: no sentence with an entity to sketch")
        unknown = sorted(set(data.entity_types) - set(ecg_config.entity_types))
        if unknown:
            raise ValueError(
                f"{data.name} has types {unknown} the generator does not write ({', '.join(ecg_config.entity_types)})"
            )
        scorer = PhraseScorer(config)
        scored = [
            excluding(x, s)
            for x, s in zip(scorer.score([(s.tokens, s.spans) for s in sentences]), sentences, strict=True)
        ]
        sketches = [(sketch_of(x, config.kept_share), x.mentions, x.template.tokens) for x in scored]
        transfer = None if target is None else TransferSelection(scorer, target, [s.tokens for s in data])
        model_obj, tokenizer, ecg_config = load_ecg_model(model, trust_remote_code=run.trust_remote_code)
        dtype = inference_dtype(run.dtype, device)
        model_obj.to(device, getattr(torch, dtype))
        own = mentions is None
        engine_run = SampleEngine(model_obj, tokenizer, ecg_config).run(
            "random" if own else mentions, decoding=decoding, corpus_bank=MentionBank.from_sentences(data)
        )
        vocabulary = engine_run.vocabulary or VocabularyTables.of(tokenizer)
        known = vocabulary.words | {word.lower() for s in data for word in s.tokens}
        return cls(str(model), dtype, engine_run, data.name, sketches, config, own, frozenset(known), transfer=transfer)

    @property
    def ecg_config(self) -> Any:
        return self.engine_run.ecg_config

    @property
    def entity_types(self) -> list[str]:
        return list(self.ecg_config.entity_types)

    @property
    def training_bank(self) -> MentionBank | None:
        return None  # the sketch's own mentions are its source's: no novelty figure

    @property
    def redraw_budget(self) -> float | None:
        return self.engine_run.decoding.redraw_budget

    @property
    def writes_mentions(self) -> bool:
        return not self.own_mentions and self.engine_run.writer is not None

    def manifest(
        self, num_samples: int, run: DatasetRunConfig, seed: int, silver: Corpus | None, balance: Balance | None
    ) -> GenerationManifest:
        """The run's settings: the sketches' source and kept share, the generator and its decoding."""
        from ..modeling import model_fingerprint

        return GenerationManifest(
            method=self.method,
            model=self.model,
            model_fingerprint=model_fingerprint(self.model),
            num_samples=num_samples,
            samples_per_shard=run.samples_per_shard,
            seed=seed,
            mentions=None
            if self.own_mentions
            else MentionsRecord.from_mentions(self.engine_run.mentions, self.engine_run.bank, False),
            decoding=self.engine_run.decoding.recorded(),
            dtype=self.dtype,
            entity_types=self.entity_types,
            label_names=ner_label_names(self.ecg_config.entity_types, run.label_names or self.ecg_config.label_names),
            settings={
                "sketches": self.data,
                "sketched_sentences": len(self.sketches),
                "kept_share": self.config.kept_share,
                "candidates_per_sketch": self.config.candidates_per_sketch,
                "mixup_share": self.config.mixup_share,
                "mentions": "sketch" if self.own_mentions else "given",
                **({} if self.transfer is None else {"target": self.transfer.record()}),
            },
            silver=None if silver is None else silver_record(silver, silver.name),
            balance=None if balance is None else balance_setting(balance, self.ecg_config.entity_types),
        )

    def features(self, label_names: Sequence[str]) -> Any:
        """Every column, the decoder's statistics included, and each sample's overlap with its source sentence."""
        import datasets

        features = dataset_features(self.ecg_config.entity_types, label_names)
        columns = {**FAMILY_COLUMNS, **(TRANSFER_COLUMNS if self.transfer else {})}
        features.update({name: datasets.Value(dtype) for name, dtype in columns.items()})
        return features

    def shards_written_together(self, samples_per_shard: int) -> int:
        return 1

    def _sketches_of(self, ids: range, rng: random.Random) -> list[SketchedSentence]:
        """The sketches of samples ``ids``: sentence ``i mod n``'s, or with ``mixup_share`` that sketch mixed with
        another sentence's (:func:`~.sketching.mixed_sketch`; the draws from ``rng``, the shard's)."""
        n, share = len(self.sketches), self.config.mixup_share
        chosen = []
        for i in ids:
            sketched = self.sketches[i % n]
            if share and n > 1 and rng.random() < share:
                other = (i % n + 1 + rng.randrange(n - 1)) % n  # any sentence but its own
                sketched = mixed_sketch(sketched, self.sketches[other], rng)
            chosen.append(sketched)
        return chosen

    def shard_rows(
        self, shards: Sequence[tuple[range, ShardSeeds]], progress: Progress
    ) -> tuple[list[list[dict[str, Any]]], WrittenMentions | None]:
        """Each shard's samples: its sketches decoded, their tags filled with the sketches' own mentions (or from the
        mention source), each sample's overlap with its source sentence recorded."""
        rows, written_all = [], WrittenMentions()
        k = self.config.candidates_per_sketch
        for ids, seeds in shards:
            chosen = self._sketches_of(ids, random.Random(seeds.entities))
            asked = [sketched for sketched in chosen for _ in range(k)]
            written, _ = self.engine_run.templates([sketch for sketch, _, _ in asked], seeds, _per_sample(progress, k))
            rng = random.Random(seeds.mentions)
            if self.own_mentions:
                candidates = [
                    self.engine_run.filler.fill(d, rng, list(m), [MentionOrigin.SKETCH.value] * len(m))
                    for d, (_, m, _) in zip(written, asked, strict=True)
                ]
            else:  # every candidate's mentions are written: an invented name makes a candidate worse
                candidates, mentions_written = self.engine_run.fill(written, rng, seeds.written_mentions)
                if mentions_written is not None:
                    written_all.add(mentions_written)
            scores = [
                candidate_score(d, sketch, self.known_words, self.endings, row["tokens"])
                for d, (sketch, _, _), row in zip(written, asked, candidates, strict=True)
            ]
            overlaps = [
                source_overlap(d.template.tokens, source) for d, (_, _, source) in zip(written, asked, strict=True)
            ]
            keys, transfer = [score.key() for score in scores], None
            if self.transfer is not None:
                transfer = self._transfer_scores(written, asked, candidates, scores, overlaps)
                keys = [t.key(self.transfer.target.vocabulary_first) for t in transfer]
            # the best of each sample's k candidates, the first of equals
            best = [max(range(j * k, j * k + k), key=keys.__getitem__) for j in range(len(chosen))]
            filled = [candidates[c] for c in best]
            for row, c, (sketch, _, _) in zip(filled, best, chosen, strict=True):
                d = written[c]
                if d.entities != sketch.entity_types:  # forced by the decoder: never, but never unchecked
                    raise RuntimeError(f"a sample of sketch {sketch} holds the entities {d.entities}")
                row["source_shared_run"], row["source_new_share"] = overlaps[c]
                row["whole"], row["keeps_sketch"] = scores[c].whole, scores[c].keeps_sketch
                row["sketch"] = str(sketch)
                if transfer is not None:
                    row["target_likeness"], row["adequacy"] = transfer[c].style, transfer[c].adequacy
            rows.append(filled)
        return rows, (written_all if self.writes_mentions else None)

    def _transfer_scores(
        self,
        written: Sequence[DecodedTemplate],
        asked: Sequence[SketchedSentence],
        candidates: Sequence[dict[str, Any]],
        scores: Sequence[CandidateScore],
        overlaps: Sequence[tuple[int, float]],
    ) -> list[TransferScore]:
        """The target domain's :class:`~.transfer.TransferScore` of each candidate."""
        assert self.transfer is not None
        return self.transfer.scores(
            [" ".join(row["tokens"]) for row in candidates],
            [[w for w in d.template.tokens if tag_label(w) is None] for d in written],
            [filled_text(source, mentions) for _, mentions, source in asked],
            [score.whole for score in scores],
            [score.odd_share for score in scores],
            [new for _, new in overlaps],
        )


def _per_sample(progress: Progress, k: int) -> Progress:
    """``progress`` told of samples when a decoder reports candidates, ``k`` a sample."""
    done = [0]

    def report(n: int, budget: Any) -> None:
        before = done[0] // k
        done[0] += n
        progress(done[0] // k - before, budget)

    return report


def generate_from_sketches(
    model: str | Any,
    output_dir: str | Any,
    num_samples: int,
    *,
    sketches: Corpus,
    config: SketchConfig | None = None,
    mentions: Mentions | None = None,
    seed: int = 0,
    decoding: DecodingConfig | None = None,
    run: DatasetRunConfig | None = None,
    silver: Corpus | None = None,
    target: TargetDomain | None = None,
) -> Any:
    """Write ``num_samples`` sentences of a sketch generator (``model``, trained with ``--layout sketch``) around
    the sketches of ``sketches``' sentences (those with an entity, cycled over the ids) into ``output_dir``, with
    the one writer (:func:`~hf_ecg.synthetic.writer.write_samples`); their tags hold the sketches' own mentions
    unless ``mentions`` is given. ``sketches`` may be another domain's labelled corpus, its types renamed to the
    model's (:func:`~hf_ecg.data.type_map.map_types`); with ``target`` (the target domain's text), each sketch's
    candidates are chosen by how target-like they read (:mod:`~hf_ecg.synthetic.transfer`). ``ValueError`` before
    anything is written for a model that is not a sketch generator, a corpus with no entity or with a type the model
    does not write."""
    from pathlib import Path

    from accelerate import PartialState

    from .writer import prepare_folder, write_samples

    run = run or DatasetRunConfig()
    shards = prepare_folder(Path(output_dir), num_samples, run)
    source = SketchSource.load(
        model,
        sketches,
        config or SketchConfig(),
        mentions,
        decoding or DecodingConfig(),
        run,
        PartialState().device,
        target,
    )
    return write_samples(source, shards, seed=seed, run=run, silver=silver)
