"""The dropout masks of the NPU's random kernels, drawn from torch's generator (the emulated
NPU's generator is the host's, so ``torch.manual_seed`` makes them repeatable).

- Bit masks (``npu_dropout_gen_mask``, ``_npu_dropout``, ``npu_fusion_attention``'s
  ``dropout_mask``): one bit per element, least significant bit first (element ``8k + j`` is bit
  ``j`` of byte ``k``), 1 = kept; the element count is padded to a multiple of 128 bits, so a
  mask of ``n`` elements has ``ceil(n / 128) * 16`` bytes.
- Byte masks (``_dropout_with_byte_mask``, ``npu_dropout_with_add_softmax``): one uint8 per
  element, 1 = kept.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

ALIGN = 128  # elements: the NPU's mask kernels work in blocks of 128


def aligned(numel: int) -> int:
    return (int(numel) + ALIGN - 1) // ALIGN * ALIGN


def numel_of(size: Sequence[int]) -> int:
    n = 1
    for s in size:
        n *= int(s)
    return n


def keep_draws(
    count: int, p: float, device: Any = None, generator: Optional[torch.Generator] = None
) -> torch.Tensor:
    """``count`` booleans, each True (kept) with probability ``1 - p``."""
    values = torch.rand(count, generator=generator)
    keep = values >= float(p) if p > 0 else torch.ones(count, dtype=torch.bool)
    return keep.to(device) if device is not None else keep


_BIT_WEIGHTS = [1 << j for j in range(8)]


def pack_bits(keep: torch.Tensor) -> torch.Tensor:
    """Booleans (a multiple of 8) as a uint8 bit mask, least significant bit first."""
    weights = torch.tensor(_BIT_WEIGHTS, dtype=torch.int32, device=keep.device)
    return (keep.reshape(-1, 8).to(torch.int32) * weights).sum(-1).to(torch.uint8)


def unpack_bits(mask: torch.Tensor, numel: int) -> torch.Tensor:
    """The first ``numel`` bits of the uint8 bit mask ``mask`` as 0/1 floats."""
    if mask.dtype != torch.uint8:
        raise RuntimeError(f"dropout mask should be torch.uint8, got {mask.dtype}")
    if mask.numel() * 8 < numel:
        raise RuntimeError(
            f"dropout mask of {mask.numel()} bytes is too short for {numel} "
            f"elements (needs {aligned(numel) // 8})"
        )
    weights = torch.tensor(_BIT_WEIGHTS, dtype=torch.int32, device=mask.device)
    bits = (mask.reshape(-1, 1).to(torch.int32) // weights) % 2
    return bits.reshape(-1)[:numel].to(torch.float32)


def keep_scale(p: float) -> float:
    """1 / (1 - p), the factor kept elements are multiplied by (0 when nothing is kept)."""
    retain = 1.0 - float(p)
    return 0.0 if retain <= 0 else 1.0 / retain
