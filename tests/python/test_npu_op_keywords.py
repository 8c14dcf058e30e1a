"""Every torch_npu operator of the emulator takes its arguments under the names, in the order
and with the defaults torch_npu 2.14 declares (its Python signatures, below): the first tensor
is ``input`` in every custom schema (torch's code generator names ``self`` so), so
``torch_npu.fast_gelu(input=x)`` works as on the NPU. Keyword calls give what positional ones
give."""

import inspect
import re

import pytest
import torch

from overlay_support.npu_op_checks import on_npu, randn, torch_npu

# torch_npu 2.14's signatures (the first overload's where there are several).
DECLARED = {
    "_dropout_with_byte_mask": "Tensor input, float p",
    "_dropout_with_byte_mask_backward": "Tensor grad_output, Tensor mask, float p",
    "_npu_dropout": "Tensor input, float p",
    "dropout_with_byte_mask": "Tensor input, float p, bool train",
    "fast_gelu": "Tensor input",
    "get_npu_format": "Tensor input",
    "get_storage_size": "Tensor input",
    "npu_alloc_float_status": "Tensor input",
    "npu_apply_adam": "Scalar beta1_power, Scalar beta2_power, Scalar lr, Scalar beta1, "
    "Scalar beta2, Scalar epsilon, Tensor grad, bool? use_locking, "
    "bool? use_nesterov",
    "npu_apply_adam_w": "Scalar beta1_power, Scalar beta2_power, Scalar lr, "
    "Scalar weight_decay, Scalar beta1, Scalar beta2, Scalar epsilon, "
    "Tensor grad, Tensor? max_grad_norm, bool? amsgrad, bool? maximize",
    "npu_batch_nms": "Tensor input, Tensor scores, float score_threshold, float iou_threshold, "
    "int max_size_per_class, int max_total_size, "
    "bool change_coordinate_frame=False, bool transpose_box=False",
    "npu_bert_apply_adam": "Scalar lr, Scalar beta1, Scalar beta2, Scalar epsilon, Tensor grad, "
    "Scalar max_grad_norm, Scalar global_grad_norm, "
    "Scalar weight_decay, Scalar? step_size=None, int adam_mode=0",
    "npu_bmmV2": "Tensor input, Tensor mat2, int[] output_sizes",
    "npu_bounding_box_decode": "Tensor rois, Tensor deltas, float means0, float means1, "
    "float means2, float means3, float stds0, float stds1, "
    "float stds2, float stds3, int[1] max_shape, "
    "float wh_ratio_clip",
    "npu_bounding_box_encode": "Tensor anchor_box, Tensor ground_truth_box, float means0, "
    "float means1, float means2, float means3, float stds0, "
    "float stds1, float stds2, float stds3",
    "npu_change_data_ptr": "Tensor dst, Tensor src, int index",
    "npu_ciou": "Tensor input, Tensor gtboxes, bool trans=False, bool is_cross=True, int mode=0, "
    "bool atan_sub_flag=False",
    "npu_ciou_backward": "Tensor grad, Tensor bboxes, Tensor gtboxes, Tensor? atan_sub, "
    "bool trans=False, bool is_cross=True, int mode=0",
    "npu_clear_float_status": "Tensor input, int mode=0",
    "npu_confusion_transpose": "Tensor input, int[] perm, int[] shape, bool transpose_first",
    "npu_deformable_conv2d": "Tensor input, Tensor weight, Tensor offset, Tensor? bias, "
    "int[2] kernel_size, int[] stride, int[] padding, "
    "int[4] dilation=[1,1,1,1], int groups=1, int deformable_groups=1, "
    "bool modulated=True",
    "npu_deformable_conv2dbk": "Tensor input, Tensor grad_output, Tensor offset_out, "
    "Tensor weight, Tensor offset, int[2] kernel_size, int[] stride, "
    "int[] padding, int[4] dilation=[1,1,1,1], int groups=1, "
    "int deformable_groups=1, bool modulated=True",
    "npu_diou": "Tensor input, Tensor gtboxes, bool trans=False, bool is_cross=False, int mode=0",
    "npu_diou_backward": "Tensor grad, Tensor bboxes, Tensor gtboxes, bool trans=False, "
    "bool is_cross=False, int mode=0",
    "npu_dropout_backward": "Tensor grad_output, Tensor mask, float p",
    "npu_dropout_do_mask": "Tensor input, Tensor mask, float p",
    "npu_dropout_gen_mask": "int[] size, float p, *, ScalarType? dtype=None, "
    "Layout? layout=None, Device? device=None, bool? pin_memory=None",
    "npu_dropout_with_add_softmax": "Tensor input, Tensor x1, Scalar alpha, float prob, int dim",
    "npu_fast_gelu": "Tensor input",
    "npu_format_cast": "Tensor input, int acl_format, *, int? customize_dtype=None, "
    "int? input_dtype=None",
    "npu_format_cast_": "Tensor(a!) input, int acl_format, *, int? customize_dtype=None, "
    "int? input_dtype=None",
    "npu_fusion_attention": "Tensor query, Tensor key, Tensor value, int head_num, "
    "str input_layout, Tensor? pse=None, Tensor? padding_mask=None, "
    "Tensor? atten_mask=None, float scale=1., float keep_prob=1., "
    "int pre_tockens=2147483647, int next_tockens=2147483647, "
    "int inner_precise=0, int[]? prefix=None, "
    "int[]? actual_seq_qlen=None, int[]? actual_seq_kvlen=None, "
    "int sparse_mode=0, bool gen_mask_parallel=True, bool sync=False, "
    'str softmax_layout="", Tensor? sink=None, '
    "Tensor? dropout_mask=None, int seed=0, int offset=0",
    "npu_fusion_attention_v2": "Tensor query, Tensor key, Tensor value, int head_num, "
    "str input_layout, *, Tensor? pse=None, "
    "Tensor? padding_mask=None, Tensor? atten_mask=None, "
    "Tensor? query_rope=None, Tensor? key_rope=None, float scale=1., "
    "float keep_prob=1., int pre_tokens=2147483647, "
    "int next_tokens=2147483647, int inner_precise=0, "
    "int[]? prefix=None, int[]? actual_seq_qlen=None, "
    "int[]? actual_seq_kvlen=None, int sparse_mode=0, "
    "bool gen_mask_parallel=True, bool sync=False, int pse_type=1, "
    "int[]? q_start_idx=None, int[]? kv_start_idx=None, "
    'str softmax_layout="", Tensor? sink=None, '
    "Tensor? dropout_mask=None, int seed=0, int offset=0",
    "npu_fusion_attention_v3": "Tensor query, Tensor key, Tensor value, int head_num, "
    "str input_layout, Tensor? pse=None, Tensor? padding_mask=None, "
    "Tensor? atten_mask=None, float scale=1., float keep_prob=1., "
    "int pre_tockens=2147483647, int next_tockens=2147483647, "
    "int inner_precise=0, SymInt[]? prefix=None, "
    "Tensor? actual_seq_qlen=None, Tensor? actual_seq_kvlen=None, "
    "int sparse_mode=0, bool gen_mask_parallel=True, bool sync=False, "
    'str softmax_layout=""',
    "npu_fused_infer_attention_score": (
        "Tensor query, Tensor key, Tensor value, *, Tensor? pse_shift=None, "
        "Tensor? atten_mask=None, SymInt[]? actual_seq_lengths=None, "
        "SymInt[]? actual_seq_lengths_kv=None, Tensor? dequant_scale1=None, "
        "Tensor? quant_scale1=None, Tensor? dequant_scale2=None, Tensor? quant_scale2=None, "
        "Tensor? quant_offset2=None, Tensor? antiquant_scale=None, Tensor? antiquant_offset=None, "
        "Tensor? key_antiquant_scale=None, Tensor? key_antiquant_offset=None, "
        "Tensor? value_antiquant_scale=None, Tensor? value_antiquant_offset=None, "
        "Tensor? block_table=None, Tensor? query_padding_size=None, "
        "Tensor? kv_padding_size=None, Tensor? key_shared_prefix=None, "
        "Tensor? value_shared_prefix=None, SymInt[]? actual_shared_prefix_len=None, "
        "Tensor? query_rope=None, Tensor? key_rope=None, Tensor? key_rope_antiquant_scale=None, "
        "int num_heads=1, float scale=1.0, int pre_tokens=2147483647, "
        'int next_tokens=2147483647, str input_layout="BSH", int num_key_value_heads=0, '
        "int sparse_mode=0, int inner_precise=0, int block_size=0, int antiquant_mode=0, "
        "int key_antiquant_mode=0, int value_antiquant_mode=0, bool softmax_lse_flag=False"
    ),
    "npu_fused_infer_attention_score_v2": (
        "Tensor query, Tensor key, Tensor value, *, Tensor? query_rope=None, "
        "Tensor? key_rope=None, Tensor? pse_shift=None, Tensor? atten_mask=None, "
        "SymInt[]? actual_seq_qlen=None, SymInt[]? actual_seq_kvlen=None, "
        "Tensor? block_table=None, Tensor? dequant_scale_query=None, "
        "Tensor? dequant_scale_key=None, Tensor? dequant_offset_key=None, "
        "Tensor? dequant_scale_value=None, Tensor? dequant_offset_value=None, "
        "Tensor? dequant_scale_key_rope=None, Tensor? quant_scale_out=None, "
        "Tensor? quant_offset_out=None, Tensor? quant_scale_p=None, "
        "Tensor? learnable_sink=None, int num_query_heads=1, int num_key_value_heads=0, "
        "float softmax_scale=1.0, int pre_tokens=2147483647, int next_tokens=2147483647, "
        'str input_layout="BSH", int sparse_mode=0, int block_size=0, '
        "int query_quant_mode=0, int key_quant_mode=0, int value_quant_mode=0, "
        "int inner_precise=0, bool return_softmax_lse=False, int? query_dtype=None, "
        "int? key_dtype=None, int? value_dtype=None, int? query_rope_dtype=None, "
        "int? key_rope_dtype=None, int? key_shared_prefix_dtype=None, "
        "int? value_shared_prefix_dtype=None, int? dequant_scale_query_dtype=None, "
        "int? dequant_scale_key_dtype=None, int? dequant_scale_value_dtype=None, "
        "int? dequant_scale_key_rope_dtype=None, int? out_dtype=None"
    ),
    "npu_gelu": "Tensor input, *, str approximate='none'",
    "npu_get_float_status": "Tensor input, int mode=0",
    "npu_giou": "Tensor input, Tensor gtboxes, bool trans=False, bool is_cross=False, int mode=0",
    "npu_giou_backward": "Tensor grad, Tensor bboxes, Tensor gtboxes, bool trans=False, "
    "bool is_cross=False, int mode=0",
    "npu_grouped_matmul": (
        "Tensor[] x, Tensor[] weight, *, Tensor[]? bias=None, Tensor[]? scale=None, "
        "Tensor[]? offset=None, Tensor[]? antiquant_scale=None, Tensor[]? antiquant_offset=None, "
        "Tensor[]? per_token_scale=None, Tensor? group_list=None, "
        "Tensor[]? activation_input=None, Tensor[]? activation_quant_scale=None, "
        "Tensor[]? activation_quant_offset=None, int? split_item=0, int? group_type=None, "
        "int? group_list_type=0, int? act_type=0, int[]? tuning_config=None, "
        "int? output_dtype=None, int? x_dtype=None, int? weight_dtype=None, "
        "int? scale_dtype=None, int? per_token_scale_dtype=None"
    ),
    "npu_incre_flash_attention": (
        "Tensor query, Tensor key, Tensor value, *, Tensor? padding_mask=None, "
        "Tensor? atten_mask=None, Tensor? pse_shift=None, SymInt[]? actual_seq_lengths=None, "
        "Tensor? antiquant_scale=None, Tensor? antiquant_offset=None, Tensor? block_table=None, "
        "Tensor? dequant_scale1=None, Tensor? quant_scale1=None, Tensor? dequant_scale2=None, "
        "Tensor? quant_scale2=None, Tensor? quant_offset2=None, Tensor? kv_padding_size=None, "
        'int num_heads=1, float scale_value=1.0, str input_layout="BSH", '
        "int num_key_value_heads=0, int block_size=0, int inner_precise=1"
    ),
    "npu_indexing": "Tensor input, int[] begin, int[] end, int[] strides, int begin_mask=0, "
    "int end_mask=0, int ellipsis_mask=0, int new_axis_mask=0, "
    "int shrink_axis_mask=0",
    "npu_iou": "Tensor bboxes, Tensor gtboxes, int mode=0",
    "npu_layer_norm_eval": "Tensor input, int[] normalized_shape, Tensor? weight=None, "
    "Tensor? bias=None, float eps=1e-05",
    "npu_linear": "Tensor input, Tensor weight, Tensor? bias=None",
    "npu_max": "Tensor input, int dim, bool keepdim=False",
    "npu_mish": "Tensor input",
    "npu_mish_backward": "Tensor grad, Tensor input",
    "npu_moe_compute_expert_tokens": "Tensor sorted_expert_for_source_row, int num_expert",
    "npu_moe_finalize_routing": "Tensor expanded_permuted_rows, Tensor? skip1, Tensor? skip2, "
    "Tensor? bias, Tensor? scales, Tensor expanded_src_to_dst_row, "
    "Tensor? export_for_source_row, int? drop_pad_mode=0, int? k=1",
    "npu_moe_gating_top_k": "Tensor x, int k, *, Tensor? bias=None, Tensor? input_ids=None, "
    "Tensor? tid2eid=None, int k_group=1, int group_count=1, "
    "int group_select_mode=0, int renorm=0, int norm_type=0, "
    "bool out_flag=False, float routed_scaling_factor=1.0, "
    "float eps=1e-20",
    "npu_moe_gating_top_k_backward": "Tensor x_norm, Tensor grad_y, Tensor expertIdx, *, "
    "int renorm=0, int norm_type=0, "
    "float routed_scaling_factor=1.0, float eps=1e-20",
    "npu_moe_gating_top_k_softmax": "Tensor x, Tensor? finished=None, int k=1",
    "npu_moe_gating_top_k_softmax_v2": "Tensor x, *, int k=1, Tensor? finished=None, "
    "int? renorm=0, bool? output_softmax=False",
    "npu_moe_init_routing": "Tensor x, Tensor row_idx, Tensor expert_idx, int active_num",
    "npu_moe_init_routing_v2": "Tensor x, Tensor expert_idx, *, Tensor? scale=None, "
    "Tensor? offset=None, int active_num=-1, int expert_capacity=-1, "
    "int expert_num=-1, int drop_pad_mode=0, "
    "int expert_tokens_num_type=0, bool expert_tokens_num_flag=False, "
    "int quant_mode=-1, int[2] active_expert_range=[], "
    "int row_idx_type=0",
    "npu_moe_token_permute": "Tensor tokens, Tensor indices, int? num_out_tokens=None, "
    "bool padded_mode=False",
    "npu_moe_token_permute_with_routing_map": "Tensor tokens, Tensor routing_map, *, "
    "Tensor? probs=None, int? num_out_tokens=None, "
    "bool drop_and_pad=False",
    "npu_moe_token_unpermute": "Tensor permuted_tokens, Tensor sorted_indices, "
    "Tensor? probs=None, bool padded_mode=False, "
    "int[]? restore_shape=None",
    "npu_moe_token_unpermute_with_routing_map": "Tensor permuted_tokens, Tensor sorted_indices, "
    "int[] restore_shape, *, Tensor? probs=None, "
    "Tensor? routing_map=None, "
    "bool drop_and_pad=False",
    "npu_nms_with_mask": "Tensor input, Scalar iou_threshold",
    "npu_one_hot": "Tensor input, int num_classes=-1, int depth=1, Scalar on_value=1, "
    "Scalar off_value=0",
    "npu_pad": "Tensor input, int[] paddings",
    "npu_prompt_flash_attention": (
        "Tensor query, Tensor key, Tensor value, *, Tensor? padding_mask=None, "
        "Tensor? atten_mask=None, Tensor? pse_shift=None, int[]? actual_seq_lengths=None, "
        "Tensor? deq_scale1=None, Tensor? quant_scale1=None, Tensor? deq_scale2=None, "
        "Tensor? quant_scale2=None, Tensor? quant_offset2=None, int num_heads=1, "
        "float scale_value=1.0, int pre_tokens=2147483647, int next_tokens=0, "
        'str input_layout="BSH", int num_key_value_heads=0, '
        "int[]? actual_seq_lengths_kv=None, int sparse_mode=0"
    ),
    "npu_ps_roi_pooling": "Tensor input, Tensor rois, float spatial_scale, int group_size, "
    "int output_dim",
    "npu_ps_roi_pooling_backward": "Tensor output_grad, Tensor rois, float spatial_scale, "
    "int group_size, int output_dim, SymInt[] input_size",
    "npu_ptiou": "Tensor bboxes, Tensor gtboxes, int mode=0",
    "npu_random_choice_with_mask": "Tensor x, int count=256, int seed=0, int seed2=0",
    "npu_rms_norm": "Tensor input, Tensor gamma, float epsilon=1e-06",
    "npu_roi_align": "Tensor input, Tensor rois, float spatial_scale, int pooled_height, "
    "int pooled_width, int sample_num, int roi_end_mode",
    "npu_roi_alignbk": "Tensor input, Tensor rois, int[] xdiff_shape, int pooled_width, "
    "int pooled_height, float spatial_scale, int sample_num, "
    "int? roi_end_mode=None",
    "npu_rotary_mul": "Tensor input, Tensor r1, Tensor r2, str rotary_mode='half', "
    "Tensor? rotate=None",
    "npu_masked_softmax_with_rel_pos_bias": "Tensor x, Tensor? atten_mask, "
    "Tensor relative_pos_bias, float scale_value=1.0, int inner_precision_mode=0",
    "npu_scaled_masked_softmax": "Tensor x, Tensor mask, Scalar scale=1, "
    "bool fixed_triu_mask=False",
    "npu_silu": "Tensor input",
    "npu_silu_": "Tensor(a!) input",
    "npu_softmax_cross_entropy_with_logits": "Tensor input, Tensor labels",
    "npu_softmax_cross_entropy_with_logits_backward": "Tensor grad, Tensor input, Tensor labels",
    "npu_swiglu": "Tensor input, int dim=-1",
    "npu_add_rms_norm": "Tensor x1, Tensor x2, Tensor gamma, float epsilon=1e-06",
    "npu_add_rms_norm_cast": "Tensor x1, Tensor x2, Tensor gamma, float epsilon=1e-06",
    "npu_apply_rotary_pos_emb": "Tensor query, Tensor key, Tensor cos, Tensor sin, "
    "str layout='BSND', str rotary_mode='half'",
    "npu_broadcast": "Tensor input, int[] size",
    "npu_clipped_swiglu": "Tensor x, *, Tensor? group_index=None, int dim=-1, float alpha=1.702, "
    "float limit=7.0, float bias=1.0, bool interleaved=True",
    "npu_conv2d": "Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
    "int[] dilation, int groups",
    "npu_conv3d": "Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
    "int[] dilation, int groups",
    "npu_conv_transpose2d": "Tensor input, Tensor weight, Tensor? bias, int[] padding, "
    "int[] output_padding, int[] stride, int[] dilation, int groups",
    "npu_convolution": "Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
    "int[] dilation, int groups",
    "npu_convolution_transpose": "Tensor input, Tensor weight, Tensor? bias, int[] padding, "
    "int[] output_padding, int[] stride, int[] dilation, int groups",
    "npu_cross_entropy_loss": "Tensor input, Tensor target, Tensor? weight=None, "
    "str reduction='mean', int ignore_index=-100, "
    "float label_smoothing=0.0, float lse_square_scale_for_zloss=0.0, "
    "bool return_zloss=False",
    "npu_dtype_cast": "Tensor input, int dtype, int? input_dtype=None",
    "npu_dtype_cast_": "Tensor(a!) input, Tensor src",
    "npu_geglu": "Tensor input, int dim=-1, int approximate=1, bool activate_left=False",
    "npu_gelu_mul": "Tensor input, *, str approximate='none'",
    "npu_gemma_rms_norm": "Tensor input, Tensor gamma, float epsilon=1e-06",
    "npu_masked_fill_range": "Tensor input, Tensor start, Tensor end, Tensor value, int axis=-1",
    "npu_min": "Tensor input, int dim, bool keepdim=False",
    "npu_mrope": "Tensor positions, Tensor query, Tensor key, Tensor cos_sin_cache, int head_size, "
    "*, int[]? mrope_section=None, str? rotary_mode='half', str? cache_mode='default'",
    "npu_reshape": "Tensor input, int[] shape, bool can_refresh=False",
    "npu_scatter": "Tensor input, Tensor indices, Tensor updates, int dim",
    "npu_scatter_nd_update": "Tensor input, Tensor indices, Tensor updates",
    "npu_scatter_nd_update_": "Tensor(a!) input, Tensor indices, Tensor updates",
    "npu_slice": "Tensor input, int[] offsets, int[] size",
    "npu_sort_v2": "Tensor input, int dim=-1, bool descending=False",
    "npu_transpose": "Tensor input, int[] perm, bool require_contiguous=True",
    "copy_memory_": "Tensor(a!) dst, Tensor src, bool non_blocking=False",
    "npu_gather_sparse_index": "Tensor input, Tensor index",
    "npu_group_norm_silu": "Tensor input, Tensor? weight, Tensor? bias, int group, float eps=1e-05",
    "npu_sign_bits_pack": "Tensor input, int size",
    "npu_sign_bits_unpack": "Tensor input, int size, ScalarType dtype",
    "one_": "Tensor(a!) input",
    "batch_norm_reduce": "Tensor input, float eps",
    "npu_apply_adam_w_out": "Scalar beta1_power, Scalar beta2_power, Scalar lr, "
    "Scalar weight_decay, Scalar beta1, Scalar beta2, Scalar epsilon, "
    "Tensor grad, Tensor? max_grad_norm, bool? amsgrad, "
    "bool? maximize, Tensor(a!) var, Tensor(b!) m, Tensor(c!) v",
    "npu_attention_update": "Tensor[] lse, Tensor[] local_out, int update_type",
    "npu_group_norm_swish": "Tensor input, int num_groups, Tensor weight, Tensor bias, "
    "float? eps=1e-5, float? swish_scale=1.0",
    "npu_ring_attention_update": "Tensor prev_attn_out, Tensor prev_softmax_max, "
    "Tensor prev_softmax_sum, Tensor cur_attn_out, "
    "Tensor cur_softmax_max, Tensor cur_softmax_sum, *, "
    'Tensor? actual_seq_qlen=None, str input_layout="SBH", '
    'str input_softmax_layout=""',
    "npu_sim_exponential_": "Tensor(a!) input, float lambd=1, *, Generator? generator=None",
    "npu_top_k_top_p": "Tensor logits, Tensor? p=None, Tensor? k=None",
    "npu_transpose_batchmatmul": "Tensor input, Tensor weight, *, Tensor? bias=None, "
    "Tensor? scale=None, int[]? perm_x1=None, int[]? perm_x2=None, "
    "int[]? perm_y=None, int? batch_split_factor=1",
    "_lstm_npu": "Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, "
    "float dropout, bool train, bool bidirectional, *, bool? batch_first=False, "
    "Tensor? batch_sizes=None",
    "_lstm_npu_backward": "Tensor? grad_y, Tensor? grad_hy, Tensor? grad_cy, Tensor input, "
    "Tensor[] hx, Tensor[] params, Tensor i, Tensor j, Tensor f, "
    "Tensor o, Tensor h, Tensor c, Tensor tanhc, bool has_biases, "
    "int num_layers, float dropout, bool train, bool bidirectional, *, "
    "bool? batch_first=False, Tensor? batch_sizes=None",
    "npu_gru": "Tensor input, Tensor hx, Tensor weight_input, Tensor weight_hidden, "
    "Tensor bias_input, Tensor bias_hidden, Tensor seq_length, bool has_biases, "
    "int num_layers, float dropout, bool train, bool bidirectional, "
    "bool batch_first",
    "npu_lstm": "Tensor input, Tensor weight, Tensor bias, Tensor seq_mask, Tensor h, Tensor c, "
    "bool has_biases, int num_layers, float dropout, bool train, "
    "bool bidirectional, bool batch_first, bool flag_seq, bool direction",
    "npu_lstm_cell": "Tensor input, Tensor w_ih, Tensor w_hh, Tensor h, Tensor c, "
    "Tensor? b_ih=None, Tensor? b_hh=None",
    "npu_masked_causal_conv1d": "Tensor input, Tensor weight, *, Tensor? mask=None",
    "npu_masked_causal_conv1d_backward": "Tensor grad_output, Tensor input, Tensor weight, *, "
    "Tensor? mask=None",
    "npu_anchor_response_flags": "Tensor input, int[2] featmap_size, int[2] stride, "
    "int num_base_anchors",
    "npu_yolo_boxes_encode": "Tensor input, Tensor gt_bboxes, Tensor stride, "
    "bool performance_mode=False",
    "npu_batch_gather_matmul": "Tensor input, Tensor x, Tensor weight_b, Tensor indices, "
    "Tensor? weight_a=None, int layer_idx=0, float scale=1e-3, "
    "int y_offset=0, int y_slice_size=-1",
    "npu_batch_gather_matmul_": "Tensor(a!) input, Tensor x, Tensor weight_b, Tensor indices, "
    "Tensor? weight_a=None, int layer_idx=0, float scale=1e-3, "
    "int y_offset=0, int y_slice_size=-1",
    "npu_ffn": "Tensor x, Tensor weight1, Tensor weight2, str activation, *, "
    "int[]? expert_tokens=None, int[]? expert_tokens_index=None, "
    "Tensor? bias1=None, Tensor? bias2=None, Tensor? scale=None, "
    "Tensor? offset=None, Tensor? deq_scale1=None, Tensor? deq_scale2=None, "
    "Tensor? antiquant_scale1=None, Tensor? antiquant_scale2=None, "
    "Tensor? antiquant_offset1=None, Tensor? antiquant_offset2=None, "
    "int? inner_precise=None, ScalarType? output_dtype=None",
    "npu_grouped_matmul_add": "Tensor input, Tensor x, Tensor weight, Tensor group_list, *, "
    "bool transpose_x=True, bool transpose_weight=False, "
    "int group_type=2, int? group_list_type=0",
    "npu_grouped_matmul_add_": "Tensor(a!) input, Tensor x, Tensor weight, Tensor group_list, "
    "*, bool transpose_x=True, bool transpose_weight=False, "
    "int group_type=2, int? group_list_type=0",
    "npu_nms_v4": "Tensor input, Tensor scores, Scalar max_output_size, Tensor iou_threshold, "
    "Tensor scores_threshold, bool pad_to_max_output_size=False",
    "empty_with_swapped_memory": "int[] size, *, ScalarType? dtype=None, Device? device=None",
    "npu_grid_assign_positive": "Tensor input, Tensor overlaps, Tensor box_responsible_flags, "
    "Tensor max_overlaps, Tensor argmax_overlaps, "
    "Tensor gt_max_overlaps, Tensor gt_argmax_overlaps, "
    "int num_gts, float pos_iou_thr, float min_pos_iou, "
    "bool gt_max_assign_all",
    "npu_nms_rotated": "Tensor input, Tensor scores, float iou_threshold, "
    "float scores_threshold=0, int max_output_size=-1, int mode=0",
    "npu_prefetch": "Tensor input, Tensor? dependency, int max_size, int offset=0",
    "npu_rotated_iou": "Tensor input, Tensor query_boxes, bool trans=False, int mode=0, "
    "bool is_cross=True, float v_threshold=0.0, float e_threshold=0.0",
    "npu_rotated_overlaps": "Tensor input, Tensor query_boxes, bool trans=False",
    "npu_stride_add": "Tensor input, Tensor other, Scalar offset1, Scalar offset2, Scalar c1_len",
    "scatter_update": "Tensor input, Tensor indices, Tensor updates, int axis",
    "scatter_update_": "Tensor(a!) input, Tensor indices, Tensor updates, int axis",
}
# Keyword-only arguments the emulator adds past the declared ones: the out= variants
# (npu_indexing.out; the Adam kernels' out=(var, m, v)) and the other overloads' names.
EXTRA = {
    "npu_indexing": {"out"},
    "npu_apply_adam": {"out"},
    "npu_apply_adam_w": {"out"},
    "npu_bert_apply_adam": {"out"},
    "npu_sort_v2": {"out"},
    "npu_format_cast": {"dst"},
    "npu_format_cast_": {"src"},
}
# Overloads under one name: the target format may be a tensor, so it is optional here.
OPTIONAL = {"npu_format_cast": {"acl_format"}, "npu_format_cast_": {"acl_format"}}


