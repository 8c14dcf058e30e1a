"""``torch_npu.contrib.module``: the NPU modules of Ascend's contrib the emulator provides."""
from .deform_conv import DCNv2, ModulatedDeformConv
from .npu_modules import DropoutWithByteMask
from .roi_align import ROIAlign

__all__ = ["DCNv2", "DropoutWithByteMask", "ModulatedDeformConv", "ROIAlign"]
