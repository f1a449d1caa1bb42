"""Generation quality: synthetic sentences against the gold training sentences, in the same run.

Every measure is computed for the generated set and, where it makes sense, for the gold set too,
so that ratios can be reported (the paper reports perplexity and distinct-3 relative to gold):

- ``perplexity_*``: corpus perplexity of the sentences' text under a fixed reference LM (by
  default the offline base model, not the fine-tuned generator, which would flatter itself);
- ``distinct_3_*``: distinct 3-grams over all 3-grams (Li et al., 2016), on the token level;
- ``rouge_l_mean`` / ``rouge_l_max``: ROUGE-L F1 of each generated sentence to its nearest
  training sentence (regurgitation). Exact, kept fast on thousands × thousands by an upper bound
  from shared tokens that prunes most candidates;
- ``template_copy_rate``: share of generated templates (entities collapsed to tags) that are
  identical to a training template;
- ``rouge_l_mean_gold`` / ``rouge_l_max_gold`` / ``template_copy_rate_gold``: the same for each gold
  sentence against the *other* gold sentences (:func:`gold_self_report`), the level natural sentences
  of the corpus reach, to read the generated figures against;
- ``entity_type_tvd``: total variation distance between the entity-type distributions of the
  generated and the gold mentions (0 = the same distribution, 1 = disjoint).

Surface health, for the generated and the gold set alike (perplexity and distinct-3 do not see
fragments: docs/ablations.md):

- ``complete_*``: share of sentences that end like the gold sentences end (their last token is one
  of the punctuation tokens that end at least 1% of gold sentences, :func:`hf_ecg.runtime.words.sentence_endings`);
- ``short_*``: share under ``min_tokens`` tokens (5);
- ``repetition_*``: share with degenerate repetition, an n-gram (n ≤ 4) repeated 3 or more times in a row;
- ``second_sentence_*``: share holding a second sentence, a sentence ending followed by a capital, a
  number or an entity (``cells . The``, ``cells . 4 5 6``, ``cells . IM-9``;
  :func:`~hf_ecg.runtime.words.sentence_breaks`):
  text a sentence-split gold corpus almost never has, and which ``complete`` does not see;
- ``length_mean_*`` and ``length_ks``: mean sentence length in tokens, and the Kolmogorov–Smirnov
  distance between the generated and the gold length distributions (0 = the same, 1 = disjoint);
- ``blocks``, ``blocks_forced``, ``blocks_cut`` and ``blocks_forced_or_cut_share`` (when the rows
  carry the decoder's ``forced_tags`` / ``cut_blocks`` flags): blocks that ended anywhere but at the
  model's own choice of the requested tag;
- ``tag_pieces`` (when the rows carry the decoder's ``tag_pieces`` flag): share of samples whose ``O`` text
  spells a tag's name (``Dise``, ``ase``: :mod:`hf_ecg.runtime.tag_pieces`), an entity written without its label.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..runtime.blocks import tag_token
from ..runtime.tags import tags_to_spans
from ..runtime.words import has_repetition, sentence_breaks, sentence_endings

__all__ = [
    "block_health",
    "distinct_n",
    "entity_type_tvd",
    "gold_self_report",
    "has_repetition",
    "length_ks",
    "nearest_rouge_l",
    "perplexity",
    "quality_report",
    "quality_reports",
    "rouge_l",
    "surface_health",
    "template_copy_rate",
    "templates",
]

Sentence = Sequence[str]

#: The copy measures reported for gold against the other gold sentences too.
_SELF_MEASURES = ("rouge_l_mean", "rouge_l_max", "template_copy_rate")

#: Sentences shorter than this many tokens count as ``short``.
MIN_TOKENS = 5


def length_ks(lengths: Sequence[int], reference: Sequence[int]) -> float:
    """Kolmogorov–Smirnov distance between two length samples: the largest gap between their empirical CDFs."""
    if not lengths or not reference:
        return 0.0 if len(lengths) == len(reference) else 1.0
    a, b = Counter(lengths), Counter(reference)
    cdf_a = cdf_b = gap = 0.0
    for value in sorted(a.keys() | b.keys()):
        cdf_a += a[value] / len(lengths)
        cdf_b += b[value] / len(reference)
        gap = max(gap, abs(cdf_a - cdf_b))
    return gap


def surface_health(
    sentences: Sequence[Sentence],
    endings: Iterable[str],
    *,
    min_tokens: int = MIN_TOKENS,
    tags: Sequence[Sequence[str]] | None = None,
) -> dict[str, float]:
    """Shares of ``complete`` (last token in ``endings``), ``short`` (under ``min_tokens``),
    ``repetition`` (:func:`has_repetition`) and ``second_sentence`` (:func:`~hf_ecg.runtime.words.sentence_breaks`;
    ``tags``, the sentences' IOB2 tags, mark where entities begin) sentences, and their mean ``length_mean``
    in tokens."""
    endings = set(endings)
    count = len(sentences) or 1
    starts = [{i for i, tag in enumerate(row) if tag.startswith("B-")} for row in tags or [()] * len(sentences)]
    breaks = [bool(sentence_breaks(tokens, endings, at)) for tokens, at in zip(sentences, starts, strict=True)]
    return {
        "complete": sum(bool(tokens) and tokens[-1] in endings for tokens in sentences) / count,
        "short": sum(len(tokens) < min_tokens for tokens in sentences) / count,
        "repetition": sum(has_repetition(list(tokens)) for tokens in sentences) / count,
        "second_sentence": sum(breaks) / count,
        "length_mean": sum(map(len, sentences)) / count,
    }


def block_health(entities: Sequence[Sequence[str]], forced: Sequence[int], cut: Sequence[int]) -> dict[str, float]:
    """Blocks of generated samples (entities + 1 each) and how many ended anywhere but at the model's own
    choice of the requested tag: ``blocks_forced`` at the length limit, ``blocks_cut`` by another stop."""
    blocks = sum(len(e) + 1 for e in entities)
    forced_total, cut_total = int(sum(forced)), int(sum(cut))
    return {
        "blocks": blocks,
        "blocks_forced": forced_total,
        "blocks_cut": cut_total,
        "blocks_forced_or_cut_share": (forced_total + cut_total) / blocks if blocks else 0.0,
    }


def distinct_n(sentences: Iterable[Sentence], n: int = 3) -> float:
    """Distinct n-grams divided by all n-grams, over the whole set (0.0 when there is no n-gram)."""
    seen: set[tuple[str, ...]] = set()
    total = 0
    for tokens in sentences:
        grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
        seen.update(grams)
        total += len(grams)
    return len(seen) / total if total else 0.0


def _lcs(a: Sentence, b: Sentence) -> int:
    """The length of the longest common subsequence of ``a`` and ``b``, bit-parallel over ``b`` (Allison and Dix;
    Hyyrö's form): one addition, subtraction and three masks per token of ``a``, on integers of ``len(b)`` bits."""
    where: dict[Any, int] = {}
    for j, token in enumerate(b):
        where[token] = where.get(token, 0) | (1 << j)
    full = (1 << len(b)) - 1
    row = full
    for token in a:
        matched = row & where.get(token, 0)
        row = ((row + matched) | (row - matched)) & full
    return len(b) - row.bit_count()


def rouge_l(candidate: Sentence, reference: Sentence) -> float:
    """ROUGE-L F1 (beta = 1) of two token sequences: ``2·LCS / (len(candidate) + len(reference))``."""
    if not candidate or not reference:
        return 0.0
    return 2 * _lcs(candidate, reference) / (len(candidate) + len(reference))


def nearest_rouge_l(
    generated: Sequence[Sentence], reference: Sequence[Sentence], *, leave_one_out: bool = False
) -> list[float]:
    """For each generated sentence, its highest ROUGE-L F1 against any reference sentence (exact);
    ``leave_one_out`` (``generated`` is ``reference``): against any *other* reference sentence.

    The LCS of two sentences is at most the size of their token multiset intersection, so
    ``2·overlap / (len(a) + len(b))`` bounds ROUGE-L from above. Candidates that share tokens are
    ranked by that bound and scored exactly only while the bound can still beat the best score.
    """
    index: dict[str, list[tuple[int, int]]] = defaultdict(list)  # token -> [(reference id, count)]
    for j, tokens in enumerate(reference):
        for token, count in Counter(tokens).items():
            index[token].append((j, count))
    best_scores = []
    for i, tokens in enumerate(generated):
        overlap: Counter[int] = Counter()
        for token, count in Counter(tokens).items():
            for j, ref_count in index.get(token, ()):
                overlap[j] += min(count, ref_count)
        if leave_one_out:
            overlap.pop(i, None)
        bounds = sorted(
            ((2 * shared / (len(tokens) + len(reference[j])), j) for j, shared in overlap.items()), reverse=True
        )
        best = 0.0
        for bound, j in bounds:
            if bound <= best:
                break
            best = max(best, rouge_l(tokens, reference[j]))
        best_scores.append(best)
    return best_scores


def templates(rows: Iterable[tuple[Sentence, Sequence[str]]]) -> list[str]:
    """The template of each ``(tokens, IOB2 tags)``: the sentence with each entity collapsed to its tag."""
    out = []
    for tokens, tags in rows:
        spans, _ = tags_to_spans(list(tags), "IOB2")
        words = list(tokens)
        for span in reversed(spans):
            words[span.start : span.end] = [tag_token(span.label)]
        out.append(" ".join(words))
    return out


def template_copy_rate(generated: Sequence[str], reference: Iterable[str]) -> float:
    """Share of ``generated`` templates that appear verbatim among the ``reference`` templates."""
    known = set(reference)
    return sum(t in known for t in generated) / len(generated) if generated else 0.0


def entity_type_tvd(generated: Counter[str] | dict[str, int], reference: Counter[str] | dict[str, int]) -> float:
    """Total variation distance between two entity-type count distributions."""
    total_g, total_r = sum(generated.values()), sum(reference.values())
    if not total_g or not total_r:
        return 0.0 if total_g == total_r else 1.0
    types = set(generated) | set(reference)
    return 0.5 * sum(abs(generated.get(t, 0) / total_g - reference.get(t, 0) / total_r) for t in types)


def perplexity(texts: Sequence[str], model: Any, tokenizer: Any, *, batch_size: int = 16) -> float:
    """Corpus perplexity of ``texts`` under a causal LM: ``exp(total NLL / scored tokens)``.

    Each text is scored after a start token (BOS, else EOS), so its first token counts too.
    """
    import torch

    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else start
    limit = getattr(model.config, "max_position_embeddings", 1024)
    encoded = [[start, *tokenizer(t, add_special_tokens=False)["input_ids"]][:limit] for t in texts]
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))  # similar lengths share a batch
    total_nll, total_tokens = 0.0, 0
    model.eval()
    with torch.inference_mode():
        for i in range(0, len(order), batch_size):
            batch = [encoded[k] for k in order[i : i + batch_size]]
            width = max(map(len, batch))
            ids = torch.tensor([row + [pad] * (width - len(row)) for row in batch], device=model.device)
            mask = torch.tensor([[1] * len(row) + [0] * (width - len(row)) for row in batch], device=model.device)
            logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
            targets = ids[:, 1:]
            nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
            scored = mask[:, 1:].bool()
            total_nll += nll[scored].sum().item()
            total_tokens += int(scored.sum())
    return math.exp(total_nll / total_tokens) if total_tokens else float("nan")


