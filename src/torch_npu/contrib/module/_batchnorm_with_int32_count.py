"""``torch_npu.contrib.module._batchnorm_with_int32_count``: batch norms whose
``num_batches_tracked`` counter is int32 (``FastBatchNorm1d/2d/3d``, ``FastSyncBatchNorm``).

Why they exist: on an Ascend 910 an int64 add runs on the AI CPU, so torch's int64 counter costs a
host round trip every training step; an int32 counter stays on the AI Core. The emulator runs both
on the host at the same cost, so only the counter's dtype tells them apart here.

As in torch_npu the classes are not torch's ``BatchNorm*d``: they derive from torch's
``_NormBase`` through this module's ``_NormBase`` (the int32 buffer) and ``_BatchNorm`` (torch's
training and eval rules, ``momentum=None`` for a cumulative average), so
``isinstance(m, nn.BatchNorm2d)`` is False for them as on an NPU. A checkpoint of either kind
loads into the other (``load_state_dict`` casts the counter).
"""

from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F
from torch.nn.modules._functions import SyncBatchNorm as _SyncBatchNormFunction
from torch.nn.modules.batchnorm import _NormBase as _TorchNormBase

from ...utils._error_code import ErrCode, ops_error

__all__ = ["FastBatchNorm1d", "FastBatchNorm2d", "FastBatchNorm3d", "FastSyncBatchNorm"]


class _NormBase(_TorchNormBase):
    """torch's ``_NormBase`` with an int32 ``num_batches_tracked``."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: Optional[float] = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype
        )
        if self.track_running_stats:
            self.register_buffer(
                "num_batches_tracked", torch.tensor(0, dtype=torch.int32, device=device)
            )


class _BatchNorm(_NormBase):
    """The forward of torch's batch norm over the int32 counter; subclasses say which input
    ranks they take (``_check_input_dim``)."""

    def _average_factor(self) -> float:
        """Counts the batch when training with tracked statistics; the running statistics'
        update weight (the cumulative ``1 / count`` when ``momentum`` is None)."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        return factor

    def _statistics(self) -> tuple:
        """(use batch statistics, running mean, running var) as torch's batch norm passes them:
        the buffers are updated only when tracked and training."""
        for name in ("running_mean", "running_var"):
            buffer = getattr(self, name)
            if buffer is not None and not isinstance(buffer, torch.Tensor):
                raise RuntimeError(
                    f"Expected self.{name} is None or a torch.Tensor, got "
                    f"{type(buffer).__name__}" + ops_error(ErrCode.TYPE)
                )
        batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        pass_buffers = not self.training or self.track_running_stats
        return (
            batch_stats,
            self.running_mean if pass_buffers else None,
            self.running_var if pass_buffers else None,
        )

    def forward(self, input1: torch.Tensor) -> torch.Tensor:
        self._check_input_dim(input1)
        factor = self._average_factor()
        batch_stats, mean, var = self._statistics()
        return F.batch_norm(
            input1, mean, var, self.weight, self.bias, batch_stats, factor, self.eps
        )


def _rank_check(name: str, ranks: tuple):
    def check(self: _BatchNorm, input1: torch.Tensor) -> None:
        if input1.dim() not in ranks:
            wanted = " or ".join(f"{r}D" for r in ranks)
            raise ValueError(
                f"{name}: expected {wanted} input1 (got {input1.dim()}D input1)"
                + ops_error(ErrCode.VALUE)
            )

    return check


class FastBatchNorm1d(_BatchNorm):
    """``nn.BatchNorm1d``'s behaviour, (N, C) or (N, C, L) inputs, int32 counter."""

    _check_input_dim = _rank_check("FastBatchNorm1d", (2, 3))


class FastBatchNorm2d(_BatchNorm):
    """``nn.BatchNorm2d``'s behaviour, (N, C, H, W) inputs, int32 counter."""

    _check_input_dim = _rank_check("FastBatchNorm2d", (4,))


class FastBatchNorm3d(_BatchNorm):
    """``nn.BatchNorm3d``'s behaviour, (N, C, D, H, W) inputs, int32 counter."""

    _check_input_dim = _rank_check("FastBatchNorm3d", (5,))


class FastSyncBatchNorm(_BatchNorm):
    """``nn.SyncBatchNorm``'s behaviour with an int32 counter: statistics are reduced over
    ``process_group`` (default: the world) when training in a process group of more than one
    rank on the NPU, else it is a plain batch norm."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: Optional[float] = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Optional[Any] = None,
        device: Any = None,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype
        )
        self.process_group = process_group

    def _check_input_dim(self, input1: torch.Tensor) -> None:
        if input1.dim() < 2:
            raise ValueError(
                f"FastSyncBatchNorm: expected at least 2D input1 "
                f"(got {input1.dim()}D input1)" + ops_error(ErrCode.VALUE)
            )

    def _world(self) -> Optional[Any]:
        """The process group to reduce over, or None when there is nothing to synchronise."""
        dist = torch.distributed
        if not (self.training and dist.is_available() and dist.is_initialized()):
            return None
        group = self.process_group or dist.group.WORLD
        return group if dist.get_world_size(group) > 1 else None

    def forward(self, input1: torch.Tensor) -> torch.Tensor:
        self._check_input_dim(input1)
        if input1.size(1) == 0:
            raise ValueError(
                "SyncBatchNorm number of input1 channels should be non-zero"
                + ops_error(ErrCode.VALUE)
            )
        factor = self._average_factor()
        batch_stats, mean, var = self._statistics()
        group = self._world() if batch_stats else None
        if group is None:
            return F.batch_norm(
                input1, mean, var, self.weight, self.bias, batch_stats, factor, self.eps
            )
        if not (input1.is_cuda or getattr(input1, "is_npu", False)):
            raise ValueError(
                "SyncBatchNorm expected input1 tensor to be on NPU or GPU"
                + ops_error(ErrCode.VALUE)
            )
        return _SyncBatchNormFunction.apply(
            input1,
            self.weight,
            self.bias,
            mean,
            var,
            self.eps,
            factor,
            group,
            torch.distributed.get_world_size(group),
        )

    @classmethod
    def convert_sync_batchnorm(
        cls, module: torch.nn.Module, process_group: Optional[Any] = None
    ) -> torch.nn.Module:
        """torch's ``SyncBatchNorm.convert_sync_batchnorm`` (torch_npu's gives torch's
        ``nn.SyncBatchNorm`` layers too)."""
        return torch.nn.SyncBatchNorm.convert_sync_batchnorm(module, process_group)
