"""``torch.npu.FloatTensor`` and the other legacy tensor types of the NPU.

Ascend code names NPU tensors by these types: ``x.type() == "torch.npu.HalfTensor"``,
``isinstance(x, torch.npu.FloatTensor)``, ``x.type(torch.npu.HalfTensor)``,
``torch.set_default_tensor_type(torch.npu.FloatTensor)``. Each type is a class whose instances
are the NPU tensors of its dtype; calling it builds a tensor like ``torch.FloatTensor(...)`` does,
on the current NPU.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import torch

from .. import _wraps
from . import devices, placement

DTYPES: Dict[str, torch.dtype] = {
    "FloatTensor": torch.float32,
    "HalfTensor": torch.float16,
    "DoubleTensor": torch.float64,
    "BFloat16Tensor": torch.bfloat16,
    "ByteTensor": torch.uint8,
    "CharTensor": torch.int8,
    "ShortTensor": torch.int16,
    "IntTensor": torch.int32,
    "LongTensor": torch.int64,
    "BoolTensor": torch.bool,
}


class NpuTensorType(type):
    """The type of ``torch.npu.<Name>Tensor``."""

    dtype: torch.dtype

    def __instancecheck__(cls, obj: Any) -> bool:
        return (
            isinstance(obj, torch.Tensor)
            and placement.npu_of(obj) is not None
            and obj.dtype == cls.dtype
        )

    def __call__(cls, *args: Any, **kwargs: Any) -> torch.Tensor:
        host = getattr(torch, cls.__name__)(*args, **kwargs)
        return placement.put(host, devices.current_device())

    def __repr__(cls) -> str:
        return f"<class 'torch.npu.{cls.__name__}'>"


TYPES = {
    name: NpuTensorType(name, (), {"dtype": dtype, "is_npu": True, "__module__": "torch.npu"})
    for name, dtype in DTYPES.items()
}


def npu_dtype(spec: Any) -> Optional[torch.dtype]:
    """The dtype of an NPU tensor type given as a class or a name ("torch.npu.HalfTensor"), or
    None when ``spec`` is not an NPU tensor type."""
    if isinstance(spec, NpuTensorType):
        return spec.dtype
    if isinstance(spec, str):
        prefix = (
            "torch.cuda."
            if devices.cuda_means_npu and spec.startswith("torch.cuda.")
            else "torch.npu."
        )
        if spec.startswith(prefix):
            return DTYPES.get(spec[len(prefix) :])
    return None


def npu_type_name(host_name: str) -> str:
    """'torch.HalfTensor' -> 'torch.npu.HalfTensor'."""
    return (
        "torch.npu." + host_name[len("torch.") :] if host_name.startswith("torch.") else host_name
    )


def host_type(dtype: torch.dtype) -> Any:
    """The CPU legacy type of ``dtype`` (torch.FloatTensor for float32)."""
    for name, d in DTYPES.items():
        if d == dtype:
            return getattr(torch, name)
    raise TypeError(f"no tensor type for {dtype}")


_default_on_npu = [False]


def default_is_npu() -> bool:
    """Whether tensors made without a device go to the current NPU
    (``torch.set_default_tensor_type(torch.npu.FloatTensor)``)."""
    return _default_on_npu[0]


def _wrap_set_default_tensor_type(original):
    def set_default_tensor_type(t: Any) -> None:
        dtype = npu_dtype(t)
        if dtype is None:
            original(t)
            _default_on_npu[0] = False
            return
        original(host_type(dtype))
        _default_on_npu[0] = True

    set_default_tensor_type.__doc__ = original.__doc__
    _wraps.mark(set_default_tensor_type, original)
    return set_default_tensor_type


def install() -> None:
    if not _wraps.is_wrapper(torch.set_default_tensor_type):
        torch.set_default_tensor_type = _wrap_set_default_tensor_type(torch.set_default_tensor_type)
