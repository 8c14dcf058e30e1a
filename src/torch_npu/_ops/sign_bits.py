"""1-bit Adam's sign packing, as torch_npu documents it with its example:
``npu_sign_bits_pack(input, size)``: the signs of a 1-D float tensor (bit 1 for ``x >= 0``, 0
for negatives), padded with -1 values to a multiple of 8, eight to a uint8 from the lowest bit,
shaped ``(size, -1)``; ``npu_sign_bits_unpack(input, size, dtype)``: each uint8's bits, lowest
first, as +1/-1 of ``dtype`` (float16/float32, or the documented 1/0), shaped ``(size, -1)``."""

from __future__ import annotations

from typing import Union

import torch

from ._registry import operator

_WEIGHTS = [1 << i for i in range(8)]


@operator
def npu_sign_bits_pack(input: torch.Tensor, size: int) -> torch.Tensor:
    if input.dim() != 1 or input.dtype not in (torch.float16, torch.float32, torch.bfloat16):
        raise RuntimeError(
            f"npu_sign_bits_pack: input must be a 1-D float tensor, got "
            f"{input.dim()}-D {input.dtype}"
        )
    bits = (input.detach() >= 0).to(torch.uint8)
    bits = torch.cat([bits, bits.new_zeros((-bits.numel()) % 8)])
    packed = (bits.view(-1, 8).long() * torch.tensor(_WEIGHTS, device=bits.device)).sum(1)
    if size <= 0 or packed.numel() % size:
        raise RuntimeError(
            f"npu_sign_bits_pack: {packed.numel()} packed bytes do not divide into size {size} rows"
        )
    return packed.to(torch.uint8).view(size, -1)


@operator
def npu_sign_bits_unpack(
    input: torch.Tensor, size: int, dtype: Union[torch.dtype, int]
) -> torch.Tensor:
    dtype = (
        {0: torch.float32, 1: torch.float16}.get(dtype, dtype) if isinstance(dtype, int) else dtype
    )
    if dtype not in (torch.float16, torch.float32):
        raise RuntimeError(f"npu_sign_bits_unpack: dtype must be float16 or float32, got {dtype}")
    if input.dim() != 1 or input.dtype != torch.uint8:
        raise RuntimeError(
            f"npu_sign_bits_unpack: input must be a 1-D uint8 tensor, got "
            f"{input.dim()}-D {input.dtype}"
        )
    weights = torch.tensor(_WEIGHTS, device=input.device)
    bits = (input.long().unsqueeze(1) & weights) != 0
    if size <= 0 or bits.numel() % size:
        raise RuntimeError(
            f"npu_sign_bits_unpack: {bits.numel()} values do not divide into size {size} rows"
        )
    return (bits.to(dtype) * 2 - 1).view(size, -1)
