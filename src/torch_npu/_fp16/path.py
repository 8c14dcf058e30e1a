"""Which implementation of the fp16 emulation runs: ``fast`` (the default) or ``general``.

Both give the same fp16 values and the same float status; ``general`` is the reference the fast
path is tested against (every fp16 operation upcast with torch, run in fp32, rounded back with
saturation, its output dtypes found by running it on meta tensors), ``fast`` the same arithmetic
with cheaper parts (see ``fast_emulation``). ``APEXNPU_EMULATION_PATH`` picks one for the whole
process; tests and the benchmark switch in place with ``select`` or ``using``.
"""

from __future__ import annotations

import os
from typing import List, Optional

PATHS = ("fast", "general")
_selected: List[Optional[str]] = [None]


def _from_environment() -> str:
    path = os.environ.get("APEXNPU_EMULATION_PATH", "fast").strip().lower() or "fast"
    if path not in PATHS:
        raise ValueError(f"APEXNPU_EMULATION_PATH={path!r} is not one of {', '.join(PATHS)}")
    return path


def selected() -> str:
    """The path in use: the last ``select``, else ``APEXNPU_EMULATION_PATH`` (read once)."""
    path = _selected[0]
    if path is None:
        path = _selected[0] = _from_environment()
    return path


def is_fast() -> bool:
    """Whether the fast path runs (in INF/NAN mode and for bf16 too: there it leaves out its
    saturating fp16 kernels and rounds as the general path does)."""
    return selected() == "fast"


def select(path: str) -> str:
    """Use ``path`` from now on, in every thread; returns the path used before."""
    if path not in PATHS:
        raise ValueError(f"emulation path {path!r} is not one of {', '.join(PATHS)}")
    previous = selected()
    _selected[0] = path
    return previous


class using:  # noqa: N801 - used like a function: ``with emulation_path.using("general"):``
    """Context manager: ``path`` inside the block, the previous one after."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._previous = ""

    def __enter__(self) -> "using":
        self._previous = select(self._path)
        return self

    def __exit__(self, *exc: object) -> None:
        select(self._previous)
