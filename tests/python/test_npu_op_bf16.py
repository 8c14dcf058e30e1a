"""Every torch_npu operator of docs/NPU_OPERATORS.md on bfloat16 inputs, on an emulated
Ascend 910B (``APEXNPU_SOC_VERSION=Ascend910B1``, the first chip with bf16): the NPU computes
in fp32 (the cube unit accumulates in fp32) and rounds each bf16 result once, to nearest even.

So each operator, given bf16 inputs, must return bf16 results bit for bit equal to the same
operator given fp32 copies of the same (bf16) values, rounded once to bf16 (tolerance: none;
a result computed in bf16 steps, or rounded twice, differs in the last bit somewhere). The fp32
results are checked against their formulas in plain torch by each operator's own test
(test_npu_op_<name>.py). Integer and bool outputs (indices, masks, counts) must be equal, and
outputs torch_npu gives in fp32 whatever the input (``npu_rms_norm``'s rstd,
``npu_fusion_attention``'s softmax statistics, ``npu_one_hot``) equal the fp32 run's exactly.
Random operators draw their masks under one seed in both runs. Where the operator has a
backward, the gradients of the bf16 inputs are compared the same way.

Not here: ``npu_change_data_ptr`` (no arithmetic: a tensor reads another's storage; its own
test covers bf16), ``npu_random_choice_with_mask`` (a bool input),
``npu_dropout_gen_mask`` and ``empty_with_format`` (no tensor input) and
``npu_add_rms_norm_cast`` (fp16/bf16 only, so no fp32 run to compare with; test_npu_op_norm.py
checks that its fp16 ``y`` is its fp32 ``y`` rounded once).

All cases run in one child interpreter (the chip is read once per process); each case is one
test here.
"""

import json
import os
import subprocess
import sys

import pytest
import torch

import overlay_support

HERE = os.path.dirname(os.path.abspath(__file__))
BF16 = torch.bfloat16


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def randn(*shape, seed=0, scale=1.0):
    return torch.randn(*shape, generator=_gen(seed)) * scale


def rand(*shape, seed=0, low=0.0, high=1.0):
    return torch.rand(*shape, generator=_gen(seed)) * (high - low) + low


def boxes(n, seed, size=20.0):
    """(n, 4) boxes (x1, y1, x2, y2) with positive sizes."""
    corner = rand(n, 2, seed=seed, high=50.0)
    return torch.cat([corner, corner + rand(n, 2, seed=seed + 1, low=1.0, high=size)], 1)


def columns(n, seed):
    """(4, n) boxes (x, y, w, h), as npu_giou/diou/ciou take them."""
    return torch.cat(
        [rand(2, n, seed=seed, high=10.0), rand(2, n, seed=seed + 1, low=0.5, high=6.0)]
    )


