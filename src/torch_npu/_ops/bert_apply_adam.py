"""``torch_npu.npu_bert_apply_adam(lr, beta1, beta2, epsilon, grad, max_grad_norm,
global_grad_norm, weight_decay, step_size=None, adam_mode=0, *, out=(var, m, v))
-> (var, m, v)``: the NPU's ApplyAdamV2, which BERT's and mBART's fused Adam run on combined
buffers. ``var``, ``m``, ``v`` are updated in place (computed in fp32, fp16 stored saturating).

``adam_mode`` 0 ("adam", BertAdam: no bias correction)::

    g = grad / global_grad_norm  if max_grad_norm > 0 and global_grad_norm > 1  else grad
    m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
    update = m / (sqrt(v) + epsilon) + (weight_decay var  if weight_decay > 0)
    var = var - lr update

``adam_mode`` 1 ("mbart_adam"): the same moments of ``grad`` (no clipping), then
``var = var - step_size m / (sqrt(v) + epsilon) - lr weight_decay var`` (``step_size`` None:
``lr``).
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import torch

from ._out_args import var_m_v
from ._precision import store_into
from ._registry import operator


@operator
def npu_bert_apply_adam(
    lr: float,
    beta1: float,
    beta2: float,
    epsilon: float,
    grad: torch.Tensor,
    max_grad_norm: float,
    global_grad_norm: float,
    weight_decay: float,
    step_size: Optional[float] = None,
    adam_mode: int = 0,
    *,
    out: Optional[Sequence[torch.Tensor]] = None,
    **kwargs,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    var, m, v = var_m_v("npu_bert_apply_adam", out, kwargs)
    if grad.shape != var.shape:
        raise RuntimeError(
            f"npu_bert_apply_adam: grad of shape {tuple(grad.shape)} for var of "
            f"shape {tuple(var.shape)}"
        )
    if int(adam_mode) not in (0, 1):
        raise RuntimeError(
            f"npu_bert_apply_adam: adam_mode must be 0 (adam) or 1 (mbart_adam), got {adam_mode}"
        )
    lr, beta1, beta2, eps = float(lr), float(beta1), float(beta2), float(epsilon)
    weight_decay = float(weight_decay)
    with torch.no_grad():
        p, g = var.float(), grad.float()
        if int(adam_mode) == 0 and float(max_grad_norm) > 0 and float(global_grad_norm) > 1:
            g = g / float(global_grad_norm)
        m32 = m.float() * beta1 + g * (1.0 - beta1)
        v32 = v.float() * beta2 + g * g * (1.0 - beta2)
        update = m32 / (v32.sqrt() + eps)
        if int(adam_mode) == 0:
            if weight_decay > 0:
                update = update + weight_decay * p
            p = p - lr * update
        else:
            step = lr if step_size is None else float(step_size)
            p = p - step * update - (lr * weight_decay) * p
        store_into(m, m32)
        store_into(v, v32)
        store_into(var, p)
    return var, m, v
