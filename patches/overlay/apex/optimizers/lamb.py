"""Lamb: LAMB with the signature of the reference implementation, fused like NpuFusedLamb; LAMB:
the same optimizer with the arguments and defaults of Baidu AIAK-Training's LAMB.

Beside the moments, each parameter's state holds the ``weight_norm`` (clamped to [0, 10]),
``adam_norm`` and ``trust_ratio`` of its last step, as the reference keeps them (checkpoints
carry them both ways). Computing them needs the per-parameter norms in Python, so Lamb always
takes the torch-operations path; NpuFusedLamb, which keeps no such state, has the runtime kernel.

LAMB adds ``adam_w_mode``, ``grad_averaging``, ``set_grad_none`` and ``max_grad_norm`` with
AIAK's defaults (``eps=1e-8``, ``set_grad_none=True``, ``max_grad_norm=1.0``: the global gradient
norm clipped to 1); Lamb's signature and behaviour stay the reference's (which is LAMB with
``eps=1e-6, set_grad_none=False, max_grad_norm=0``).
"""

from __future__ import annotations

from typing import Optional

from .npu_fused_lamb import NpuFusedLamb


class Lamb(NpuFusedLamb):
    """LAMB; ``adam=True`` turns the trust ratio off (it is still recorded). See NpuFusedLamb."""

    RUNTIME_KIND = None
    RECORDS_NORMS = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0, adam=False):
        super().__init__(
            params,
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            adam=adam,
            use_global_grad_norm=False,
        )

    @staticmethod
    def _apply_step(flat, adam_step, ratios, lr) -> None:
        # As the reference rounds it, per parameter: the factor -lr * ratio, the step times it,
        # then the addition.
        for p_seg, step_seg, ratio in zip(flat.views(flat.param), flat.views(adam_step), ratios):
            p_seg.add_(step_seg.mul_(-lr * ratio.to(step_seg.dtype)))


class LAMB(Lamb):
    """Lamb with AIAK-Training's arguments and defaults (its ``optim.LAMB``), and Lamb's ``adam``.

    ``adam_w_mode``: weight decay added to the Adam step (decoupled; False: to the gradient, L2);
    ``grad_averaging``: the first moment takes ``1 - beta1`` of the gradient (False: all of it);
    ``set_grad_none``: ``zero_grad``'s default for ``set_to_none``; ``max_grad_norm``: the
    gradients are first scaled by ``max_grad_norm / max(global L2 norm, max_grad_norm)`` (0: not).
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        adam_w_mode: bool = True,
        grad_averaging: bool = True,
        set_grad_none: bool = True,
        max_grad_norm: float = 1.0,
        adam: bool = False,
    ):
        if max_grad_norm < 0:
            raise ValueError(
                f"LAMB: invalid max_grad_norm {max_grad_norm} (0 turns the clipping off)"
            )
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, adam=adam)
        self.adam_w_mode = bool(adam_w_mode)
        self.grad_averaging = bool(grad_averaging)
        self.set_grad_none = bool(set_grad_none)
        self.max_grad_norm = float(max_grad_norm)

    def zero_grad(self, set_to_none: Optional[bool] = None) -> None:
        super().zero_grad(self.set_grad_none if set_to_none is None else set_to_none)
