"""``torch_npu.npu_sim_exponential_(input, lambd=1, *, generator=None)``: fills ``input`` in
place with exponential random numbers ``-ln(1 - u) / lambd``, ``u`` uniform, drawn in fp32 from
``generator`` (or torch's default generator) and stored once in the input's dtype. The numbers
are the host generator's, not the NPU's Philox stream (see the deviations)."""

from __future__ import annotations

from typing import Optional

import torch

from ._precision import store_into
from ._registry import operator


@operator
def npu_sim_exponential_(
    input: torch.Tensor, lambd: float = 1, *, generator: Optional[torch.Generator] = None
) -> torch.Tensor:
    if not lambd > 0:
        raise RuntimeError(f"npu_sim_exponential_: lambd must be positive, got {lambd}")
    if input.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise RuntimeError(
            f"npu_sim_exponential_: input must be float32, float16 or bfloat16, got {input.dtype}"
        )
    draws = torch.empty(input.shape, dtype=torch.float32).exponential_(
        float(lambd), generator=generator
    )
    store_into(input, draws.to(input.device))
    return input
