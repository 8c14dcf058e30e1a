"""``torch_npu.optim.NpuFusedOptimizerBase(params, default)``: the base of the fused optimizers.

As torch_npu's: at the first step the parameters with gradients are combined (``_param_buckets``),
``step`` runs ``_group_step(i)`` for every parameter group, ``zero_grad`` zeroes the combined
gradient buffers (``set_to_none=True`` is refused), ``clip_grad_norm_fused_`` clips all the
gradients together, and ``state_dict()`` keeps torch's per-parameter layout (``step`` an int,
state tensors of the parameter's dtype). Unlike torch_npu's, a parameter re-allocated after the
first step (``.cpu()``, a new tensor, a new gradient) is noticed before the next step and the
buffers are combined again, instead of silently training stale copies.

A subclass names its kind's description (``KIND``, from ``_optimizer_kinds``, shared with
apex's fronts), which gives the runtime kind, the state buffers (``_state_spec``), the argument
checks, the runtime options of a group (``_runtime_options``) and the update in torch operations
(``_torch_update``, on flat tensors of the bucket's dtype); a subclass overrides a hook only where
torch_npu computes otherwise. Each bucket steps in one of two ways:
- fp32: the runtime's kernel for its kind (``torch_npu._apexnpu.Optimizer``, the same kernels
  as apex's NpuFused optimizers), one pass over the bucket; without the runtime (or with
  ``APEXNPU_OPTIM_PATH=torch``) torch operations;
- fp16: torch operations on the fp16 buffers, each result stored as fp16 the NPU's way, as
  torch_npu's fused optimizers compute (an eps below fp16's range vanishes from a denominator,
  as on the NPU).
Parameters with gradients must be fp32 or fp16, as torch_npu's (bfloat16 ones too, on every
chip), refused with torch_npu's error when they are combined. torch_npu's per-group attributes
and state hooks come from ``_torch_npu_views``.
"""

from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch.optim.optimizer import Optimizer, required

from .. import _runtime
from .._device import placement
from .._ops._precision import store_into
from ..utils._error_code import ErrCode, pta_error
from ._param_buckets import DTYPES, Bucket, bucket_key, combine
from ._torch_npu_views import TorchNpuViews
from ._optimizer_kinds import FlatStep, KindFront, step_count

__all__ = ["NpuFusedOptimizerBase"]


