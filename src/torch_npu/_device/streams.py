"""The bookkeeping of the emulated NPU's streams: their ids and handles, and which stream is
current for each thread and device.

The emulated NPU runs every operation when it is called, so work on any stream is already done
in program order; what remains of a stream is its identity. As on the NPU, stream 0 of a device
is its default stream, a new stream gets the next id of its device, and the current stream
belongs to the calling thread (the default stream until one is set). ``torch_npu.npu.streams``
makes the ``Stream`` and ``Event`` objects on top of this.
"""
from __future__ import annotations

import itertools
import threading
from typing import Any, Callable, Dict, Iterator

DEFAULT_ID = 0

_ids: Dict[int, Iterator[int]] = {}
_ids_lock = threading.Lock()
_defaults: Dict[int, Any] = {}
_current = threading.local()


def next_id(device_index: int) -> int:
    """A new stream id on ``device_index`` (1, 2, ...: 0 is the default stream)."""
    with _ids_lock:
        counter = _ids.get(device_index)
        if counter is None:
            counter = _ids[device_index] = itertools.count(DEFAULT_ID + 1)
        return next(counter)


def handle(device_index: int, stream_id: int) -> int:
    """The stream's handle (an ``aclrtStream`` on the NPU: never 0), the same for every object
    that stands for the stream."""
    return ((device_index + 1) << 32) | ((stream_id + 1) << 8)


def default(device_index: int, make: Callable[[int], Any]) -> Any:
    """The default stream of ``device_index`` (made by ``make(device_index)`` once)."""
    stream = _defaults.get(device_index)
    if stream is None:
        stream = _defaults.setdefault(device_index, make(device_index))
    return stream


def current(device_index: int, make: Callable[[int], Any]) -> Any:
    """The calling thread's current stream on ``device_index``."""
    chosen = getattr(_current, "streams", {}).get(device_index)
    return chosen if chosen is not None else default(device_index, make)


def set_current(device_index: int, stream: Any) -> None:
    if not hasattr(_current, "streams"):
        _current.streams = {}
    _current.streams[device_index] = stream
