"""The data types HCCL carries, per chip (CANN's HCCL API reference, HcclAllReduce, HcclAllGather
and their siblings), as the emulated hccl checks them.

- Ascend 910 (the Atlas training series): reductions (all_reduce, reduce, reduce_scatter) of
  int8, int32, int64, float16 and float32 (``REDUCED_DTYPES``); collectives that only move data
  (broadcast, the gathers and scatters, all_to_all, send and receive) take those and uint8 (bool,
  as torch_npu sends it) and float64 (``MOVED_DTYPES``). No bfloat16. all_reduce and reduce
  take uint8 and bool too (``INT32_REDUCED``): torch_npu reduces them as int32 and copies the
  result back (DeepSpeed all-reduces its uint8 overflow flag with MAX).
- Ascend 910B and the A3 chips (the Atlas A2 and A3 training series): bfloat16 as well, in both
  (``BF16_REDUCED_DTYPES``, ``BF16_MOVED_DTYPES``), except that their HCCL has no product of
  bfloat16 (sum, max and min only).
int16, which both chips' HCCL carries in some collectives, stays refused: gloo, which carries the
data here, has no int16. Which chip the emulator is comes from ``soc`` (APEXNPU_SOC_VERSION).
"""

from __future__ import annotations

from typing import Any, Iterable, Tuple

import torch

from .._device import soc

STRICT_VARIABLE = "APEXNPU_HCCL_STRICT"
RELAX = f"set {STRICT_VARIABLE}=0 to allow it on the emulator"
CONSTRAINTS = "Ascend's collective-communication constraints"

REDUCED_DTYPES = (torch.int8, torch.int32, torch.int64, torch.float16, torch.float32)
MOVED_DTYPES = (
    torch.int8,
    torch.uint8,
    torch.bool,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.float32,
    torch.float64,
)
BF16_REDUCED_DTYPES = REDUCED_DTYPES + (torch.bfloat16,)
BF16_MOVED_DTYPES = MOVED_DTYPES + (torch.bfloat16,)
# The calls in which torch_npu reduces uint8 and bool by way of int32, and those dtypes.
INT32_REDUCED_CALLS = frozenset({"all_reduce", "all_reduce_coalesced", "reduce"})
INT32_REDUCED = (torch.uint8, torch.bool)


def said(items: Iterable[Any], last: str = "and") -> str:
    """``a, b and c`` (dtypes without ``torch.``)."""
    words = [str(item).replace("torch.", "") for item in items]
    return f"{', '.join(words[:-1])} {last} {words[-1]}" if len(words) > 1 else "".join(words)


def reduced_dtypes() -> Tuple[torch.dtype, ...]:
    """What this chip's HCCL reduces."""
    return BF16_REDUCED_DTYPES if soc.has_bf16() else REDUCED_DTYPES


def moved_dtypes() -> Tuple[torch.dtype, ...]:
    """What this chip's HCCL moves."""
    return BF16_MOVED_DTYPES if soc.has_bf16() else MOVED_DTYPES


def _bf16_hint() -> str:
    return "" if soc.has_bf16() else f"; bfloat16 is a 910B's: {soc.VARIABLE}=Ascend910B1"


def check(call: str, reduces: bool, tensors: Iterable[torch.Tensor], op_name: str) -> None:
    """Refuse, naming the call, the chip and the rule, a tensor this chip's HCCL does not carry
    in ``call`` (``op_name``: the reduction's ReduceOp name, for a reduction)."""
    allowed, verb = (reduced_dtypes(), "reduces") if reduces else (moved_dtypes(), "moves")
    for t in tensors:
        if reduces and call in INT32_REDUCED_CALLS and t.dtype in INT32_REDUCED:
            continue  # torch_npu casts to int32, reduces and casts back
        if t.dtype not in allowed:
            hint = _bf16_hint() if t.dtype == torch.bfloat16 else ""
            raise TypeError(
                f"hccl: {call} of a {t.dtype} tensor: HCCL on {soc.name()} {verb} "
                f"only {said(allowed)} ({CONSTRAINTS}{hint}); {RELAX}"
            )
        if reduces and op_name == "PRODUCT" and t.dtype == torch.bfloat16:
            raise TypeError(
                f"hccl: {call} of a torch.bfloat16 tensor with ReduceOp.PRODUCT: HCCL "
                f"on {soc.name()} reduces bfloat16 by sum, max and min only "
                f"({CONSTRAINTS}); {RELAX}"
            )
