"""Storage sizes and internal formats of NPU tensors.

The NPU may keep a tensor in an internal layout (NC1HWC0, FRACTAL_NZ, ...) chosen by
``npu_format_cast``; the layout changes how the device stores the values, never the values. The
emulated NPU stores every tensor's values in the plain ND layout, so a format cast leaves the
values as they are; the format it reports is the one last asked for, and its storage size
(``get_storage_size``, which sizes the slots of apex's combined buffers) is what the NPU would
store in that format. ``npu_format_cast`` returns a new tensor (the input itself when it is
already in that format), ``npu_format_cast_`` changes the tensor in place, as torch_npu's do.

As on the NPU, where the format belongs to the tensor's storage descriptor, the tensors torch_npu
makes in its input's format keep it: the ``*_like`` factories (``empty_like`` allocates in the
input's format), ``clone``, dtype casts (``.half()``, ``.float()``: ``npu_dtype_cast``) and
``detach`` (the same storage). The emulated NPU's dispatch mode passes the format on
(``inherit``); ``.cpu()`` and other copies to the host come back in ND.
"""
from __future__ import annotations

import torch

ACL_FORMAT_ND = 2
ACL_FORMAT_NC1HWC0 = 3
ACL_FORMAT_FRACTAL_NZ = 29
CUBE = 16  # the NPU's fractal edge: private formats pad dimensions to multiples of it
_FORMAT = "_apexnpu_npu_format"
_STORAGE = "_apexnpu_format_storage"  # elements the private format stores


def get_storage_size(tensor: torch.Tensor) -> int:
    """Elements in ``tensor``'s storage as the NPU stores them: what its private format stores
    when it was cast to one, else its storage's elements (shared by every view of it)."""
    recorded = getattr(tensor, _STORAGE, None)
    if recorded is not None:
        return recorded
    return tensor.untyped_storage().nbytes() // tensor.element_size() \
        if hasattr(tensor, "untyped_storage") else tensor.storage().size()


def keep_storage_size(tensor: torch.Tensor, size: int) -> None:
    """``tensor`` now reads memory of another storage (``npu_change_data_ptr``); as on the NPU,
    whose storage descriptor keeps its sizes, its storage size stays ``size``."""
    setattr(tensor, _STORAGE, size)


def _padded(extent: int) -> int:
    return -(-extent // CUBE) * CUBE


def private_storage_size(shape: torch.Size, acl_format: int) -> int:
    """Elements the NPU stores for a tensor of ``shape`` in ``acl_format``: FRACTAL_NZ pads the
    last two dimensions to 16x16 fractals, NC1HWC0 pads the channels of NCHW to 16; other
    formats store the elements as they are."""
    dims = list(shape)
    if acl_format == ACL_FORMAT_FRACTAL_NZ and dims:
        rows, cols = (dims[-2] if len(dims) >= 2 else 1), dims[-1]
        batch = 1
        for d in dims[:-2]:
            batch *= d
        return batch * _padded(rows) * _padded(cols)
    if acl_format == ACL_FORMAT_NC1HWC0 and len(dims) == 4:
        n, c, h, w = dims
        return n * _padded(c) * h * w
    numel = 1
    for d in dims:
        numel *= d
    return numel


def _check_format(acl_format: int) -> None:
    if isinstance(acl_format, bool) or not isinstance(acl_format, int) or acl_format < 0:
        raise TypeError(f"npu_format_cast: acl_format must be a non-negative int, got "
                        f"{acl_format!r}")


def npu_format_cast_(tensor: torch.Tensor, acl_format: int) -> torch.Tensor:
    """Put ``tensor`` itself into ``acl_format``; the values stay as they are."""
    _check_format(acl_format)
    setattr(tensor, _FORMAT, acl_format)
    if acl_format in (ACL_FORMAT_FRACTAL_NZ, ACL_FORMAT_NC1HWC0):
        setattr(tensor, _STORAGE, private_storage_size(tensor.shape, acl_format))
    elif hasattr(tensor, _STORAGE):
        delattr(tensor, _STORAGE)
    return tensor


def npu_format_cast(tensor: torch.Tensor, acl_format: int) -> torch.Tensor:
    """``tensor`` in ``acl_format``: itself when it already is, else a new tensor with its
    values (autograd sees an identity)."""
    _check_format(acl_format)
    if get_npu_format(tensor) == acl_format:
        return tensor
    return npu_format_cast_(tensor.clone(), acl_format)


def get_npu_format(tensor: torch.Tensor) -> int:
    return getattr(tensor, _FORMAT, ACL_FORMAT_ND)


# The aten operations whose result the NPU makes in its first argument's format.
_INHERITING = ("empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
               "clone", "_to_copy", "detach")
INHERITING_OPS = frozenset(getattr(torch.ops.aten, name) for name in _INHERITING)


def inherit(source: object, out: object) -> None:
    """``out``, an NPU tensor made from ``source`` by one of ``INHERITING_OPS``, takes its
    format and the storage size that format stores."""
    fmt = getattr(source, _FORMAT, None)
    if fmt is None or not isinstance(out, torch.Tensor) or out is source \
            or out.shape != source.shape:  # type: ignore[attr-defined]
        return
    setattr(out, _FORMAT, fmt)
    storage = getattr(source, _STORAGE, None)
    if storage is not None:
        setattr(out, _STORAGE, storage)


def drop(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor``, a copy on the host, in ND: host memory has no private formats."""
    for mark in (_FORMAT, _STORAGE):
        if hasattr(tensor, mark):
            delattr(tensor, mark)
    return tensor


def follow_data(tensor: torch.Tensor, data: torch.Tensor) -> None:
    """``tensor.data = data``: the tensor takes ``data``'s format, as it takes its storage."""
    for mark in (_FORMAT, _STORAGE):
        value = getattr(data, mark, None)
        if value is not None:
            setattr(tensor, mark, value)
        elif hasattr(tensor, mark):
            delattr(tensor, mark)


def install() -> None:
    """``Tensor.npu_format_cast`` and ``Tensor.npu_format_cast_``, as torch_npu adds them."""
    torch.Tensor.npu_format_cast = npu_format_cast
    torch.Tensor.npu_format_cast_ = npu_format_cast_
