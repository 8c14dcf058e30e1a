"""Combined gradients for amp's ``combine_grad``: unscale whole buffers, keep gradient memory.

The optimizer's (master) parameters' gradients live in combined buffers: the NpuFused
optimizers' own buffers when the optimizer is one (so the optimizer and amp share them), else
buffers made here. With fp32 master weights for fp16 model parameters, the model gradients live
in an fp16 buffer (bf16 for a bf16 model) of the same layout, so one operation moves them into
the master buffer.

Per backward pass (see amp's ``scale_loss``): ``prepare`` stashes the gradients accumulated so
far and zeroes the buffers, backward writes scaled gradients in place, ``unscale`` computes
``master = (master + model) / scale + stash``. With ``combine_ddp``, ``prepare`` arms the
averaging of each slice as backward completes it, and ``average_across_ranks`` finishes it
before ``unscale`` (see combined_ddp). ``after_step`` clears the master gradients of fp16 model
parameters (upstream amp sets them to None, which would break the fusion).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import torch

from apex.contrib.combine_tensors import combine_npu, combined_offsets

from ..amp import loss_scaling
from ..ddp import combined_ddp, ddp_overlap
from ..fused_support import grad_memory
from .repoint import repoint


class _Unit:
    """One combined master-gradient buffer, and the fp16 model-gradient buffer beside it."""

    def __init__(
        self,
        masters: List[torch.Tensor],
        grad: torch.Tensor,
        models: List[Optional[torch.Tensor]],
        offsets: Sequence[int],
        param_buffer: Optional[torch.Tensor] = None,
        model_grad_out: Optional[torch.Tensor] = None,
    ):
        self.masters = masters
        self.param_buffer = param_buffer  # the masters' combined values (NpuFused buckets only)
        self.offsets = list(offsets)  # of each master gradient in `grad`, then the total
        self.grad = grad
        self.stash = torch.zeros_like(grad)
        self.models = models
        self.model_grad: Optional[torch.Tensor] = None
        self.keep_mask: Optional[torch.Tensor] = None
        if any(m is not None for m in models):
            model_dtype = next(m.dtype for m in models if m is not None)
            self.model_grad = (
                model_grad_out
                if model_grad_out is not None
                else torch.zeros(grad.numel(), dtype=model_dtype, device=grad.device)
            )
            self.keep_mask = torch.ones_like(grad)
            for model, offset, master in zip(models, self.offsets, masters):
                if model is None:
                    continue
                if model.grad is None:
                    model.grad = torch.zeros_like(model)
                self.model_grad[offset : offset + model.numel()].copy_(model.grad.reshape(-1))
                repoint(model.grad, self.model_grad, offset)  # fp16, or bf16
                self.keep_mask[offset : offset + master.numel()].zero_()
        self._ptrs = self._pointers()

    def segments(self, which: str = "masters") -> List[Tuple[int, int]]:
        """(offset, numel) of the gradients in the buffers: of every master (``"masters"``), of
        the fp16 model parameters in ``model_grad`` (``"models"``), or of the masters that are
        model parameters themselves (``"own"``)."""
        return [
            (offset, master.numel())
            for master, model, offset in zip(self.masters, self.models, self.offsets)
            if which == "masters" or (model is None) == (which == "own")
        ]

    def regions(self, first_position: int) -> List[ddp_overlap.Region]:
        """Where backward writes: the master buffer whole (every master a model parameter), or
        the fp16 model buffer and each run of masters that are model parameters themselves in
        the master buffer (the rest of it holds zeros until unscaling). Each gradient comes with
        the tensor backward accumulates it for and its position among the optimizer's masters,
        counted from ``first_position``."""
        entries = [
            (offset, master.numel(), master if model is None else model, first_position + i)
            for i, (master, model, offset) in enumerate(
                zip(self.masters, self.models, self.offsets)
            )
        ]
        if self.model_grad is None:
            return [(self.grad, entries)]
        regions = [(self.model_grad, [e for e, m in zip(entries, self.models) if m is not None])]
        run: List = []
        for entry, model in zip(entries, self.models):
            if model is None:
                run.append(entry)
            elif run:
                regions.append((self.grad, run))
                run = []
        if run:
            regions.append((self.grad, run))
        return regions

    def _pointers(self) -> List[Tuple[int, int]]:
        return [
            (
                m.grad.data_ptr() if m.grad is not None else 0,
                p.grad.data_ptr() if p is not None and p.grad is not None else 0,
            )
            for m, p in zip(self.masters, self.models)
        ]

    def intact(self) -> bool:
        return self._pointers() == self._ptrs


class Kind:
    """The buffers of one kind of gradient, over every unit of it: the optimizer's gradients of
    one dtype, of masters of fp16 model parameters (``from_fp16``) or not, as Ascend's apex
    keeps them apart (``grad``, ``param`` for NpuFused optimizers, and with ``from_fp16`` the
    fp16 model gradients, ``model_grad``); ``units`` are (unit, its offset in the buffers)."""

    def __init__(
        self,
        dtype: torch.dtype,
        from_fp16: bool,
        grad: torch.Tensor,
        param: Optional[torch.Tensor],
        model_grad: Optional[torch.Tensor],
    ):
        self.dtype, self.from_fp16 = dtype, from_fp16
        self.grad, self.param, self.model_grad = grad, param, model_grad
        self.units: List[Tuple[_Unit, int]] = []

    def segments(self, which: str = "masters") -> List[Tuple[int, int]]:
        return [
            (start + offset, n) for unit, start in self.units for offset, n in unit.segments(which)
        ]


class CombinedGrads:
    """Combined gradients of one optimizer under amp (see the module docstring)."""

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        model_of_master: Optional[Dict[int, torch.Tensor]] = None,
    ):
        self.optimizer = optimizer
        self.model_of_master = model_of_master or {}
        # The model parameters' low-precision dtype (amp casts a model to one: fp16 or bf16).
        model_dtypes = {p.dtype for p in self.model_of_master.values()}
        if len(model_dtypes) > 1:
            raise RuntimeError(
                "combine_grad: the model parameters with fp32 masters must share "
                f"one dtype, got {sorted(str(d) for d in model_dtypes)}"
            )
        self.model_dtype = model_dtypes.pop() if model_dtypes else torch.float16
        if hasattr(optimizer, "_fp16_model_masters"):  # an NpuFused optimizer buckets by kind
            optimizer._fp16_model_masters = frozenset(self.model_of_master)
        self.units: List[_Unit] = []
        self.kinds: List[Kind] = []
        self.builds = 0  # how many times the buffers were (re)made
        self._averager: Optional[ddp_overlap.OverlappedAverager] = None  # combine_ddp's
        self._planned_builds = -1  # the build its plan was cut for

    def _masters(self) -> List[torch.Tensor]:
        return [
            p for group in self.optimizer.param_groups for p in group["params"] if p.requires_grad
        ]

    def build(self) -> None:
        """(Re-)combine: keeps current gradient values, creates zero gradients where missing."""
        masters = self._masters()
        for p in masters:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        grad_memory.keep_grad_memory()
        self.builds += 1
        self.units, self.kinds = [], []
        combine_now = getattr(self.optimizer, "combine_grads_now", None)
        if combine_now is not None:
            buckets = combine_now()
            kinds = {}
            for dtype, from_fp16, param_buf, grad_buf in self.optimizer.combined_kinds():
                model_buf = (
                    torch.zeros(grad_buf.numel(), dtype=self.model_dtype, device=grad_buf.device)
                    if from_fp16
                    else None
                )
                kinds[(dtype, from_fp16)] = Kind(dtype, from_fp16, grad_buf, param_buf, model_buf)
            for bucket in buckets:
                kind = kinds[(bucket.dtype, bucket.from_fp16)]
                start = bucket.grad.storage_offset() - kind.grad.storage_offset()
                models = [self.model_of_master.get(id(p)) for p in bucket.params]
                model_out = None
                if kind.model_grad is not None:
                    model_out = kind.model_grad[start : start + bucket.grad.numel()]
                unit = _Unit(
                    list(bucket.params),
                    bucket.grad,
                    models,
                    bucket.offsets,
                    bucket.param,
                    model_out,
                )
                self.units.append(unit)
                kind.units.append((unit, start))
            self.kinds = list(kinds.values())
            return
        by_kind: Dict[Tuple[torch.dtype, bool], List[torch.Tensor]] = {}
        for p in masters:
            by_kind.setdefault((p.dtype, id(p) in self.model_of_master), []).append(p)
        for (dtype, from_fp16), params in by_kind.items():
            grads = [p.grad for p in params]
            offsets = combined_offsets(grads)
            flat = combine_npu(grads)
            models = [self.model_of_master.get(id(p)) for p in params]
            unit = _Unit(params, flat, models, offsets)
            self.units.append(unit)
            kind = Kind(dtype, from_fp16, flat, None, unit.model_grad)
            kind.units.append((unit, 0))
            self.kinds.append(kind)

    def intact(self) -> bool:
        masters = self._masters()
        covered = [p for unit in self.units for p in unit.masters]
        if len(covered) != len(masters) or {id(p) for p in covered} != {id(p) for p in masters}:
            return False
        return all(unit.intact() for unit in self.units)

    def prepare(self) -> None:
        """Before backward: stash what the gradients hold and zero the buffers.

        Combining is left to ``unscale``: it re-points parameters, which must not happen between
        forward and backward (autograd saved them).
        """
        if not self.units or not self.intact():
            self.units, self.kinds = [], []
            return
        with torch.no_grad():
            for unit in self.units:
                unit.stash.copy_(unit.grad)
                unit.grad.zero_()
                if unit.model_grad is not None:
                    unit.model_grad.zero_()
        if self._averager is not None and self._planned_builds == self.builds:
            self._averager.arm()  # combine_ddp: slices go out as backward completes them

    def regions(self) -> List[ddp_overlap.Region]:
        """Where backward writes, over every unit (see ``_Unit.regions``)."""
        regions, position = [], 0
        for unit in self.units:
            regions += unit.regions(position)
            position += len(unit.masters)
        return regions

    def average_across_ranks(self, averager: ddp_overlap.OverlappedAverager) -> None:
        """combine_ddp: average the gradients of this backward over the ranks (the slices that
        hooks started during backward, then the rest)."""
        if not self.units or not self.intact():
            self.build()
        if self._averager is not averager or self._planned_builds != self.builds:
            regions = self.regions()
            combined_ddp.check_same_layout([buf for buf, _ in regions], "combined gradients")
            averager.plan(regions)
            self._averager, self._planned_builds = averager, self.builds
        averager.finish()

    def unscale(self, inv_scale: float) -> bool:
        """After backward: unscale into the master buffers; returns whether an inf/NaN was met."""
        if not self.units or not self.intact():
            self.build()
        found = False
        for unit in self.units:
            found = (
                loss_scaling.unscale_flat(unit.grad, inv_scale, unit.stash, unit.model_grad)
                or found
            )
        return found

    def after_step(self) -> None:
        """Clear the master gradients of fp16 model parameters (their model grads carry on)."""
        with torch.no_grad():
            for unit in self.units:
                if unit.keep_mask is not None:
                    unit.grad.mul_(unit.keep_mask)

    def zero(self) -> None:
        with torch.no_grad():
            for unit in self.units:
                unit.grad.zero_()
                if unit.model_grad is not None:
                    unit.model_grad.zero_()

    def buffers(self) -> List[torch.Tensor]:
        return [unit.grad for unit in self.units]
