"""The allocation history ``torch.npu.memory._record_memory_history()`` turns on: every NPU block
allocated and freed, with the Python stack that allocated it, for ``torch.npu.memory._snapshot()``
(the ``device_traces`` of torch's memory viewer, and the ``frames`` of each live block).

Recording costs a stack walk per allocation, so it is off until asked for, as on the NPU.
"""

from __future__ import annotations

import collections
import sys
import threading
import time
import traceback
from typing import Any, Deque, Dict, List, Optional

_lock = threading.Lock()
_settings: Dict[str, Any] = {"enabled": None, "stacks": "all", "max_entries": sys.maxsize}
_traces: Dict[int, Deque[Dict[str, Any]]] = {}
_frames_of: Dict[int, List[Dict[str, Any]]] = {}  # a live block's address -> its frames


def record(
    enabled: Optional[str] = "all",
    context: Optional[str] = "all",
    stacks: str = "all",
    max_entries: int = sys.maxsize,
) -> None:
    """Start (``enabled`` "state" or "all") or stop (None) recording; a new start forgets the
    old history."""
    if enabled not in (None, "state", "all"):
        raise ValueError(
            f"_record_memory_history: enabled must be None, 'state' or 'all', got {enabled!r}"
        )
    if stacks not in ("python", "all"):
        raise ValueError(
            f"_record_memory_history: stacks must be 'python' or 'all', got {stacks!r}"
        )
    with _lock:
        _settings.update(enabled=enabled, stacks=stacks, max_entries=int(max_entries))
        _traces.clear()
        if enabled is None:
            _frames_of.clear()


def recording() -> bool:
    return _settings["enabled"] is not None


def _frames() -> List[Dict[str, Any]]:
    """The caller's Python stack, innermost first, without the emulator's own frames."""
    stack = traceback.extract_stack()
    frames = [
        {"filename": f.filename, "line": f.lineno, "name": f.name}
        for f in reversed(stack)
        if "/torch_npu/_device/" not in f.filename.replace("\\", "/")
    ]
    return frames


def _append(device: int, entry: Dict[str, Any]) -> None:
    if _settings["enabled"] != "all":  # "state": the live blocks' frames, no history
        return
    trace = _traces.get(device)
    if trace is None:
        trace = _traces[device] = collections.deque(maxlen=_settings["max_entries"])
    trace.append(entry)


def allocated(device: int, address: int, size: int) -> None:
    frames = _frames()
    with _lock:
        _frames_of[address] = frames
        _append(
            device,
            {
                "action": "alloc",
                "addr": address,
                "size": size,
                "stream": 0,
                "time_us": int(time.time() * 1e6),
                "frames": frames,
            },
        )


def freed(device: int, address: int, size: int) -> None:
    with _lock:
        frames = _frames_of.pop(address, [])
        _append(
            device,
            {
                "action": "free_completed",
                "addr": address,
                "size": size,
                "stream": 0,
                "time_us": int(time.time() * 1e6),
                "frames": frames,
            },
        )


def frames_of(address: int) -> List[Dict[str, Any]]:
    """The stack that allocated the live block at ``address`` (empty when not recorded)."""
    return _frames_of.get(address, [])


def traces(device_count: int) -> List[List[Dict[str, Any]]]:
    """Each NPU's history, oldest first."""
    with _lock:
        return [list(_traces.get(i, ())) for i in range(device_count)]
