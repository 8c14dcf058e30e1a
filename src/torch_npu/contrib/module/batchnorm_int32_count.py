"""The emulator's first path of the int32-counter batch norms; they live in
``_batchnorm_with_int32_count`` (torch_npu's module), this one stays importable."""
from ._batchnorm_with_int32_count import (FastBatchNorm1d, FastBatchNorm2d,  # noqa: F401
                                          FastBatchNorm3d, FastSyncBatchNorm)

__all__ = ["FastBatchNorm1d", "FastBatchNorm2d", "FastBatchNorm3d", "FastSyncBatchNorm"]
