"""``torch_npu.npu_rms_norm(self, gamma, epsilon=1e-6) -> (y, rstd)``: RMS normalisation over
the trailing ``gamma.dim()`` dimensions, ``y = x * rstd * gamma`` with
``rstd = 1 / sqrt(mean(x^2) + epsilon)``, computed in fp32. ``y`` has ``self``'s dtype; ``rstd``
is fp32 of shape ``self.shape[:-gamma.dim()] + (1,) * gamma.dim()`` and not differentiable. The
backward gives ``self`` and ``gamma`` gradients (``npu_rms_norm_backward``)."""
from __future__ import annotations

from typing import Tuple

import torch

from ._precision import store, upcast


def npu_rms_norm(self: torch.Tensor, gamma: torch.Tensor,
                 epsilon: float = 1e-06) -> Tuple[torch.Tensor, torch.Tensor]:
    if self.dim() < gamma.dim():
        raise RuntimeError("npu_rms_norm: the gamma shape should not be bigger than self shape")
    if gamma.dim() and tuple(self.shape[self.dim() - gamma.dim():]) != tuple(gamma.shape):
        raise RuntimeError(f"npu_rms_norm: gamma of shape {tuple(gamma.shape)} does not match the "
                           f"trailing dimensions of self {tuple(self.shape)}")
    x = upcast(self)
    dims = tuple(range(self.dim() - gamma.dim(), self.dim()))
    rstd = torch.rsqrt(x.pow(2).mean(dim=dims, keepdim=True) + float(epsilon)) if dims else \
        torch.rsqrt(x.pow(2) + float(epsilon))
    y = x * rstd * upcast(gamma).float()
    return store(y, self.dtype), rstd.detach()
