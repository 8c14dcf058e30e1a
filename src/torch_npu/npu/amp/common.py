"""``torch.npu.amp.common``, as torch_npu has it (``torch.cuda.amp.common``'s counterpart, which
torch 2.x's autocast asks about CUDA and transfer_to_npu puts in its place)."""

from __future__ import annotations


def amp_definitely_not_available() -> bool:
    """Whether AMP surely cannot run: never on the emulated NPU, which is always there."""
    import torch_npu

    return not torch_npu.npu.is_available()
