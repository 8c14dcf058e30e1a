"""A process group that all-reduces on another one, to completion, and counts the bytes that
cross between nodes.

What crosses is counted for a ring all-reduce over the group's members in rank order (the
flat algorithm HCCL and NCCL use between nodes): each member sends 2 (k - 1) / k of the buffer
to the next, so a member whose successor is on another node sends that much across. The count
is of this process's sends; summed over the ranks it is the job's. Each all-reduce is waited for
before it returns, so the callbacks of torch's communication hooks run on the calling thread
(where the emulated NPU's fp16 arithmetic is on), never on a gloo thread.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

import torch
import torch.distributed as dist

_sent_across = [0]


def internode_bytes() -> int:
    """Bytes this process has sent to other nodes through counted groups."""
    return _sent_across[0]


def reset() -> None:
    _sent_across[0] = 0


def ring_bytes_across(nbytes: int, member_nodes: Sequence[int], member: int) -> int:
    """What ``member`` sends to another node in a ring all-reduce of ``nbytes``."""
    k = len(member_nodes)
    if k < 2 or member_nodes[member] == member_nodes[(member + 1) % k]:
        return 0
    return nbytes * 2 * (k - 1) // k


class CountedGroup(dist.ProcessGroup):
    def __init__(self, inner: Any, member_nodes: Sequence[int], member: int) -> None:
        """``inner``: a group of torch.distributed; ``member_nodes``: the node of each of its
        members, in its rank order; ``member``: this process's rank in it."""
        super().__init__(member, len(member_nodes))
        self.inner = inner
        self.member_nodes = list(member_nodes)
        self.member = member

    def getBackendName(self) -> str:  # noqa: N802 - c10d's name
        return "counted"

    def allreduce(self, tensors: List[torch.Tensor], opts: Optional[Any] = None) -> Any:
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        work = None
        for tensor in tensors:
            work = dist.all_reduce(tensor, op=op, group=self.inner, async_op=True)
            work.wait()
            _sent_across[0] += ring_bytes_across(
                tensor.numel() * tensor.element_size(), self.member_nodes, self.member
            )
        return work
