"""torch's DistributedDataParallel with the communication the comm_settings variables ask for.

Once made, a DDP gets the communication hook that ``APEXNPU_FP16_COMPRESSION``,
``APEXNPU_POWERSGD_COMPRESSION`` or ``APEXNPU_HIERARCHICAL_ALLREDUCE`` ask for (see comm_hooks),
on a real NPU and on the emulated one alike.
"""

from __future__ import annotations

import torch

from . import comm_hooks


def _wrap_init(original):
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        comm_hooks.register_on_ddp(self)

    __init__.__doc__ = original.__doc__
    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    __init__._apexnpu_comm_hooks = True  # type: ignore[attr-defined]
    return __init__


def install() -> None:
    ddp = torch.nn.parallel.DistributedDataParallel
    if not getattr(ddp.__init__, "_apexnpu_comm_hooks", False):
        ddp.__init__ = _wrap_init(ddp.__init__)
