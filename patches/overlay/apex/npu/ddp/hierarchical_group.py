"""Hierarchical all-reduce as a process group: reduce within each node to its leader, all-reduce
among the leaders (one per node), broadcast within each node from its leader.

Between nodes only the leaders' all-reduce travels, so a ring crosses the slow network with
one buffer per node instead of one per process. The nodes are the launcher's: every rank tells
the others its node (``GROUP_RANK``, else ``rank // LOCAL_WORLD_SIZE``, as torchrun numbers
them) and the lowest rank of a node leads it. The groups are ``torch.distributed`` groups of the
default backend, made once per process on every rank (``for_world``). Sums are summed within the
node first, so they may round differently from a flat all-reduce; every rank gets the leader's
bits. Each all-reduce runs to completion before it returns (see counted_group).
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import torch
import torch.distributed as dist

from .counted_group import CountedGroup

_made: Dict[int, "HierarchicalGroup"] = {}


def my_node() -> int:
    """This process's node, from the launcher's variables (0 without them)."""
    group_rank = os.environ.get("GROUP_RANK", "").strip()
    if group_rank.isdigit():
        return int(group_rank)
    per_node = os.environ.get("LOCAL_WORLD_SIZE", "").strip()
    if per_node.isdigit() and int(per_node) > 0:
        return dist.get_rank() // int(per_node)
    return 0


def _device() -> torch.device:
    return torch.device("npu", torch.npu.current_device())  # HCCL sends device tensors


def gather_nodes() -> List[int]:
    """The node of every rank of the default group, in rank order (one small all-gather)."""
    mine = torch.tensor([my_node()], dtype=torch.int32, device=_device())
    everyone = [torch.zeros_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, mine)
    return [int(t.item()) for t in everyone]


class HierarchicalGroup(dist.ProcessGroup):
    def __init__(self, nodes: List[int]) -> None:
        """Make the groups for ranks on ``nodes`` (the node of each rank); every rank calls this
        with the same list."""
        rank = dist.get_rank()
        super().__init__(rank, len(nodes))
        self.nodes = nodes
        members = {
            node: [r for r, n in enumerate(nodes) if n == node] for node in sorted(set(nodes))
        }
        self.leader = members[nodes[rank]][0]
        self.leaders = [ranks[0] for ranks in members.values()]
        self.intra: Any = None
        for ranks in members.values():  # every rank makes every group, in the same order
            group = dist.new_group(ranks)
            if rank in ranks:
                self.intra = group
        leaders_group = dist.new_group(self.leaders)
        self.across: Optional[CountedGroup] = None
        if rank in self.leaders:
            self.across = CountedGroup(
                leaders_group, [nodes[r] for r in self.leaders], self.leaders.index(rank)
            )

    def getBackendName(self) -> str:  # noqa: N802 - c10d's name
        return "hierarchical"

    def allreduce(self, tensors: List[torch.Tensor], opts: Optional[Any] = None) -> Any:
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        if op != dist.ReduceOp.SUM:
            raise ValueError("hierarchical all-reduce: only sums (gradients) are reduced in stages")
        work = None
        for tensor in tensors:
            dist.reduce(tensor, dst=self.leader, group=self.intra)
            if self.across is not None:
                self.across.allreduce([tensor])
            work = dist.broadcast(tensor, src=self.leader, group=self.intra, async_op=True)
            work.wait()
        return work


def for_world() -> HierarchicalGroup:
    """The hierarchical group over the default group's ranks (made at the first call; every rank
    must make it, as every collective)."""
    key = id(dist.distributed_c10d._get_default_group())
    if key not in _made:
        _made[key] = HierarchicalGroup(gather_nodes())
    return _made[key]
