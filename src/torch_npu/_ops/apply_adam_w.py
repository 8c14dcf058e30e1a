"""``torch_npu.npu_apply_adam_w(beta1_power, beta2_power, lr, weight_decay, beta1, beta2,
epsilon, grad, max_grad_norm, amsgrad, maximize, *, out=(var, m, v)) -> (var, m, v)``: the NPU's
ApplyAdamW, in place (computed in fp32, fp16 stored saturating). As torch_npu's own reference
computes it, the powers are advanced one step inside the kernel::

    g = -grad if maximize else grad
    m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
    var = var (1 - lr weight_decay)
    b1 = beta1_power beta1;  b2 = beta2_power beta2
    denom = sqrt(max(max_grad_norm, v) if amsgrad else v) / (1 - b2)) + epsilon
    var = var - lr m / (1 - b1) / denom

With ``amsgrad``, ``max_grad_norm`` is the tensor of running maxima of ``v`` (read, not updated,
as in torch_npu). As in torch_npu's schema, ``max_grad_norm``, ``amsgrad`` and ``maximize``
must be given (``None`` for none, False).
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import torch

from ._out_args import var_m_v
from ._precision import store_into
from ._registry import operator


@operator
def npu_apply_adam_w(
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
    *,
    out: Optional[Sequence[torch.Tensor]] = None,
    **kwargs,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    var, m, v = var_m_v("npu_apply_adam_w", out, kwargs)
    beta1, beta2, lr = float(beta1), float(beta2), float(lr)
    if amsgrad and max_grad_norm is None:
        raise RuntimeError(
            "npu_apply_adam_w: amsgrad needs max_grad_norm (the running maxima of v)"
        )
    with torch.no_grad():
        g = -grad.float() if maximize else grad.float()
        m32 = m.float() * beta1 + (1.0 - beta1) * g
        v32 = v.float() * beta2 + (1.0 - beta2) * g * g
        p = var.float() * (1.0 - lr * float(weight_decay))
        b1 = float(beta1_power) * beta1
        b2 = float(beta2_power) * beta2
        second = torch.maximum(max_grad_norm.float(), v32) if amsgrad else v32
        denom = (second / (1.0 - b2)).sqrt() + float(epsilon)
        p = p - lr * m32 / (1.0 - b1) / denom
        store_into(m, m32)
        store_into(v, v32)
        store_into(var, p)
    return var, m, v
