"""``torch_npu.npu_dtype_cast(input, dtype, input_dtype=None)``: ``input`` converted to ``dtype``
(a ``torch.dtype``, or the ``ScalarType`` number torch_npu's schema declares), with its
gradient cast back to the input's dtype (torch_npu's ``npu_dtype_cast_backward``); to fp16 the
NPU's saturation applies. ``input_dtype`` only names the packed fp4 inputs of the newest chips
(float4_e2m1fn_x2, float4_e1m2fn_x2), which have no torch dtype here: other values must be
the input's own dtype. ``npu_dtype_cast_(input, src)`` casts ``src`` into ``input`` in place."""

from __future__ import annotations

from typing import Optional, Union

import torch

from ._precision import store
from ._registry import operator

# c10::ScalarType's numbers of the dtypes a host torch has.
_SCALAR_TYPES = {
    0: torch.uint8,
    1: torch.int8,
    2: torch.int16,
    3: torch.int32,
    4: torch.int64,
    5: torch.float16,
    6: torch.float32,
    7: torch.float64,
    9: torch.complex64,
    10: torch.complex128,
    11: torch.bool,
    15: torch.bfloat16,
}


def _dtype(value: Union[int, torch.dtype], what: str) -> torch.dtype:
    if isinstance(value, torch.dtype):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value in _SCALAR_TYPES:
        return _SCALAR_TYPES[value]
    raise RuntimeError(
        f"npu_dtype_cast: {what} {value!r} is not a dtype this NPU emulation "
        f"has (torch dtypes or ScalarType numbers {sorted(_SCALAR_TYPES)})"
    )


class _Cast(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, dtype):  # noqa: D102 - torch.autograd.Function protocol
        ctx.dtype = input.dtype
        if dtype == torch.float16 and input.dtype != torch.float16 and input.is_floating_point():
            return store(input.float(), dtype).detach()
        return input.to(dtype)

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        if grad.dtype == ctx.dtype:
            return grad, None
        return store(grad.float(), ctx.dtype) if ctx.dtype == torch.float16 else grad.to(
            ctx.dtype
        ), None


@operator
def npu_dtype_cast(
    input: torch.Tensor, dtype: Union[int, torch.dtype], input_dtype: Optional[int] = None
) -> torch.Tensor:
    target = _dtype(dtype, "dtype")
    if input_dtype is not None and _dtype(input_dtype, "input_dtype") != input.dtype:
        raise RuntimeError(
            f"npu_dtype_cast: input_dtype {input_dtype} differs from the input's "
            f"dtype {input.dtype}"
        )
    if target == input.dtype:
        return input.clone()
    # A cast to or from an integer dtype has no gradient; between float or complex ones it does.
    if input.requires_grad and not all(
        d.is_floating_point or d.is_complex for d in (target, input.dtype)
    ):
        return _Cast.apply(input.detach(), target)
    return _Cast.apply(input, target)


@operator
def npu_dtype_cast_(input: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        input.copy_(npu_dtype_cast(src.detach(), input.dtype))
    return input
