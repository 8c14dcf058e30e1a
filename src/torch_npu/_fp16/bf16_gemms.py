"""bf16 matrix products of an emulated 910B on torch's own bf16 GEMM, in both emulation paths.

The NPU's cube unit multiplies bf16 matrices with the products added in fp32 and each result
rounded once. torch's oneDNN bf16 GEMM is arithmetic of that kind: bf16 operands, an fp32
accumulator, one rounding to nearest even. The round trip other bf16 operations take (widen
the operands, torch's fp32 kernel, round) is too, with another order of additions, so the two
differ in the last bit where an fp32 sum lies near a rounding boundary (up to 3 results in
10^4 in our measurements); neither order is the NPU's. oneDNN's reads bf16 directly: two widening passes and an
fp32 GEMM become one bf16 GEMM, about twice as fast as the fp32 one on x86 with AVX-512, and
the bf16 training step no longer pays for the round trip in every linear layer and attention
product. It is these products' reference: the general and fast paths both run it, so they agree
bit for bit. One more difference: with x86's bf16 dot-product instruction (AVX512_BF16),
oneDNN counts subnormal bf16 operands and results (below 2**-126) as zero.

Taken only where torch's bf16 GEMM is that arithmetic. torch runs oneDNN for a bf16 product of
more than 16**3 multiply-adds when oneDNN is enabled and the CPU has its bf16 support; otherwise
torch's own loops run, which on torch 1.x accumulate in bf16 and on torch 2.x are tens of times
slower than the round trip. So a product goes to torch's bf16 kernel only when:
- oneDNN is enabled (``torch.backends.mkldnn``; a script may turn it off at any time);
- each of its matrix products has at least ``MIN_MULTIPLY_ADDS``, eight times torch's bound;
- torch reports oneDNN's bf16 support (torch 2.x), and a fixed product of positive bf16 values,
  run once per process, puts every result within one bf16 step of its exact value (a bf16
  accumulator drifts several steps on it);
- the NPU is in INF/NAN mode (in saturation mode the round trip's store clamps and reports);
- the op is mm, bmm or addmm with beta and alpha 1 (``nn.Linear``'s), every tensor operand a
  strided bf16 tensor in host memory.
Each result's NaNs are then made one pattern, 0x7FC0, as the round trip's store makes them.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

import torch

from .. import _runtime
from . import bf16_torch_kernels, kernel_operands, overflow_mode

aten = torch.ops.aten

# torch takes oneDNN above 16**3 multiply-adds per product (per batch on some versions): a
# margin of eight keeps every product taken here on oneDNN on each torch this runs on.
MIN_MULTIPLY_ADDS = 1 << 15

OPS = frozenset((aten.mm.default, aten.bmm.default, aten.addmm.default))

_bf16 = bf16_torch_kernels.bf16_operand
_is_one = kernel_operands.is_one
_mkldnn_enabled = torch._C._get_mkldnn_enabled


def _multiply_adds(a: torch.Tensor, b: torch.Tensor) -> int:
    """Multiply-adds of one matrix product of ``a @ b`` (2-D, or one batch of 3-D)."""
    return a.shape[-2] * a.shape[-1] * b.shape[-1]


def _operands(func: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Optional[tuple]:
    """The two matrices of a call this module takes, or None (a call torch refuses included:
    the round trip gives torch's own error)."""
    if func is aten.addmm.default:
        if len(args) != 3 or any(
            k not in ("beta", "alpha") or not _is_one(v) for k, v in kwargs.items()
        ):
            return None
        if not _bf16(args[0]):
            return None
        args = args[1:]
    elif kwargs or len(args) != 2:
        return None
    a, b = args
    dims = 3 if func is aten.bmm.default else 2
    if not (_bf16(a) and _bf16(b)) or a.dim() != dims or b.dim() != dims:
        return None
    return a, b


_verdict: Optional[bool] = None  # the probe's, once run


def _fp32_accumulating() -> bool:
    """Whether torch's bf16 GEMM here is oneDNN's with an fp32 accumulator: torch 2.x's own
    report of oneDNN's bf16 support, then a product of positive values (no cancellation, so an
    fp32 sum of at most 256 terms is within 2**-16 of exact) whose results must all lie within
    one bf16 step of exact; summed in bf16, they drift by several steps."""
    global _verdict
    if _verdict is None:
        supported = getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", None)
        _verdict = (supported is None or bool(supported())) and _probe_passes()
    return _verdict


def _probe_passes() -> bool:
    rows = torch.arange(16, dtype=torch.int64).view(16, 1)
    inner = torch.arange(256, dtype=torch.int64).view(1, 256)
    # 1 + j/128: exact in bf16, in [1, 2).
    a = (1 + ((rows * 7 + inner * 13) % 128).double() / 128).to(torch.bfloat16)
    b = (1 + ((inner.t() * 5 + rows.t() * 11) % 128).double() / 128).to(torch.bfloat16)
    exact = a.double() @ b.double()  # products of 8-bit significands: exact in fp64
    got = (a @ b).double()
    step = torch.exp2(torch.floor(torch.log2(exact)) - 7)  # one bf16 step at each result
    return bool(((got - exact).abs() <= step).all())


def run(func: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Optional[torch.Tensor]:
    """``func``'s result from torch's bf16 GEMM, or None when this module does not take the
    call (the round trip computes it)."""
    operands = _operands(func, args, kwargs)
    if operands is None or not overflow_mode.inf_nan() or not _mkldnn_enabled():
        return None
    a, b = operands
    if _multiply_adds(a, b) < MIN_MULTIPLY_ADDS or not _fp32_accumulating():
        return None
    out = func(*args, **kwargs)
    bf16_torch_kernels.one_nan_pattern(out, _runtime.runtime_kernels())
    return out
