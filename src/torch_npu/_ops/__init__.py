"""The ``torch_npu`` operators of Ascend training code (``torch_npu.npu_*``, ``fast_gelu``,
``torch.nn.DropoutWithByteMask``), on the emulated NPU: computed on the host in fp32, fp16
results stored once with the NPU's saturation and float status (``_precision``), with their
gradients where torch_npu has a backward. One operator, or one tight family, per module.

``install()`` puts them where Ascend scripts call them besides ``torch_npu.<name>``: on ``torch``
(old scripts call ``torch.npu_linear``, ``torch.fast_gelu``...), the Tensor method
``npu_confusion_transpose``, ``torch.nn.DropoutWithByteMask`` and
``torch.nn.functional.dropout_with_byte_mask``.
"""
from __future__ import annotations

import torch

from .apply_adam import npu_apply_adam
from .apply_adam_w import npu_apply_adam_w
from .batch_nms import npu_batch_nms
from .bert_apply_adam import npu_bert_apply_adam
from .bmm_v2 import npu_bmmV2
from .bounding_box import npu_bounding_box_decode, npu_bounding_box_encode
from .change_data_ptr import npu_change_data_ptr
from .confusion_transpose import npu_confusion_transpose
from .deformable_conv2d import npu_deformable_conv2d, npu_deformable_conv2dbk
from .dropout import (_npu_dropout, npu_dropout, npu_dropout_backward, npu_dropout_do_mask,
                      npu_dropout_gen_mask)
from .dropout_with_add_softmax import npu_dropout_with_add_softmax
from .dropout_with_byte_mask import (DropoutWithByteMask, _dropout_with_byte_mask,
                                     _dropout_with_byte_mask_backward, dropout_with_byte_mask,
                                     functional_dropout_with_byte_mask)
from .fast_gelu import fast_gelu, npu_fast_gelu
from .float_status import npu_alloc_float_status, npu_clear_float_status, npu_get_float_status
from .fusion_attention import npu_fusion_attention
from .fusion_attention_variants import npu_fusion_attention_v2, npu_fusion_attention_v3
from .gelu import npu_gelu
from .grouped_matmul import npu_grouped_matmul
from .indexing import npu_indexing
from .infer_attention import (npu_fused_infer_attention_score,
                              npu_fused_infer_attention_score_v2, npu_incre_flash_attention,
                              npu_prompt_flash_attention)
from .iou import npu_iou, npu_ptiou
from .iou_variants import (npu_ciou, npu_ciou_backward, npu_diou, npu_diou_backward, npu_giou,
                           npu_giou_backward)
from .layer_norm_eval import npu_layer_norm_eval
from .linear import npu_linear
from .max import npu_max
from .mish import npu_mish, npu_mish_backward
from .moe_gating_top_k import npu_moe_gating_top_k, npu_moe_gating_top_k_backward
from .moe_routing import (npu_moe_compute_expert_tokens, npu_moe_finalize_routing,
                          npu_moe_gating_top_k_softmax, npu_moe_gating_top_k_softmax_v2,
                          npu_moe_init_routing, npu_moe_init_routing_v2)
from .moe_token_permute import (npu_moe_token_permute, npu_moe_token_permute_with_routing_map,
                                npu_moe_token_unpermute,
                                npu_moe_token_unpermute_with_routing_map)
from .nms_with_mask import npu_nms_with_mask
from .one_hot import npu_one_hot
from .pad import npu_pad
from .ps_roi_pooling import npu_ps_roi_pooling, npu_ps_roi_pooling_backward
from .random_choice_with_mask import npu_random_choice_with_mask
from .rms_norm import npu_rms_norm
from .roi_align import npu_roi_align, npu_roi_alignbk
from .rotary_mul import npu_rotary_mul
from .scaled_masked_softmax import npu_scaled_masked_softmax
from .silu import npu_silu, npu_silu_
from .softmax_cross_entropy import (npu_softmax_cross_entropy_with_logits,
                                    npu_softmax_cross_entropy_with_logits_backward)
from .swiglu import npu_swiglu

