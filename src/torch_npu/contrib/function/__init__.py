"""``torch_npu.contrib.function``: the functions of Ascend's contrib the emulator provides, at
torch_npu's module paths."""

from .anchor_generator import npu_single_level_responsible_flags
from .bbox_coder import (
    npu_bbox_coder_decode_xywh2xyxy,
    npu_bbox_coder_encode_xyxy2xywh,
    npu_bbox_coder_encode_yolo,
)
from .fuse_add_softmax_dropout import fuse_add_softmax_dropout
from .fused_attention import npu_fused_attention, npu_fused_attention_with_layernorm
from .index_op import npu_fast_condition_index_put
from .iou import npu_ciou, npu_diou, npu_giou, npu_iou, npu_ptiou
from .matmul_transpose import matmul_transpose
from .nms import npu_batched_multiclass_nms, npu_multiclass_nms
from .npu_functional import dropout_with_byte_mask
from .roll import roll

__all__ = [
    "dropout_with_byte_mask",
    "fuse_add_softmax_dropout",
    "matmul_transpose",
    "npu_batched_multiclass_nms",
    "npu_bbox_coder_decode_xywh2xyxy",
    "npu_bbox_coder_encode_xyxy2xywh",
    "npu_bbox_coder_encode_yolo",
    "npu_ciou",
    "npu_diou",
    "npu_fast_condition_index_put",
    "npu_fused_attention",
    "npu_fused_attention_with_layernorm",
    "npu_giou",
    "npu_iou",
    "npu_multiclass_nms",
    "npu_ptiou",
    "npu_single_level_responsible_flags",
    "roll",
]
