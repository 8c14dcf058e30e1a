"""``torch_npu.npu_apply_adam(beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
use_locking, use_nesterov, *, out=(var, m, v)) -> (var, m, v)``: TensorFlow's ApplyAdam, in
place (computed in fp32, fp16 stored saturating)::

    m = m + (1 - beta1) (grad - m);  v = v + (1 - beta2) (grad^2 - v)
    lr_t = lr sqrt(1 - beta2_power) / (1 - beta1_power)
    var = var - lr_t m / (epsilon + sqrt(v))                                  (use_nesterov:
    var = var - lr_t (beta1 m + (1 - beta1) grad) / (epsilon + sqrt(v)))

``use_locking`` changes nothing (the emulated NPU runs one kernel at a time). As in torch_npu's
schema both flags must be given (``None`` reads as False).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple

import torch

from ._out_args import var_m_v
from ._precision import store_into
from ._registry import operator


@operator
def npu_apply_adam(
    beta1_power: float,
    beta2_power: float,
    lr: float,
    beta1: float,
    beta2: float,
    epsilon: float,
    grad: torch.Tensor,
    use_locking: Optional[bool],
    use_nesterov: Optional[bool],
    *,
    out: Optional[Sequence[torch.Tensor]] = None,
    **kwargs,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    var, m, v = var_m_v("npu_apply_adam", out, kwargs)
    beta1, beta2 = float(beta1), float(beta2)
    with torch.no_grad():
        g = grad.float()
        m32 = m.float() + (1.0 - beta1) * (g - m.float())
        v32 = v.float() + (1.0 - beta2) * (g * g - v.float())
        lr_t = float(lr) * math.sqrt(1.0 - float(beta2_power)) / (1.0 - float(beta1_power))
        numerator = beta1 * m32 + (1.0 - beta1) * g if use_nesterov else m32
        p = var.float() - lr_t * numerator / (float(epsilon) + v32.sqrt())
        store_into(m, m32)
        store_into(v, v32)
        store_into(var, p)
    return var, m, v
