"""``torch.npu.amp.GradScaler`` on the emulated NPU.

torch.cuda.amp.GradScaler's interface and behaviour (scale, unscale_, step, update, the
growth/backoff schedule, the same misuse errors), with torch_npu's differences: an overflow is
what the float status records (fp16 saturates instead of producing inf, so checking the
gradients for inf is not enough; in INF/NAN mode the gradients' values decide, as on a GPU); an
overflow in one optimizer's gradients skips the steps of every optimizer of the scaler stepped
after it in that iteration (torch_npu's scaler-wide flag; torch skips per optimizer);
``dynamic=False`` keeps the scale fixed; the state dict has ``dynamic`` beside torch's keys; the
scale never grows to inf. The float status is cleared when the scaler scales a
loss, so a saturation the forward pass meant (a masked fill) does not count against the step.
Under torch.distributed, the ranks agree on an overflow at unscale_ (the status is per process),
so they all skip the same steps.
An optimizer that unscales and skips by itself (``_step_supports_amp_scaling``: torch 2.x's
fused ones, which the HF Trainer picks) is stepped by torch's protocols, old and new.
Unscaling runs in the runtime's fused kernel when this package carries it
(``APEXNPU_OPTIM_PATH=torch`` forces torch operations; the results are the same).
"""

from __future__ import annotations

import inspect
from collections import defaultdict
from enum import Enum
from typing import Any, Dict, Iterable, Optional

import torch

from ... import _runtime
from ..._fp16 import float_status, overflow_mode


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh() -> Dict[str, Any]:
    return {"stage": OptState.READY, "found_inf": None}


