"""torch_npu's deprecated public path of the int32-counter batch norms (see
``_batchnorm_with_int32_count``); scripts written for older torch_npu import from it."""

# ruff: noqa: F401  (re-exports)
from ._batchnorm_with_int32_count import (
    FastBatchNorm1d,
    FastBatchNorm2d,
    FastBatchNorm3d,
    FastSyncBatchNorm,
)

__all__ = []
