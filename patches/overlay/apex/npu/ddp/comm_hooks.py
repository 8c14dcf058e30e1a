"""The communication the comm_settings variables ask for, as torch DDP communication hooks:
torch's own (``allreduce_hook``, ``fp16_compress_hook``, ``powerSGD_hook``, and
``fp16_compress_wrapper`` for both compressions) over the group the all-reduces go through:
the flat world (a counted_group) or the hierarchical one.

torch DDP gets them with ``register_comm_hook`` when it is made (see ddp); combine_ddp calls the
same hooks on its slices (see slice_bucket), so the two communicate alike.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook

from . import comm_settings, hierarchical_group
from .comm_settings import CommSettings
from .counted_group import CountedGroup

Hook = Callable[[Any, Any], Any]
_flat: dict = {}


def flat_world() -> CountedGroup:
    """The default group, all-reduced to completion and counted (made once per process)."""
    key = id(dist.distributed_c10d._get_default_group())
    if key not in _flat:
        _flat[key] = CountedGroup(
            dist.group.WORLD, hierarchical_group.gather_nodes(), dist.get_rank()
        )
    return _flat[key]


def group_for(settings: CommSettings) -> dist.ProcessGroup:
    return hierarchical_group.for_world() if settings.hierarchical else flat_world()


def state_and_hook(settings: CommSettings) -> Tuple[Any, Hook]:
    """The (state, hook) pair ``register_comm_hook`` takes for ``settings``."""
    group = group_for(settings)
    if settings.powersgd:
        state: Any = powerSGD_hook.PowerSGDState(
            process_group=group,
            matrix_approximation_rank=settings.rank,
            start_powerSGD_iter=settings.start_iter,
        )
        hook: Hook = powerSGD_hook.powerSGD_hook
        if settings.fp16:
            hook = default_hooks.fp16_compress_wrapper(hook)
        return state, hook
    if settings.fp16:
        return group, default_hooks.fp16_compress_hook
    return group, default_hooks.allreduce_hook


def _uses_default_group(ddp: Any) -> bool:
    default = dist.distributed_c10d._get_default_group()
    return (
        ddp.process_group is None
        or ddp.process_group is default
        or ddp.process_group is dist.group.WORLD
    )


def register_on_ddp(ddp: Any, settings: Optional[CommSettings] = None) -> None:
    """Give a torch DDP the hook of ``settings`` (the environment's by default); nothing when
    they change nothing."""
    settings = comm_settings.from_environment() if settings is None else settings
    if not settings.changes_anything:
        return
    if not _uses_default_group(ddp):
        raise ValueError(
            "DistributedDataParallel over a process group of its own: the "
            "APEXNPU_*_COMPRESSION and APEXNPU_HIERARCHICAL_ALLREDUCE switches "
            "act on the default group only; unset them or use the default group"
        )
    state, hook = state_and_hook(settings)
    ddp.register_comm_hook(state, hook)


def forget_plan(state: Any) -> None:
    """After the buckets were cut anew: PowerSGD's per-bucket memories no longer fit (its
    iteration count carries on)."""
    if isinstance(state, powerSGD_hook.PowerSGDState):
        state.error_dict.clear()
        state.p_memory_dict.clear()
        state.q_memory_dict.clear()
