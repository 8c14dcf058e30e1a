"""torch_npu's error codes, which end its messages:
``"Invalid device id" + pta_error(ErrCode.VALUE)`` reads ``Invalid device id`` and then a
line ``[ERROR] <time> (PID:<pid>, Device:<n>, RankID:<r>) ERR00003 PTA invalid value``.
Scripts and launchers match that line (``ERR\\d{5}``), so the emulator's errors carry it too.
``TORCH_NPU_COMPACT_ERROR_OUTPUT=1`` leaves it out, as on the NPU, and so does an interactive
interpreter."""

from __future__ import annotations

import enum
import os
import sys
import time


class _SubModuleID(enum.Enum):
    PTA = 0
    OPS = 1
    DIST = 2
    GRAPH = 3
    PROF = 4
    UNKNOWN = 99


class ErrCode(enum.Enum):
    SUCCESS = (0, "success")
    PARAM = (1, "invalid parameter")
    TYPE = (2, "invalid type")
    VALUE = (3, "invalid value")
    PTR = (4, "invalid pointer")
    INTERNAL = (5, "internal error")
    MEMORY = (6, "memory error")
    NOT_SUPPORT = (7, "feature not supported")
    NOT_FOUND = (8, "resource not found")
    UNAVAIL = (9, "resource unavailable")
    SYSCALL = (10, "system call failed")
    TIMEOUT = (11, "timeout error")
    PERMISSION = (12, "permission error")
    ACL = (100, "call acl api failed")
    HCCL = (200, "call hccl api failed")
    GE = (300, "call ge api failed")
    EXCEPT = (999, "applicaiton exception")  # sic: the NPU's message, which scripts match

    @property
    def code(self) -> int:
        return self.value[0]

    @property
    def msg(self) -> str:
        return self.value[1]


def _interactive() -> bool:
    return hasattr(sys, "ps1") or bool(getattr(sys.flags, "interactive", 0))


def _device() -> int:
    from .._device import devices

    return devices.current_device()


def _rank() -> int:
    try:
        import torch.distributed as dist

        return dist.get_rank() if dist.is_available() and dist.is_initialized() else -1
    except Exception:  # noqa: BLE001 - a message must never fail to be made
        return -1


def _format(submodule: _SubModuleID, error: ErrCode) -> str:
    if os.environ.get("TORCH_NPU_COMPACT_ERROR_OUTPUT", "0") not in ("", "0") or _interactive():
        return ""
    stamp = time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime())
    return (
        f"\n[ERROR] {stamp} (PID:{os.getpid()}, Device:{_device()}, RankID:{_rank()}) "
        f"ERR{submodule.value:0>2d}{error.code:0>3d} {submodule.name} {error.msg}"
    )


def pta_error(error: ErrCode) -> str:
    return _format(_SubModuleID.PTA, error)


def ops_error(error: ErrCode) -> str:
    return _format(_SubModuleID.OPS, error)


def dist_error(error: ErrCode) -> str:
    return _format(_SubModuleID.DIST, error)


def graph_error(error: ErrCode) -> str:
    return _format(_SubModuleID.GRAPH, error)


def prof_error(error: ErrCode) -> str:
    return _format(_SubModuleID.PROF, error)
