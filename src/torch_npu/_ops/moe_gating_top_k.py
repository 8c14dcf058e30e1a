"""``torch_npu.npu_moe_gating_top_k`` (DeepSeek-V3's grouped expert routing) and its backward
``npu_moe_gating_top_k_backward``.

``npu_moe_gating_top_k(x, k, *, bias=None, input_ids=None, tid2eid=None, k_group=1,
group_count=1, group_select_mode=0, renorm=0, norm_type=0, out_flag=False,
routed_scaling_factor=1.0, eps=1e-20) -> (y, expert_idx, norm_out)``, per row of the 2-D x:
- ``norm_out`` = softmax(x) (``norm_type`` 0) or sigmoid(x) (1), fp32;
- the selection scores ``norm_out + bias``; the experts, in ``group_count`` groups of
  consecutive experts, score per group by its maximum (``group_select_mode`` 0) or the sum of
  its two largest (1); the ``k_group`` best groups stay, and among their experts the ``k``
  largest selection scores, by falling score (ties: the lower expert), are ``expert_idx``
  (int32);
- ``y`` = ``norm_out`` (without bias) at those experts, divided by their sum + ``eps``, times
  ``routed_scaling_factor`` (CANN's MoeGatingTopK formula, stated for both modes), stored once
  in x's dtype.
``norm_out`` is returned whatever ``out_flag``. The hash routing (``input_ids``/``tid2eid``) and
``renorm`` 1 are not emulated (they raise).

The backward of ``y`` (sigmoid mode, the one torch_npu's backward kernel supports; softmax mode
raises) is ``npu_moe_gating_top_k_backward(x_norm, grad_y, expertIdx, *, renorm=0,
norm_type=0, routed_scaling_factor=1.0, eps=1e-20)``: the gradient of the formula above with
respect to x through the selected sigmoid scores, in ``grad_y``'s dtype.
"""

from __future__ import annotations

from typing import Optional

import torch

from ._precision import store, upcast
from ._registry import operator


def _select(
    name: str, scores: torch.Tensor, k: int, k_group: int, group_count: int, group_select_mode: int
) -> torch.Tensor:
    rows, experts = scores.shape
    if group_count <= 0 or experts % group_count:
        raise RuntimeError(
            f"{name}: {experts} experts do not split into group_count={group_count} groups"
        )
    per_group = experts // group_count
    if not 1 <= k_group <= group_count or not 1 <= k <= k_group * per_group:
        raise RuntimeError(
            f"{name}: k={k} and k_group={k_group} do not fit {group_count} "
            f"groups of {per_group} experts"
        )
    if group_count > 1:
        grouped = scores.reshape(rows, group_count, per_group)
        if group_select_mode == 0:
            group_scores = grouped.amax(dim=-1)
        elif group_select_mode == 1:
            if per_group < 2:
                raise RuntimeError(f"{name}: group_select_mode 1 needs 2 experts per group")
            group_scores = torch.sort(grouped, dim=-1, descending=True)[0][..., :2].sum(-1)
        else:
            raise RuntimeError(f"{name}: group_select_mode must be 0 or 1, got {group_select_mode}")
        best = torch.sort(group_scores, dim=-1, descending=True, stable=True)[1][:, :k_group]
        keep = torch.zeros(rows, group_count, dtype=torch.bool, device=scores.device)
        keep.scatter_(1, best, True)
        keep = keep.unsqueeze(-1).expand(rows, group_count, per_group).reshape(rows, experts)
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.sort(scores, dim=-1, descending=True, stable=True)[1][:, :k]


def _weights(norm: torch.Tensor, idx: torch.Tensor, scaling: float, eps: float) -> torch.Tensor:
    picked = torch.gather(norm, 1, idx)
    return picked / (picked.sum(dim=-1, keepdim=True) + eps) * scaling


