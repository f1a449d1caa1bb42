"""Groups on names: which group of a protected attribute (gender, origin, ...) each name of an entity type belongs
to, from the user's own attribute table. A group file is plain UTF-8 text, one ``name<TAB>group`` a line (two
columns; a first row ``name<TAB>group`` is a header); given as ``TYPE=FILE`` (``person=person-gender.tsv``). Groups
are compared as names are, case aside. A mention belongs to the group of its whole text, else of its first
word (``Megan Fox`` of ``Megan``'s), case aside; a mention in neither is counted apart, as unknown.

Read with :meth:`GroupTable.read`, as every user's text file is (:mod:`~hf_ecg.runtime.text_files`): an empty file,
one that is not UTF-8 or holds a control character, a line without a group, a name the mention check refuses (no
letter or digit), a name in two groups and a table of fewer than two groups are refused naming the file and line.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..runtime.mentions import mention_problem
from ..runtime.text_files import TextFileError, read_lines
from .specs import parse_shares, split_type_spec

__all__ = ["RULE_80", "Balance", "GroupTable", "GroupTableError", "disparate_impact", "split_group_spec"]

#: The 80% rule: a disparate impact at or above this holds.
RULE_80 = 0.8
#: First rows read as a header, not a name (case aside).
HEADERS = frozenset({("name", "group"), ("names", "groups"), ("name", "groups"), ("names", "group")})


class GroupTableError(ValueError):
    """A group file that cannot be read: the message names the file and, where there is one, the line."""


@dataclass(frozen=True)
class GroupTable:
    """The groups of one entity type's names: ``names[group]`` the names (token tuples) of each group, in file order."""

    entity_type: str
    names: Mapping[str, tuple[tuple[str, ...], ...]]
    source: str = ""

    @classmethod
    def read(cls, entity_type: str, path: str | os.PathLike) -> GroupTable:
        """Read a ``name<TAB>group`` file (see the module); :class:`GroupTableError` names its file and line."""
        file = Path(path)
        try:
            lines = read_lines(file, expected="a name<TAB>group table")
        except TextFileError as error:
            raise GroupTableError(str(error)) from None
        names: dict[str, list[tuple[str, ...]]] = {}
        seen: dict[str, tuple[str, int]] = {}
        spelling: dict[str, str] = {}  # a group as first written, by its case-folded form
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            columns = [part.strip() for part in line.split("\t")]
            if len(columns) > 2:
                raise GroupTableError(
                    f"{file}:{number}: {len(columns)} columns; a group table has two, a name and its group "
                    "(a spreadsheet's other columns: leave them out when you save it)"
                )
            name, group = columns if len(columns) == 2 else (columns[0], "")
            if not name or not group:
                raise GroupTableError(f"{file}:{number}: expected a name, a tab and its group, got {line!r}")
            if not names and (name.casefold(), group.casefold()) in HEADERS:
                continue  # a header row, as a spreadsheet writes one
            group = spelling.setdefault(group.casefold(), group)  # groups compared as names are: case aside
            problem = mention_problem(tuple(name.split()))  # the check every mention source passes
            if problem:
                raise GroupTableError(f"{file}:{number}: {name[:60]!r} is no name: {problem}")
            key = name.casefold()
            if key in seen and seen[key][0] != group:
                first_group, first_line = seen[key]
                raise GroupTableError(
                    f"{file}:{number}: {name!r} is in group {group!r} here and in {first_group!r} on line {first_line}"
                )
            if key not in seen:
                seen[key] = (group, number)
                names.setdefault(group, []).append(tuple(name.split()))
        if not names:
            raise GroupTableError(
                f"{file}: the file {'is empty' if not lines else 'holds no name'}; expected name<TAB>group lines"
            )
        if len(names) < 2:
            raise GroupTableError(f"{file}: every name is in group {next(iter(names))!r}; a table needs two groups")
        return cls(entity_type, {g: tuple(n) for g, n in names.items()}, str(file))

    @property
    def groups(self) -> list[str]:
        """The groups, in the order the file first names them."""
        return list(self.names)

    @cached_property
    def _index(self) -> dict[str, str]:
        """Each name, case folded, to its group (built on first use)."""
        return {" ".join(name).casefold(): group for group, names in self.names.items() for name in names}

    def group_of(self, mention: Sequence[str]) -> str | None:
        """The group of a mention: of its whole text, else of its first word; ``None`` when neither is listed."""
        if not mention:
            return None
        return self._index.get(" ".join(mention).casefold()) or self._index.get(mention[0].casefold())

    def counts(self, mentions: Iterable[Sequence[str]]) -> dict[str, int]:
        """Mentions per group, every group listed (0 included), and ``unknown`` for those in none."""
        counts = dict.fromkeys([*self.groups, "unknown"], 0)
        for mention in mentions:
            counts[self.group_of(mention) or "unknown"] += 1
        return counts

    def draw(self, group: str, rng: random.Random) -> tuple[str, ...]:
        """A name of ``group``, drawn uniformly."""
        return rng.choice(self.names[group])

    def digest(self) -> str:
        """A short fingerprint of the table (what a manifest records of the user's attribute table)."""
        text = "\n".join(f"{' '.join(n)}\t{g}" for g, names in self.names.items() for n in names)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def disparate_impact(counts: Mapping[str, int]) -> float | None:
    """The smallest group's count over the largest's (``unknown`` aside); ``None`` when no mention has a group."""
    known = [n for group, n in counts.items() if group != "unknown"]
    return min(known) / max(known) if known and max(known) > 0 else None


