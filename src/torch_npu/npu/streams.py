"""``torch_npu.npu.streams``: NPU streams and events on the emulated NPU.

The emulated NPU runs every operation when it is called, so the work of any stream is done in
program order: waits and synchronisations return at once and queries report completion. What
the objects keep is what torch_npu's keep: a stream's device, id, priority and handle
(``npu_stream``), and an event's record time, so ``start.elapsed_time(end)`` measures the host
time between two records. The reprs are torch_npu's.
"""

from __future__ import annotations

import ctypes
import time
from typing import Any, Optional

import torch

from .._device import devices
from .._device import streams as bookkeeping
from ..utils._error_code import ErrCode, pta_error

__all__ = ["Stream", "Event", "SyncLaunchStream"]

# The device type a stream reports: torch's PrivateUse1 (2.x) or XLA (torch_npu 1.x).
_DEVICE_TYPE = 20 if devices.NATIVE_TYPE == "npu" else 9


def _index(device: Any, what: str) -> int:
    """The NPU a stream is made on: None or a negative int mean the current NPU."""
    if device is None or (isinstance(device, int) and not isinstance(device, bool) and device < 0):
        return devices.index_of(None, what)
    return devices.index_of(devices.get_device_index(device, optional=True), what)


class Stream:
    """An NPU stream: ``Stream(device=None, priority=0)`` makes a new one on ``device`` (the
    current NPU by default); ``Stream(stream_id=..., device_index=..., device_type=...)``
    stands for an existing one."""

    is_emulated_npu_stream = True  # Tensor.record_stream has nothing to keep alive for it

    def __init__(
        self,
        device: Any = None,
        priority: int = 0,
        *,
        stream_id: Optional[int] = None,
        device_index: Optional[int] = None,
        device_type: Optional[int] = None,
        **kwargs: Any,
    ) -> None:
        if stream_id is not None and device_index is not None:
            self.device_index = devices.check_index(int(device_index), "torch.npu.Stream")
            self.stream_id = int(stream_id)
        else:
            self.device_index = _index(device, "torch.npu.Stream")
            self.stream_id = bookkeeping.next_id(self.device_index)
        self.device_type = _DEVICE_TYPE if device_type is None else device_type
        self._priority = int(priority)
        self._data_preprocess = False

    @property
    def device(self) -> Any:
        return torch.device("npu", self.device_index)

    @property
    def npu_stream(self) -> int:
        """The stream's handle (an ``aclrtStream`` on the NPU)."""
        return bookkeeping.handle(self.device_index, self.stream_id)

    @property
    def priority(self) -> int:
        return self._priority

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.npu_stream)

    def wait_event(self, event: "Event") -> None:
        event.wait(self)

    def wait_stream(self, stream: "Stream") -> None:
        self.wait_event(stream.record_event())

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self) -> bool:
        """Whether the stream's work is done: all but a non-blocking copy still in flight."""
        return time.perf_counter() >= bookkeeping.done_at(self.device_index, self.stream_id)

    def synchronize(self) -> None:
        """Wait for the stream's copies in flight (everything else has run already)."""
        bookkeeping.wait_until(bookkeeping.done_at(self.device_index, self.stream_id))

    def set_data_preprocess_stream(self, is_data_preprocess_stream: bool = False) -> None:
        self._data_preprocess = bool(is_data_preprocess_stream)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Stream):
            return (self.device_index, self.stream_id) == (other.device_index, other.stream_id)
        return False

    def __hash__(self) -> int:
        return hash((self.npu_stream, self.device_index))

    def __repr__(self) -> str:
        return (
            f"<torch_npu.npu.{type(self).__name__} device={self.device} "
            f"npu_stream={self.npu_stream:#x}>"
        )


class SyncLaunchStream(Stream):
    """A stream whose work torch_npu launches without its task queue; the emulated NPU launches
    everything at once, so it is an ordinary stream."""


Stream.__module__ = SyncLaunchStream.__module__ = "torch_npu.npu.streams"


class Event:
    """An NPU event (``Event(enable_timing=False, blocking=False, interprocess=False)``), made
    on the NPU of the stream that first records it."""

    _handles = 0

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> None:
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self.interprocess = bool(interprocess)
        self.npu_event = 0  # made on first record, as torch_npu's
        self.device_index: Optional[int] = None
        self._recorded_at: Optional[float] = None

    @property
    def device(self) -> Any:
        return None if self.device_index is None else torch.device("npu", self.device_index)

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(self.npu_event)

    def record(self, stream: Optional[Stream] = None) -> None:
        """Record the event on ``stream`` (the current stream by default)."""
        if stream is None:
            from .utils import current_stream

            stream = current_stream()
        if self.npu_event == 0:
            Event._handles += 1
            self.npu_event = (0x5E << 40) | (Event._handles << 8)
            self.device_index = stream.device_index
        elif self.device_index != stream.device_index:
            raise RuntimeError(
                f"Event device {self.device_index} does not match recording "
                f"stream's device {stream.device_index}." + pta_error(ErrCode.PARAM)
            )
        self._recorded_at = time.perf_counter()
        self._stamp_us = time.time_ns() // 1000
        # The event completes with the work queued on the stream before it.
        self._done_at = bookkeeping.done_at(stream.device_index, stream.stream_id)

    def wait(self, stream: Optional[Stream] = None) -> None:
        """Later work of ``stream`` waits for the event: the host does not."""

    def query(self) -> bool:
        return time.perf_counter() >= getattr(self, "_done_at", 0.0)

    def synchronize(self) -> None:
        """Wait for the work the event captured."""
        bookkeeping.wait_until(getattr(self, "_done_at", 0.0))

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds from this event's record to ``end_event``'s."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError(
                "Both events must be created with enable_timing=True to measure "
                "the time between them" + pta_error(ErrCode.PARAM)
            )
        if self._recorded_at is None or end_event._recorded_at is None:
            raise RuntimeError(
                "Both events must be recorded before calculating elapsed time."
                + pta_error(ErrCode.INTERNAL)
            )
        return (end_event._recorded_at - self._recorded_at) * 1000.0

    def recorded_time(self) -> int:
        """When the event was recorded, in microseconds of the clock (the runtime's
        ``aclrtEventGetTimestamp``; the emulated NPU's clock is the host's)."""
        if self._recorded_at is None:
            raise RuntimeError(
                "The event must be recorded before its time stamp is read."
                + pta_error(ErrCode.PARAM)
            )
        return self._stamp_us

    def __repr__(self) -> str:
        if self.npu_event:
            return f"<torch_npu.npu.Event {self.npu_event:#x}>"
        return "<torch_npu.npu.Event uninitialized>"


Event.__module__ = "torch_npu.npu.streams"
