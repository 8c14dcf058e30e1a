"""torch_npu's deprecated public path of the int32-counter batch norms (see
``_batchnorm_with_int32_count``); scripts written for older torch_npu import from it."""
from ._batchnorm_with_int32_count import (FastBatchNorm1d, FastBatchNorm2d,  # noqa: F401
                                          FastBatchNorm3d, FastSyncBatchNorm)

__all__ = []
