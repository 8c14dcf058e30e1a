"""Ascend's contrib helpers, as far as the emulated NPU provides them; as in torch_npu, the
functions and modules are also names of ``torch_npu.contrib`` itself."""
from .function import (fuse_add_softmax_dropout, npu_ciou, npu_diou, npu_fast_condition_index_put,
                       npu_fused_attention, npu_fused_attention_with_layernorm, npu_giou, npu_iou,
                       npu_ptiou)
from .module import (DCNv2, FastBatchNorm1d, FastBatchNorm2d, FastBatchNorm3d, FastSyncBatchNorm,
                     Mish, ModulatedDeformConv, NpuCachedDropout, NpuFairseqDropout, Prefetcher,
                     PSROIPool, ROIAlign, SiLU, Swish)

__all__ = ["DCNv2", "FastBatchNorm1d", "FastBatchNorm2d", "FastBatchNorm3d", "FastSyncBatchNorm",
           "Mish", "ModulatedDeformConv", "NpuCachedDropout", "NpuFairseqDropout", "PSROIPool",
           "Prefetcher", "ROIAlign", "SiLU", "Swish", "fuse_add_softmax_dropout", "npu_ciou",
           "npu_diou", "npu_fast_condition_index_put", "npu_fused_attention",
           "npu_fused_attention_with_layernorm", "npu_giou", "npu_iou", "npu_ptiou"]