from .add_rms_norm import npu_add_rms_norm, npu_add_rms_norm_cast
from .apply_rotary_pos_emb import npu_apply_rotary_pos_emb
from .clipped_swiglu import npu_clipped_swiglu
from .conv import (npu_conv2d, npu_conv3d, npu_conv_transpose2d, npu_convolution,
                   npu_convolution_transpose)
from .cross_entropy_loss import npu_cross_entropy_loss
from .dtype_cast import npu_dtype_cast, npu_dtype_cast_
from .geglu import npu_geglu
from .gelu_mul import npu_gelu_mul
from .gemma_rms_norm import npu_gemma_rms_norm
from .masked_fill_range import npu_masked_fill_range
from .masked_causal_conv1d import (npu_masked_causal_conv1d,
                                   npu_masked_causal_conv1d_backward)
from .min import npu_min
from .mrope import npu_mrope
from .scatter import (npu_scatter, npu_scatter_nd_update, npu_scatter_nd_update_, scatter_update,
                      scatter_update_)
from .shape_ops import npu_broadcast, npu_reshape, npu_slice, npu_transpose
from .sort_v2 import npu_sort_v2
from .rnn import _lstm_npu, _lstm_npu_backward, npu_gru, npu_lstm
from .anchor_response_flags import npu_anchor_response_flags
from .batch_gather_matmul import npu_batch_gather_matmul, npu_batch_gather_matmul_
from .ffn import npu_ffn
from .grouped_matmul_add import npu_grouped_matmul_add, npu_grouped_matmul_add_
from .nms_v4 import npu_nms_v4
from .grid_assign_positive import npu_grid_assign_positive
from .memory_hints import empty_with_swapped_memory, npu_prefetch
from .rotated_boxes import npu_nms_rotated, npu_rotated_iou, npu_rotated_overlaps
from .stride_add import npu_stride_add
from .fill_copy import copy_memory_, one_
from .gather_sparse_index import npu_gather_sparse_index
from .group_norm_silu import npu_group_norm_silu
from .sign_bits import npu_sign_bits_pack, npu_sign_bits_unpack
from .apply_adam_w_out import npu_apply_adam_w_out
from .attention_update import npu_attention_update, npu_ring_attention_update
from .batch_norm_reduce import batch_norm_reduce
from .group_norm_swish import npu_group_norm_swish
from .sim_exponential import npu_sim_exponential_
from .top_k_top_p import npu_top_k_top_p
from .transpose_batchmatmul import npu_transpose_batchmatmul