class _GatingTopK(torch.autograd.Function):
    """y from x; the backward is npu_moe_gating_top_k_backward's, as torch_npu registers it."""

    @staticmethod
    def forward(ctx, x, bias, k, k_group, group_count, group_select_mode, norm_type, scaling, eps):  # noqa: D102 - torch.autograd.Function protocol
        name = "npu_moe_gating_top_k"
        x32 = upcast(x).float()
        norm = torch.softmax(x32, dim=-1) if norm_type == 0 else torch.sigmoid(x32)
        scores = norm if bias is None else norm + upcast(bias).float()
        idx = _select(name, scores, k, k_group, group_count, group_select_mode)
        y = _weights(norm, idx, scaling, eps)
        idx = idx.to(torch.int32)
        ctx.save_for_backward(norm, idx)
        ctx.args = (norm_type, scaling, eps)
        ctx.mark_non_differentiable(idx, norm)
        return store(y, x.dtype), idx, norm

    @staticmethod
    def backward(ctx, grad_y, _grad_idx, _grad_norm):  # noqa: D102
        norm, idx = ctx.saved_tensors
        norm_type, scaling, eps = ctx.args
        grad_x = npu_moe_gating_top_k_backward(
            norm, grad_y, idx, norm_type=norm_type, routed_scaling_factor=scaling, eps=eps
        )
        return (grad_x,) + (None,) * 8


@operator
def npu_moe_gating_top_k(
    x: torch.Tensor,
    k: int,
    *,
    bias: Optional[torch.Tensor] = None,
    input_ids: Optional[torch.Tensor] = None,
    tid2eid: Optional[torch.Tensor] = None,
    k_group: int = 1,
    group_count: int = 1,
    group_select_mode: int = 0,
    renorm: int = 0,
    norm_type: int = 0,
    out_flag: bool = False,
    routed_scaling_factor: float = 1.0,
    eps: float = 1e-20,
):
    name = "npu_moe_gating_top_k"
    if input_ids is not None or tid2eid is not None:
        raise NotImplementedError(f"{name}: input_ids/tid2eid (hash routing) are not emulated")
    if int(renorm) != 0:
        raise NotImplementedError(f"{name}: renorm={renorm} is not emulated; 0 is")
    if int(norm_type) not in (0, 1):
        raise RuntimeError(f"{name}: norm_type must be 0 (softmax) or 1 (sigmoid), got {norm_type}")
    if x.dim() != 2:
        raise RuntimeError(f"{name}: x must be 2-D, got {tuple(x.shape)}")
    if bias is not None and tuple(bias.shape) != (x.shape[-1],):
        raise RuntimeError(
            f"{name}: bias must have shape ({x.shape[-1]},), got {tuple(bias.shape)}"
        )
    return _GatingTopK.apply(
        x,
        bias,
        int(k),
        int(k_group),
        int(group_count),
        int(group_select_mode),
        int(norm_type),
        float(routed_scaling_factor),
        float(eps),
    )


@operator
def npu_moe_gating_top_k_backward(
    x_norm: torch.Tensor,
    grad_y: torch.Tensor,
    expertIdx: torch.Tensor,
    *,
    renorm: int = 0,  # noqa: N803
    norm_type: int = 0,
    routed_scaling_factor: float = 1.0,
    eps: float = 1e-20,
) -> torch.Tensor:
    name = "npu_moe_gating_top_k_backward"
    if int(norm_type) != 1:
        raise NotImplementedError(
            f"{name}: norm_type={norm_type}: only the sigmoid mode (1) "
            "has a backward, as in torch_npu"
        )
    if x_norm.dim() != 2 or grad_y.shape != expertIdx.shape or grad_y.shape[0] != x_norm.shape[0]:
        raise RuntimeError(
            f"{name}: x_norm (M, N) {tuple(x_norm.shape)}, grad_y and expertIdx "
            f"(M, K) {tuple(grad_y.shape)}, {tuple(expertIdx.shape)}"
        )
    with torch.enable_grad():
        norm = x_norm.detach().float().requires_grad_()
        y = _weights(norm, expertIdx.to(torch.long), float(routed_scaling_factor), float(eps))
        (grad_norm,) = torch.autograd.grad(y, norm, upcast(grad_y).float())
    grad_x = grad_norm * x_norm.float() * (1.0 - x_norm.float())  # sigmoid' = s (1 - s)
    return store(grad_x, grad_y.dtype)
