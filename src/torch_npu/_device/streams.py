"""The bookkeeping of the emulated NPU's streams: their ids and handles, which stream is current
for each thread and device, and the copies still in flight on each.

The emulated NPU runs every operation when it is called, so work on any stream is done in
program order; what remains of a stream is its identity, and one thing that takes time on an
NPU even when the host has moved on: a copy between host and NPU that does not block
(``non_blocking=True``). Its bytes take the host link's time, so until then the stream's
``query()`` says it is busy and its ``synchronize()`` waits, as on the NPU. As on the NPU,
stream 0 of a device is its default stream, a new stream gets the next id of its device, and
the current stream belongs to the calling thread (the default stream until one is set).
``torch_npu.npu.streams`` makes the ``Stream`` and ``Event`` objects on top of this.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any, Callable, Dict, Iterator, Tuple

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


# An Atlas 800's NPU sits behind PCIe 4.0 x16: about 25 GB/s each way; a copy also costs the
# launch of its DMA task.
LINK_BYTES_PER_SECOND = 25e9
COPY_LAUNCH_SECONDS = 20e-6
_busy_until: Dict[Tuple[int, int], float] = {}  # (device, stream id) -> perf_counter time


def current_id(device_index: int) -> int:
    """The id of the calling thread's current stream on ``device_index``."""
    chosen = getattr(_current, "streams", {}).get(device_index)
    return DEFAULT_ID if chosen is None else chosen.stream_id


def copy_in_flight(device_index: int, stream_id: int, nbytes: int) -> None:
    """A non-blocking copy of ``nbytes`` was queued on the stream: it ends after those before
    it, at the link's speed."""
    now = time.perf_counter()
    start = max(now, _busy_until.get((device_index, stream_id), now))
    _busy_until[(device_index, stream_id)] = (
        start + COPY_LAUNCH_SECONDS + nbytes / LINK_BYTES_PER_SECOND
    )


def done_at(device_index: int, stream_id: int) -> float:
    """When the stream's queued copies end (a time of ``time.perf_counter``; past: idle)."""
    return _busy_until.get((device_index, stream_id), 0.0)


def wait_until(moment: float) -> None:
    """Block until ``moment`` (``time.perf_counter``), as a synchronisation waits for the NPU."""
    left = moment - time.perf_counter()
    if left > 0:
        time.sleep(left)


def wait_device(device_index: int) -> None:
    """Every stream of the device done (``torch.npu.synchronize``)."""
    ends = [t for (index, _), t in _busy_until.items() if index == device_index]
    if ends:
        wait_until(max(ends))