# torch_npu.<name> -> the operator.
OPERATORS = {
    "npu_linear": npu_linear,
    "fast_gelu": fast_gelu,
    "npu_fast_gelu": npu_fast_gelu,
    "npu_gelu": npu_gelu,
    "npu_silu": npu_silu,
    "npu_silu_": npu_silu_,
    "npu_confusion_transpose": npu_confusion_transpose,
    "npu_bmmV2": npu_bmmV2,
    "npu_layer_norm_eval": npu_layer_norm_eval,
    "_npu_dropout": _npu_dropout,
    "npu_dropout": npu_dropout,
    "npu_dropout_gen_mask": npu_dropout_gen_mask,
    "npu_dropout_do_mask": npu_dropout_do_mask,
    "npu_dropout_backward": npu_dropout_backward,
    "_dropout_with_byte_mask": _dropout_with_byte_mask,
    "_dropout_with_byte_mask_backward": _dropout_with_byte_mask_backward,
    "dropout_with_byte_mask": dropout_with_byte_mask,
    "npu_dropout_with_add_softmax": npu_dropout_with_add_softmax,
    "npu_scaled_masked_softmax": npu_scaled_masked_softmax,
    "npu_rms_norm": npu_rms_norm,
    "npu_rotary_mul": npu_rotary_mul,
    "npu_swiglu": npu_swiglu,
    "npu_fusion_attention": npu_fusion_attention,
    "npu_fusion_attention_v2": npu_fusion_attention_v2,
    "npu_fusion_attention_v3": npu_fusion_attention_v3,
    "npu_prompt_flash_attention": npu_prompt_flash_attention,
    "npu_incre_flash_attention": npu_incre_flash_attention,
    "npu_fused_infer_attention_score": npu_fused_infer_attention_score,
    "npu_fused_infer_attention_score_v2": npu_fused_infer_attention_score_v2,
    "npu_grouped_matmul": npu_grouped_matmul,
    "npu_moe_gating_top_k": npu_moe_gating_top_k,
    "npu_moe_gating_top_k_backward": npu_moe_gating_top_k_backward,
    "npu_moe_gating_top_k_softmax": npu_moe_gating_top_k_softmax,
    "npu_moe_gating_top_k_softmax_v2": npu_moe_gating_top_k_softmax_v2,
    "npu_moe_init_routing": npu_moe_init_routing,
    "npu_moe_init_routing_v2": npu_moe_init_routing_v2,
    "npu_moe_finalize_routing": npu_moe_finalize_routing,
    "npu_moe_compute_expert_tokens": npu_moe_compute_expert_tokens,
    "npu_moe_token_permute": npu_moe_token_permute,
    "npu_moe_token_unpermute": npu_moe_token_unpermute,
    "npu_moe_token_permute_with_routing_map": npu_moe_token_permute_with_routing_map,
    "npu_moe_token_unpermute_with_routing_map": npu_moe_token_unpermute_with_routing_map,
    "npu_bert_apply_adam": npu_bert_apply_adam,
    "npu_apply_adam": npu_apply_adam,
    "npu_apply_adam_w": npu_apply_adam_w,
    "npu_one_hot": npu_one_hot,
    "npu_softmax_cross_entropy_with_logits": npu_softmax_cross_entropy_with_logits,
    "npu_softmax_cross_entropy_with_logits_backward":
        npu_softmax_cross_entropy_with_logits_backward,
    "npu_max": npu_max,
    "npu_pad": npu_pad,
    "npu_iou": npu_iou,
    "npu_ptiou": npu_ptiou,
    "npu_bounding_box_encode": npu_bounding_box_encode,
    "npu_bounding_box_decode": npu_bounding_box_decode,
    "npu_change_data_ptr": npu_change_data_ptr,
    "npu_batch_nms": npu_batch_nms,
    "npu_random_choice_with_mask": npu_random_choice_with_mask,
    "npu_mish": npu_mish,
    "npu_mish_backward": npu_mish_backward,
    "npu_indexing": npu_indexing,
    "npu_roi_align": npu_roi_align,
    "npu_roi_alignbk": npu_roi_alignbk,
    "npu_nms_with_mask": npu_nms_with_mask,
    "npu_deformable_conv2d": npu_deformable_conv2d,
    "npu_deformable_conv2dbk": npu_deformable_conv2dbk,
    "npu_ps_roi_pooling": npu_ps_roi_pooling,
    "npu_ps_roi_pooling_backward": npu_ps_roi_pooling_backward,
    "npu_giou": npu_giou,
    "npu_giou_backward": npu_giou_backward,
    "npu_diou": npu_diou,
    "npu_diou_backward": npu_diou_backward,
    "npu_ciou": npu_ciou,
    "npu_ciou_backward": npu_ciou_backward,
    "npu_alloc_float_status": npu_alloc_float_status,
    "npu_get_float_status": npu_get_float_status,
    "npu_clear_float_status": npu_clear_float_status,
    "npu_add_rms_norm": npu_add_rms_norm,
    "npu_add_rms_norm_cast": npu_add_rms_norm_cast,
    "npu_gemma_rms_norm": npu_gemma_rms_norm,
    "npu_apply_rotary_pos_emb": npu_apply_rotary_pos_emb,
    "npu_mrope": npu_mrope,
    "npu_geglu": npu_geglu,
    "npu_gelu_mul": npu_gelu_mul,
    "npu_clipped_swiglu": npu_clipped_swiglu,
    "npu_cross_entropy_loss": npu_cross_entropy_loss,
    "npu_dtype_cast": npu_dtype_cast,
    "npu_dtype_cast_": npu_dtype_cast_,
    "npu_broadcast": npu_broadcast,
    "npu_transpose": npu_transpose,
    "npu_slice": npu_slice,
    "npu_reshape": npu_reshape,
    "npu_scatter": npu_scatter,
    "npu_scatter_nd_update": npu_scatter_nd_update,
    "npu_scatter_nd_update_": npu_scatter_nd_update_,
    "npu_min": npu_min,
    "npu_sort_v2": npu_sort_v2,
    "npu_masked_fill_range": npu_masked_fill_range,
    "npu_conv2d": npu_conv2d,
    "npu_conv3d": npu_conv3d,
    "npu_convolution": npu_convolution,
    "npu_conv_transpose2d": npu_conv_transpose2d,
    "npu_convolution_transpose": npu_convolution_transpose,
    "one_": one_,
    "copy_memory_": copy_memory_,
    "npu_gather_sparse_index": npu_gather_sparse_index,
    "npu_group_norm_silu": npu_group_norm_silu,
    "npu_sign_bits_pack": npu_sign_bits_pack,
    "npu_sign_bits_unpack": npu_sign_bits_unpack,
    "batch_norm_reduce": batch_norm_reduce,
    "npu_apply_adam_w_out": npu_apply_adam_w_out,
    "npu_attention_update": npu_attention_update,
    "npu_ring_attention_update": npu_ring_attention_update,
    "npu_group_norm_swish": npu_group_norm_swish,
    "npu_sim_exponential_": npu_sim_exponential_,
    "npu_top_k_top_p": npu_top_k_top_p,
    "npu_transpose_batchmatmul": npu_transpose_batchmatmul,
    "_lstm_npu": _lstm_npu,
    "_lstm_npu_backward": _lstm_npu_backward,
    "npu_lstm": npu_lstm,
    "npu_gru": npu_gru,
    "npu_masked_causal_conv1d": npu_masked_causal_conv1d,
    "npu_masked_causal_conv1d_backward": npu_masked_causal_conv1d_backward,
    "npu_anchor_response_flags": npu_anchor_response_flags,
    "npu_batch_gather_matmul": npu_batch_gather_matmul,
    "npu_batch_gather_matmul_": npu_batch_gather_matmul_,
    "npu_ffn": npu_ffn,
    "npu_grouped_matmul_add": npu_grouped_matmul_add,
    "npu_grouped_matmul_add_": npu_grouped_matmul_add_,
    "npu_nms_v4": npu_nms_v4,
    "npu_grid_assign_positive": npu_grid_assign_positive,
    "npu_prefetch": npu_prefetch,
    "empty_with_swapped_memory": empty_with_swapped_memory,
    "npu_nms_rotated": npu_nms_rotated,
    "npu_rotated_iou": npu_rotated_iou,
    "npu_rotated_overlaps": npu_rotated_overlaps,
    "scatter_update": scatter_update,
    "scatter_update_": scatter_update_,
    "npu_stride_add": npu_stride_add,
}
# Tensor methods Ascend code calls (x.npu_confusion_transpose(...)).
TENSOR_METHODS = ("npu_confusion_transpose",)

__all__ = sorted(OPERATORS) + ["DropoutWithByteMask", "functional_dropout_with_byte_mask",
                               "OPERATORS", "install"]


def install() -> None:
    """Expose the operators on torch as torch_npu does (idempotent; torch's own names win)."""
    for name, fn in OPERATORS.items():
        if not hasattr(torch, name):
            setattr(torch, name, fn)
    for name in TENSOR_METHODS:
        if not hasattr(torch.Tensor, name):
            setattr(torch.Tensor, name, OPERATORS[name])
    if not hasattr(torch.nn, "DropoutWithByteMask"):
        torch.nn.DropoutWithByteMask = DropoutWithByteMask
    if not hasattr(torch.nn.functional, "dropout_with_byte_mask"):
        torch.nn.functional.dropout_with_byte_mask = functional_dropout_with_byte_mask
    from . import sdpa  # torch's SDPA on NPU tensors as one fused kernel

    sdpa.install()
