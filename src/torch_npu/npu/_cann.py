"""CANN's version, as ``torch_npu.npu.utils.get_cann_version`` reports it.

The emulated NPU runs without CANN (``ASCEND_HOME_PATH`` is the emulator's package, where no
CANN install information is found), so every module's version is unknown: torch_npu answers ""
then, and a feature gated on a CANN version (``_is_gte_cann_version``) is not there.
"""

from __future__ import annotations

__all__ = ["get_cann_version"]

# The modules torch_npu reports versions of.
MODULES = ("CANN", "RUNTIME", "COMPILER", "HCCL", "TOOLKIT", "OPP", "OPP_KERNEL", "DRIVER")


def get_cann_version(module: str = "CANN") -> str:
    """The installed version of CANN's ``module`` (one of ``MODULES``): "" when it is not
    installed, as here, and for a name that is not a module."""
    if not isinstance(module, str):
        raise TypeError(f"module must be a str, but got {type(module).__name__}")
    return ""


def _is_gte_cann_version(version: str, module: str = "CANN") -> bool:
    """Whether the installed ``module`` is ``version`` or later: never, with none installed."""
    if not isinstance(version, str):
        raise TypeError(f"version must be a str, but got {type(version).__name__}")
    get_cann_version(module)
    return False
