"""amp's ``combine_ddp``: data parallelism through the combined gradient buffers, in place of
``DistributedDataParallel``: with ``combine_ddp`` on, the model is not wrapped in DDP at all.

One process per device, each holding a whole replica of the model, joined by
``torch.distributed.init_process_group`` (hccl on a real NPU, gloo on the emulated one).

- ``amp.initialize`` broadcasts rank 0's parameters and buffers, so every replica starts equal.
- During every backward, the gradients that backward produces are averaged over the ranks: the
  fp16 model-gradient buffers, and of each master buffer what backward writes (all of it, or
  beside an fp16 buffer only the fp32 parameters' parts; see CombinedGrads.regions), in about
  ``ddp_replica_count`` slices, each divided by the world size (which keeps fp16 sums in range)
  and all-reduced as soon as backward has accumulated its last gradient (see ddp_overlap).
  Gradients accumulated by earlier backwards were averaged then.
- Every rank then unscales the same values, so overflow decisions and loss scales agree.

Before the broadcast and whenever the gradient buffers are (re)made the ranks compare what they
are about to send (one small all-gather): a rank whose model or optimizer differs stops every
rank with an error instead of a mismatched collective that would hang.
"""

from __future__ import annotations

from typing import List, Sequence

import torch

from . import collective_dtypes

_DTYPE_CODES = {torch.float32: 1, torch.float16: 2, torch.bfloat16: 3, torch.float64: 4}


def require_process_group() -> None:
    """Raise a clear error unless torch.distributed is initialised."""
    import torch.distributed as dist

    if not dist.is_available():
        raise RuntimeError(
            "amp.initialize: combine_ddp=True needs torch.distributed, which this torch build lacks"
        )
    if not dist.is_initialized():
        raise RuntimeError(
            "amp.initialize: combine_ddp=True needs the process group first: call "
            "torch.distributed.init_process_group() in every process (one per "
            "device) before amp.initialize, and do not wrap the model in "
            "DistributedDataParallel"
        )


def _modules(models) -> List[torch.nn.Module]:
    return list(models) if isinstance(models, (list, tuple)) else [models]


def broadcast_from_rank0(models) -> None:
    """Make every rank's parameters and buffers equal to rank 0's."""
    import torch.distributed as dist

    tensors = [
        t for module in _modules(models) for t in list(module.parameters()) + list(module.buffers())
    ]
    check_same_layout(tensors, "models")
    with torch.no_grad():
        for tensor in tensors:  # BatchNorm's int64 counters too, as bits HCCL carries
            dist.broadcast(collective_dtypes.bits_view(tensor), src=0)


def _layout(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """Count, total size (in two 30-bit halves) and an order-sensitive checksum of the tensors'
    sizes and dtypes, as int32: a dtype HCCL carries."""
    checksum = 0
    for i, t in enumerate(tensors):
        code = _DTYPE_CODES.get(t.dtype, 7)
        checksum = (checksum * 1000003 + (i + 1) * (t.numel() * 8 + code)) % 2147483647
    total = sum(t.numel() for t in tensors)
    device = tensors[0].device if tensors else torch.device("cpu")  # hccl sends device tensors
    return torch.tensor(
        [len(tensors), total >> 30, total & ((1 << 30) - 1), checksum],
        dtype=torch.int32,
        device=device,
    )


def check_same_layout(tensors: Sequence[torch.Tensor], what: str) -> None:
    """Raise on every rank unless all ranks pass tensors of the same sizes and dtypes."""
    import torch.distributed as dist

    mine = _layout(tensors)
    everyone = [torch.zeros_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, mine)
    for rank, theirs in enumerate(everyone):
        if not torch.equal(theirs, everyone[0]):
            raise RuntimeError(
                "combine_ddp: the ranks' {} differ (rank 0: {} tensors, {} elements; rank {}: {} "
                "tensors, {} elements); every rank must build the same model and "
                "optimizer".format(
                    what,
                    int(everyone[0][0]),
                    _total(everyone[0]),
                    rank,
                    int(theirs[0]),
                    _total(theirs),
                )
            )


def _total(layout: torch.Tensor) -> int:
    return (int(layout[1]) << 30) + int(layout[2])
