"""The link between torch-native AMP usage and apex's O2 after ``amp_decorate``.

``amp_decorate`` puts model and optimizer into apex.amp's O2 (fp16 model, fp32 master weights
in the optimizer) and records the optimizer here. From then on ``torch.npu.amp.GradScaler``
(torch_npu's own class, which ``install`` extends through its public methods, on a real NPU as
on the emulated one) acts on such an optimizer as ``amp.scale_loss`` would: ``scale``
multiplies the loss by O2's loss scale (loss scaler 0) and readies the optimizers for a backward
once per iteration (so accumulated backwards add up scaled, as torch's scaler has them);
``unscale_`` copies the fp16 model gradients into the fp32 master gradients, unscaled, and lets
the loss scaler decide overflow, back off or grow, as ``scale_loss`` does on leaving its block;
``step`` skips the step the loss scaler skipped; ``update`` takes the loss scaler's new scale.
The GradScaler's own growth and backoff settings do not act.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List

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
    _loss_scaler().restore(value, unskipped)


def state() -> dict:
    now = _loss_scaler().dynamic_state()
    return {
        "scale": now["loss_scale"],
        "_growth_tracker": now["unskipped"],
        "growth_interval": now["scale_window"],
        "growth_factor": now["scale_factor"],
        "backoff_factor": now["backoff_factor"],
    }


def master_params(optimizer: Any) -> List[torch.Tensor]:
    """The parameters the optimizer steps (fp32 masters after amp_decorate)."""
    return [p for group in optimizer.param_groups for p in group["params"]]


# --- torch.npu.amp.GradScaler after amp_decorate ------------------------------------------------

_FOUND = "_apexnpu_o2_found"  # on a scaler: {id(optimizer): overflow} since its last update()


def _found(scaler: Any) -> Dict[int, bool]:
    found = scaler.__dict__.get(_FOUND)
    if found is None:
        found = scaler.__dict__[_FOUND] = {}
    return found


def _scale(original: Callable) -> Callable:
    @functools.wraps(original)
    def scale(self, outputs):
        if not active() or not self.is_enabled():
            return original(self, outputs)
        from . import float_status

        float_status.clear()  # what the forward pass saturated on purpose does not count
        before_backward()
        value = loss_scale()

        def apply(x: Any) -> Any:  # as amp.scale_loss scales
            if isinstance(x, torch.Tensor):
                return x.float() * value
            if isinstance(x, (list, tuple)):
                return type(x)(apply(v) for v in x)
            raise ValueError(
                "GradScaler.scale: outputs must be a tensor or a list or tuple of tensors"
            )

        return apply(outputs)

    return scale


def _unscale(original: Callable) -> Callable:
    @functools.wraps(original)
    def unscale_(self, optimizer):
        if not is_decorated(optimizer) or not self.is_enabled():
            return original(self, optimizer)
        found = _found(self)
        if id(optimizer) in found:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        found[id(optimizer)] = unscale(optimizer)
        return None

    return unscale_


def _step(original: Callable) -> Callable:
    @functools.wraps(original)
    def step(self, optimizer, *args, **kwargs):
        if not is_decorated(optimizer) or not self.is_enabled():
            return original(self, optimizer, *args, **kwargs)
        found = _found(self)
        if id(optimizer) not in found:
            self.unscale_(optimizer)
        if found[id(optimizer)]:
            skip(optimizer)
            return None
        return optimizer.step(*args, **kwargs)

    return step


def _update(original: Callable) -> Callable:
    @functools.wraps(original)
    def update(self, new_scale=None):
        if not active() or not self.is_enabled():
            return original(self, new_scale)
        if new_scale is not None:  # the loss scaler moved its scale at unscale_
            set_loss_scale(
                float(new_scale.item() if isinstance(new_scale, torch.Tensor) else new_scale)
            )
        _found(self).clear()
        return None

    return update


def _get_scale(original: Callable) -> Callable:
    @functools.wraps(original)
    def get_scale(self):
        if not active() or not self.is_enabled():
            return original(self)
        return loss_scale()

    return get_scale


def _state_dict(original: Callable) -> Callable:
    @functools.wraps(original)
    def state_dict(self):
        if not active() or not self.is_enabled():
            return original(self)
        return state()

    return state_dict


def _load_state_dict(original: Callable) -> Callable:
    @functools.wraps(original)
    def load_state_dict(self, state_dict):
        if not active() or not self.is_enabled():
            return original(self, state_dict)
        if "scale" not in state_dict or "_growth_tracker" not in state_dict:
            raise RuntimeError(
                "GradScaler.load_state_dict: the state has no 'scale' and "
                "'_growth_tracker' (saved by a disabled scaler?)"
            )
        set_loss_scale(state_dict["scale"], state_dict["_growth_tracker"])
        return None

    return load_state_dict


_METHODS = {
    "scale": _scale,
    "unscale_": _unscale,
    "step": _step,
    "update": _update,
    "get_scale": _get_scale,
    "state_dict": _state_dict,
    "load_state_dict": _load_state_dict,
}


def install() -> None:
    """``amp_decorate`` and ``amp_parameters`` on ``torch.npu.amp``; torch.npu.amp.GradScaler
    following O2's loss scaler for the optimizers amp_decorate returned."""
    from .amp_decorate import amp_decorate, amp_parameters

    amp = getattr(getattr(torch, "npu", None), "amp", None)
    if amp is None:  # a torch_npu without torch.npu.amp: nothing to extend
        return
    amp.amp_decorate = amp_decorate
    amp.amp_parameters = amp_parameters
    scaler = getattr(amp, "GradScaler", None)
    if scaler is None or getattr(scaler, "_apexnpu_native_amp_o2", False):
        return
    for name, wrap in _METHODS.items():
        setattr(scaler, name, wrap(getattr(scaler, name)))
    scaler._apexnpu_native_amp_o2 = True
