"""combine_ddp's averaging overlapped with backward: each slice of the combined gradient buffers
is all-reduced as soon as the last gradient that lands in it has been accumulated.

A plan cuts what backward writes (see ``CombinedGrads.regions``) into slices at parameter
boundaries, about ``1 / ddp_replica_count`` of it each (never below ``MIN_SLICE_ELEMENTS``), and
fixes the order in which they go out: the slice whose parameters come last in the optimizer
first, as backward produces them. A hook on each parameter's gradient accumulator counts the
slice down; a complete slice is divided by the world size and its all-reduce started, once
every slice before it in the order has started (so every rank issues the same collectives in
the same order whatever its backward did). ``finish`` starts whatever a backward left (unused
parameters, a backward without hooks armed) and waits for all of them.

Each element is still divided by the world size and summed over the ranks on its own, so the
results are those of averaging the whole buffers after backward, bit for bit (the emulated
NPU's hccl sums in rank order). ``APEXNPU_COMBINE_DDP_OVERLAP=0`` leaves the hooks unarmed:
everything goes out after backward, as before the overlap existed.

When the comm_settings variables ask for compression or the hierarchical all-reduce, each slice
goes through the torch communication hook torch DDP would get (see comm_hooks, slice_bucket)
instead of being divided and all-reduced here.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from . import comm_hooks, comm_settings, slice_bucket

# Slices smaller than this many elements are not worth a collective of their own.
MIN_SLICE_ELEMENTS = 1 << 16

# (buffer, [(offset, numel, tensor whose gradient lands there, its position in the optimizer)])
Region = Tuple[torch.Tensor, List[Tuple[int, int, torch.Tensor, int]]]


def overlap_enabled() -> bool:
    return os.environ.get("APEXNPU_COMBINE_DDP_OVERLAP", "1") != "0"


class _Slice:
    def __init__(
        self,
        view: torch.Tensor,
        params: List[torch.Tensor],
        first_position: int,
        offsets: List[int],
    ):
        self.view = view
        self.params = params
        self.first_position = first_position
        self.offsets = offsets  # of each parameter's gradient in the view
        self.pending = len(params)


def cut(regions: Sequence[Region], replica_count: int) -> List[_Slice]:
    """The slices of ``regions``, in the order they go out."""
    total = sum(n for _, segments in regions for _, n, _, _ in segments)
    target = max(MIN_SLICE_ELEMENTS, -(-total // max(1, replica_count)))
    slices: List[_Slice] = []
    for buffer, segments in regions:
        run: List[Tuple[int, int, torch.Tensor, int]] = []
        size = 0
        for segment in sorted(segments, key=lambda s: s[0]):
            run.append(segment)
            size += segment[1]
            if size >= target:
                slices.append(_slice_of(buffer, run))
                run, size = [], 0
        if run:
            slices.append(_slice_of(buffer, run))
    return sorted(slices, key=lambda s: -s.first_position)


def _slice_of(buffer: torch.Tensor, run: List[Tuple[int, int, torch.Tensor, int]]) -> _Slice:
    start, (last_offset, last_numel) = run[0][0], run[-1][:2]
    return _Slice(
        buffer[start : last_offset + last_numel],
        [p for _, _, p, _ in run],
        min(position for _, _, _, position in run),
        [offset - start for offset, _, _, _ in run],
    )


class OverlappedAverager:
    """Averages the gradients of each backward over the ranks, slice by slice as they complete."""

    def __init__(self, replica_count: int):
        self.replica_count = replica_count
        self.slices: List[_Slice] = []
        self._slice_of_param: Dict[int, int] = {}
        self._hooks: List = []
        self._nodes: List = []  # the accumulators hooked (a hook lives as long as its node)
        self._armed = False
        self._next = 0
        self._works: List = []
        self.started_during_backward = 0  # slices the last backward's hooks started
        self._communication: Optional[Tuple[Any, comm_hooks.Hook]] = None
        self._settings: Optional[comm_settings.CommSettings] = None

    def plan(self, regions: Sequence[Region]) -> None:
        """Cut ``regions`` into slices and hook their parameters (replacing any earlier plan)."""
        if self._settings is None:  # on every rank at once: the groups are made collectively
            self._settings = comm_settings.from_environment()
            if self._settings.changes_anything:
                self._communication = comm_hooks.state_and_hook(self._settings)
        elif self._communication is not None:
            comm_hooks.forget_plan(self._communication[0])
        for handle in self._hooks:
            handle.remove()
        self._hooks, self._nodes = [], []
        self.slices = cut(regions, self.replica_count)
        self._slice_of_param = {id(p): i for i, s in enumerate(self.slices) for p in s.params}
        with torch.enable_grad():
            for index, s in enumerate(self.slices):
                for p in s.params:
                    node = p.view_as(p).grad_fn.next_functions[0][0]
                    self._nodes.append(node)
                    self._hooks.append(node.register_hook(self._hook_for(index)))

    def _hook_for(self, index: int):
        def accumulated(*_) -> None:
            if self._armed:
                self._count_down(index)

        return accumulated

    def arm(self) -> None:
        """Before a backward: start each slice as soon as its gradients are in."""
        for s in self.slices:
            s.pending = len(s.params)
        self._next = 0
        self._works = []
        self._armed = overlap_enabled() and bool(self.slices)

    def _count_down(self, index: int) -> None:
        self.slices[index].pending -= 1
        while self._next < len(self.slices) and self.slices[self._next].pending <= 0:
            self._start(self._next)
            self._next += 1

    def _start(self, index: int) -> None:
        import torch.distributed as dist

        s = self.slices[index]
        if self._communication is not None:
            state, hook = self._communication
            bucket = slice_bucket.SliceBucket(
                s.view, list(zip(s.offsets, s.params)), index, index == len(self.slices) - 1
            )
            self._works.append(slice_bucket.start(hook, state, bucket))
            return
        with torch.no_grad():
            s.view.div_(dist.get_world_size())
        self._works.append(dist.all_reduce(s.view, async_op=True))

    def finish(self) -> None:
        """After backward: start what is left, in order, and wait for every slice."""
        if not self._armed:
            self._next, self._works = 0, []
        self._armed = False
        self.started_during_backward = self._next
        while self._next < len(self.slices):
            self._start(self._next)
            self._next += 1
        for work in self._works:
            work.wait()
        self._works = []
