"""``torch_npu.npu_bmmV2(input, mat2, output_sizes)``: batched matrix product with the batch
dimensions broadcast (``torch.matmul``), computed in fp32; ``output_sizes`` (used by the NPU's
backward) may be empty. Gradients as ``npu_bmm_v2_mat1_backward``/``mat2_backward`` give them:
those of the product, reduced over broadcast batch dimensions."""

from __future__ import annotations

from typing import Sequence

import torch

from ._precision import store, upcast
from ._registry import operator


@operator
def npu_bmmV2(
    input: torch.Tensor,
    mat2: torch.Tensor,  # noqa: N802 - torch_npu's name
    output_sizes: Sequence[int],
) -> torch.Tensor:
    if input.dim() < 2 or mat2.dim() < 2:
        raise RuntimeError(
            f"npu_bmmV2: expected tensors of 2 or more dimensions, got "
            f"{input.dim()}-D and {mat2.dim()}-D"
        )
    out = torch.matmul(upcast(input), upcast(mat2))
    sizes = [int(s) for s in output_sizes]
    if sizes and list(out.shape) != sizes:
        out = out.reshape(sizes)
    return store(out, input.dtype)
