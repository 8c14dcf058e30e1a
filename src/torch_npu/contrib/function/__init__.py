"""``torch_npu.contrib.function``: the functions of Ascend's contrib the emulator provides."""
from .index_op import npu_fast_condition_index_put
from .iou import npu_iou, npu_ptiou
from .npu_functional import dropout_with_byte_mask

__all__ = ["dropout_with_byte_mask", "npu_fast_condition_index_put", "npu_iou", "npu_ptiou"]
