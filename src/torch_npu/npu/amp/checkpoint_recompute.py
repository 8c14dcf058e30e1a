"""Activation checkpointing under NPU autocast on torch 1.x: the recomputation in autocast too.

torch 1.13's ``torch.utils.checkpoint`` remembers the GPU slot's autocast state (where torch 1.x
keeps the NPU's, see ``autocast_state``) and recomputes under ``torch.cuda.amp.autocast``, which
a torch without CUDA turns off with a warning: the recomputed forward would run in fp32 and its
gradients would not be those of the forward that ran. torch_npu 1.x puts its own ``checkpoint``
in torch's place, recomputing under ``torch.npu.amp.autocast``; here ``checkpoint`` runs the
checkpointed function inside an NPU autocast region of the forward's dtype and cache setting,
and hands torch's checkpoint a state with autocast off, so its CUDA region stays off and quiet.
Both the reentrant and the non-reentrant variant recompute through that function, and
``checkpoint_sequential`` calls the module's ``checkpoint``. torch 1.13 keeps the random state
of the host and of CUDA for the recomputation, not an NPU's: with ``preserve_rng_state`` (the
default) the recomputation also draws from the NPUs' states of the forward, so dropout in a
checkpointed block draws the same mask twice.

torch 2.x needs none of this: its checkpoint recomputes under ``torch.autocast("npu")`` with
the state of the forward, which ``autocast_mode`` follows, and keeps the random state of the
NPUs its inputs are on.
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


def _replaying_npu_rng(function: Callable, args: Any) -> Callable:
    """``function`` whose second call (the recomputation) draws from the random states the NPUs
    of ``args`` had at its first call (the forward), leaving their states as it found them."""
    indices = sorted({t.get_device() for t in args if isinstance(t, torch.Tensor) and t.is_npu})
    if not indices:
        return function
    forward_states: list = []

    @functools.wraps(function)
    def run(*call_args: Any, **call_kwargs: Any) -> Any:
        if not forward_states:
            forward_states.extend(torch.npu.get_rng_state(i) for i in indices)
            return function(*call_args, **call_kwargs)
        current = [torch.npu.get_rng_state(i) for i in indices]
        for index, state in zip(indices, forward_states):
            torch.npu.set_rng_state(state, index)
        try:
            return function(*call_args, **call_kwargs)
        finally:
            for index, state in zip(indices, current):
                torch.npu.set_rng_state(state, index)

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
        if kwargs.get("preserve_rng_state", True):
            function = _replaying_npu_rng(function, args)
        if not autocast_state.is_autocast_enabled():
            return original(function, *args, **kwargs)
        from .autocast_mode import autocast

        recomputable = _in_npu_autocast(function)
        with autocast(enabled=False):  # what torch's checkpoint records: no CUDA autocast
            return original(recomputable, *args, **kwargs)

    setattr(checkpoint, _MARK, True)
    module.checkpoint = checkpoint
