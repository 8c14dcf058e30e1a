"""``torch_npu.contrib.function``: the functions of Ascend's contrib the emulator provides, at
torch_npu's module paths."""

from .fuse_add_softmax_dropout import fuse_add_softmax_dropout
from .fused_attention import npu_fused_attention, npu_fused_attention_with_layernorm
from .index_op import npu_fast_condition_index_put
from .iou import npu_ciou, npu_diou, npu_giou, npu_iou, npu_ptiou
from .matmul_transpose import matmul_transpose
from .npu_functional import dropout_with_byte_mask

__all__ = [
    "dropout_with_byte_mask",
    "fuse_add_softmax_dropout",
    "matmul_transpose",
    "npu_ciou",
    "npu_diou",
    "npu_fast_condition_index_put",
    "npu_fused_attention",
    "npu_fused_attention_with_layernorm",
    "npu_giou",
    "npu_iou",
    "npu_ptiou",
]
