"""What apex adds for the Ascend NPU, over ``torch_npu`` (Huawei's, or apexnpu's emulator).

apex reaches the device only through torch_npu's public API (see ``backend``). The rest is
grouped by concern: ``amp`` (what apex.amp gets on the NPU, and ``amp_decorate``), ``ddp``
(gradient communication and combine_ddp), ``optimizers`` (what the NpuFused optimizers lean on,
and the fused-optimizer switch) and ``combined`` (combined gradient buffers); ``aiak_names``
holds AIAK-Training's names for all of it. Importing this package switches on what the
``APEXNPU_*`` variables ask for: gradient communication hooks on torch DDP
(``ddp.torch_ddp``), the fused optimizers in torch.optim's place
(``fused_support.fused_optimizer_switch``), and ``amp_decorate`` / ``amp_parameters`` on
``torch.npu.amp`` (O2 for torch-native AMP code).
"""

from __future__ import annotations

from . import backend
from .amp.amp_decorate import amp_decorate, amp_parameters
from .backend import device_type, is_emulated_npu, is_npu_tensor, is_real_npu

__all__ = [
    "backend",
    "device_type",
    "is_emulated_npu",
    "is_npu_tensor",
    "is_real_npu",
    "amp_decorate",
    "amp_parameters",
]

from . import aiak_names  # noqa: E402
from .amp import native_amp_o2  # noqa: E402
from .ddp import torch_ddp  # noqa: E402
from .fused_support import fused_optimizer_switch  # noqa: E402

torch_ddp.install()  # torch DDP takes the APEXNPU_*_COMPRESSION / _HIERARCHICAL_ALLREDUCE switches
fused_optimizer_switch.install()  # APEXNPU_FUSED_OPTIMIZER=1: torch.optim's are the NpuFused ones
native_amp_o2.install()  # torch.npu.amp.amp_decorate, and its GradScaler after amp_decorate
aiak_names.install()  # AIAK-Training's names: torch.npu.amp.aiak_amp_*, torch.optim.LAMB
