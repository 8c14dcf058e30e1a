"""``torch.npu`` streams and events on the emulated NPU.

The emulated NPU runs every operation when it is called, so work on any stream is already done
in program order: waiting and synchronising return at once and queries report completion.
Events keep real time, so ``start.elapsed_time(end)`` measures what ran between two records.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Optional

from . import devices


class Stream:
    """An NPU stream (``torch.npu.Stream(device=None, priority=0)``)."""

    is_emulated_npu_stream = True

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device_index = devices.index_of(device, "torch.npu.Stream")
        self.priority = priority

    @property
    def device(self):
        from .tensor_methods import npu_device

        return npu_device(self.device_index)

    def wait_event(self, event: "Event") -> None:
        pass

    def wait_stream(self, stream: "Stream") -> None:
        pass

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<torch.npu.Stream device=npu:{self.device_index} (emulated)>"


class Event:
    """An NPU event (``torch.npu.Event(enable_timing=False, blocking=False, interprocess=False)``)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        self.enable_timing = enable_timing
        self._recorded_at: Optional[float] = None

    def record(self, stream: Optional[Stream] = None) -> None:
        self._recorded_at = time.perf_counter()

    def wait(self, stream: Optional[Stream] = None) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds from this event's record to ``end_event``'s."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Event.elapsed_time: both events must be created with "
                               "enable_timing=True")
        if self._recorded_at is None or end_event._recorded_at is None:
            raise RuntimeError("Event.elapsed_time: both events must be recorded first")
        return (end_event._recorded_at - self._recorded_at) * 1000.0


_defaults = {}
_current = threading.local()


def default_stream(device: Any = None) -> Stream:
    index = devices.index_of(device, "torch.npu.default_stream")
    stream = _defaults.get(index)
    if stream is None:
        stream = _defaults[index] = Stream(index)
    return stream


def current_stream(device: Any = None) -> Stream:
    index = devices.index_of(device, "torch.npu.current_stream")
    chosen = getattr(_current, "streams", {}).get(index)
    return chosen if chosen is not None else default_stream(index)


def set_stream(stream: Stream) -> None:
    if not hasattr(_current, "streams"):
        _current.streams = {}
    _current.streams[stream.device_index] = stream


class stream:  # noqa: N801 - used like torch.npu.stream(s)
    """Context manager selecting ``s`` as the current stream of its device."""

    def __init__(self, s: Optional[Stream]) -> None:
        self.stream = s
        self._previous: Optional[Stream] = None

    def __enter__(self) -> Optional[Stream]:
        if self.stream is not None:
            self._previous = current_stream(self.stream.device_index)
            set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc: Any) -> None:
        if self._previous is not None:
            set_stream(self._previous)