class NpuFusedOptimizerBase(KindFront, TorchNpuViews, Optimizer):
    """Base of torch_npu's fused optimizers; see the module docstring."""

    PACKAGE = "torch_npu"  # the fronts take the signatures and defaults of torch_npu's

    def __init__(self, params, default):
        if default.get("lr") is required:
            raise ValueError(f"{type(self).__name__}: lr is required")
        self._check_options(default)
        self._buckets: List[Bucket] = []
        self._combined_params: List[Optional[torch.Tensor]] = [None, None]
        self._combined_grads: List[Optional[torch.Tensor]] = [None, None]
        self.is_fused_optimizer = True  # torch_npu's mark
        self._reset_torch_npu_view()
        super().__init__(params, default)

    def __setstate__(self, state: Dict) -> None:
        super().__setstate__(state)
        self.__dict__.setdefault("_buckets", [])
        self.__dict__.setdefault("_combined_params", [None, None])
        self.__dict__.setdefault("_combined_grads", [None, None])
        if "is_states_combined" not in self.__dict__:
            self._reset_torch_npu_view()

    # --- what subclasses provide ------------------------------------------------------------

    def _global_grad_norm(self) -> float:
        """The runtime step's ``global_grad_norm`` (-1: none)."""
        return -1.0

    # --- combining ----------------------------------------------------------------------------

    def _steps_taken(self, p: torch.Tensor, group: Dict) -> int:
        state = self.state[p]
        if self.STEP_IN_STATE:
            return step_count(state.get("step"))
        names = [name for name, _ in self._state_spec(group)]
        return 1 if names and all(state.get(n) is not None for n in names) else 0

    def _with_grads(self) -> List[List[torch.Tensor]]:
        with_grad = []
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if any(p.grad.is_sparse for p in params):
                raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")
            for p in params:
                if p.dtype not in DTYPES:
                    raise TypeError(
                        "Fused optimizer's parameters must be either float32 or "
                        f"float16, but received {p.dtype}" + pta_error(ErrCode.TYPE)
                    )
            with_grad.append(params)
        return with_grad

    def _intact(self, with_grad: Sequence[Sequence[torch.Tensor]]) -> bool:
        if not self._buckets:
            return False
        for index, params in enumerate(with_grad):
            covered = sorted(
                id(p) for b in self._buckets if b.group_index == index for p in b.params
            )
            if covered != sorted(id(p) for p in params):
                return False
        return all(b.intact(b.params) for b in self._buckets)

    def _maybe_init_combined_params_and_grads(self) -> None:
        """Combine the parameters with gradients (again when they no longer point into the
        buffers or the set of them changed)."""
        with_grad = self._with_grads()
        if self._intact(with_grad):
            return
        buckets = []
        for index, params in enumerate(with_grad):
            if not params:
                continue
            steps = [self._steps_taken(p, self.param_groups[index]) for p in params]
            for (_, taken), members in bucket_key(params, steps).items():
                buckets.append(Bucket(index, members, taken))
        with torch.no_grad():
            self._combined_params, self._combined_grads = combine(buckets)
            for b in buckets:
                for name, fill in self._state_spec(self.param_groups[b.group_index]):
                    b.combine_state(self.state, name, fill)
                if self.STEP_IN_STATE:
                    for p in b.params:
                        self.state[p]["step"] = b.steps
        self._buckets = buckets
        self._publish_torch_npu_view(buckets)

    def get_combined_params(self) -> List[Optional[torch.Tensor]]:
        """[fp32, fp16] combined parameter buffers (None where there are none)."""
        return self._combined_params

    def get_combined_grads(self) -> List[Optional[torch.Tensor]]:
        """[fp32, fp16] combined gradient buffers (None where there are none)."""
        return self._combined_grads

    # --- torch.optim.Optimizer ------------------------------------------------------------------

    def load_state_dict(self, state_dict: Dict) -> None:
        # The loaded per-parameter tensors are copied into fresh buffers at the next step.
        self._buckets = []
        super().load_state_dict(state_dict)
        for st in self.state.values():
            if "step" in st:
                st["step"] = step_count(st["step"])

    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], torch.Tensor]] = None):
        loss = self._loss_of(closure)
        self._maybe_init_combined_params_and_grads()
        self._before_group_steps()
        for index, _ in enumerate(self.param_groups):
            self._group_step(index)
        self._publish_torch_npu_view(self._buckets)  # the steps taken
        return loss

    def zero_grad(self, set_to_none: bool = False) -> None:
        """Zero every gradient in place (the combined buffers keep their memory)."""
        if set_to_none:
            raise ValueError("set_to_none is not supported in fused optimizers")
        fused = set()
        with torch.no_grad():
            for b in self._buckets:
                if b.intact(b.params):
                    b.grad.zero_()
                    fused.update(id(p) for p in b.params)
        self._zero_grads_outside(fused)

    # --- a step -------------------------------------------------------------------------------

    def _group_step(self, group_index: int) -> None:
        group = self.param_groups[group_index]
        for b in self._buckets:
            if b.group_index != group_index:
                continue
            rt = _runtime.runtime_kernels() if b.dtype == torch.float32 else None
            options = self._runtime_options(group) if rt is not None else None
            if options is not None:
                self._runtime_step(rt, options, b)
            else:
                self._torch_step(group, b)
            b.steps += 1
            if self.STEP_IN_STATE:
                for p in b.params:
                    self.state[p]["step"] = b.steps

    def _runtime_step(self, rt, options: Dict, b: Bucket) -> None:
        """One pass of the runtime's kernel over the (fp32) bucket."""
        if b.kernel is None:
            rows = [p.shape[0] if p.dim() >= 2 else 0 for p in b.params]
            b.kernel = rt.Optimizer(
                self.RUNTIME_KIND, options=options, segments=b.segments, rows=rows
            )
        else:
            b.kernel.set_options(options)
        b.kernel.step_count = b.steps
        state = {name: buf.data_ptr() for name, buf in b.state.items()}
        b.kernel.step(
            b.param.data_ptr(),
            b.grad.data_ptr(),
            b.numel,
            state=state,
            device=placement.npu_of(b.param) or 0,
            global_grad_norm=self._global_grad_norm(),
        )

    def _torch_step(self, group: Dict, b: Bucket) -> None:
        """The update in torch operations on the bucket's own flat tensors (of its dtype); a
        buffer the first step makes (fill None) is made here, zeroed, for the update to fill."""
        for name, _ in self._state_spec(group):
            if name not in b.state:
                b.combine_state(self.state, name, 0.0)
        segments = [(o, p.shape) for o, p in zip(b.offsets, b.params)]
        self._torch_update(
            group, FlatStep(b.param, b.grad, b.state, segments, b.steps + 1, b.params)
        )

    # --- gradient clipping --------------------------------------------------------------------

    def _grad_parts(self) -> List[Tuple[torch.Tensor, List[Tuple[int, int]]]]:
        """Each gradient once: the buckets' gradients by segment, then unfused ones whole."""
        parts, covered = [], set()
        for b in self._buckets:
            if b.intact(b.params):
                parts.append((b.grad, b.segments))
                covered.update(id(p) for p in b.params)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and id(p) not in covered:
                    g = p.grad if p.grad.is_contiguous() else p.grad.contiguous()
                    parts.append((g, [(0, g.numel())]))
        return parts

    def clip_grad_norm_fused_(self, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
        """Clip the gradients of all the optimizer's parameters together, as
        ``torch.nn.utils.clip_grad_norm_``; returns their total norm."""
        with torch.no_grad():
            self._maybe_init_combined_params_and_grads()
            return clip_parts(self._grad_parts(), float(max_norm), float(norm_type))


def _total_norm(views: Sequence[torch.Tensor], norm_type: float) -> torch.Tensor:
    if norm_type == math.inf:
        return torch.stack([v.float().abs().max() for v in views]).max()
    return torch.stack([torch.norm(v.float(), norm_type) for v in views]).norm(norm_type)


def clip_parts(parts, max_norm: float, norm_type: float) -> torch.Tensor:
    """Clip ``parts`` ((buffer, [(offset, numel), ...]), ...) together to ``max_norm``; the
    total norm, a 0-d fp32 tensor on the gradients' device."""
    parts = [(buf, segs) for buf, segs in parts if segs and any(n for _, n in segs)]
    if not parts:
        return torch.tensor(0.0)
    device = parts[0][0].device
    rt = _runtime.runtime_kernels()
    if (
        rt is not None
        and norm_type in (2.0, math.inf)
        and all(buf.is_contiguous() and buf.dtype in DTYPES for buf, _ in parts)
    ):
        codes = {torch.float32: rt.DTYPE_FLOAT32, torch.float16: rt.DTYPE_FLOAT16}
        buffers = [(buf.data_ptr(), codes[buf.dtype], list(segs)) for buf, segs in parts]
        total = rt.clip_grad_norm(
            buffers, max_norm, norm_type, device=placement.npu_of(parts[0][0]) or 0
        )
        return torch.tensor(total, dtype=torch.float32, device=device)
    views = [buf.reshape(-1)[o : o + n] for buf, segs in parts for o, n in segs]
    total = _total_norm(views, norm_type)
    coef = max_norm / (float(total) + 1e-6)
    if coef < 1.0:
        for v in views:
            if v.dtype == torch.float16:
                store_into(v, v.float() * coef)
            else:
                v.mul_(coef)
    return total
