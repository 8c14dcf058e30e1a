"""Which parameter dtypes the NpuFused optimizers step on this NPU.

fp32 and fp16 on every Ascend chip, as Ascend's apex. bfloat16 too on a chip that computes it
(Ascend 910B and later, which torch_npu reports through ``torch.npu.is_bf16_supported()``):
Ascend's apex and torch_npu refuse it everywhere, but a bf16 model on a 910B has no other fused
optimizer. A bf16 bucket keeps its state in fp32 and steps in fp32 from the bf16 values (torch
operations: the runtime's kernels are fp32 and fp16), rounding the parameters once to bfloat16,
so that a step equals torch.optim's in fp32 on the same values, rounded once.
"""

from __future__ import annotations

import torch

ALWAYS = (torch.float32, torch.float16)


def bf16_supported() -> bool:
    """Whether the NPU computes bfloat16 (False without torch_npu)."""
    check = getattr(getattr(torch, "npu", None), "is_bf16_supported", None)
    return bool(check()) if check is not None else False


def _chip() -> str:
    name = getattr(getattr(torch, "npu", None), "get_device_name", None)
    try:
        return str(name()) if name is not None else "this machine (no NPU)"
    except Exception:  # no device to ask: say so rather than fail here
        return "this NPU"


def state_dtype(param_dtype: torch.dtype) -> torch.dtype:
    """The dtype of the optimizer state of a parameter of ``param_dtype``."""
    return torch.float32 if param_dtype == torch.bfloat16 else param_dtype


def check(optimizer: str, group_index: int, index: int, p: torch.Tensor) -> None:
    """Refuse, naming the parameter, a dtype the fused optimizers do not step here (bfloat16 on
    a chip without it, naming the chip)."""
    if p.dtype in ALWAYS:
        return
    where = f"{optimizer}: parameter {index} of group {group_index} has dtype {p.dtype}"
    if p.dtype == torch.bfloat16:
        if bf16_supported():
            return
        raise TypeError(
            f"{where}, which {_chip()} does not compute (bfloat16 needs an Ascend "
            "910B or later); fused optimizers support torch.float32 and "
            "torch.float16 parameters there"
        )
    raise TypeError(
        f"{where}; fused optimizers support torch.float32 and torch.float16 "
        "parameters only (and torch.bfloat16 on an Ascend 910B or later)"
    )
