"""The NPU float-status (overflow) flag.

On the emulated NPU the flag lives in the runtime (``apex._apexnpu``) when it is built, so that
its kernels and the Python emulation share one flag; without the runtime it lives here. On a real
NPU torch_npu's own float-status calls are used.
"""
from __future__ import annotations

import threading

from . import backend

_lock = threading.Lock()
_python_flag = [False]


def _real_npu_calls():
    import torch

    npu = getattr(torch, "npu", None)
    names = ("get_npu_overflow_flag", "clear_npu_overflow_flag")
    if npu is not None and all(hasattr(npu, n) for n in names):
        return tuple(getattr(npu, n) for n in names)
    return None


def _runtime_calls():
    if backend.is_real_npu():
        real = _real_npu_calls()
        if real is None:
            return None
        get_flag, clear_flag = real

        def clear_real(device: int) -> bool:
            was_set = bool(get_flag())
            clear_flag()
            return was_set

        # A real NPU sets its flag itself; recording an overflow from Python is not possible there.
        return (lambda device: get_flag(), lambda device: None, clear_real)
    rt = backend.runtime()
    if rt is None:
        return None
    names = ("get_float_status", "raise_float_status", "clear_float_status")
    if all(hasattr(rt, n) for n in names):
        get_flag, raise_flag, clear_flag = (getattr(rt, n) for n in names)
        return (get_flag, raise_flag, clear_flag)
    return None


def get(device: int = 0) -> bool:
    """True when an overflow (inf/NaN, or an fp16 result beyond ±65504) happened since the last clear."""
    calls = _runtime_calls()
    if calls is not None:
        return bool(calls[0](device))
    with _lock:
        return _python_flag[0]


def set(device: int = 0) -> None:  # noqa: A001 - mirrors the runtime's name
    """Record an overflow."""
    calls = _runtime_calls()
    if calls is not None:
        calls[1](device)
        return
    with _lock:
        _python_flag[0] = True


def clear(device: int = 0) -> bool:
    """Clear the flag; returns whether it was set."""
    calls = _runtime_calls()
    if calls is not None:
        return bool(calls[2](device))
    with _lock:
        was_set = _python_flag[0]
        _python_flag[0] = False
        return was_set
