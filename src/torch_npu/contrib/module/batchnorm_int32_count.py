"""``torch_npu.contrib.module.FastBatchNorm1d/2d/3d`` and ``FastSyncBatchNorm``: torch's batch
norms with an int32 ``num_batches_tracked`` (the NPU adds int64 on the host; int32 stays on the
device). Everything else is torch's; checkpoints of either kind load into the other (the
counter is cast)."""
from __future__ import annotations

import torch
from torch import nn


def _count_in_int32(module: nn.Module) -> None:
    if getattr(module, "num_batches_tracked", None) is not None:
        module.num_batches_tracked = torch.tensor(0, dtype=torch.int32)


class FastBatchNorm1d(nn.BatchNorm1d):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _count_in_int32(self)


class FastBatchNorm2d(nn.BatchNorm2d):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _count_in_int32(self)


class FastBatchNorm3d(nn.BatchNorm3d):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _count_in_int32(self)


class FastSyncBatchNorm(nn.SyncBatchNorm):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _count_in_int32(self)
