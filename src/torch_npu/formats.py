"""Storage sizes and internal formats of NPU tensors.

The NPU may keep a tensor in an internal layout (NC1HWC0, FRACTAL_NZ, ...) chosen by
``npu_format_cast``; the layout changes how the device stores the values, never the values. The
emulated NPU stores every tensor's values in the plain ND layout, so a format cast leaves the
values as they are; the format it reports is the one last asked for, and its storage size
(``get_storage_size``, which sizes the slots of apex's combined buffers) is what the NPU would
store in that format.
"""
from __future__ import annotations

import torch

from apex.npu import storage_sizes

ACL_FORMAT_ND = 2
ACL_FORMAT_NC1HWC0 = 3
ACL_FORMAT_FRACTAL_NZ = 29
CUBE = 16  # the NPU's fractal edge: private formats pad dimensions to multiples of it
_FORMAT = "_apexnpu_npu_format"


def get_storage_size(tensor: torch.Tensor) -> int:
    """Elements in ``tensor``'s storage. A tensor that apex's combine_npu pointed into a combined
    buffer keeps the size of its own storage, as on the NPU."""
    return storage_sizes.storage_size(tensor)


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


def npu_format_cast_(tensor: torch.Tensor, acl_format: int) -> torch.Tensor:
    """Record ``acl_format`` as the tensor's format; the values stay as they are."""
    if isinstance(acl_format, bool) or not isinstance(acl_format, int) or acl_format < 0:
        raise TypeError(f"npu_format_cast: acl_format must be a non-negative int, got "
                        f"{acl_format!r}")
    setattr(tensor, _FORMAT, acl_format)
    storage_sizes.record_format_storage(tensor, private_storage_size(tensor.shape, acl_format))
    return tensor


def npu_format_cast(tensor: torch.Tensor, acl_format: int) -> torch.Tensor:
    """The tensor in format ``acl_format``: on the emulated NPU, the tensor itself."""
    return npu_format_cast_(tensor, acl_format)


def get_npu_format(tensor: torch.Tensor) -> int:
    return getattr(tensor, _FORMAT, ACL_FORMAT_ND)


def _install_methods() -> None:
    if not hasattr(torch.Tensor, "npu_format_cast"):
        torch.Tensor.npu_format_cast = npu_format_cast
        torch.Tensor.npu_format_cast_ = npu_format_cast_


_install_methods()
