"""The parameters of one parameter group and dtype, fused into combined buffers.

Parameters, their gradients and each optimizer state buffer live in combined buffers with the
``combine_tensors`` layout; every ``param.data``, ``param.grad`` and per-parameter state tensor is
a view of its slot, so that torch code (autograd, ``state_dict``) keeps working per parameter
while a fused step updates each buffer with a few whole-buffer operations. The state is of the
parameters' dtype, but fp32 for bfloat16 parameters (``param_dtypes``).
"""

from __future__ import annotations

import operator
from typing import Dict, List, Optional, Sequence, Tuple

import torch

from apex.contrib.combine_tensors import combined_offsets
from apex.npu.combined import storage_sizes
from apex.npu.combined.repoint import repoint

from .optimizer_kinds import FlatStep, Segment, step_count
from .param_dtypes import state_dtype


def slot_offsets(params: Sequence[torch.Tensor]) -> List[int]:
    """Element offset of each of ``params`` (one dtype) in combined buffers, then the total: the
    layout of ``combine_tensors``, whose functions, as Ascend's, take fp32 and fp16 only;
    bfloat16 buckets (``param_dtypes``) are laid out alike here."""
    if params[0].dtype != torch.bfloat16:
        return combined_offsets(params)
    offsets = [0]
    for p in params:
        offsets.append(offsets[-1] + (storage_sizes.storage_size(p) + 15) // 16 * 16 + 32)
    return offsets


class ParamBucket:
    """Combined buffers for ``params`` (all of one dtype, all with gradients)."""

    def __init__(
        self,
        params: Sequence[torch.nn.Parameter],
        state: Dict,
        state_spec: Sequence[Tuple[str, Optional[float]]],
        step_kind: Optional[str],
        param_out: Optional[torch.Tensor] = None,
        grad_out: Optional[torch.Tensor] = None,
    ):
        self.params = list(params)
        self.dtype = self.params[0].dtype
        self.offsets = slot_offsets(self.params)
        self.numel = self.offsets[-1]
        self.segments: List[Segment] = [(o, p.shape) for o, p in zip(self.offsets, self.params)]
        self.step_kind = step_kind
        self.from_fp16 = False  # whether these are amp's masters of fp16 model parameters
        self.state_names = [name for name, _ in state_spec]

        # param_out / grad_out: where the buffers go (a part of a buffer that other buckets
        # share), else new buffers.
        self.param = self._combine([p.data for p in self.params], self.params, param_out)
        grads = [p.grad for p in self.params]
        self.grad = self._combine(grads, grads, grad_out)

        # Steps each parameter has taken so far (read before the state is combined).
        steps = [self._step_of(state[p]) for p in self.params]
        self.param_steps: List[int] = steps
        self._common_step = self._common_step_of(steps)
        self.state: Dict[str, torch.Tensor] = {}
        for name, fill in state_spec:
            self.state[name] = self._combine_state(state, name, fill)
        if step_kind == "int":
            for p, s in zip(self.params, steps):
                state[p]["step"] = s
        self.runtime_kernel = None  # the runtime's fused optimizer for this bucket, once made
        self._param_ptrs = [p.data_ptr() for p in self.params]
        self._grad_ptrs = [p.grad.data_ptr() for p in self.params]

    def _step_of(self, param_state: Dict) -> int:
        if self.step_kind is None:
            # Rules without a step count (SGD) only need to know whether state exists yet.
            initialised = all(param_state.get(n) is not None for n in self.state_names)
            return 1 if self.state_names and initialised else 0
        return step_count(param_state.get("step"))

    def _combine(
        self,
        sources: Sequence[torch.Tensor],
        targets: Sequence[torch.Tensor],
        out: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """A combined buffer (``out``, zeroed, else a new one) holding ``sources``; each of
        ``targets`` re-pointed into it."""
        if out is None:
            flat = torch.zeros(self.numel, dtype=self.dtype, device=self.params[0].device)
        else:
            if out.numel() != self.numel or out.dtype != self.dtype:
                raise RuntimeError(
                    f"combined buffer of {out.numel()} {out.dtype} elements given "
                    f"for {self.numel} {self.dtype} ones"
                )
            flat = out  # zeros, fresh from the optimizer
        with torch.no_grad():
            for src, dst, offset in zip(sources, targets, self.offsets):
                flat[offset : offset + src.numel()].copy_(src.reshape(-1))
                repoint(dst, flat, offset)
        return flat

    def _combine_state(self, state: Dict, name: str, fill: Optional[float]) -> torch.Tensor:
        flat = torch.zeros(self.numel, dtype=state_dtype(self.dtype), device=self.params[0].device)
        with torch.no_grad():
            for p, offset in zip(self.params, self.offsets):
                slot = flat[offset : offset + p.numel()]
                existing = state[p].get(name)
                if existing is not None:
                    slot.copy_(existing.reshape(-1))
                elif fill is not None:
                    slot.fill_(fill)
                state[p][name] = slot.view(p.shape)
        return flat

    @staticmethod
    def _common_step_of(steps: Sequence[int]) -> Optional[int]:
        first = steps[0]
        return first if all(s == first for s in steps) else None

    @property
    def step(self) -> Optional[int]:
        """The steps taken so far when every parameter has taken the same number, else None."""
        return self._common_step

    def matches(self, params: Sequence[torch.nn.Parameter]) -> bool:
        """Whether these are the same parameters, still pointing into the combined buffers."""
        # Checked before every step: whole-list comparisons, no per-parameter Python branches.
        if len(params) != len(self.params) or any(map(operator.is_not, params, self.params)):
            return False
        grads = [p.grad for p in params]
        if any(g is None for g in grads):
            return False
        return [g.data_ptr() for g in grads] == self._grad_ptrs and [
            p.data_ptr() for p in params
        ] == self._param_ptrs

    def flat(
        self, param: Optional[torch.Tensor] = None, grad: Optional[torch.Tensor] = None
    ) -> FlatStep:
        """The whole bucket as one set of flat tensors, for a step every parameter takes together
        (``param``, ``grad``: stand-ins of the buffers' layout, as fp32 copies)."""
        step = self.step
        assert step is not None
        return FlatStep(
            self.param if param is None else param,
            self.grad if grad is None else grad,
            self.state,
            self.segments,
            step + 1,
            params=self.params,
        )

    def per_param(
        self, param: Optional[torch.Tensor] = None, grad: Optional[torch.Tensor] = None
    ) -> List[Tuple[int, FlatStep]]:
        """(index, flat tensors) per parameter, for when the parameters' step counts differ."""
        param = self.param if param is None else param
        grad = self.grad if grad is None else grad
        views = []
        for i, (offset, shape) in enumerate(self.segments):
            n = shape.numel()
            part = {name: self.state[name][offset : offset + n] for name in self.state_names}
            step = self.param_steps[i]
            views.append(
                (
                    i,
                    FlatStep(
                        param[offset : offset + n],
                        grad[offset : offset + n],
                        part,
                        [(0, shape)],
                        step + 1,
                        params=[self.params[i]],
                    ),
                )
            )
        return views

    def record_step(self, state: Dict, indices: Optional[Sequence[int]] = None) -> None:
        """Advance the step count of all parameters (or of those at ``indices``) by one."""
        if indices is None:
            self.param_steps = [s + 1 for s in self.param_steps]
            if self._common_step is not None:
                self._common_step += 1
            if self.step_kind == "int":
                for p in self.params:
                    state[p]["step"] += 1
            return
        for i in indices:
            self.param_steps[i] += 1
            p = self.params[i]
            if self.step_kind == "int":
                state[p]["step"] += 1
        self._common_step = self._common_step_of(self.param_steps)

    def reread_steps(self, state: Dict) -> None:
        """Take the step counts from ``state`` again (after code outside this class, a
        subclass's ``_group_step``, advanced them there)."""
        self.param_steps = [self._step_of(state[p]) for p in self.params]
        self._common_step = self._common_step_of(self.param_steps)