# name -> (call(torch_npu, inputs) -> outputs, inputs, indices of inputs to differentiate).
# Float inputs are made bf16 (or fp32 of the same values) and put on the NPU; others pass as
# they are.
def _cases():
    def dcn_args():
        return dict(
            kernel_size=[3, 3],
            stride=[1, 1, 1, 1],
            padding=[1, 1, 1, 1],
            dilation=[1, 1, 1, 1],
            groups=1,
            deformable_groups=1,
            modulated=True,
        )

    offset = torch.cat([randn(1, 18, 5, 6, seed=31), rand(1, 9, 5, 6, seed=32)], 1)
    ps_rois = torch.tensor([[[0.0, 0.0], [1.0, 3.0], [2.0, 1.0], [14.0, 9.0], [11.0, 13.0]]])
    align_rois = torch.tensor([[0.0, 1.0, 2.0, 12.0, 9.0], [0.0, 3.5, 0.5, 7.0, 11.0]])
    nms_rows = torch.cat([boxes(6, 40), rand(6, 1, seed=42)], 1)
    labels = torch.softmax(randn(4, 7, seed=51), -1)
    mask = rand(2, 1, 4, 4, seed=61) > 0.6
    return {
        "npu_linear": (
            lambda t, x, w, b: t.npu_linear(x, w, b),
            [randn(4, 6, seed=1), randn(5, 6, seed=2), randn(5, seed=3)],
            (0, 1, 2),
        ),
        "fast_gelu": (lambda t, x: t.fast_gelu(x), [randn(3, 9, seed=4, scale=3)], (0,)),
        "npu_fast_gelu": (lambda t, x: t.npu_fast_gelu(x), [randn(3, 9, seed=5, scale=3)], (0,)),
        "npu_gelu": (lambda t, x: t.npu_gelu(x), [randn(3, 9, seed=6, scale=3)], (0,)),
        "npu_gelu tanh": (
            lambda t, x: t.npu_gelu(x, approximate="tanh"),
            [randn(3, 9, seed=7, scale=3)],
            (0,),
        ),
        "npu_silu": (lambda t, x: t.npu_silu(x), [randn(3, 9, seed=8, scale=3)], (0,)),
        "npu_silu_": (lambda t, x: t.npu_silu_(x.clone()), [randn(3, 9, seed=9, scale=3)], ()),
        "npu_mish": (lambda t, x: t.npu_mish(x), [randn(3, 9, seed=10, scale=3)], (0,)),
        "npu_mish_backward": (
            lambda t, g, x: t.npu_mish_backward(g, x),
            [randn(3, 9, seed=11), randn(3, 9, seed=12, scale=3)],
            (),
        ),
        "npu_confusion_transpose": (
            lambda t, x: t.npu_confusion_transpose(x, (0, 2, 1, 3), (2, 4, 18), True),
            [randn(2, 3, 4, 6, seed=13)],
            (0,),
        ),
        "npu_bmmV2": (
            lambda t, a, b: t.npu_bmmV2(a, b, []),
            [randn(2, 3, 4, 8, seed=14), randn(3, 8, 5, seed=15)],
            (0, 1),
        ),
        "npu_layer_norm_eval": (
            lambda t, x, w, b: t.npu_layer_norm_eval(x, [8], w, b),
            [randn(3, 8, seed=16), randn(8, seed=17), randn(8, seed=18)],
            (0, 1, 2),
        ),
        "_npu_dropout": (lambda t, x: t._npu_dropout(x, 0.3), [randn(5, 40, seed=19)], (0,)),
        "npu_dropout": (lambda t, x: t.npu_dropout(x, 0.4), [randn(5, 40, seed=20)], (0,)),
        "npu_dropout_do_mask": (
            lambda t, x: t.npu_dropout_do_mask(
                x, t.npu_dropout_gen_mask(x.shape, 0.3, device=x.device), 0.3
            ),
            [randn(5, 40, seed=21)],
            (0,),
        ),
        "npu_dropout_backward": (
            lambda t, g: t.npu_dropout_backward(
                g, t.npu_dropout_gen_mask(g.shape, 0.3, device=g.device), 0.3
            ),
            [randn(5, 40, seed=22)],
            (),
        ),
        "_dropout_with_byte_mask": (
            lambda t, x: t._dropout_with_byte_mask(x, 0.3),
            [randn(5, 40, seed=23)],
            (0,),
        ),
        "dropout_with_byte_mask": (
            lambda t, x: t.dropout_with_byte_mask(x, 0.3, True),
            [randn(5, 40, seed=24)],
            (0,),
        ),
        "DropoutWithByteMask": (
            lambda t, x: torch.nn.DropoutWithByteMask(p=0.3)(x),
            [randn(5, 40, seed=39)],
            (0,),
        ),
        "_dropout_with_byte_mask_backward": (
            lambda t, g: t._dropout_with_byte_mask_backward(
                g, (torch.arange(g.numel()) % 3 > 0).to(torch.uint8).view(g.shape).npu(), 0.3
            ),
            [randn(5, 40, seed=25)],
            (),
        ),
        "npu_dropout_with_add_softmax": (
            lambda t, x, x1: t.npu_dropout_with_add_softmax(x, x1, 0.5, 0.2, -1),
            [randn(2, 2, 4, 16, seed=26), randn(2, 2, 4, 16, seed=27)],
            (0,),
        ),
        "npu_scaled_masked_softmax": (
            lambda t, x: t.npu_scaled_masked_softmax(x, mask.npu(), 0.7),
            [randn(2, 3, 4, 4, seed=28, scale=3)],
            (0,),
        ),
        "npu_masked_softmax_with_rel_pos_bias": (
            lambda t, x, m, b: t.npu_masked_softmax_with_rel_pos_bias(x, m, b, 0.5),
            [randn(3, 2, 4, 4, seed=227), randn(3, 4, 4, seed=228), randn(2, 4, 4, seed=229)],
            (),
        ),
        "npu_rms_norm": (
            lambda t, x, g: t.npu_rms_norm(x, g),
            [randn(3, 4, 8, seed=29), randn(8, seed=30)],
            (0, 1),
        ),
        "npu_rotary_mul": (
            lambda t, x, c, s: t.npu_rotary_mul(x, c, s),
            [randn(2, 3, 2, 8, seed=33), randn(1, 3, 1, 8, seed=34), randn(1, 3, 1, 8, seed=35)],
            (0, 1, 2),
        ),
        "npu_swiglu": (lambda t, x: t.npu_swiglu(x), [randn(3, 10, seed=36, scale=2)], (0,)),
        "npu_fusion_attention": (
            lambda t, q, k, v: t.npu_fusion_attention(
                q, k, v, 2, "BSH", scale=0.25, keep_prob=0.8, seed=7, offset=0
            )[:3],
            [randn(2, 5, 8, seed=37), randn(2, 6, 8, seed=38), randn(2, 6, 8, seed=39)],
            (0, 1, 2),
        ),
        "npu_fusion_attention_v2": (
            lambda t, q, k, v, sink: t.npu_fusion_attention_v2(
                q, k, v, 2, "BSH", scale=0.25, sink=sink
            )[:3],
            [
                randn(2, 5, 8, seed=140),
                randn(2, 6, 8, seed=141),
                randn(2, 6, 8, seed=142),
                randn(2, seed=143),
            ],
            (0, 1, 2),
        ),
        "npu_fusion_attention_v3": (
            lambda t, q, k, v: t.npu_fusion_attention_v3(q, k, v, 2, "BSH", scale=0.25)[:3],
            [randn(2, 5, 8, seed=144), randn(2, 6, 8, seed=145), randn(2, 6, 8, seed=146)],
            (0, 1, 2),
        ),
        "npu_prompt_flash_attention": (
            lambda t, q, k, v: t.npu_prompt_flash_attention(
                q, k, v, num_heads=2, scale_value=0.25, actual_seq_lengths_kv=[6, 4]
            ),
            [randn(2, 5, 8, seed=147), randn(2, 6, 8, seed=148), randn(2, 6, 8, seed=149)],
            (),
        ),
        "npu_incre_flash_attention": (
            lambda t, q, k, v: t.npu_incre_flash_attention(q, k, v, num_heads=2, scale_value=0.25),
            [randn(2, 1, 8, seed=150), randn(2, 6, 8, seed=151), randn(2, 6, 8, seed=152)],
            (),
        ),
        "npu_fused_infer_attention_score": (
            lambda t, q, k, v: t.npu_fused_infer_attention_score(
                q, k, v, num_heads=2, scale=0.25, softmax_lse_flag=True
            ),
            [randn(2, 5, 8, seed=153), randn(2, 6, 8, seed=154), randn(2, 6, 8, seed=155)],
            (),
        ),
        "npu_fused_infer_attention_score_v2": (
            lambda t, q, k, v, sink: t.npu_fused_infer_attention_score_v2(
                q,
                k,
                v,
                num_query_heads=2,
                softmax_scale=0.25,
                learnable_sink=sink,
                return_softmax_lse=True,
            ),
            [
                randn(2, 5, 8, seed=171),
                randn(2, 6, 8, seed=172),
                randn(2, 6, 8, seed=173),
                randn(2, seed=174),
            ],
            (),
        ),
        "npu_grouped_matmul": (
            lambda t, x, w, b: t.npu_grouped_matmul(
                [x], [w], bias=[b], group_list=[2, 5], group_type=0, split_item=2
            ),
            [randn(5, 6, seed=156), randn(2, 6, 3, seed=157), randn(2, 3, seed=158)],
            (),
        ),
        "npu_moe_gating_top_k": (
            lambda t, x, b: t.npu_moe_gating_top_k(
                x,
                2,
                bias=b,
                k_group=2,
                group_count=4,
                group_select_mode=1,
                norm_type=1,
                routed_scaling_factor=2.0,
            ),
            [randn(6, 16, seed=175, scale=2), randn(16, seed=176, scale=0.3)],
            (0,),
        ),
        "npu_moe_gating_top_k_backward": (
            lambda t, n, g, i: t.npu_moe_gating_top_k_backward(n, g, i, norm_type=1),
            [
                rand(3, 6, seed=177),
                randn(3, 2, seed=178),
                torch.tensor([[0, 4], [5, 1], [2, 3]]).int(),
            ],
            (),
        ),
        "npu_moe_gating_top_k_softmax": (
            lambda t, x: t.npu_moe_gating_top_k_softmax(x, k=2),
            [randn(6, 5, seed=159, scale=2)],
            (),
        ),
        "npu_moe_gating_top_k_softmax_v2": (
            lambda t, x: t.npu_moe_gating_top_k_softmax_v2(x, k=2, output_softmax=True),
            [randn(6, 5, seed=160, scale=2)],
            (),
        ),
        "npu_moe_init_routing": (
            lambda t, x, r, e: t.npu_moe_init_routing(x, r, e, 3),
            [
                randn(4, 5, seed=161),
                torch.tensor([[0, 4], [1, 5], [2, 6], [3, 7]]).int(),
                torch.tensor([[2, 0], [1, 2], [0, 3], [2, 1]]).int(),
            ],
            (),
        ),
        "npu_moe_init_routing_v2": (
            lambda t, x, e, s: t.npu_moe_init_routing_v2(
                x, e, scale=s, expert_num=4, expert_tokens_num_type=1
            ),
            [
                randn(4, 5, seed=162),
                torch.tensor([[2, 0], [1, 2], [0, 3], [2, 1]]).int(),
                randn(4, seed=163),
            ],
            (),
        ),
        "npu_moe_finalize_routing": (
            lambda t, rows, s1, bias, scales, idx, experts: t.npu_moe_finalize_routing(
                rows, s1, None, bias, scales, idx, experts
            ),
            [
                randn(8, 5, seed=164),
                randn(4, 5, seed=165),
                randn(4, 5, seed=166),
                rand(4, 2, seed=167),
                torch.tensor([3, 0, 6, 1, 7, 2, 5, 4]).int(),
                torch.tensor([[2, 0], [1, 2], [0, 3], [2, 1]]).int(),
            ],
            (),
        ),
        "npu_moe_compute_expert_tokens": (
            lambda t, e: t.npu_moe_compute_expert_tokens(e, 4),
            [torch.tensor([0, 0, 1, 3, 3]).int()],
            (),
        ),
        "npu_moe_token_permute": (
            lambda t, x, idx: t.npu_moe_token_permute(x, idx),
            [randn(4, 5, seed=168), torch.tensor([[2, 0], [1, 2], [0, 3], [2, 1]])],
            (0,),
        ),
        "npu_moe_token_permute_with_routing_map": (
            lambda t, x, m, p: t.npu_moe_token_permute_with_routing_map(
                x, m, probs=p, num_out_tokens=8
            ),
            [
                randn(4, 5, seed=179),
                torch.tensor([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 1, 1]]).bool(),
                rand(4, 3, seed=180),
            ],
            (0, 2),
        ),
        "npu_moe_token_unpermute_with_routing_map": (
            lambda t, rows, idx, p, m: t.npu_moe_token_unpermute_with_routing_map(
                rows, idx, [4, 5], probs=p, routing_map=m
            ),
            [
                randn(8, 5, seed=181),
                torch.tensor([0, 5, 2, 6, 1, 3, 4, 7]).int(),
                rand(4, 3, seed=182),
                torch.tensor([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 1, 1]]).bool(),
            ],
            (0, 2),
        ),
        "npu_moe_token_unpermute": (
            lambda t, rows, idx, probs: t.npu_moe_token_unpermute(rows, idx, probs),
            [
                randn(8, 5, seed=169),
                torch.tensor([3, 0, 6, 1, 7, 2, 5, 4]).int(),
                rand(4, 2, seed=170),
            ],
            (0, 2),
        ),
        "npu_bert_apply_adam": (
            lambda t, var, m, v, g: t.npu_bert_apply_adam(
                1e-2, 0.9, 0.999, 1e-6, g, 1.0, 2.5, 0.01, out=(var, m, v)
            ),
            [
                randn(4, 6, seed=41),
                randn(4, 6, seed=43, scale=0.1),
                rand(4, 6, seed=44, high=0.1),
                randn(4, 6, seed=45),
            ],
            (),
        ),
        "npu_apply_adam": (
            lambda t, var, m, v, g: t.npu_apply_adam(
                0.81, 0.998, 1e-2, 0.9, 0.999, 1e-8, g, False, True, out=(var, m, v)
            ),
            [
                randn(4, 6, seed=46),
                randn(4, 6, seed=47, scale=0.1),
                rand(4, 6, seed=48, high=0.1),
                randn(4, 6, seed=49),
            ],
            (),
        ),
        "npu_apply_adam_w": (
            lambda t, var, m, v, g: t.npu_apply_adam_w(
                0.81, 0.998, 1e-2, 0.01, 0.9, 0.999, 1e-8, g, None, False, False, out=(var, m, v)
            ),
            [
                randn(4, 6, seed=50),
                randn(4, 6, seed=52, scale=0.1),
                rand(4, 6, seed=53, high=0.1),
                randn(4, 6, seed=54),
            ],
            (),
        ),
        "npu_one_hot": (
            lambda t, c: t.npu_one_hot(c, depth=5),
            [torch.tensor([0.0, 3.0, 4.0, 7.0, 1.0])],
            (),
        ),
        # Its gradient is not compared: the NPU's backward multiplies the kernel's bf16
        # softmax - labels by the upstream gradient in a second step (a second rounding); the
        # backward operator's case below, with a gradient of ones, is the kernel's step.
        "npu_softmax_cross_entropy_with_logits": (
            lambda t, x, y: t.npu_softmax_cross_entropy_with_logits(x, y),
            [randn(4, 7, seed=55, scale=3), labels],
            (),
        ),
        "npu_softmax_cross_entropy_with_logits_backward": (
            lambda t, g, x, y: t.npu_softmax_cross_entropy_with_logits_backward(g, x, y),
            [torch.ones(4), randn(4, 7, seed=56, scale=3), labels],
            (),
        ),
        "npu_max": (lambda t, x: t.npu_max(x, 1, keepdim=True), [randn(3, 7, 2, seed=57)], (0,)),
        "npu_pad": (lambda t, x: t.npu_pad(x, [1, 2, 0, 3]), [randn(3, 4, seed=58)], ()),
        "npu_iou": (lambda t, b, g: t.npu_iou(b, g), [boxes(5, 60), boxes(3, 62)], ()),
        "npu_ptiou": (lambda t, b, g: t.npu_ptiou(b, g, mode=1), [boxes(5, 63), boxes(3, 65)], ()),
        "npu_bounding_box_encode": (
            lambda t, a, g: t.npu_bounding_box_encode(a, g, 0, 0, 0, 0, 0.1, 0.1, 0.2, 0.2),
            [boxes(6, 66), boxes(6, 68)],
            (),
        ),
        "npu_bounding_box_decode": (
            lambda t, r, d: t.npu_bounding_box_decode(
                r, d, 0, 0, 0, 0, 0.1, 0.1, 0.2, 0.2, (60, 70), 16 / 1000
            ),
            [boxes(6, 69), randn(6, 4, seed=70)],
            (),
        ),
        "npu_yolo_boxes_encode": (
            lambda t, a, g: t.npu_yolo_boxes_encode(
                a, g, torch.tensor([4, 8, 16, 32, 8, 4], dtype=torch.int32).npu()
            ),
            [boxes(6, 75), boxes(6, 77)],
            (),
        ),
        "npu_batch_nms": (
            lambda t, b, s: t.npu_batch_nms(b, s, 0.2, 0.5, 3, 4),
            [boxes(16, 72).view(2, 8, 1, 4), rand(2, 8, 3, seed=74)],
            (),
        ),
        "npu_nms_with_mask": (lambda t, rows: t.npu_nms_with_mask(rows, 0.4), [nms_rows], ()),
        "npu_indexing": (
            lambda t, x: t.npu_indexing(x, [0, 1], [3, 7], [1, 2]),
            [randn(4, 8, seed=75)],
            (),
        ),
        "npu_roi_align": (
            lambda t, x, r: t.npu_roi_align(x, r, 0.5, 3, 3, 2, 1),
            [randn(1, 2, 8, 8, seed=76), align_rois],
            (),
        ),
        "npu_roi_alignbk": (
            lambda t, g, r: t.npu_roi_alignbk(g, r, [1, 2, 8, 8], 3, 3, 0.5, 2, 1),
            [randn(2, 2, 3, 3, seed=77), align_rois],
            (),
        ),
        "npu_ps_roi_pooling": (
            lambda t, x, r: t.npu_ps_roi_pooling(x, r, 0.5, 2, 2),
            [randn(1, 8, 9, 9, seed=78), ps_rois],
            (0,),
        ),
        "npu_ps_roi_pooling_backward": (
            lambda t, g, r: t.npu_ps_roi_pooling_backward(g, r, 0.5, 2, 2, [9, 9]),
            [randn(2, 2, 2, 2, seed=79), ps_rois],
            (),
        ),
        "npu_deformable_conv2d": (
            lambda t, x, w, off, b: t.npu_deformable_conv2d(x, w, off, b, **dcn_args()),
            [
                randn(1, 3, 5, 6, seed=80),
                randn(4, 3, 3, 3, seed=81, scale=0.3),
                offset,
                randn(4, seed=82),
            ],
            (0, 1, 2, 3),
        ),
        "npu_deformable_conv2dbk": (
            lambda t, x, g, w, off: t.npu_deformable_conv2dbk(
                x,
                g,
                t.npu_deformable_conv2d(x, w, off, None, **dcn_args())[1],
                w,
                off,
                **dcn_args(),
            ),
            [
                randn(1, 3, 5, 6, seed=83),
                randn(1, 4, 5, 6, seed=84),
                randn(4, 3, 3, 3, seed=85, scale=0.3),
                offset,
            ],
            (),
        ),
        "npu_giou": (
            lambda t, b, g: t.npu_giou(b, g, trans=True, is_cross=False, mode=0),
            [columns(6, 86), columns(6, 88)],
            (0, 1),
        ),
        "npu_diou": (
            lambda t, b, g: t.npu_diou(b, g, trans=True, is_cross=False, mode=0),
            [columns(6, 89), columns(6, 91)],
            (0, 1),
        ),
        "npu_ciou": (
            lambda t, b, g: t.npu_ciou(b, g, trans=True, is_cross=False, mode=0),
            [columns(6, 92), columns(6, 94)],
            (0, 1),
        ),
        "npu_ciou crossed": (
            lambda t, b, g: t.npu_ciou(b, g, is_cross=True, mode=1),
            [boxes(5, 95).t().contiguous(), boxes(3, 97).t().contiguous()],
            (),
        ),
        "npu_giou_backward": (
            lambda t, g, b, gt: t.npu_giou_backward(g, b, gt, True, False, 0),
            [randn(6, 1, seed=98), columns(6, 99), columns(6, 101)],
            (),
        ),
        "npu_diou_backward": (
            lambda t, g, b, gt: t.npu_diou_backward(g, b, gt, True, False, 0),
            [randn(1, 6, seed=102), columns(6, 103), columns(6, 105)],
            (),
        ),
        "npu_ciou_backward": (
            lambda t, g, b, gt: t.npu_ciou_backward(g, b, gt, None, True, False, 0),
            [randn(1, 6, seed=106), columns(6, 107), columns(6, 109)],
            (),
        ),
        "npu_format_cast": (lambda t, x: t.npu_format_cast(x, 29), [randn(15, 17, seed=110)], (0,)),
        "npu_format_cast_": (
            lambda t, x: t.npu_format_cast_(x.clone(), 29),
            [randn(15, 17, seed=111)],
            (),
        ),
        "npu_alloc_float_status": (lambda t, x: t.npu_alloc_float_status(x), [randn(3)], ()),
        "npu_get_float_status": (lambda t, x: t.npu_get_float_status(x), [randn(8)], ()),
        "npu_clear_float_status": (lambda t, x: t.npu_clear_float_status(x), [randn(8)], ()),
        "npu_add_rms_norm": (
            lambda t, a, b, g: t.npu_add_rms_norm(a, b, g),
            [randn(3, 8, seed=120), randn(3, 8, seed=121), randn(8, seed=122)],
            (),
        ),
        "npu_gemma_rms_norm": (
            lambda t, x, g: t.npu_gemma_rms_norm(x, g),
            [randn(3, 8, seed=123), randn(8, seed=124)],
            (),
        ),
        "npu_apply_rotary_pos_emb": (
            lambda t, q, k, c, s: t.npu_apply_rotary_pos_emb(q.clone(), k.clone(), c, s),
            [
                randn(1, 3, 2, 8, seed=125),
                randn(1, 3, 1, 8, seed=126),
                randn(1, 3, 1, 8, seed=127),
                randn(1, 3, 1, 8, seed=128),
            ],
            (),
        ),
        "npu_mrope": (
            lambda t, q, k, c: t.npu_mrope(
                torch.tensor([[0, 2], [1, 3], [2, 0]]).npu(), q, k, c, 8, mrope_section=[1, 1, 2]
            ),
            [randn(2, 16, seed=129), randn(2, 8, seed=130), randn(4, 8, seed=131)],
            (),
        ),
        "npu_geglu": (lambda t, x: t.npu_geglu(x), [randn(3, 10, seed=132, scale=2)], (0,)),
        "npu_gelu_mul": (lambda t, x: t.npu_gelu_mul(x), [randn(3, 10, seed=133, scale=2)], ()),
        "npu_clipped_swiglu": (
            lambda t, x: t.npu_clipped_swiglu(x),
            [randn(3, 10, seed=134, scale=5)],
            (),
        ),
        "npu_cross_entropy_loss": (
            lambda t, x: t.npu_cross_entropy_loss(
                x, torch.tensor([1, 0, 3]).npu(), label_smoothing=0.1
            )[:2],
            [randn(3, 5, seed=135, scale=3)],
            (0,),
        ),
        "npu_dtype_cast": (
            lambda t, x: t.npu_dtype_cast(x, torch.float16),
            [randn(3, 5, seed=136)],
            (0,),
        ),
        "npu_dtype_cast_": (
            lambda t, d, s: t.npu_dtype_cast_(d.clone(), s),
            [randn(3, 5, seed=137), randn(3, 5, seed=138)],
            (),
        ),
        "npu_broadcast": (lambda t, x: t.npu_broadcast(x, [2, 3, 4]), [randn(3, 1, seed=139)], ()),
        "npu_transpose": (lambda t, x: t.npu_transpose(x, [1, 0]), [randn(3, 4, seed=140)], ()),
        "npu_slice": (lambda t, x: t.npu_slice(x, [1, 0], [2, 3]), [randn(3, 4, seed=141)], ()),
        "npu_reshape": (lambda t, x: t.npu_reshape(x, [4, 3]), [randn(3, 4, seed=142)], ()),
        "npu_scatter": (
            lambda t, x, u: t.npu_scatter(x, torch.tensor([2, 0]).npu(), u, 0),
            [randn(3, 2, seed=143), randn(2, seed=144)],
            (),
        ),
        "npu_scatter_nd_update": (
            lambda t, x, u: t.npu_scatter_nd_update(x, torch.tensor([[1], [0]]).npu(), u),
            [randn(3, 4, seed=145), randn(2, 4, seed=146)],
            (),
        ),
        "npu_scatter_nd_update_": (
            lambda t, x, u: t.npu_scatter_nd_update_(x.clone(), torch.tensor([[2]]).npu(), u),
            [randn(3, 4, seed=147), randn(1, 4, seed=148)],
            (),
        ),
        "npu_min": (lambda t, x: t.npu_min(x, 1), [randn(3, 7, seed=149)], (0,)),
        "npu_sort_v2": (
            lambda t, x: t.npu_sort_v2(x, descending=True),
            [randn(3, 7, seed=150)],
            (),
        ),
        "npu_masked_fill_range": (
            lambda t, x, v: t.npu_masked_fill_range(
                x,
                torch.tensor([[0, 1]], dtype=torch.int32).npu(),
                torch.tensor([[2, 3]], dtype=torch.int32).npu(),
                v,
            ),
            [randn(2, 4, seed=151), randn(1, seed=152)],
            (),
        ),
        "npu_conv2d": (
            lambda t, x, w, b: t.npu_conv2d(x, w, b, [1, 1], [1, 1], [1, 1], 1),
            [randn(1, 2, 5, 5, seed=153), randn(3, 2, 3, 3, seed=154), randn(3, seed=155)],
            (0, 1, 2),
        ),
        "npu_convolution": (
            lambda t, x, w: t.npu_convolution(x, w, None, [2], [0], [1], 1),
            [randn(1, 2, 3, 5, 5, seed=156), randn(2, 2, 1, 3, 3, seed=157)],
            (0, 1),
        ),
        "npu_conv3d": (
            lambda t, x, w: t.npu_conv3d(x, w, None, [1], [1], [1], 1),
            [randn(1, 2, 3, 4, 4, seed=158), randn(2, 2, 3, 3, 3, seed=159)],
            (0, 1),
        ),
        "npu_conv_transpose2d": (
            lambda t, x, w: t.npu_conv_transpose2d(x, w, None, [0], [1], [2], [1], 1),
            [randn(1, 2, 4, 4, seed=160), randn(2, 3, 3, 3, seed=161)],
            (0, 1),
        ),
        "npu_convolution_transpose": (
            lambda t, x, w: t.npu_convolution_transpose(x, w, None, [1], [0], [1], [1], 1),
            [randn(1, 2, 4, 4, seed=162), randn(2, 3, 3, 3, seed=163)],
            (0, 1),
        ),
        "one_": (lambda t, x: t.one_(x.clone()), [randn(3, 4, seed=170)], ()),
        "copy_memory_": (
            lambda t, d, s: t.copy_memory_(d.clone(), s),
            [randn(3, 4, seed=171), randn(3, 4, seed=172)],
            (),
        ),
        "npu_gather_sparse_index": (
            lambda t, x: t.npu_gather_sparse_index(x, torch.tensor([[2, 0], [1, 1]]).npu()),
            [randn(3, 4, seed=173)],
            (0,),
        ),
        "npu_group_norm_silu": (
            lambda t, x, w, b: t.npu_group_norm_silu(x, w, b, 2),
            [randn(2, 4, 3, seed=174), randn(4, seed=175), randn(4, seed=176)],
            (),
        ),
        "npu_sign_bits_pack": (lambda t, x: t.npu_sign_bits_pack(x, 1), [randn(13, seed=177)], ()),
        "npu_sign_bits_unpack": (
            lambda t, x: (
                t.npu_sign_bits_unpack(
                    torch.tensor([159, 15], dtype=torch.uint8).npu(), 2, torch.float32
                )
                * x
            ),
            [randn(2, 8, seed=178)],
            (),
        ),
        "batch_norm_reduce": (
            lambda t, x: t.batch_norm_reduce(x, 1e-5),
            [randn(2, 3, 4, 4, seed=180)],
            (),
        ),
        "npu_apply_adam_w_out": (
            lambda t, var, m, v, g: t.npu_apply_adam_w_out(
                0.81, 0.998, 1e-2, 0.01, 0.9, 0.999, 1e-8, g, None, False, False, var, m, v
            ),
            [
                randn(4, 6, seed=181),
                randn(4, 6, seed=182, scale=0.1),
                rand(4, 6, seed=183, high=0.1),
                randn(4, 6, seed=184),
            ],
            (),
        ),
        "npu_attention_update": (
            lambda t, a, b, x, y: t.npu_attention_update([a.float(), b.float()], [x, y], 1),
            [randn(5, seed=185), randn(5, seed=186), randn(5, 8, seed=187), randn(5, 8, seed=188)],
            (),
        ),
        "npu_ring_attention_update": (
            lambda t, o1, o2: t.npu_ring_attention_update(
                o1,
                torch.ones(1, 2, 3, 8).npu(),
                torch.full((1, 2, 3, 8), 2.0).npu(),
                o2,
                torch.full((1, 2, 3, 8), 1.5).npu(),
                torch.full((1, 2, 3, 8), 3.0).npu(),
            ),
            [randn(3, 1, 8, seed=189), randn(3, 1, 8, seed=190)],
            (),
        ),
        "npu_group_norm_swish": (
            lambda t, x, w, b: t.npu_group_norm_swish(x, 2, w, b),
            [randn(2, 4, 3, seed=191), randn(4, seed=192), randn(4, seed=193)],
            (0, 1, 2),
        ),
        "npu_sim_exponential_": (
            lambda t, x: t.npu_sim_exponential_(x.clone(), 2.0),
            [randn(4, 5, seed=194)],
            (),
        ),
        "npu_top_k_top_p": (
            lambda t, x, p: t.npu_top_k_top_p(x, p, torch.tensor([3, 5], dtype=torch.int32).npu()),
            [randn(2, 8, seed=195, scale=2), rand(2, seed=196)],
            (),
        ),
        "npu_transpose_batchmatmul": (
            lambda t, x, w, b: t.npu_transpose_batchmatmul(
                x, w, bias=b, perm_x1=[1, 0, 2], perm_y=[1, 0, 2]
            ),
            [randn(4, 2, 6, seed=197), randn(2, 6, 3, seed=198), randn(3, seed=199)],
            (),
        ),
        "_lstm_npu": (
            lambda t, x, h, c, *p: t._lstm_npu(x, [h, c], list(p), True, 1, 0.0, True, False),
            [
                randn(3, 2, 4, seed=200),
                randn(1, 2, 3, seed=201),
                randn(1, 2, 3, seed=202),
                randn(12, 4, seed=203),
                randn(12, 3, seed=204),
                randn(12, seed=205),
                randn(12, seed=206),
            ],
            (0, 3),
        ),
        "_lstm_npu_backward": (
            lambda t, g, x, h, c, *p: t._lstm_npu_backward(
                g,
                None,
                None,
                x,
                [h, c],
                list(p),
                *t._lstm_npu(x, [h, c], list(p), True, 1, 0.0, True, False)[3:],
                True,
                1,
                0.0,
                True,
                False,
            ),
            [
                randn(3, 2, 3, seed=207),
                randn(3, 2, 4, seed=208),
                randn(1, 2, 3, seed=209),
                randn(1, 2, 3, seed=210),
                randn(12, 4, seed=211),
                randn(12, 3, seed=212),
                randn(12, seed=213),
                randn(12, seed=214),
            ],
            (),
        ),
        "npu_lstm": (
            lambda t, x, w, b, h, c: t.npu_lstm(
                x, w, b, None, h, c, True, 1, 0.0, True, False, False, False, False
            ),
            [
                randn(3, 2, 4, seed=215),
                randn(7, 12, seed=216),
                randn(12, seed=217),
                randn(1, 2, 3, seed=218),
                randn(1, 2, 3, seed=219),
            ],
            (0, 1),
        ),
        "npu_lstm_cell": (
            lambda t, x, wi, wh, h, c, bi, bh: t.npu_lstm_cell(x, wi, wh, h, c, bi, bh),
            [
                randn(2, 4, seed=220),
                randn(4, 12, seed=221),
                randn(3, 12, seed=222),
                randn(2, 3, seed=223),
                randn(2, 3, seed=224),
                randn(12, seed=225),
                randn(12, seed=226),
            ],
            (0, 1),
        ),
        "npu_gru": (
            lambda t, x, h, wi, wh, bi, bh: t.npu_gru(
                x, h, wi, wh, bi, bh, None, True, 1, 0.0, True, False, False
            ),
            [
                randn(3, 2, 4, seed=220),
                randn(1, 2, 3, seed=221),
                randn(4, 9, seed=222),
                randn(3, 9, seed=223),
                randn(9, seed=224),
                randn(9, seed=225),
            ],
            (0, 2),
        ),
        "npu_masked_causal_conv1d": (
            lambda t, x, w: t.npu_masked_causal_conv1d(
                x, w, mask=torch.tensor([[True, False, True, True], [True] * 4]).npu()
            ),
            [randn(4, 2, 8, seed=230), randn(3, 8, seed=231)],
            (0, 1),
        ),
        "npu_masked_causal_conv1d_backward": (
            lambda t, g, x, w: t.npu_masked_causal_conv1d_backward(g, x, w),
            [randn(4, 2, 8, seed=232), randn(4, 2, 8, seed=233), randn(3, 8, seed=234)],
            (),
        ),
        "npu_nms_v4": (
            lambda t, b, s: t.npu_nms_v4(
                b, s, 4, torch.tensor(0.4).npu(), torch.tensor(0.1).npu(), True
            ),
            [boxes(8, 240), rand(8, seed=241)],
            (),
        ),
        "npu_anchor_response_flags": (
            lambda t, b: t.npu_anchor_response_flags(b, [8, 8], [10, 10], 2),
            [boxes(3, 242)],
            (),
        ),
        "npu_batch_gather_matmul": (
            lambda t, y, x, wb, wa: t.npu_batch_gather_matmul(
                y, x, wb, torch.tensor([1, -1, 0], dtype=torch.int32).npu(), wa, scale=0.5
            ),
            [
                randn(3, 8, seed=243),
                randn(3, 16, seed=244),
                randn(2, 1, 8, 4, seed=245),
                randn(2, 1, 4, 16, seed=246),
            ],
            (),
        ),
        "npu_batch_gather_matmul_": (
            lambda t, y, x, wb: t.npu_batch_gather_matmul_(
                y.clone(), x, wb, torch.tensor([1, 0, 1], dtype=torch.int32).npu(), scale=0.5
            ),
            [randn(3, 8, seed=247), randn(3, 16, seed=248), randn(2, 1, 8, 16, seed=249)],
            (),
        ),
        "npu_grouped_matmul_add": (
            lambda t, x, w: t.npu_grouped_matmul_add(
                torch.ones(2, 5, 4).npu(), x, w, torch.tensor([3, 6]).npu()
            ),
            [randn(6, 5, seed=250), randn(6, 4, seed=251)],
            (),
        ),
        "npu_grouped_matmul_add_": (
            lambda t, x, w: t.npu_grouped_matmul_add_(
                torch.ones(2, 5, 4).npu(), x, w, torch.tensor([2, 4]).npu(), group_list_type=1
            ),
            [randn(6, 5, seed=252), randn(6, 4, seed=253)],
            (),
        ),
        "npu_ffn": (
            lambda t, x, w1, w2, b1: t.npu_ffn(x, w1, w2, "gelu", bias1=b1),
            [
                randn(4, 8, seed=254),
                randn(8, 12, seed=255),
                randn(12, 8, seed=256),
                randn(12, seed=257),
            ],
            (),
        ),
        "npu_grid_assign_positive": (
            lambda t, a, o: t.npu_grid_assign_positive(
                a,
                o,
                torch.tensor([1, 1, 0, 1], dtype=torch.uint8).npu(),
                o.max(0)[0],
                o.max(0)[1].int(),
                o.max(1)[0],
                o.max(1)[1].int(),
                2,
                0.5,
                0.1,
                True,
            ),
            [torch.full((4,), -1.0), rand(2, 4, seed=260)],
            (),
        ),
        "npu_nms_rotated": (
            lambda t, d, s: t.npu_nms_rotated(d, s, 0.3),
            [
                torch.cat(
                    [
                        rand(6, 2, seed=261, high=20),
                        rand(6, 2, seed=262, low=2, high=9),
                        rand(6, 1, seed=263, high=90),
                    ],
                    1,
                ),
                rand(6, seed=264),
            ],
            (),
        ),
        "npu_rotated_iou": (
            lambda t, a, b: t.npu_rotated_iou(a, b),
            [
                torch.cat(
                    [
                        rand(1, 3, 2, seed=265, high=9),
                        rand(1, 3, 2, seed=266, low=2, high=6),
                        rand(1, 3, 1, seed=267, high=90),
                    ],
                    2,
                ),
                torch.cat(
                    [
                        rand(1, 4, 2, seed=268, high=9),
                        rand(1, 4, 2, seed=269, low=2, high=6),
                        rand(1, 4, 1, seed=270, high=90),
                    ],
                    2,
                ),
            ],
            (),
        ),
        "npu_rotated_overlaps": (
            lambda t, a, b: t.npu_rotated_overlaps(a, b),
            [
                torch.cat(
                    [
                        rand(1, 3, 2, seed=271, high=9),
                        rand(1, 3, 2, seed=272, low=2, high=6),
                        rand(1, 3, 1, seed=273, high=90),
                    ],
                    2,
                ),
                torch.cat(
                    [
                        rand(1, 2, 2, seed=274, high=9),
                        rand(1, 2, 2, seed=275, low=2, high=6),
                        rand(1, 2, 1, seed=276, high=90),
                    ],
                    2,
                ),
            ],
            (),
        ),
        "npu_stride_add": (
            lambda t, a, b: t.npu_stride_add(a, b, 1, 0, 1),
            [randn(1, 3, 2, 2, 16, seed=277), randn(1, 2, 2, 2, 16, seed=278)],
            (),
        ),
        "npu_prefetch": (
            lambda t, x: (t.npu_prefetch(x, None, 64), x)[1],
            [randn(4, seed=279)],
            (),
        ),
        "scatter_update": (
            lambda t, d, u: t.scatter_update(d, torch.tensor([1, 0]).npu(), u, -2),
            [randn(2, 2, 5, 3, seed=280), randn(2, 2, 2, 3, seed=281)],
            (),
        ),
        "scatter_update_": (
            lambda t, d, u: t.scatter_update_(d.clone(), torch.tensor([3, 2]).npu(), u, -2),
            [randn(2, 2, 5, 3, seed=282), randn(2, 2, 2, 3, seed=283)],
            (),
        ),
    }


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _run(name, dtype, seed=1234):
    """Outputs (on the host) and input gradients of case ``name`` with float inputs of
    ``dtype`` holding bf16 values."""
    import torch_npu

    call, inputs, grads = _cases()[name]
    leaves = []
    for i, x in enumerate(inputs):
        if x.is_floating_point():
            x = x.to(BF16).to(dtype)
        x = x.npu()
        if i in grads:
            x.requires_grad_(True)
        leaves.append(x)
    torch.manual_seed(seed)
    outs = _flat(call(torch_npu, *leaves))
    floats = [o for o in outs if o.is_floating_point() and o.requires_grad]
    result = [o.detach().cpu() for o in outs]
    if grads and floats:
        weights = [
            randn(*o.shape, seed=99 + k).to(BF16).to(o.dtype).npu() for k, o in enumerate(floats)
        ]
        torch.autograd.backward(floats, weights)
        result += [leaves[i].grad.detach().cpu() for i in grads]
    # In-place operators (the Adam kernels, npu_silu_) return their inputs: compare those too.
    result += [
        x.detach().cpu() for j, x in enumerate(leaves) if x.is_floating_point() and j not in grads
    ]
    return result


