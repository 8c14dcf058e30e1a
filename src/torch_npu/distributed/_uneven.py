"""torch_npu's collectives of unequal parts: ``all_gather_into_tensor_uneven`` and
``reduce_scatter_tensor_uneven`` (``torch_npu.distributed``).

Each rank's part is a run of rows (the first dimension) of the one tensor: the gather's output
holds rank 0's rows, then rank 1's, ...; the reduce-scatter's input is split the same way and
rank i keeps the reduction of the i-th run. The split sizes are the rows of each rank (the same
list on every rank); none given, the rows split evenly. On an NPU HCCL moves the parts as they
are; the emulator's hccl group moves equal parts, so the gather pads every part to the longest
and the reduce-scatter reduces the whole input (in rank order, as every hccl reduction here) and
each rank keeps its run: the same values arrive.

As torch_npu, a rank outside ``group`` warns and does nothing, host tensors are not taken (a
warning, and nothing done), and ``async_op=True`` returns a work (here already finished).
"""

from __future__ import annotations

import warnings
from typing import Any, List, Optional, Sequence

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future
from torch.distributed import distributed_c10d as c10d

from .._device import placement


def _finished_work() -> Any:
    future = torch.futures.Future()
    future.set_result(None)
    return _create_work_from_future(future)


def _done(async_op: bool) -> Any:
    return _finished_work() if async_op else None


def _takes(call: str, group: Any, *tensors: torch.Tensor) -> bool:
    """Whether this rank runs ``call``: a member of ``group``, with NPU tensors (torch_npu warns
    and does nothing otherwise)."""
    if c10d._rank_not_in_group(group):
        warnings.warn(
            f"Running {call} on global rank {dist.get_rank()} which does not belong "
            "to the given group."
        )
        return False
    if any(placement.npu_of(t) is None for t in tensors):
        warnings.warn(f"{call}: support for Tensors is limited to those of type npu")
        return False
    return True


def _splits(
    call: str, name: str, sizes: Optional[Sequence[int]], rows: int, world: int
) -> List[int]:
    """The rows of each rank: ``sizes`` as given (one per rank, summing to ``rows``), or
    ``rows`` split evenly."""
    if not sizes:
        if rows % world:
            raise RuntimeError(
                f"torch_npu.distributed.{call}: {rows} rows do not split evenly among {world} "
                f"ranks; give {name}"
            )
        return [rows // world] * world
    sizes = [int(n) for n in sizes]
    if len(sizes) != world or sum(sizes) != rows or min(sizes) < 0:
        raise RuntimeError(
            f"torch_npu.distributed.{call}: {name} {sizes} for {rows} rows in a group of "
            f"{world}: give one size per rank, summing to the rows"
        )
    return sizes


def _rows(tensor: torch.Tensor) -> int:
    return tensor.shape[0] if tensor.dim() else 1


def all_gather_into_tensor_uneven(
    output: torch.Tensor,
    input: torch.Tensor,  # noqa: A002 - torch_npu's name
    output_split_sizes: Optional[Sequence[int]] = None,
    group: Any = None,
    async_op: bool = False,
) -> Any:
    """Gather every rank's ``input`` (``output_split_sizes[i]`` rows on rank i) into
    ``output``, one after another in rank order."""
    call = "all_gather_into_tensor_uneven"
    if not _takes(call, group, output, input):
        return None
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    splits = _splits(call, "output_split_sizes", output_split_sizes, _rows(output), world)
    row_shape = tuple(output.shape[1:])
    if _rows(input) != splits[rank] or tuple(input.shape[1:]) != row_shape:
        raise RuntimeError(
            f"torch_npu.distributed.{call}: rank {rank}'s input of shape {tuple(input.shape)} "
            f"is not its {splits[rank]} rows of {row_shape} elements in the output"
        )
    longest = max(splits)
    padded = input.new_zeros((longest,) + row_shape)
    padded[: splits[rank]] = input.reshape((splits[rank],) + row_shape)
    gathered = input.new_empty((world * longest,) + row_shape)
    gather_into = getattr(dist, "all_gather_into_tensor", None) or dist._all_gather_base
    gather_into(gathered, padded, group=group)
    flat = output.view((_rows(output),) + row_shape)
    start = 0
    for r, n in enumerate(splits):
        flat[start : start + n] = gathered[r * longest : r * longest + n]
        start += n
    return _done(async_op)


def reduce_scatter_tensor_uneven(
    output: torch.Tensor,
    input: torch.Tensor,  # noqa: A002 - torch_npu's name
    input_split_sizes: Optional[Sequence[int]] = None,
    op: Any = dist.ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
) -> Any:
    """Reduce ``input`` over the ranks by ``op``; rank i keeps the ``input_split_sizes[i]``
    rows of the reduction after the runs of the ranks before it, in ``output``."""
    call = "reduce_scatter_tensor_uneven"
    if not _takes(call, group, output, input):
        return None
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    splits = _splits(call, "input_split_sizes", input_split_sizes, _rows(input), world)
    if output.numel() != splits[rank] * (input.numel() // max(_rows(input), 1)):
        raise RuntimeError(
            f"torch_npu.distributed.{call}: rank {rank}'s output of shape "
            f"{tuple(output.shape)} cannot hold its {splits[rank]} rows of the input of shape "
            f"{tuple(input.shape)}"
        )
    whole = input.clone()
    dist.all_reduce(whole, op=op, group=group)
    start = sum(splits[:rank])
    output.copy_(whole[start : start + splits[rank]].reshape(output.shape))
    return _done(async_op)
