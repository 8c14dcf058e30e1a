"""Activation checkpointing under NPU autocast on torch 1.x: the recomputation in autocast too.

torch 1.13's ``torch.utils.checkpoint`` remembers the GPU slot's autocast state (where torch 1.x
keeps the NPU's, see ``autocast_state``) and recomputes under ``torch.cuda.amp.autocast``, which
a torch without CUDA turns off with a warning: the recomputed forward would run in fp32 and its
gradients would not be those of the forward that ran. torch_npu 1.x puts its own ``checkpoint``
in torch's place, recomputing under ``torch.npu.amp.autocast``; here ``checkpoint`` runs the
checkpointed function inside an NPU autocast region of the forward's dtype and cache setting,
and hands torch's checkpoint a state with autocast off, so its CUDA region stays off and quiet.
Both the reentrant and the non-reentrant variant recompute through that function, and
``checkpoint_sequential`` calls the module's ``checkpoint``.

torch 2.x needs none of this: its checkpoint recomputes under ``torch.autocast("npu")`` with
the state of the forward, which ``autocast_mode`` follows.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import torch

from . import autocast_state

_MARK = "_apexnpu_recomputes_in_npu_autocast"


def _in_npu_autocast(function: Callable) -> Callable:
    """``function`` run in NPU autocast as the calling region has it (dtype, weight cache)."""
    from .autocast_mode import autocast

    dtype = autocast_state.get_autocast_dtype()
    cache_enabled = torch.is_autocast_cache_enabled()

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        with autocast(enabled=True, dtype=dtype, cache_enabled=cache_enabled):
            return function(*args, **kwargs)

    return run


def install() -> None:
    """torch 1.x: put the NPU-aware ``checkpoint`` into ``torch.utils.checkpoint``
    (idempotent)."""
    if autocast_state.PER_DEVICE:
        return
    import torch.utils.checkpoint as module

    original = module.checkpoint
    if getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def checkpoint(function: Callable, *args: Any, **kwargs: Any) -> Any:
        if not autocast_state.is_autocast_enabled():
            return original(function, *args, **kwargs)
        from .autocast_mode import autocast

        recomputable = _in_npu_autocast(function)
        with autocast(enabled=False):  # what torch's checkpoint records: no CUDA autocast
            return original(recomputable, *args, **kwargs)

    setattr(checkpoint, _MARK, True)
    module.checkpoint = checkpoint
