"""``torch_npu.npu_apply_adam_w_out(beta1_power, beta2_power, lr, weight_decay, beta1, beta2,
epsilon, grad, max_grad_norm, amsgrad, maximize, var, m, v) -> (var, m, v)``: the AdamW step of
``npu_apply_adam_w`` with the state passed positionally, updated in place and returned."""

from __future__ import annotations

from typing import Optional, Tuple

import torch

from ._registry import operator
from .apply_adam_w import npu_apply_adam_w


@operator
def npu_apply_adam_w_out(
    beta1_power: float,
    beta2_power: float,
    lr: float,
    weight_decay: float,
    beta1: float,
    beta2: float,
    epsilon: float,
    grad: torch.Tensor,
    max_grad_norm: Optional[torch.Tensor],
    amsgrad: Optional[bool],
    maximize: Optional[bool],
    var: torch.Tensor,
    m: torch.Tensor,
    v: torch.Tensor,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return npu_apply_adam_w(
        beta1_power,
        beta2_power,
        lr,
        weight_decay,
        beta1,
        beta2,
        epsilon,
        grad,
        max_grad_norm,
        amsgrad,
        maximize,
        out=(var, m, v),
    )
