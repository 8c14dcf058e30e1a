"""torch's ``meta`` device beside the emulated NPU.

A meta tensor has a shape, a dtype and strides but no memory, so no values: torch computes only
the metadata of an operation on it. It is on no NPU. The emulation leaves every operation that
makes or reads meta tensors to torch as it is: ``npu_tensor.to("meta")``,
``torch.empty_like(npu_tensor, device="meta")``, ``Module.to_empty(device="meta")`` and fp16 or
bf16 arithmetic on meta tensors (FSDP's and accelerate's deferred initialisation) have no values
to round, saturate or check for overflow. Making real tensors from meta ones is torch's way
too: ``Module.to_empty(device="npu")`` makes uninitialised NPU tensors, which
``reset_parameters()`` or a loaded state dict fills.
"""

from __future__ import annotations

from typing import Any, Dict, Sequence

import torch


def names_meta(device: Any) -> bool:
    """Whether a device argument (a string or a ``torch.device``) names the meta device."""
    if device is None:
        return False
    if isinstance(device, str):
        return device == "meta" or device.startswith("meta:")
    return getattr(device, "type", None) == "meta"


def runs_on_meta(leaves: Sequence[Any], kwargs: Dict[str, Any], scan: bool) -> bool:
    """Whether an aten operation makes its results on the meta device (its ``device``
    argument), or, when ``scan``, reads a meta tensor among ``leaves``. Callers scan only the
    operations the emulation would compute (fp16, bf16): torch runs the others as they are."""
    if names_meta(kwargs.get("device")):
        return True
    if scan:
        for x in leaves:
            if isinstance(x, torch.Tensor) and x.is_meta:
                return True
    return False
