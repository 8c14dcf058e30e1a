"""The ``out=(var, m, v)`` argument of torch_npu's Adam kernels (older releases named them as
keywords ``var=, m=, v=``)."""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple

import torch


def var_m_v(
    name: str, out: Optional[Sequence[torch.Tensor]], kwargs: Dict[str, Any]
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if out is None and all(k in kwargs for k in ("var", "m", "v")):
        out = (kwargs.pop("var"), kwargs.pop("m"), kwargs.pop("v"))
    if kwargs:
        raise TypeError(f"{name}() got unexpected keyword arguments {sorted(kwargs)}")
    if out is None:
        raise RuntimeError(
            f"{name} is not implemented for Tensor: pass out=(var, m, v), the "
            "tensors it updates in place"
        )
    if len(out) != 3:
        raise RuntimeError(f"{name}: out must be (var, m, v), got {len(out)} tensors")
    var, m, v = out
    for t in (m, v):
        if t.shape != var.shape:
            raise RuntimeError(
                f"{name}: var, m and v must have one shape, got "
                f"{tuple(var.shape)}, {tuple(m.shape)}, {tuple(v.shape)}"
            )
    return var, m, v