def declared(text):
    """[(name, has a default, keyword-only)] of a torch_npu signature."""
    params, keyword_only = [], False
    for part in re.split(r",\s*(?![^\[]*\])", text):
        if part.strip() == "*":
            keyword_only = True
            continue
        name = part.strip().split(" ")[-1]
        params.append((name.split("=")[0], "=" in name, keyword_only))
    return params


def emulated(fn, name):
    params = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or p.name in EXTRA.get(name, ()):
            continue
        has_default = p.default is not p.empty and p.name not in OPTIONAL.get(name, ())
        params.append((p.name, has_default, p.kind == p.KEYWORD_ONLY))
    return params


def test_every_operator_is_declared_here():
    names = set(torch_npu._ops.OPERATORS) - {"npu_dropout"}  # torch_npu 1.x's alias
    assert names <= set(DECLARED), sorted(names - set(DECLARED))


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_signature_is_torch_npus(name):
    assert emulated(getattr(torch_npu, name), name) == declared(DECLARED[name])


@pytest.mark.parametrize(
    "name",
    [
        "npu_bert_apply_adam",
        "npu_one_hot",
        "npu_fusion_attention",
        "npu_layer_norm_eval",
        "npu_rms_norm",
        "npu_roi_alignbk",
        "npu_deformable_conv2d",
        "npu_ciou",
        "npu_scaled_masked_softmax",
        "npu_fusion_attention_v2",
        "npu_moe_gating_top_k",
        "npu_moe_gating_top_k_softmax",
        "npu_moe_finalize_routing",
        "npu_moe_token_permute",
        "npu_moe_token_unpermute",
    ],
)
def test_defaults_are_torch_npus(name):
    values = {
        "None": None,
        "True": True,
        "False": False,
        "1.": 1.0,
        '""': "",
        "[1,1,1,1]": [1, 1, 1, 1],
        "'none'": "none",
        "'half'": "half",
    }
    signature = inspect.signature(getattr(torch_npu, name)).parameters
    for part in re.split(r",\s*(?![^\[]*\])", DECLARED[name]):
        if "=" in part:
            param, text = part.strip().split(" ")[-1].split("=")
            want = (
                values[text]
                if text in values
                else float(text)
                if "." in text or "e" in text
                else int(text)
            )
            got = signature[param].default
            got = list(got) if isinstance(got, tuple) else got
            assert got == want and type(got) in (type(want), int), (param, got, want)


