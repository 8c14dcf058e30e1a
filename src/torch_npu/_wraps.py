"""The emulator's wrappers of torch functions, marked as such.

A wrapper keeps its original as ``__wrapped__`` (for ``inspect`` and ``functools``), but that is
no sign of the emulator: torch 2.x's own functions carry ``__wrapped__`` from its decorators. The
mark says a function is the emulator's wrapper, so installing twice wraps once.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

_MARK = "_apexnpu_wrapper"


def mark(wrapper: Callable, original: Callable) -> Callable:
    """``wrapper``, marked as the emulator's wrapper of ``original``."""
    wrapper.__wrapped__ = original  # type: ignore[attr-defined]
    setattr(wrapper, _MARK, True)
    return wrapper


def is_wrapper(fn: Any) -> bool:
    return bool(getattr(fn, _MARK, False))


def stand_for_in_torchscript(wrapper: Callable, original: Callable) -> None:
    """TorchScript compiles a call of a torch function to its aten operator by looking the
    function up in a table of builtins; ``wrapper``, put in ``original``'s place, stands for the
    same operator there."""
    builtin = torch.jit._builtins._find_builtin(original)
    if builtin is not None:
        torch.jit._builtins._register_builtin(wrapper, builtin)
