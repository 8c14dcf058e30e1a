"""fp32 master weights in checkpoints (amp with master weights, O2).

The optimizer steps fp32 copies of the fp16 model parameters; neither the model's state_dict nor
upstream's optimizer state_dict holds them, so a resumed run would restart from the
fp16-rounded weights. Our ``optimizer.state_dict()`` carries them under ``KEY`` (a list in the
order amp creates them). torch's ``Optimizer.load_state_dict``, which NVIDIA's and Ascend's apex
use, reads only ``state`` and ``param_groups``, so such a checkpoint loads there too (resuming
from the fp16 weights, as theirs always do); and ``amp.state_dict()`` holds only the loss
scalers, the one layout their ``amp.load_state_dict`` accepts. Older checkpoints of ours kept
the masters in ``amp.state_dict()`` as ``master_params<N>``; ``amp.load_state_dict`` still reads
them.

Ours restores the saved masters only with ``APEXNPU_EXACT_RESUME=1``: by default a resume starts
from the fp16 weights as Ascend's and NVIDIA's do, and an optimizer state loaded before amp made
the masters keeps the fp16 rounding torch's loader gave it on the fp16 parameters, as theirs
does, so a checkpoint resumes to the same bits in either apex (issue 28); with the variable,
the masters are restored and the state loaded again onto them unrounded, and a resumed run
continues bit for bit as if never stopped.
"""

from __future__ import annotations

from typing import List, Optional

import os

import torch

from .low_precision import is_low_precision

KEY = "amp_master_params"
VARIABLE = "APEXNPU_EXACT_RESUME"


def exact_resume() -> bool:
    """Whether saved master weights are restored (``APEXNPU_EXACT_RESUME``: 0, the default, or 1)."""
    value = os.environ.get(VARIABLE, "0").strip() or "0"
    if value not in ("0", "1"):
        raise RuntimeError(
            f"{VARIABLE}={value!r}: expected 0 (resume from the fp16 weights, as "
            f"Ascend's apex; the default) or 1 (restore the saved fp32 masters)"
        )
    return value == "1"


LEGACY_PREFIX = "master_params"


def fp16_params_of(optimizer: torch.optim.Optimizer) -> List[torch.Tensor]:
    """The fp16 (or bf16) params that get fp32 master params, in the order amp's lazy init
    creates them."""
    stash = optimizer._amp_stash
    if stash.lazy_init_called:
        return list(stash.all_fp16_params)
    return [
        p
        for group in optimizer.param_groups
        for p in group["params"]
        if p.requires_grad and is_low_precision(p.dtype)
    ]


def saved_masters(optimizer: torch.optim.Optimizer) -> Optional[List[torch.Tensor]]:
    """Copies of the optimizer's fp32 master weights, or None before amp made them."""
    stash = optimizer._amp_stash
    if not stash.lazy_init_called:
        return None
    return [p.detach().clone() for p in stash.all_fp32_from_fp16_params]


def checked(what: str, saved, optimizer: torch.optim.Optimizer) -> List[torch.Tensor]:
    """``saved`` if it fits the optimizer's master weights, else a RuntimeError naming ``what``."""
    params = fp16_params_of(optimizer)
    if not isinstance(saved, (list, tuple)) or len(saved) != len(params):
        raise RuntimeError(
            'Error(s) in loading state_dict: "{}" must be a list of {} tensors'.format(
                what, len(params)
            )
        )
    for i, (value, param) in enumerate(zip(saved, params)):
        if (
            not isinstance(value, torch.Tensor)
            or value.shape != param.shape
            or not value.is_floating_point()
        ):
            raise RuntimeError(
                'Error(s) in loading state_dict: "{}"[{}] must be a float tensor '
                "of shape {}".format(what, i, tuple(param.shape))
            )
    return list(saved)


def restore(optimizer: torch.optim.Optimizer, saved: List[torch.Tensor]) -> None:
    """Put checked ``saved`` values into the master weights, now or when amp makes them (only
    with APEXNPU_EXACT_RESUME=1, see the module docstring)."""
    if not exact_resume():
        return
    stash = optimizer._amp_stash
    if stash.lazy_init_called:
        with torch.no_grad():
            for master, value in zip(stash.all_fp32_from_fp16_params, saved):
                master.copy_(value)
    else:
        stash.pending_master_params = [value.detach().clone() for value in saved]