def split_group_spec(spec: str) -> tuple[str, str, str | None]:
    """``TYPE=FILE`` or ``TYPE=FILE:GROUP=SHARE,...`` as the type, the file and the shares' text (``None``)."""
    try:
        entity_type, rest = split_type_spec(spec)
    except ValueError:
        entity_type = None
    if entity_type is None:
        raise GroupTableError(f"{spec!r}: expected TYPE=FILE or TYPE=FILE:GROUP=SHARE,...")
    head, colon, tail = rest.rpartition(":")
    if colon and "=" in tail and not Path(rest).exists():
        return entity_type, head, tail
    return entity_type, rest, None


@dataclass(frozen=True)
class Balance:
    """A balance asked of a generated set: the mentions of ``table``'s type dealt to its groups by ``shares``
    (``None``: each group alike). Shares name the table's groups and are finite and positive; :attr:`asked` is
    them normalized to sum to 1. ``ValueError`` (:class:`GroupTableError`) for any other."""

    table: GroupTable
    shares: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        where = self.table.source
        for group, share in (self.shares or {}).items():
            if group not in self.table.names:
                raise GroupTableError(f"{where}: no group {group!r} (it has {', '.join(self.table.groups)})")
            if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share < math.inf:
                raise GroupTableError(f"{where}: the share of {group!r} must be a positive number, got {share!r}")
        if self.shares is not None and not (self.shares and math.isfinite(sum(self.shares.values()))):
            raise GroupTableError(f"{self.table.source}: the shares {dict(self.shares)} do not add up to a number > 0")

    @property
    def entity_type(self) -> str:
        return self.table.entity_type

    @property
    def asked(self) -> dict[str, float]:
        """The shares asked of each group, summing to 1."""
        if self.shares is None:
            return {group: 1 / len(self.table.groups) for group in self.table.groups}
        total = sum(self.shares.values())
        return {group: share / total for group, share in self.shares.items()}

    @classmethod
    def read(cls, spec: str) -> Balance:
        """``TYPE=FILE`` or ``TYPE=FILE:GROUP=SHARE,...`` (:func:`split_group_spec`); a group named twice, or a share
        that is not a finite positive number, is refused naming the spec."""
        entity_type, path, shares_text = split_group_spec(spec)
        table = GroupTable.read(entity_type, path)
        if shares_text is None:
            return cls(table)
        try:
            return cls(table, parse_shares(shares_text, what=spec, known=table.groups))
        except ValueError as error:
            raise GroupTableError(str(error)) from None
