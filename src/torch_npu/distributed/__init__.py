"""torch.distributed on the emulated NPU: the hccl backend and DDP over NPU modules.

The names torch_npu's ``torch_npu.distributed`` gives scripts: ``is_hccl_available``,
``_make_hccl_premul_sum`` (a PREMUL_SUM ``ReduceOp``: each rank's tensor is scaled by the
factor, then they are summed; torch_npu 2.x takes torch's NCCL maker for it), and the
collectives of unequal parts (``_uneven``).
"""

import torch as _torch
import torch.distributed as _dist


def is_hccl_available() -> bool:
    """Whether torch.distributed has the hccl backend (the emulator registers it)."""
    return _dist.is_available() and "HCCL" in _dist.Backend._plugins


# torch_npu 2.x's (torch 1.13's ReduceOp does not give its factor back to Python).
if int(_torch.__version__.split(".")[0]) >= 2:
    _make_hccl_premul_sum = _dist._make_nccl_premul_sum


from ._uneven import all_gather_into_tensor_uneven, reduce_scatter_tensor_uneven  # noqa: E402

__all__ = ["is_hccl_available", "all_gather_into_tensor_uneven", "reduce_scatter_tensor_uneven"]
