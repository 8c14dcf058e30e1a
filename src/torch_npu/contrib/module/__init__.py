"""``torch_npu.contrib.module``: the NPU modules of Ascend's contrib the emulator provides."""
from .npu_modules import DropoutWithByteMask

__all__ = ["DropoutWithByteMask"]
