"""Balanced filling: a finished set's mentions of one type refilled so that each group of a protected attribute
gets its share (equal unless given), whatever the generator and its training sentences favour.

The groups are dealt mention by mention, in sample-id order, by the largest lag behind each group's share
(:func:`deal_groups`): after any number of mentions each group's count is within one of its share, so the whole
set reaches the shares asked within one mention per group. Each mention becomes a name of its group drawn from
the user's :class:`~hf_ecg.data.groups.GroupTable` (a seeded draw); tokens, tags, text, spans and
``mention_sources`` (``groups``) are rewritten shard by shard, each shard replaced whole, while the run's shards
are still unfinished: a run killed while it balances is no dataset, and its resume balances it whole.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..data.groups import Balance, GroupTable
from ..runtime.mention_sources import MentionOrigin
from ..runtime.mentions import MentionBank
from ..runtime.tags import Span, replace_mention, tags_to_spans, text_spans

__all__ = ["balance_setting", "balance_shards", "bank_groups", "deal_groups"]


def deal_groups(count: int, shares: dict[str, float]) -> list[str]:
    """The group of each of ``count`` mentions: each next one goes to the group furthest behind its share (ties in
    the order of ``shares``), so every prefix has each group within one of its share."""
    dealt = dict.fromkeys(shares, 0)
    order = []
    for k in range(1, count + 1):
        group = max(shares, key=lambda g: shares[g] * k - dealt[g])
        dealt[group] += 1
        order.append(group)
    return order


def _rewrite(
    row: dict[str, Any],
    tags: list[str],
    spans: list[Span],
    names: list[str],
    table: GroupTable,
    groups: Iterator[str],
    rng: random.Random,
) -> None:
    """Refill ``row``'s mentions of ``table``'s type (``spans`` over its IOB2 ``tags``) with names of the next
    ``groups``, each recorded as drawn from the group table."""
    sources = list(row.get("mention_sources") or [])
    drawn = [(i, s, table.draw(next(groups), rng)) for i, s in enumerate(spans) if s.label == table.entity_type]
    tokens = list(row["tokens"])
    for index, span, words in reversed(drawn):  # from the right: the spans before keep their places
        tokens, tags = replace_mention(tokens, tags, span, words)
        if index < len(sources):
            sources[index] = MentionOrigin.GROUPS.value
    row["tokens"], row["ner_tags"] = tokens, [names.index(tag) for tag in tags]
    if "text" in row:
        row["text"] = " ".join(tokens)
    if "spans" in row:
        row["spans"] = text_spans(tokens, tags_to_spans(tags, "IOB2")[0])
    if "mention_sources" in row:
        row["mention_sources"] = sources


def balance_shards(shards: Sequence[Path], balance: Balance, seed: int) -> dict[str, int]:
    """Refill the mentions of the balanced type in ``shards`` (a run's shards, in id order; see the module); returns
    each group's count reached. Run again over the same shards it writes the same rows, so a run killed while it
    balances is balanced whole when it resumes."""
    import datasets
    import pyarrow.parquet as pq

    table = balance.table
    loaded = [datasets.Dataset(pq.read_table(shard)) for shard in shards]
    names = loaded[0].features["ner_tags"].feature.names if loaded else []
    rows = [sorted(part.to_list(), key=lambda row: row["id"]) for part in loaded]
    tagged = [[_tagged(row, names) for row in part] for part in rows]  # each row's IOB2 tags and spans, read once
    total = sum(span.label == table.entity_type for part in tagged for _, spans in part for span in spans)
    dealt = deal_groups(total, balance.asked)
    rng = random.Random(f"balance:{seed}")
    groups = iter(dealt)
    for shard, dataset, part, part_tagged in zip(shards, loaded, rows, tagged, strict=True):
        for row, (tags, spans) in zip(part, part_tagged, strict=True):
            _rewrite(row, tags, spans, names, table, groups, rng)
        tmp = shard.with_name(f".tmp-balance-{shard.name}")
        pq.write_table(datasets.Dataset.from_list(part, features=dataset.features).data.table, tmp)
        os.replace(tmp, shard)
    reached = dict.fromkeys(table.groups, 0)
    for group in dealt:
        reached[group] += 1
    return reached


def _tagged(row: dict[str, Any], names: list[str]) -> tuple[list[str], list[Span]]:
    """A row's ``ner_tags`` as IOB2 strings, and its entities."""
    tags = [names[k] for k in row["ner_tags"]]
    return tags, tags_to_spans(tags, "IOB2")[0]


def balance_setting(balance: Balance, entity_types: Sequence[str]) -> dict[str, Any]:
    """The manifest's ``balance`` setting: the type, the table's digest and the shares asked; a type the generator
    does not write is refused (``ValueError``)."""
    table = balance.table
    if table.entity_type not in entity_types:
        raise ValueError(
            f"{table.source}: the generator does not write {table.entity_type} (it writes {', '.join(entity_types)})"
        )
    asked = {group: round(share, 4) for group, share in balance.asked.items()}
    return {"type": table.entity_type, "groups_digest": table.digest(), "asked": asked}


def bank_groups(bank: MentionBank | None, table: GroupTable) -> dict[str, int]:
    """The gold mentions of ``table``'s type per group, as the training mention bank counts them."""
    counts = table.counts([])
    if bank is None or table.entity_type not in bank.types:
        return counts
    for mention, n in bank.counts(table.entity_type).items():
        counts[table.group_of(mention) or "unknown"] += n
    return counts
