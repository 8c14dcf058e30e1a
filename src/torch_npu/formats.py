"""Storage sizes and internal formats of NPU tensors.

The NPU may keep a tensor in an internal layout (NC1HWC0, FRACTAL_NZ, ...) chosen by
``npu_format_cast``; the layout changes how the device stores the values, never the values. The
emulated NPU stores every tensor in the plain ND layout, so a format cast leaves the tensor as it
is, and the format it reports is the one last asked for.
"""
from __future__ import annotations

import torch

from apex.npu import storage_sizes

ACL_FORMAT_ND = 2
_FORMAT = "_apexnpu_npu_format"


def get_storage_size(tensor: torch.Tensor) -> int:
    """Elements in ``tensor``'s storage. A tensor that apex's combine_npu pointed into a combined
    buffer keeps the size of its own storage, as on the NPU."""
    return storage_sizes.storage_size(tensor)


def npu_format_cast_(tensor: torch.Tensor, acl_format: int) -> torch.Tensor:
    """Record ``acl_format`` as the tensor's format; the values stay as they are."""
    if isinstance(acl_format, bool) or not isinstance(acl_format, int) or acl_format < 0:
        raise TypeError(f"npu_format_cast: acl_format must be a non-negative int, got "
                        f"{acl_format!r}")
    setattr(tensor, _FORMAT, acl_format)
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
