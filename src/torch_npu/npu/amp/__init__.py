"""``torch.npu.amp``: autocast, GradScaler and the custom-Function decorators on the emulated NPU
(also what transfer_to_npu puts in place of ``torch.cuda.amp``), with torch_npu's modules
``autocast_mode``, ``grad_scaler`` and ``common``."""

# ruff: noqa: F401  (re-exports)
from __future__ import annotations

import sys

from . import autocast_mode, checkpoint_recompute, common, grad_scaler, non_finite_check
from .autocast_mode import autocast, custom_bwd, custom_fwd  # noqa: F401
from .autocast_state import (
    get_amp_supported_dtype,
    get_autocast_dtype,
    is_autocast_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


# torch_npu's ``torch.npu`` functions for autocast; torch 2.x's autocast asks the device module
# for ``get_amp_supported_dtype``.
NPU_FUNCTIONS = (
    "get_amp_supported_dtype",
    "get_autocast_dtype",
    "is_autocast_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
)


def install() -> None:
    """Put NPU autocast and the NPU's unscale-and-check into torch, and autocast's functions
    into ``torch.npu`` (idempotent)."""
    npu = sys.modules[__name__.rpartition(".")[0]]
    for name in NPU_FUNCTIONS:
        setattr(npu, name, globals()[name])
    autocast_mode.install()
    checkpoint_recompute.install()
    non_finite_check.install()


install_torch_autocast = install  # the name torch_npu.npu.install calls
