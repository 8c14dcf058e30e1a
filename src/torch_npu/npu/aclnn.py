"""``torch.npu.aclnn``: the aclnn operator library's settings. torch_npu cannot tell the
library's version and says so; the emulated NPU has none at all.

``allow_hf32`` is the convolutions' HF32 switch, the same one as ``torch.npu.conv.allow_hf32``
(on a 910B, HF32 lets the cube round fp32 operands to 11 significant bits; the emulator computes
in fp32 either way, and keeps the switch for scripts that set and read it).
"""

from __future__ import annotations

import contextlib
import sys
import types
import warnings
from typing import Iterator, Optional, Tuple

__all__ = ["version", "allow_hf32", "flags", "set_flags"]


def version() -> None:
    """The aclnn version: unknown, as torch_npu answers (with a warning)."""
    warnings.warn("torch.npu.aclnn.version isn't implemented!")
    return None


def _conv():  # the settings object torch.npu.conv, made by the package after this module
    return sys.modules["torch_npu.npu"].conv


def set_flags(_allow_hf32: Optional[bool] = None) -> Tuple[bool]:
    """Set the switches given (not None); returns their previous values, in order."""
    previous = (_conv().allow_hf32,)
    if _allow_hf32 is not None:
        _conv().allow_hf32 = _allow_hf32
    return previous


@contextlib.contextmanager
def flags(allow_hf32: bool = True) -> Iterator[None]:
    """The switches set for the block, restored after it."""
    previous = set_flags(allow_hf32)
    try:
        yield
    finally:
        set_flags(*previous)


class _AclnnModule(types.ModuleType):
    """This module, with ``allow_hf32`` read and written through ``torch.npu.conv``."""

    @property
    def allow_hf32(self) -> bool:
        return _conv().allow_hf32

    @allow_hf32.setter
    def allow_hf32(self, value: bool) -> None:
        _conv().allow_hf32 = value


sys.modules[__name__].__class__ = _AclnnModule

# Read and written through the class above; declared here for ``__all__`` and type checkers.
allow_hf32: bool
