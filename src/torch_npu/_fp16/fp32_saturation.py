"""fp32 results of an Ascend 910 in saturation mode: an arithmetic result that overflows is stored
as ±FLT_MAX, a NaN as +0, and the float status is raised -- the same register that fp16
overflows raise, which loss scalers and ``torch._amp_foreach_non_finite_check_and_unscale_``
read. INF/NAN mode (a 910B's default) leaves fp32 results alone.

An inf or NaN that an operation only carries from its inputs (a mask filled with -inf, a value
moved from the host) is no overflow: when any floating input or scalar of the operation is
already non-finite, its results stay as they are. So the check costs one read of each fp32
result, in the runtime when this package carries it; inputs are read only when a result is
non-finite.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

import torch

from .. import _runtime
from . import float_status, op_schema

_FLOAT = torch.float32


def _written(func: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> List[torch.Tensor]:
    """The tensors the operation writes in place (in-place, ``out=``, foreach lists)."""
    found: List[torch.Tensor] = []
    for arg in op_schema.schema_of(func).written:
        _, value = op_schema.written_value(arg, tuple(args), kwargs)
        values = value if isinstance(value, (list, tuple)) else [value]
        found.extend(x for x in values if isinstance(x, torch.Tensor))
    return found


def _nonfinite(x: torch.Tensor, rt: Any) -> bool:
    if x.numel() == 0 or x._is_zerotensor():  # autograd's zeros: nothing stored
        return False
    if rt is not None and x.is_contiguous() and x.data_ptr():  # a ZeroTensor has no memory
        return bool(rt.has_nonfinite_float(x.data_ptr(), x.numel()))
    # One pass, no temporary: min and max are finite exactly when every value is (both carry a
    # NaN). A float64 sum would answer the same but costs ~50x more (a cast per element).
    lowest, highest = torch.aminmax(x)
    return not (math.isfinite(float(lowest)) and math.isfinite(float(highest)))


def _values(x: torch.Tensor) -> Any:
    """The stored values of ``x``: itself when strided, a sparse COO tensor's values (which
    share its memory), None for other layouts (no saturation is emulated for those)."""
    if x.layout is torch.strided:
        return x
    if x.layout is torch.sparse_coo:
        return x._values()
    return None


def _carries_nonfinite(leaves: Sequence[Any], written: Sequence[torch.Tensor]) -> bool:
    """Whether an input the operation reads (not one it only writes) is already inf or NaN."""
    skip = {id(x) for x in written}
    for x in leaves:
        if isinstance(x, float) and not math.isfinite(x):
            return True
        if isinstance(x, torch.Tensor) and id(x) not in skip and x.is_floating_point():
            values = _values(x)
            if values is not None and values.numel() and not bool(torch.isfinite(values).all()):
                return True
    return False


def _saturate(x: torch.Tensor, rt: Any) -> None:
    if rt is not None and x.is_contiguous():
        rt.saturate_float(x.data_ptr(), x.numel())  # raises the (process's one) status
        return
    x.copy_(
        torch.nan_to_num(
            x, nan=0.0, posinf=torch.finfo(_FLOAT).max, neginf=-torch.finfo(_FLOAT).max
        )
    )
    float_status.set()


def saturate(
    func: Any,
    args: Sequence[Any],
    kwargs: Dict[str, Any],
    outputs: Sequence[Any],
    leaves: Sequence[Any],
) -> None:
    """Store the fp32 results of an NPU operation as a 910 in saturation mode does."""
    written = _written(func, args, kwargs) if op_schema.schema_of(func).written else ()
    rt = None
    bad: List[torch.Tensor] = []
    for x in (*outputs, *written):
        if (
            not isinstance(x, torch.Tensor)
            or x.dtype != _FLOAT
            or getattr(x, "fake_mode", None) is not None
            or x.device.type == "meta"
        ):  # fake and meta tensors have no values
            continue
        values = _values(x)  # a sparse gradient (nn.Embedding(sparse=True)): its values
        if values is None:
            continue
        if rt is None:
            rt = _kernels()
        if _nonfinite(values, rt or None):
            bad.append(values)
    if not bad or _carries_nonfinite(leaves, written):
        return
    for x in {id(x): x for x in bad}.values():
        _saturate(x, rt or None)


def _kernels() -> Any:
    """The runtime when it has these kernels, else False (torch operations)."""
    rt = _runtime.runtime_kernels()
    return rt if rt is not None and hasattr(rt, "saturate_float") else False
