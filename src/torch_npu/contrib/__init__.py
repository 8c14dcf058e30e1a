"""Ascend's contrib helpers, as far as the emulated NPU provides them; as in torch_npu, the
functions and modules are also names of ``torch_npu.contrib`` itself."""
from .function import npu_fast_condition_index_put, npu_iou, npu_ptiou
from .module import (DCNv2, FastBatchNorm1d, FastBatchNorm2d, FastBatchNorm3d, FastSyncBatchNorm,
                     ModulatedDeformConv, Prefetcher, PSROIPool, ROIAlign)

__all__ = ["DCNv2", "FastBatchNorm1d", "FastBatchNorm2d", "FastBatchNorm3d", "FastSyncBatchNorm",
           "ModulatedDeformConv", "PSROIPool", "Prefetcher", "ROIAlign",
           "npu_fast_condition_index_put", "npu_iou", "npu_ptiou"]
