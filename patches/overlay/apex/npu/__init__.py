"""What apex adds for the Ascend NPU, over ``torch_npu`` (Huawei's, or apexnpu's emulator).

apex reaches the device only through torch_npu's public API (see ``backend``). Importing this
package switches on what the ``APEXNPU_*`` variables ask for: gradient communication hooks on
torch DDP (``ddp``), the fused optimizers in torch.optim's place (``fused_optimizer_switch``),
and ``amp_decorate`` / ``amp_parameters`` on ``torch.npu.amp`` (O2 for torch-native AMP code).
"""
from __future__ import annotations

from . import backend, float_status
from .amp_decorate import amp_decorate, amp_parameters
from .backend import device_type, is_emulated_npu, is_npu_tensor, is_real_npu

__all__ = [
    "backend", "float_status",
    "device_type", "is_emulated_npu", "is_npu_tensor", "is_real_npu",
    "amp_decorate", "amp_parameters",
]

from . import aiak_names, ddp, fused_optimizer_switch, native_amp_o2  # noqa: E402

ddp.install()  # torch DDP takes the APEXNPU_*_COMPRESSION / _HIERARCHICAL_ALLREDUCE switches
fused_optimizer_switch.install()  # APEXNPU_FUSED_OPTIMIZER=1: torch.optim's are the NpuFused ones
native_amp_o2.install()  # torch.npu.amp.amp_decorate, and its GradScaler after amp_decorate
aiak_names.install()  # AIAK-Training's names: torch.npu.amp.aiak_amp_*, torch.optim.LAMB
