"""What ``torch.npu.amp.autocast`` does to each operation: torch_npu's autocast policy.

On torch 1.x it is torch 1.13's CUDA policy, which torch_npu 1.x follows. On torch 2.x it is
torch_npu 2.x's own list (its kernels for the AutocastPrivateUse1 key): the same, plus
``scaled_dot_product_attention`` among the lower-precision operations (so attention runs in fp16
or bf16, as on the NPU), and without the upsample kernels, which torch_npu leaves in their input
dtype where torch's CUDA list runs them in fp32.

Keyed by the name under which torch's Python API reaches the operation (``torch.<name>``,
``torch.nn.functional.<name>``, ``Tensor.<name>``); in-place variants (``exp_``) are never cast,
as in torch. Python-level functions that stand for a policy operation (``cross_entropy`` runs
log_softmax and nll_loss, both fp32; ``interpolate`` runs the upsample kernels) are listed under
the policy of what they run.
"""

from __future__ import annotations

from typing import Dict

from .autocast_state import PER_DEVICE

LOWER_PRECISION = "lower_precision_fp"  # cast floating inputs to fp16
FP32 = "fp32"  # cast floating inputs to fp32
FP32_SET_OPT_DTYPE = "fp32_set_opt_dtype"  # run in fp32 through the op's own dtype argument
PROMOTE = "promote"  # cast floating inputs to the widest among them
BANNED = "banned"

_LOWER_PRECISION = (
    "_convolution",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_tbc",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "convolution",
    "cudnn_convolution",
    "cudnn_convolution_transpose",
    "prelu",
    "addmm",
    "addmv",
    "addr",
    "matmul",
    "einsum",
    "mm",
    "mv",
    "linear",
    "addbmm",
    "baddbmm",
    "bmm",
    "chain_matmul",
    "linalg_multi_dot",
    "_thnn_fused_lstm_cell",
    "_thnn_fused_gru_cell",
    "lstm_cell",
    "gru_cell",
    "rnn_tanh_cell",
    "rnn_relu_cell",
    "__matmul__",
    "__rmatmul__",  # the @ operator
    "multi_head_attention_forward",  # nn.MultiheadAttention: projections and matmuls in fp16
)
# torch_npu 2.x only (torch 1.x has no such function).
_LOWER_PRECISION_TORCH2 = ("scaled_dot_product_attention",)
_FP32 = (
    "acos",
    "asin",
    "cosh",
    "erfinv",
    "exp",
    "expm1",
    "log",
    "log10",
    "log2",
    "log1p",
    "reciprocal",
    "rsqrt",
    "sinh",
    "tan",
    "pow",
    "softplus",
    "layer_norm",
    "native_layer_norm",
    "group_norm",
    "frobenius_norm",
    "nuclear_norm",
    "cosine_similarity",
    "poisson_nll_loss",
    "cosine_embedding_loss",
    "nll_loss",
    "nll_loss2d",
    "hinge_embedding_loss",
    "kl_div",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "mse_loss",
    "margin_ranking_loss",
    "multilabel_margin_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "multi_margin_loss",
    "binary_cross_entropy_with_logits",
    "dist",
    "pdist",
    "cdist",
    "renorm",
    "logsumexp",
    "__pow__",
    "__rpow__",  # the ** operator
    "norm",  # fp32_append_dtype in torch: the fp32 overload, an fp32 result
    "cross_entropy",  # log_softmax (fp32 result) then nll_loss (fp32)
)
# torch 1.13's CUDA list only: torch_npu 2.x has no autocast kernel for upsampling.
_FP32_TORCH1 = (
    "upsample_nearest1d",
    "upsample_nearest2d",
    "upsample_nearest3d",
    "_upsample_nearest_exact1d",
    "_upsample_nearest_exact2d",
    "_upsample_nearest_exact3d",
    "upsample_linear1d",
    "upsample_bilinear2d",
    "_upsample_bilinear2d_aa",
    "upsample_trilinear3d",
    "upsample_bicubic2d",
    "_upsample_bicubic2d_aa",
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",  # the upsample kernels
)
_FP32_SET_OPT_DTYPE = (
    "prod",
    "softmax",
    "log_softmax",
    "cumprod",
    "cumsum",
    "linalg_vector_norm",
    "linalg_matrix_norm",
    "sum",
)
_PROMOTE = (
    "addcdiv",
    "addcmul",
    "atan2",
    "bilinear",
    "cross",
    "dot",
    "grid_sampler",
    "index_put",
    "tensordot",
    "scatter_add",
)

if PER_DEVICE:
    _LOWER_PRECISION += _LOWER_PRECISION_TORCH2
else:
    _FP32 += _FP32_TORCH1

POLICY: Dict[str, str] = {}
for _names, _policy in (
    (_LOWER_PRECISION, LOWER_PRECISION),
    (_FP32, FP32),
    (_FP32_SET_OPT_DTYPE, FP32_SET_OPT_DTYPE),
    (_PROMOTE, PROMOTE),
):
    for _name in _names:
        POLICY[_name] = _policy
POLICY["binary_cross_entropy"] = BANNED

BANNED_MESSAGE = (
    "autocast refuses binary_cross_entropy (and nn.BCELoss): in fp16 its log of a sigmoid output "
    "loses too much. Fuse the sigmoid into the loss with "
    "torch.nn.functional.binary_cross_entropy_with_logits or nn.BCEWithLogitsLoss, which "
    "autocast runs in fp32."
)
