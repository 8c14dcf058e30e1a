"""``torch_npu.npu.amp.sharded_grad_scaler``: the loss scaler of FSDP on the emulated NPU.

torch_npu's ``_ShardedGradScaler`` (also ``torch_npu._ShardedGradScaler``, and what
``torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler`` names once torch_npu is
imported, as torch_npu puts it there) is ``torch.npu.amp.GradScaler`` for sharded training:

- each rank holds only its shard of the gradients, so each finds overflows only in its shard
  (and, on a 910, in its own float status); the ranks of ``process_group`` agree at
  ``unscale_``, so an overflow anywhere skips the step on every rank and backs the scale off
  everywhere, as torch's ShardedGradScaler all-reduces its ``found_inf``;
- ``scale`` keeps the loss's dtype (FSDP's mixed precision may return an fp16 or bf16 loss);
- gradients may be fp16 (a model trained in fp16 throughout), on the host (FSDP's
  ``CPUOffload``) or DTensors (FSDP2's), which are unscaled where they are.

``device`` is kept as given (torch's default, "cuda", comes from scripts written for GPUs); the
ranks' agreement travels on the current NPU.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, Optional

import torch
import torch.distributed as dist

from ..._device import placement
from ..._fp16 import float_status, overflow_mode
from .grad_scaler import GradScaler, OptState, unscale_in_place  # noqa: F401 - OptState: API

__all__ = []  # as torch_npu's: the class is reached by its module path


def _supported(t: torch.Tensor) -> bool:
    return placement.npu_of(t) is not None or t.device.type == "cpu"


def _grads(optimizer: torch.optim.Optimizer) -> Iterator[torch.Tensor]:
    """The gradients of ``optimizer``'s parameters as tensors to unscale in place: a sparse
    one's coalesced values, a DTensor's local shard."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is None:
                continue
            local = getattr(p.grad, "_local_tensor", None)  # a DTensor's (FSDP2's) shard
            if isinstance(local, torch.Tensor):
                yield local
                continue
            if not p.grad.is_sparse:
                yield p.grad
                continue
            if p.grad.dtype == torch.float16:  # no fp16 coalesce: via fp32, as torch does
                p.grad = p.grad.float().coalesce().half()
            else:
                p.grad = p.grad.coalesce()
            yield p.grad._values()


class _ShardedGradScaler(GradScaler):
    """GradScaler whose ranks agree on overflows; see the module's description."""

    def __init__(
        self,
        device: str = "npu",
        init_scale: float = 2.0**16,
        backoff_factor: float = 0.5,
        growth_factor: float = 2.0,
        growth_interval: int = 2000,
        enabled: bool = True,
        process_group: Optional[Any] = None,
    ) -> None:
        super().__init__(
            init_scale=init_scale,
            growth_factor=growth_factor,
            backoff_factor=backoff_factor,
            growth_interval=growth_interval,
            enabled=enabled,
        )
        self._device = str(device)
        self.process_group = process_group  # None: torch.distributed's default group

    def scale(self, outputs: Any) -> Any:
        """``outputs`` times the scale, each in its own dtype."""
        if not self._enabled:
            return outputs

        def check(value: Any) -> None:
            if isinstance(value, torch.Tensor):
                if not _supported(value):
                    raise ValueError(
                        f"ShardedGradScaler.scale: a tensor on {value.device}; "
                        "expected one on an NPU or on the host"
                    )
            elif isinstance(value, (list, tuple)):
                for v in value:
                    check(v)

        check(outputs)
        scaled = super().scale(outputs)

        def same_dtype(value: Any, like: Any) -> Any:
            if isinstance(value, torch.Tensor):
                return value.type(like.dtype)
            if isinstance(value, (list, tuple)):
                return type(value)(same_dtype(v, w) for v, w in zip(value, like))
            return value  # an iterator: scaled lazily by the base class

        return same_dtype(scaled, outputs)

    def _note_overflow(
        self, optimizer: torch.optim.Optimizer, state: Dict[str, Any], inv_scale: Optional[float]
    ) -> None:
        """Set ``state["found_inf"]``: whether any rank's gradients overflowed. With
        ``inv_scale`` this rank's are multiplied by it in place (fp16 and host gradients
        too); with None they are only read."""
        found = False
        for grad in _grads(optimizer):
            if inv_scale is None:
                found = (grad.numel() > 0 and not bool(torch.isfinite(grad).all())) or found
            else:
                found = unscale_in_place(grad, inv_scale) or found
        if not overflow_mode.inf_nan():
            found = float_status.get() or found
        found = self._agree(found)
        self._has_overflow = self._has_overflow or found
        state["found_inf"] = torch.full(
            (1,), 1.0 if found else 0.0, dtype=torch.float32, device=self._scale.device
        )

    def _agree(self, found: bool) -> bool:
        """Whether any rank of the process group found an overflow (all of them call this at
        once, in ``unscale_``)."""
        if not (dist.is_available() and dist.is_initialized()):
            return found
        group = self.process_group
        if dist.get_world_size(group) < 2:
            return found
        # On the current NPU whatever ``device`` says: it is the device this machine has.
        flag = torch.tensor([1 if found else 0], dtype=torch.int32, device="npu")
        dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=group)
        return bool(flag.item())


ShardedGradScaler = _ShardedGradScaler  # torch's name for it


def install_into_torch(module: Any) -> None:
    """Put the scaler where torch's FSDP users find it (``module``:
    ``torch.distributed.fsdp.sharded_grad_scaler``), as torch_npu does."""
    module.ShardedGradScaler = _ShardedGradScaler
