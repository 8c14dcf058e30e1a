"""``torch_npu.contrib.function``: the functions of Ascend's contrib the emulator provides."""
from .npu_functional import dropout_with_byte_mask

__all__ = ["dropout_with_byte_mask"]
