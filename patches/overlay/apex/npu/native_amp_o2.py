"""The link between torch-native AMP usage and apex's O2 after ``amp_decorate``.

``amp_decorate`` puts model and optimizer into apex.amp's O2 (fp16 model, fp32 master weights
in the optimizer) and records the optimizer here. From then on ``GradScaler`` (torch.npu.amp's)
acts on such an optimizer as ``amp.scale_loss`` would: ``scale`` multiplies the loss by O2's
loss scale (loss scaler 0) and readies the optimizers for a backward once per iteration (so
accumulated backwards add up scaled, as torch's scaler has them); ``unscale_`` copies the fp16
model gradients into the fp32 master gradients, unscaled, and lets the loss scaler decide
overflow, back off or grow, as ``scale_loss`` does on leaving its block; ``step`` skips the step
the loss scaler skipped; ``update`` takes the loss scaler's new scale. The GradScaler's own
growth and backoff settings do not act.
"""
from __future__ import annotations

from typing import Any, List

import torch

_decorated: List[Any] = []  # the optimizers amp_decorate returned


def record(optimizers: List[Any]) -> None:
    _decorated[:] = list(optimizers)


def active() -> bool:
    return bool(_decorated)


def is_decorated(optimizer: Any) -> bool:
    return any(optimizer is opt for opt in _decorated)


def _loss_scaler() -> Any:
    from apex.amp._amp_state import _amp_state

    return _amp_state.loss_scalers[0]


def loss_scale() -> float:
    return float(_loss_scaler().loss_scale())


def before_backward() -> None:
    """Ready every decorated optimizer for the gradients of a backward (once per iteration)."""
    for opt in _decorated:
        if not opt._amp_stash.params_have_scaled_gradients:
            opt._prepare_amp_backward()
            opt._amp_stash.params_have_scaled_gradients = True


def unscale(optimizer: Any) -> bool:
    """Master gradients from the backward's scaled model gradients; True: skip this step."""
    scaler = _loss_scaler()
    scaler.clear_overflow_state()
    optimizer._post_amp_backward(scaler)
    optimizer._amp_stash.params_have_scaled_gradients = False
    return bool(scaler.update_scale())


def skip(optimizer: Any) -> None:
    """What amp's skipped step does: clear the master gradients backward does not zero."""
    stash = optimizer._amp_stash
    if getattr(stash, "combined_grads", None) is not None:
        stash.combined_grads.after_step()
    elif hasattr(stash, "all_fp32_from_fp16_params"):
        for param in stash.all_fp32_from_fp16_params:
            param.grad = None


def set_loss_scale(value: float, unskipped: int = 0) -> None:
    scaler = _loss_scaler()
    scaler._loss_scale = float(value)
    scaler._unskipped = int(unskipped)


def state() -> dict:
    scaler = _loss_scaler()
    return {"scale": float(scaler.loss_scale()), "_growth_tracker": int(scaler._unskipped),
            "growth_interval": int(scaler._scale_seq_len),
            "growth_factor": float(scaler._scale_factor),
            "backoff_factor": float(scaler._backoff_factor)}


def master_params(optimizer: Any) -> List[torch.Tensor]:
    """The parameters the optimizer steps (fp32 masters after amp_decorate)."""
    return [p for group in optimizer.param_groups for p in group["params"]]