def _compare(name):
    got, ref = _run(name, BF16), _run(name, torch.float32)
    if len(got) != len(ref):
        return f"{len(got)} results in bf16, {len(ref)} in fp32"
    for k, (g, r) in enumerate(zip(got, ref)):
        if r.dtype == torch.float32 and g.dtype == BF16:
            r = r.to(BF16)  # the fp32 result, rounded once to nearest even
        if g.dtype != r.dtype:
            return f"result {k}: {g.dtype}, expected {r.dtype}"
        if g.shape != r.shape:
            return f"result {k}: shape {tuple(g.shape)}, expected {tuple(r.shape)}"
        if g.is_floating_point():
            same = (g.float() == r.float()) | (g.float().isnan() & r.float().isnan())
        else:
            same = g == r
        if not bool(same.all()):
            bad = (~same).nonzero()[0].tolist()
            return (
                f"result {k} at {bad}: {g[tuple(bad)].item()!r}, expected {r[tuple(bad)].item()!r}"
            )
    return "ok"


def child_main():
    import warnings

    warnings.simplefilter("ignore")
    report = {}
    for name in _cases():
        try:
            report[name] = _compare(name)
        except Exception as exc:  # reported per case by the parent
            report[name] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(report))


@pytest.fixture(scope="module")
def report():
    env = overlay_support.overlay_env()
    for name in ("APEXNPU_INF_NAN_MODE", "INF_NAN_MODE_ENABLE", "INF_NAN_MODE_FORCE_DISABLE"):
        env.pop(name, None)
    env["APEXNPU_SOC_VERSION"] = "Ascend910B1"
    env["PYTHONPATH"] = os.pathsep.join([HERE, env["PYTHONPATH"]])
    code = "import test_npu_op_bf16 as t; t.child_main()"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(_cases()))
def test_bf16_is_the_fp32_result_rounded_once(report, name):
    assert report[name] == "ok", report[name]


def test_every_documented_operator_has_a_bf16_case():
    import re

    with open(os.path.join(overlay_support.REPO_ROOT, "docs", "NPU_OPERATORS.md")) as f:
        table = f.read()
    first_cells = re.findall(r"^\| (.*?) \|", table, flags=re.M)
    documented = {name for cell in first_cells for name in re.findall(r"`(\w+)\(", cell)}
    covered = {name.split()[0] for name in _cases()}
    exempt = {
        "npu_change_data_ptr",
        "npu_random_choice_with_mask",
        "npu_dropout_gen_mask",
        "empty_with_format",
        "npu_add_rms_norm_cast",
        "empty_with_swapped_memory",
    }
    assert documented - exempt <= covered, sorted(documented - exempt - covered)