def test_the_first_tensor_is_input():
    x = on_npu(randn(3, 8, seed=1, scale=2))
    same = torch.equal
    assert same(torch_npu.fast_gelu(input=x).cpu(), torch_npu.fast_gelu(x).cpu())
    assert same(torch_npu.npu_silu(input=x).cpu(), torch_npu.npu_silu(x).cpu())
    assert same(torch_npu.npu_mish(input=x).cpu(), torch_npu.npu_mish(x).cpu())
    assert same(torch_npu.npu_swiglu(input=x, dim=-1).cpu(), torch_npu.npu_swiglu(x).cpu())
    values, indices = torch_npu.npu_max(input=x, dim=1, keepdim=True)
    assert same(values.cpu(), x.cpu().max(1, keepdim=True)[0]) and indices.dtype == torch.int32
    t = torch_npu.npu_confusion_transpose(input=x, perm=[1, 0], shape=[3, 8], transpose_first=False)
    assert same(t.cpu(), x.cpu().t())
    a, b = on_npu(randn(2, 3, 4, seed=2)), on_npu(randn(2, 4, 5, seed=3))
    assert same(
        torch_npu.npu_bmmV2(input=a, mat2=b, output_sizes=[]).cpu(),
        torch_npu.npu_bmmV2(a, b, []).cpu(),
    )
    gamma = on_npu(randn(8, seed=4))
    y, rstd = torch_npu.npu_rms_norm(input=x, gamma=gamma, epsilon=1e-6)
    assert same(y.cpu(), torch_npu.npu_rms_norm(x, gamma)[0].cpu())
    r1, r2 = on_npu(randn(1, 8, seed=5)), on_npu(randn(1, 8, seed=6))
    assert same(
        torch_npu.npu_rotary_mul(input=x, r1=r1, r2=r2, rotary_mode="half").cpu(),
        torch_npu.npu_rotary_mul(x, r1, r2).cpu(),
    )
    sliced = torch_npu.npu_indexing(input=x, begin=[0, 1], end=[2, 7], strides=[1, 3])
    assert same(sliced.cpu(), x.cpu()[0:2, 1:7:3])
    assert torch_npu.get_npu_format(input=x) == 2 and torch_npu.get_storage_size(input=x) == 24
    assert torch_npu.get_npu_format(torch_npu.npu_format_cast(input=x, acl_format=29)) == 29


def test_npu_indexing_writes_out():
    x = on_npu(randn(4, 6, seed=7))
    out = on_npu(torch.zeros(1))
    assert torch_npu.npu_indexing(x, [1, 0], [4, 6], [2, 2], out=out) is out
    assert torch.equal(out.cpu(), x.cpu()[1:4:2, 0:6:2])


def test_npu_max_takes_a_dimension_name():
    # torch_npu 1.x's npu_max.names_dim; torch 2.x's Tensor may have no names any more.
    x = randn(2, 3, 4, seed=8)
    named = on_npu(x)
    if not hasattr(named, "names"):
        pytest.skip("this torch has no named tensors")
    named.names = ("N", "C", "H")
    values, indices = torch_npu.npu_max(named, "H")
    assert torch.equal(values.rename(None).cpu(), x.max(2)[0])
    assert torch.equal(indices.rename(None).cpu(), x.max(2)[1].int())
    with pytest.raises(RuntimeError, match="Name 'W' not found"):
        torch_npu.npu_max(named, "W")
