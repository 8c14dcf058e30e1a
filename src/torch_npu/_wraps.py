"""The emulator's wrappers of torch functions, marked as such.

A wrapper keeps its original as ``__wrapped__`` (for ``inspect`` and ``functools``), but that is
no sign of the emulator: torch 2.x's own functions carry ``__wrapped__`` from its decorators. The
mark says a function is the emulator's wrapper, so installing twice wraps once.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Tuple

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


def vf_wrapper(
    name: str,
    original: Callable,
    run: Callable[[str, Callable, Sequence[Any]], Any],
    tensors_of: Callable[[Sequence[Any]], Tuple[torch.Tensor, ...]],
) -> Callable:
    """A marked wrapper of the ``torch._VF`` function ``name``: positional calls go to
    ``run(name, original, args)``, calls with keywords to ``original``, and calls whose
    ``tensors_of(args)`` have torch functions (autocast's mode, tensor subclasses) to those."""

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        tensors = tensors_of(args)
        if torch.overrides.has_torch_function(tensors):
            return torch.overrides.handle_torch_function(wrapper, tensors, *args, **kwargs)
        if kwargs:
            return original(*args, **kwargs)
        return run(name, original, args)

    wrapper.__name__ = name  # autocast's policy is keyed by torch's name
    return mark(wrapper, original)


def install_in_vf(
    names: Iterable[str],
    wrap: Callable[[str, Callable], Callable],
    before: Optional[Callable[[Callable], Any]] = None,
) -> None:
    """Put ``wrap(name, original)`` in ``torch._VF`` for each of ``names`` torch has, where
    torch's modules call them (idempotent); ``before(wrapper)`` runs first when given."""
    vf = torch._VF
    for name in names:
        original = getattr(vf, name, None)
        if original is None or is_wrapper(original):
            continue
        wrapper = wrap(name, original)
        if before is not None:
            before(wrapper)
        setattr(vf, name, wrapper)
        stand_for_in_torchscript(wrapper, original)


def vf_originals(names: Iterable[str]) -> Dict[str, Callable]:
    """torch's own ``torch._VF`` functions the wrappers of ``names`` stand for."""
    vf = torch._VF
    return {name: getattr(getattr(vf, name), "__wrapped__", getattr(vf, name)) for name in names}
