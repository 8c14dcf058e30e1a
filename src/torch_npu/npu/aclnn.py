"""``torch.npu.aclnn``: the aclnn operator library's settings. torch_npu cannot tell the
library's version and says so; the emulated NPU has none at all."""

from __future__ import annotations

import warnings

__all__ = ["version"]


def version() -> None:
    """The aclnn version: unknown, as torch_npu answers (with a warning)."""
    warnings.warn("torch.npu.aclnn.version isn't implemented!")
    return None
