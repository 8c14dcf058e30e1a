"""Which low-precision dtype amp computes in: float16 (O1, O2, O3) or bfloat16 (O4, O5, or
O1/O2 asked for it with ``patch_torch_functions_type`` / ``cast_model_type``).

bfloat16 has float32's exponent range, so gradients do not overflow where fp16's would: its
loss scale defaults to 1 (a static scale; ``loss_scale="dynamic"`` or a number may still be
given). Only a chip that computes in bfloat16 can train in it: the Ascend 910B family and later
(``torch.npu.is_bf16_supported()``); on a 910 amp.initialize refuses it before changing
anything.
"""

from __future__ import annotations

from typing import Any, Optional

import torch

LOW_PRECISION_DTYPES = (torch.float16, torch.bfloat16)
BF16_DEFAULT_LOSS_SCALE = 1.0
BF16_LEVELS = {"O4": "O1", "O5": "O2"}  # NVIDIA's bfloat16 levels, each its fp16 level's twin


def is_low_precision(dtype: torch.dtype) -> bool:
    """Whether amp treats ``dtype`` as a model's low-precision type (master weights, casts)."""
    return dtype in LOW_PRECISION_DTYPES


def check_patch_type(value: Any) -> None:
    """``patch_torch_functions_type`` must be float16 or bfloat16 (None: the level's default)."""
    if value is not None and value not in LOW_PRECISION_DTYPES:
        raise RuntimeError(
            "amp.initialize: patch_torch_functions_type must be torch.float16 or "
            f"torch.bfloat16, got {value!r}"
        )


def amp_dtype(properties: Any) -> Optional[torch.dtype]:
    """The low-precision dtype ``properties`` (amp's options after overrides) compute in: the
    model's cast type when it is a low-precision one (O2, O3, O5), else the type O1/O4 cast
    functions to; None when amp computes in float32 (O0, or nothing low-precision asked)."""
    if properties.cast_model_type in LOW_PRECISION_DTYPES:
        return properties.cast_model_type
    if properties.patch_torch_functions:
        return properties.patch_torch_functions_type or torch.float16
    return None


def require_supported(dtype: Optional[torch.dtype]) -> None:
    """Refuse bfloat16 on a chip without it, naming the chip (torch_npu's public API only)."""
    if dtype != torch.bfloat16 or torch.npu.is_bf16_supported():
        return
    raise RuntimeError(
        f"amp.initialize: bfloat16 training needs an NPU that computes in bfloat16 (Ascend 910B "
        f"or later); this NPU is {torch.npu.get_device_name()}, which has no bfloat16 "
        "arithmetic. Use float16 (opt_level 'O1' or 'O2' without bfloat16) on this chip."
    )
