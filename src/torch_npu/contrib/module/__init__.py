"""``torch_npu.contrib.module``: the NPU modules of Ascend's contrib the emulator provides, at
torch_npu's module paths (``_batchnorm_with_int32_count``, ``_ensemble_dropout``, ...)."""

from ._batchnorm_with_int32_count import (
    FastBatchNorm1d,
    FastBatchNorm2d,
    FastBatchNorm3d,
    FastSyncBatchNorm,
)
from ._ensemble_dropout import NpuPreGenDropout
from .activations import Mish, SiLU, Swish
from .channel_shuffle import ChannelShuffle
from .crossentropy import LabelSmoothingCrossEntropy
from .deform_conv import DCNv2, ModulatedDeformConv
from .drop_path import NpuDropPath
from .ensemble_dropout import NpuCachedDropout, NpuFairseqDropout
from .npu_modules import DropoutWithByteMask
from .prefetcher import Prefetcher
from .ps_roi_pooling import PSROIPool
from .roi_align import ROIAlign

__all__ = [
    "ChannelShuffle",
    "DCNv2",
    "DropoutWithByteMask",
    "FastBatchNorm1d",
    "FastBatchNorm2d",
    "FastBatchNorm3d",
    "FastSyncBatchNorm",
    "LabelSmoothingCrossEntropy",
    "Mish",
    "ModulatedDeformConv",
    "NpuCachedDropout",
    "NpuDropPath",
    "NpuFairseqDropout",
    "NpuPreGenDropout",
    "PSROIPool",
    "Prefetcher",
    "ROIAlign",
    "SiLU",
    "Swish",
]
