"""Storage sizes and internal formats of NPU tensors.

The NPU may keep a tensor in an internal layout (NC1HWC0, FRACTAL_NZ, ...) chosen by
``npu_format_cast``; the layout changes how the device stores the values, never the values. The
emulated NPU keeps every tensor's values in the plain ND layout. What a format changes is what
torch_npu reports: the format (``get_npu_format``) and the elements the NPU stores
(``get_storage_size``, which sizes the slots of apex's combined buffers; FRACTAL_NZ pads the last
two dimensions to fractals of 16 rows by C0 columns, NC1HWC0 pads the channels to 16).

``npu_format_cast(input, acl_format, *, customize_dtype=None, input_dtype=None)``, as torch_npu:

- the input itself when it is in that format already (so its storage);
- between base formats (ND, NCHW, NHWC, NCDHW) the input itself, its format changed: the NPU
  stores them alike and relabels the tensor;
- else a new tensor (autograd sees an identity) whose storage is as large as the NPU's (its
  ``untyped_storage()`` too), holding the values in ND order at its start.
- ``acl_format`` may be a tensor (``npu_format_cast.Tensor``): its format is the target.
- FRACTAL_NZ's C0 is 32 bytes of the element: 32 columns for one-byte dtypes, 16 for the
  others (wider ones are stored as fp16, as the NPU does), or ``32 / itemsize`` of
  ``customize_dtype`` (a torch dtype number, or torch_npu's ``DType`` of 256 up). That argument
  needs the aclnn cast of the Ascend 910B and later chips; the 910 refuses it as torch_npu does.
  ``input_dtype`` (how the NPU reads packed 4-bit values) is accepted and not used.
- On the 910B and later chips a one-dimensional ND tensor (not a view of a larger one) cast to
  FRACTAL_NZ stays ND, as torch_npu's aclnn cast falls back there.

``npu_format_cast_`` changes the tensor in place (``npu_format_cast_(input, acl_format)``) and
keeps its storage, recording the size the format stores; ``npu_format_cast_(input, src)`` with
a tensor copies ``src``'s values into ``input``, which keeps its format.

As on the NPU, where the format belongs to the tensor's storage descriptor, the tensors torch_npu
makes in its input's format keep it: the ``*_like`` factories (``empty_like`` allocates in the
input's format), ``clone``, dtype casts (``.half()``, ``.float()``: ``npu_dtype_cast``) and
``detach`` (the same storage). The emulated NPU's dispatch mode passes the format on
(``inherit``); ``.cpu()`` and other copies to the host come back in ND.
"""

from __future__ import annotations

import enum
from typing import Optional, Sequence, Union

import torch

from . import soc, storage_makers

ACL_FORMAT_NCHW = 0
ACL_FORMAT_NHWC = 1
ACL_FORMAT_ND = 2
ACL_FORMAT_NC1HWC0 = 3
ACL_FORMAT_FRACTAL_NZ = 29
ACL_FORMAT_NCDHW = 30
BASE_FORMATS = frozenset({ACL_FORMAT_NCHW, ACL_FORMAT_NHWC, ACL_FORMAT_ND, ACL_FORMAT_NCDHW})
CUBE = 16  # the NPU's fractal edge: private formats pad dimensions to multiples of it
_BLOCK_BYTES = 32  # FRACTAL_NZ's C0 holds 32 bytes
_FORMAT = "_apexnpu_npu_format"
_STORAGE = "_apexnpu_format_storage"  # elements the private format stores

# customize_dtype: a torch ScalarType number, or torch_npu's DType (aclDataType + 256).
_SCALAR_TYPE_BYTES = (1, 1, 2, 4, 8, 2, 4, 8, 4, 8, 16, 1, 1, 1, 4, 2)
_ACL_DTYPE_OFFSET = 256
_ACL_DTYPE_BYTES = {
    0: 4,
    1: 2,
    2: 1,
    3: 4,
    4: 1,
    6: 2,
    7: 2,
    8: 4,
    9: 8,
    10: 8,
    11: 8,
    12: 1,
    16: 8,
    17: 16,
    27: 2,
    29: 0.5,
    34: 1,
    35: 1,
    36: 1,
    37: 1,
}


def get_storage_size(input: torch.Tensor) -> int:  # noqa: A002 - torch_npu's name
    """Elements in ``input``'s storage as the NPU stores them: what its private format stores
    when it was cast to one, else its storage's elements (shared by every view of it)."""
    recorded = getattr(input, _STORAGE, None)
    if recorded is not None:
        return recorded
    return (
        input.untyped_storage().nbytes() // input.element_size()
        if hasattr(input, "untyped_storage")
        else input.storage().size()
    )