def quality_report(
    generated: Sequence[tuple[Sentence, Sequence[str]]],
    reference: Sequence[tuple[Sentence, Sequence[str]]],
    *,
    ref_model: str | None = "smollm2-135m",
    batch_size: int = 16,
    flags: Mapping[str, Sequence[Any]] | None = None,
) -> dict[str, float]:
    """All the measures for ``(tokens, IOB2 tags)`` rows of a generated and a gold set.

    ``ref_model`` names the reference LM for perplexity (an alias such as ``smollm2-135m``, a Hub
    id or a folder); ``None`` skips perplexity. ``flags``, the generated dataset's ``entities``,
    ``forced_tags`` and ``cut_blocks`` columns, adds the block counts (:func:`block_health`).
    """
    return quality_reports(
        {"generated": generated},
        reference,
        ref_model=ref_model,
        batch_size=batch_size,
        flags=None if flags is None else {"generated": flags},
    )["generated"]


def quality_reports(
    generated: Mapping[str, Sequence[tuple[Sentence, Sequence[str]]]],
    reference: Sequence[tuple[Sentence, Sequence[str]]],
    *,
    ref_model: str | None = "smollm2-135m",
    batch_size: int = 16,
    flags: Mapping[str, Mapping[str, Sequence[Any]]] | None = None,
) -> dict[str, dict[str, float]]:
    """:func:`quality_report` for several generated sets (by name) against one gold set: the reference
    LM is loaded once and the gold set scored once, whatever the number of sets. ``flags[name]`` holds
    a set's ``entities``, ``forced_tags`` and ``cut_blocks`` columns, where it has them."""
    if not reference or not generated or not all(generated.values()):
        raise ValueError("quality needs at least one generated and one reference sentence")
    ref_tokens = [list(tokens) for tokens, _ in reference]
    scorer = None
    if ref_model is not None:
        from ..modeling import load_causal_lm

        model, tokenizer = load_causal_lm(ref_model)

        def scorer(token_lists: list[list[str]]) -> float:
            return perplexity([" ".join(t) for t in token_lists], model, tokenizer, batch_size=batch_size)

        ppl_gold = scorer(ref_tokens)
    d_gold = distinct_n(ref_tokens, 3)
    ref_templates = templates(reference)
    ref_types = _type_counts(reference)
    endings = sentence_endings(ref_tokens)
    gold_health = surface_health(ref_tokens, endings, tags=[tags for _, tags in reference])
    ref_lengths = [len(t) for t in ref_tokens]
    own = gold_self_report(reference) if len(reference) > 1 else None
    reports = {}
    for name, rows in generated.items():
        gen_tokens = [list(tokens) for tokens, _ in rows]
        report: dict[str, float] = {"num_generated": len(rows), "num_reference": len(reference)}
        if scorer is not None:
            ppl_gen = scorer(gen_tokens)
            report.update(perplexity_generated=ppl_gen, perplexity_gold=ppl_gold, perplexity_ratio=ppl_gen / ppl_gold)
        d_gen = distinct_n(gen_tokens, 3)
        report.update(distinct_3_generated=d_gen, distinct_3_gold=d_gold)
        report["distinct_3_ratio"] = d_gen / d_gold if d_gold else float("nan")
        nearest = nearest_rouge_l(gen_tokens, ref_tokens)
        report.update(rouge_l_mean=sum(nearest) / len(nearest), rouge_l_max=max(nearest))
        report["template_copy_rate"] = template_copy_rate(templates(rows), ref_templates)
        if own is not None:
            report.update({f"{measure}_gold": own[measure] for measure in _SELF_MEASURES})
        report["entity_type_tvd"] = entity_type_tvd(_type_counts(rows), ref_types)
        for measure, value in surface_health(gen_tokens, endings, tags=[tags for _, tags in rows]).items():
            report[f"{measure}_generated"], report[f"{measure}_gold"] = value, gold_health[measure]
        report["length_ks"] = length_ks([len(t) for t in gen_tokens], ref_lengths)
        columns = (flags or {}).get(name)
        if columns is not None and "forced_tags" in columns:
            cut = columns.get("cut_blocks") or [0] * len(columns["forced_tags"])
            report.update(block_health(columns["entities"], columns["forced_tags"], cut))
        if columns is not None and "tag_pieces" in columns:
            report["tag_pieces"] = sum(n > 0 for n in columns["tag_pieces"]) / max(len(columns["tag_pieces"]), 1)
        reports[name] = report
    return reports


def gold_self_report(reference: Sequence[tuple[Sentence, Sequence[str]]]) -> dict[str, float]:
    """The copy measures of :func:`quality_reports` for the gold set itself, each gold sentence against the
    *other* gold sentences (leave one out): how close natural sentences of the corpus come to one another,
    the level to read a generated set's ``rouge_l_*`` and ``template_copy_rate`` against."""
    if len(reference) < 2:
        raise ValueError("the gold self-report needs at least two gold sentences")
    tokens = [list(words) for words, _ in reference]
    nearest = nearest_rouge_l(tokens, tokens, leave_one_out=True)
    shared = Counter(templates(reference))
    return {
        "num_reference": len(reference),
        "distinct_3": distinct_n(tokens, 3),
        "rouge_l_mean": sum(nearest) / len(nearest),
        "rouge_l_max": max(nearest),
        "template_copy_rate": sum(count for count in shared.values() if count > 1) / len(reference),
        "entity_type_tvd": 0.0,
    }


def _type_counts(rows: Sequence[tuple[Sentence, Sequence[str]]]) -> Counter[str]:
    return Counter(tag[2:] for _, tags in rows for tag in tags if tag.startswith("B-"))
