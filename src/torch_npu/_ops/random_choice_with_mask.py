"""``torch_npu.npu_random_choice_with_mask(x, count=256, seed=0, seed2=0) -> (indices, mask)``:
``count`` positions of ``x``'s True elements in random order, as the NPU's RandomChoiceWithMask
gives them to detection samplers: ``indices`` int32 ``(count, x.dim())``, one position per row,
and ``mask`` bool ``(count,)``, False for the rows past the number of True elements (those rows
are zeros). ``x`` is a bool tensor of 1 to 5 dimensions and ``count`` > 0, as op-plugin checks.

With ``seed`` and ``seed2`` both 0 the order comes from torch's generator (the NPU then seeds
itself at random); otherwise from a generator seeded by the two, so the same seeds give the same
order on the emulator (the NPU's own stream is not reproduced). No gradient: the input is bool."""

from __future__ import annotations

from typing import Tuple

import torch

from ._registry import operator


@operator
def npu_random_choice_with_mask(
    x: torch.Tensor, count: int = 256, seed: int = 0, seed2: int = 0
) -> Tuple[torch.Tensor, torch.Tensor]:
    if x.dtype != torch.bool:
        raise RuntimeError(
            f"npu_random_choice_with_mask: The input.dtype should be bool, but get {x.dtype}"
        )
    if not 1 <= x.dim() <= 5:
        raise RuntimeError(
            f"npu_random_choice_with_mask: The input.dim should be in [1, 5], but get {x.dim()}"
        )
    if count <= 0:
        raise RuntimeError(
            f"npu_random_choice_with_mask: The count must greater than 0, but get {count}"
        )
    positions = torch.nonzero(x.detach().cpu())
    if seed == 0 and seed2 == 0:
        order = torch.randperm(len(positions))
    else:
        generator = torch.Generator().manual_seed((seed << 32) ^ (seed2 & 0xFFFFFFFF))
        order = torch.randperm(len(positions), generator=generator)
    chosen = positions[order[:count]]
    indices = torch.zeros(count, x.dim(), dtype=torch.int32)
    indices[: len(chosen)] = chosen.to(torch.int32)
    mask = torch.arange(count) < len(chosen)
    return indices.to(x.device), mask.to(x.device)
