"""The emulated NPU's float-status (overflow) flag.

The flag lives in the runtime (``torch_npu._apexnpu``) when this package carries it, so that its
kernels and the Python emulation share one flag; without the runtime it lives here. The process
has one flag, the runtime's device 0's, whichever NPU an operation ran on: each process of an
Ascend job drives one NPU, and its scalers read the flag while another NPU may be current.
"""

from __future__ import annotations

import threading

from .. import _runtime

_lock = threading.Lock()
_python_flag = [False]


def _runtime_calls():
    rt = _runtime.runtime()
    if rt is None:
        return None
    return rt.get_float_status, rt.raise_float_status, rt.clear_float_status


def get() -> bool:
    """True when an overflow (inf/NaN, or an fp16 result beyond ±65504) happened since the last
    clear."""
    calls = _runtime_calls()
    if calls is not None:
        return bool(calls[0]())
    with _lock:
        return _python_flag[0]


def set() -> None:  # noqa: A001 - mirrors the runtime's name
    """Record an overflow."""
    calls = _runtime_calls()
    if calls is not None:
        calls[1]()
        return
    with _lock:
        _python_flag[0] = True


def clear() -> bool:
    """Clear the flag; returns whether it was set."""
    calls = _runtime_calls()
    if calls is not None:
        return bool(calls[2]())
    with _lock:
        was_set = _python_flag[0]
        _python_flag[0] = False
        return was_set
