"""The two small languages of the command line's data options, parsed in one place: a typed source ``TYPE=FILE``
(``--dictionary``, ``--mentions``, ``--balance``, ``--groups``; :func:`split_type_spec`) and shares
``NAME=SHARE,...`` (``--mention-shares``, ``--balance TYPE=FILE:GROUP=SHARE,...``; :func:`parse_shares`)."""

from __future__ import annotations

import math
from pathlib import Path

__all__ = ["parse_shares", "split_type_spec"]


def split_type_spec(spec: str) -> tuple[str | None, str]:
    """``TYPE=FILE`` as its type and its file; a spec without ``=``, or a path that exists as given (its name may
    hold one), has no type: ``(None, spec)``. ``ValueError`` for ``=FILE`` or ``TYPE=``."""
    if "=" not in spec or Path(spec).exists():
        return None, spec
    label, _, path = spec.partition("=")
    if not label or not path:
        raise ValueError(f"{spec!r}: expected TYPE=FILE")
    return label, path


def parse_shares(text: str, *, what: str, known: tuple[str, ...] | list[str] | None = None) -> dict[str, float]:
    """``NAME=SHARE,...`` as ``{name: share}``, in the order given: each share a finite number above 0, each name
    once and, with ``known``, one of them. ``ValueError`` naming ``what`` (the option) and the part that is not."""
    shares: dict[str, float] = {}
    for part in text.split(","):
        name, eq, value = (piece.strip() for piece in part.partition("="))
        if not eq or not name:
            raise ValueError(f"{what} {part.strip()!r}: expected NAME=SHARE,... (e.g. a=0.7,b=0.3)")
        try:
            share = float(value)
        except ValueError:
            share = math.nan
        if not 0 < share < math.inf:
            raise ValueError(f"{what}: the share of {name!r} must be a positive number, got {value!r}")
        if known is not None and name not in known:
            raise ValueError(f"{what} {part.strip()!r}: {name!r} is none of {', '.join(known)}")
        if name in shares:
            raise ValueError(f"{what}: two shares for {name!r}")
        shares[name] = share
    if not math.isfinite(sum(shares.values())):
        raise ValueError(f"{what}: the shares are too large to add up; give them as fractions of 1")
    return shares