class GradScaler:
    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
        dynamic: bool = True,
    ) -> None:
        if growth_factor <= 1.0:
            raise ValueError(f"GradScaler: growth_factor must be > 1.0, got {growth_factor}")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"GradScaler: backoff_factor must be in (0, 1), got {backoff_factor}")
        if not isinstance(growth_interval, int) or growth_interval <= 0:
            raise ValueError(
                f"GradScaler: growth_interval must be a positive int, got {growth_interval!r}"
            )
        self._enabled = bool(enabled)
        self._dynamic = bool(dynamic)
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0  # the growth tracker's value when the scaler is first used
        self._scale: Optional[torch.Tensor] = None
        self._growth_tracker: Optional[torch.Tensor] = None
        self._per_optimizer_states: Dict[int, Dict[str, Any]] = defaultdict(_refresh)
        # An overflow found in any optimizer's gradients since the last update(): torch_npu's
        # scaler-wide flag, so every later step of that iteration is skipped too.
        self._has_overflow = False

    # --- scaling --------------------------------------------------------------------------------

    def _lazy_init(self, device: Any) -> None:
        self._scale = torch.full((1,), self._init_scale, dtype=torch.float32, device=device)
        self._growth_tracker = torch.full(
            (1,), self._init_growth_tracker, dtype=torch.int32, device=device
        )

    def _check_scale(self, what: str) -> torch.Tensor:
        if self._scale is None:
            raise RuntimeError(
                f"GradScaler.{what}: no scale yet; this is the first step and "
                "scale() was not called before it"
            )
        return self._scale

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor or nested lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        float_status.clear()  # what the forward pass saturated on purpose does not count

        def apply(value: Any) -> Any:
            if isinstance(value, torch.Tensor):
                if self._scale is None:
                    self._lazy_init(value.device)
                return value * self._scale.to(device=value.device)
            if isinstance(value, (list, tuple)):
                return type(value)(apply(v) for v in value)
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return map(apply, value)
            raise ValueError("GradScaler.scale: outputs must be a tensor or an iterable of tensors")

        return apply(outputs)

    @torch.no_grad()
    def unscale_(self, optimizer: torch.optim.Optimizer) -> None:
        """Divide the optimizer's gradients by the scale, in place, and note any overflow."""
        if not self._enabled:
            return
        scale = self._check_scale("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "GradScaler.unscale_: this optimizer's gradients were already "
                "unscaled since the last update()"
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("GradScaler.unscale_: called after step() and before update()")
        self._note_overflow(optimizer, state, 1.0 / float(scale.item()))
        state["stage"] = OptState.UNSCALED

    def _note_overflow(
        self, optimizer: torch.optim.Optimizer, state: Dict[str, Any], inv_scale: Optional[float]
    ) -> None:
        """Set ``state["found_inf"]``: whether the gradients overflowed. With ``inv_scale`` they
        are multiplied by it in place on the way; with None they are only read (an optimizer
        that unscales them itself)."""
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad if not p.grad.is_sparse else p.grad.coalesce()._values()
                if inv_scale is None:
                    found = _holds_inf_or_nan(grad) or found
                    continue
                if grad.dtype == torch.float16:
                    raise ValueError(
                        "GradScaler.unscale_: fp16 gradients cannot be unscaled in "
                        "place; train fp32 parameters under autocast"
                    )
                found = unscale_in_place(grad, inv_scale) or found
        if not overflow_mode.inf_nan():
            found = float_status.get() or found
        found = _agree_across_ranks(found)
        self._has_overflow = self._has_overflow or found
        state["found_inf"] = torch.full(
            (1,), 1.0 if found else 0.0, dtype=torch.float32, device=self._scale.device
        )

    def step(self, optimizer: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()`` unless the gradients overflowed (then the step is skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError(
                "GradScaler.step: a closure cannot be used while the scaler is enabled"
            )
        self._check_scale("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError(
                "GradScaler.step: already called for this optimizer since the last update()"
            )
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            retval = self._step_unscaling_optimizer(optimizer, state, args, kwargs)
            state["stage"] = OptState.STEPPED
            return retval
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        retval = None
        if not (float(state["found_inf"].item()) or self._has_overflow):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def _step_unscaling_optimizer(
        self,
        optimizer: torch.optim.Optimizer,
        state: Dict[str, Any],
        args: Any,
        kwargs: Dict[str, Any],
    ) -> Any:
        """Step an optimizer that unscales its gradients and skips an overflowing step itself
        (torch's fused optimizers), by torch's protocol: a step that takes ``grad_scaler`` gets
        this scaler; any other finds the scale to divide by (None once ``unscale_`` has run)
        and the overflow flag in ``optimizer.grad_scale`` and ``optimizer.found_inf`` while it
        runs."""
        if "grad_scaler" in inspect.signature(optimizer.step).parameters:
            return optimizer.step(*args, **dict(kwargs, grad_scaler=self))
        # 0-dim, as torch 2.x's scaler keeps them: the optimizer subtracts found_inf from its
        # 0-dim step counts.
        if state["stage"] is OptState.READY:
            self._check_inf_per_device(optimizer)
            optimizer.grad_scale = self._scale.reshape(()) * getattr(optimizer, "grad_scale", 1)
        else:
            optimizer.grad_scale = getattr(optimizer, "grad_scale", None)
        optimizer.found_inf = state["found_inf"].reshape(())
        try:
            return optimizer.step(*args, **kwargs)
        finally:
            del optimizer.grad_scale
            del optimizer.found_inf

    def update(self, new_scale: Optional[Any] = None) -> None:
        """Back off after an overflow, grow after ``growth_interval`` clean steps (or take
        ``new_scale``); then get ready for the next iteration."""
        if not self._enabled:
            return
        scale = self._check_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            elif (
                isinstance(new_scale, torch.Tensor)
                and new_scale.numel() == 1
                and new_scale.dtype == torch.float32
                and not new_scale.requires_grad
            ):
                scale.copy_(new_scale)
            else:
                raise ValueError(
                    "GradScaler.update: new_scale must be a float or a one-element "
                    "float32 tensor that does not require grad"
                )
        elif self._dynamic:
            found = [
                s["found_inf"]
                for s in self._per_optimizer_states.values()
                if s["found_inf"] is not None
            ]
            if not found:
                raise AssertionError(
                    "GradScaler.update: no optimizer was unscaled or stepped "
                    "since the last update()"
                )
            if self._has_overflow or any(float(f.item()) for f in found):
                scale.mul_(self._backoff_factor)
                self._growth_tracker.zero_()
            else:
                self._growth_tracker.add_(1)
                if int(self._growth_tracker.item()) == self._growth_interval:
                    grown = scale * self._growth_factor
                    if bool(torch.isfinite(grown).all()):  # as torch_npu: never grown to inf
                        scale.copy_(grown)
                    self._growth_tracker.zero_()
        float_status.clear()
        self._per_optimizer_states = defaultdict(_refresh)
        self._has_overflow = False

    # --- queries and settings ---------------------------------------------------------------------

    def _found_inf_per_device(self, optimizer: torch.optim.Optimizer) -> Dict[Any, torch.Tensor]:
        found = self._per_optimizer_states[id(optimizer)]["found_inf"]
        return {} if found is None else {found.device: found}

    def _check_inf_per_device(self, optimizer: torch.optim.Optimizer) -> Dict[Any, torch.Tensor]:
        """torch's hook for an optimizer that unscales by itself: note whether its gradients
        overflowed, leaving them scaled; {device: found_inf}."""
        self._check_scale("_check_inf_per_device")
        self._note_overflow(optimizer, self._per_optimizer_states[id(optimizer)], None)
        return self._found_inf_per_device(optimizer)

    def _get_scale_async(self) -> Optional[torch.Tensor]:
        """torch's hook: the scale tensor, for an optimizer to divide by."""
        return self._scale

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self) -> int:
        return 0 if self._growth_tracker is None else int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> Dict[str, Any]:
        """torch_npu's: torch.cuda.amp.GradScaler's keys and ``dynamic``, so checkpoints move
        between them (one without ``dynamic`` loads as the scaler's own setting)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
            "dynamic": self._dynamic,
        }

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "GradScaler.load_state_dict: the state dict is empty (saved by a disabled scaler?)"
            )
        missing = {
            "scale",
            "growth_factor",
            "backoff_factor",
            "growth_interval",
            "_growth_tracker",
        } - set(state_dict)
        if missing:
            raise KeyError(f"GradScaler.load_state_dict: missing {sorted(missing)}")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(self._init_growth_tracker)
        self._dynamic = bool(state_dict.get("dynamic", self._dynamic))

    def __getstate__(self) -> Dict[str, Any]:
        state = self.__dict__.copy()
        state["_per_optimizer_states"] = {}
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._per_optimizer_states = defaultdict(_refresh)


def _holds_inf_or_nan(grad: torch.Tensor) -> bool:
    return grad.numel() > 0 and not bool(torch.isfinite(grad).all())


def unscale_in_place(grad: torch.Tensor, inv_scale: float) -> bool:
    """``grad *= inv_scale`` in place; whether it held an inf or NaN (which raises the float
    status, as any NPU operation on one does in saturation mode)."""
    rt = _runtime.runtime_kernels()
    codes = {torch.float32: "DTYPE_FLOAT32", torch.float16: "DTYPE_FLOAT16"}
    if rt is not None and grad.dtype in codes and grad.is_contiguous():
        # One pass: multiply and detect inf/NaN.
        return bool(
            rt.unscale(
                grad.data_ptr(), getattr(rt, codes[grad.dtype]), grad.numel(), float(inv_scale)
            )
        )
    found = _holds_inf_or_nan(grad)
    if found and not overflow_mode.inf_nan():
        float_status.set()
    if inv_scale != 1.0:
        grad.mul_(inv_scale)
    return found


def _agree_across_ranks(overflow: bool) -> bool:
    """Whether any rank of torch.distributed's default group overflowed (every rank calls this
    together at unscale_). The float status is each process's own: an fp16 gradient that
    saturated on one rank arrives on the others finite after the all-reduce, so without
    agreement one rank would skip a step the others take, and the replicas would drift apart."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return overflow
    flag = torch.tensor([1 if overflow else 0], dtype=torch.int32, device="npu")
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return bool(flag.item())