def keep_storage_size(tensor: torch.Tensor, size: int) -> None:
    """``tensor`` now reads memory of another storage (``npu_change_data_ptr``); as on the NPU,
    whose storage descriptor keeps its sizes, its storage size stays ``size``."""
    setattr(tensor, _STORAGE, size)


def _padded(extent: int, unit: int = CUBE) -> int:
    return -(-extent // unit) * unit


def _customize_bytes(customize_dtype: int) -> float:
    if 0 <= customize_dtype < len(_SCALAR_TYPE_BYTES):
        return _SCALAR_TYPE_BYTES[customize_dtype]
    acl = customize_dtype - _ACL_DTYPE_OFFSET
    if acl in _ACL_DTYPE_BYTES:
        return _ACL_DTYPE_BYTES[acl]
    raise RuntimeError(
        f"npu_format_cast: customize_dtype {customize_dtype} is not a dtype the "
        "NPU's format cast takes"
    )


def nz_c0(itemsize: int, customize_dtype: Optional[int] = None) -> int:
    """FRACTAL_NZ's C0 (columns per fractal) for elements of ``itemsize`` bytes."""
    if customize_dtype is not None:
        return int(_BLOCK_BYTES / _customize_bytes(customize_dtype))
    return _BLOCK_BYTES // min(itemsize, 2)


def private_storage_size(
    shape: Sequence[int], acl_format: int, itemsize: int = 2, customize_dtype: Optional[int] = None
) -> int:
    """Elements the NPU stores for a tensor of ``shape`` in ``acl_format``: FRACTAL_NZ pads the
    last two dimensions to 16 rows by C0 columns (one dimension is a column), NC1HWC0 pads the
    channels of NCHW (fewer dimensions read as C, CH, CHW) to 16; other formats store the
    elements as they are."""
    dims = [int(d) for d in shape]
    if acl_format == ACL_FORMAT_FRACTAL_NZ:
        dims = (dims or [1]) + ([1] if len(dims) <= 1 else [])
        batch = 1
        for d in dims[:-2]:
            batch *= d
        return batch * _padded(dims[-2]) * _padded(dims[-1], nz_c0(itemsize, customize_dtype))
    if acl_format == ACL_FORMAT_NC1HWC0 and len(dims) <= 4:
        n, c, h, w = dims if len(dims) == 4 else [1] + dims + [1] * (3 - len(dims))
        return n * _padded(c) * h * w
    numel = 1
    for d in dims:
        numel *= d
    return numel


def _check_format(acl_format: int) -> None:
    if isinstance(acl_format, bool) or not isinstance(acl_format, int) or acl_format < 0:
        raise TypeError(
            f"npu_format_cast: acl_format must be a non-negative int, got {acl_format!r}"
        )


def _aclnn_format_cast() -> bool:
    """The 910B family and the A3 chips cast formats with aclnn (torch_npu's
    ``IsAclnnFormatCastSupported``)."""
    return soc.inf_nan_by_default()


def _storage_dims(tensor: torch.Tensor) -> int:
    """Dimensions of the tensor the storage was made for (a view's base's); one for a storage
    made by itself (``torch.UntypedStorage(n, device="npu")``), which a tensor ``set_`` to it
    shares: the NPU describes such a storage as a vector of its bytes."""
    base = getattr(tensor, "_base", None)
    if base is not None:
        return base.dim()
    storage_of = getattr(tensor, "untyped_storage", None)  # torch 2.x
    if storage_of is not None and getattr(storage_of(), storage_makers.MADE_ALONE, False):
        return 1
    return tensor.dim()


class Format(enum.IntEnum):
    """``torch_npu.Format``: the NPU's storage formats by CANN's numbers (torch_npu 2.x)."""

    UNDEFINED = -1
    NCHW = 0
    NHWC = 1
    ND = 2
    NC1HWC0 = 3
    FRACTAL_Z = 4
    NC1HWC0_C04 = 12
    HWCN = 16
    NDHWC = 27
    FRACTAL_NZ = 29
    NCDHW = 30
    NDC1HWC0 = 32
    FRACTAL_Z_3D = 33
    NC = 35
    NCL = 47
    FRACTAL_NZ_C0_16 = 50
    FRACTAL_NZ_C0_32 = 51
    FRACTAL_NZ_C0_2 = 52
    FRACTAL_NZ_C0_4 = 53
    FRACTAL_NZ_C0_8 = 54

    def __str__(self) -> str:
        return self.name


# torch_npu 2.x answers a Format (an int too); torch_npu 1.x a plain int.
_AS_FORMAT = int(torch.__version__.split(".")[0]) >= 2


def get_npu_format(input: torch.Tensor) -> int:  # noqa: A002 - torch_npu's name
    found = getattr(input, _FORMAT, ACL_FORMAT_ND)
    return Format(found) if _AS_FORMAT else found


def _set_format(tensor: torch.Tensor, acl_format: int, stored: Optional[int]) -> torch.Tensor:
    setattr(tensor, _FORMAT, acl_format)
    if stored is not None and acl_format not in BASE_FORMATS:
        setattr(tensor, _STORAGE, stored)
    elif hasattr(tensor, _STORAGE):
        delattr(tensor, _STORAGE)
    return tensor


def _contiguous_strides(shape: Sequence[int]) -> list:
    strides, step = [], 1
    for d in reversed(list(shape)):
        strides.insert(0, step)
        step *= max(int(d), 1)
    return strides


class _Cast(torch.autograd.Function):
    """``input``'s values in a new tensor on a storage of ``elements`` (ND order at its start);
    the gradient passes through, as a format cast's does."""

    @staticmethod
    def forward(ctx, input, elements):  # noqa: D102,A002 - torch.autograd.Function protocol
        with torch.no_grad():
            flat = input.new_zeros(max(int(elements), input.numel()))
            storage = flat.untyped_storage() if hasattr(flat, "untyped_storage") else flat.storage()
            out = input.new_empty(0).set_(storage, 0, input.shape, _contiguous_strides(input.shape))
            out.copy_(input)
        return out

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        return grad, None


def npu_format_cast(
    input: torch.Tensor,  # noqa: A002 - torch_npu's name
    acl_format: Union[int, torch.Tensor, None] = None,
    *,
    customize_dtype: Optional[int] = None,
    input_dtype: Optional[int] = None,
    dst: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """``input`` in ``acl_format`` (or in the format of the tensor ``dst``/``acl_format``)."""
    if acl_format is None and dst is None:
        raise TypeError("npu_format_cast() missing the target format: acl_format or dst")
    target = dst if acl_format is None else acl_format
    if isinstance(target, torch.Tensor):
        target = get_npu_format(target)
    _check_format(target)
    current = get_npu_format(input)
    if (
        target == ACL_FORMAT_FRACTAL_NZ
        and current == ACL_FORMAT_ND
        and _aclnn_format_cast()
        and _storage_dims(input) < 2
    ):
        target = ACL_FORMAT_ND  # a vector has no fractals: torch_npu's aclnn cast keeps ND
    if current == target:
        return input
    if current in BASE_FORMATS and target in BASE_FORMATS:
        return _set_format(input, target, None)
    if customize_dtype is not None and not _aclnn_format_cast():
        raise RuntimeError("customize_dtype is not supported by the current soc version.")
    stored = private_storage_size(input.shape, target, input.element_size(), customize_dtype)
    out = _Cast.apply(input, stored)
    return _set_format(out, target, stored)


def npu_format_cast_(
    input: torch.Tensor,  # noqa: A002 - torch_npu's name
    acl_format: Union[int, torch.Tensor, None] = None,
    *,
    customize_dtype: Optional[int] = None,
    input_dtype: Optional[int] = None,
    src: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """Put ``input`` itself into ``acl_format`` (its values stay as they are), or copy the
    values of the tensor ``src`` (``acl_format`` a tensor) into it in its own format."""
    source = src if acl_format is None else acl_format
    if isinstance(source, torch.Tensor):
        with torch.no_grad():
            input.copy_(source)
        return input
    _check_format(source)
    if get_npu_format(input) == source:
        return input
    if customize_dtype is not None and not _aclnn_format_cast() and source not in BASE_FORMATS:
        raise RuntimeError("customize_dtype is not supported by the current soc version.")
    stored = private_storage_size(input.shape, source, input.element_size(), customize_dtype)
    return _set_format(input, source, stored)


# The aten operations whose result the NPU makes in its first argument's format.
_INHERITING = (
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "rand_like",
    "randn_like",
    "clone",
    "_to_copy",
    "detach",
)
INHERITING_OPS = frozenset(getattr(torch.ops.aten, name) for name in _INHERITING)


def inherit(source: object, out: object) -> None:
    """``out``, an NPU tensor made from ``source`` by one of ``INHERITING_OPS``, takes its
    format and the storage size that format stores."""
    fmt = getattr(source, _FORMAT, None)
    if (
        fmt is None
        or not isinstance(out, torch.Tensor)
        or out is source
        or out.shape != source.shape
    ):  # type: ignore[attr-defined]
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
