"""Checks on plain values that every layer shares (metrics, verifiers, loaders, the run store).

It imports nothing from the package and no third-party library, so any module can use it.
"""

from __future__ import annotations

import math
from typing import Any


def is_na(value: Any) -> bool:
    """None, NaN, and pandas' NA / NaT (recognised without importing pandas).

    Empty text and empty lists are values, not missing: a loader that treats blank text as
    missing says so itself (`tempo_eval.io.cells.is_missing`).
    """
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return type(value).__name__ in ("NAType", "NaTType")


_STR_ONLY = frozenset({str})


def require_text_list(value: Any, name: str) -> list[str]:
    """A list (or tuple) of strings, as a new list; TypeError naming `name` otherwise.

    Sets are refused: their order is arbitrary, and callers pair results with items by position.
    A bare string is refused rather than read as a list of characters.
    """
    if type(value) is list and set(map(type, value)) <= _STR_ONLY:  # the common case, checked at C speed
        return value.copy()
    if isinstance(value, (set, frozenset)):
        raise TypeError(f"{name} must be a list, not a set: order matters and sets have none")
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be a list of strings, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise TypeError(f"{name}[{i}] must be a string, got {type(item).__name__}")
    return list(value)
