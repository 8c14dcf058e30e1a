"""``torch_npu.npu.utils`` on the emulated NPU: the devices (which is current, ``device`` and
``device_of``, ``synchronize``), the streams (current, default, ``stream``), the sync debug mode,
and the overflow queries that loss scalers call (Huawei's apex asks ``is_support_inf_nan()`` to
pick its overflow check). Device arguments are read as torch_npu reads them, with its messages
("Expected a npu device, but got: cpu")."""

from __future__ import annotations

import contextlib
import math
import warnings
from typing import Any, Iterator, Optional, Union

import torch

from .._device import devices, placement, soc
from .._device import streams as stream_state
from .._fp16 import float_status, overflow_mode
from .._fp16 import mode as emulation
from ..utils._error_code import ErrCode, pta_error
from .streams import Stream

_TORCH_1 = devices.NATIVE_TYPE != "npu"  # torch 1.x: torch_npu 1.x's API where they differ


def is_available() -> bool:
    return True


def device_count() -> int:
    return devices.device_count()


_get_device_index = devices.get_device_index


def set_device(device: Any) -> None:
    index = _get_device_index(device, optional=True)
    if index >= 0:
        devices.set_current_device(devices.use(devices.check_index(index, "torch.npu.set_device")))
    emulation.enable()


def current_device() -> int:
    devices.lazy_init()
    return devices.current_device()


class device:  # noqa: N801 - torch.npu.device(idx) is a context manager
    """Context manager that makes ``device`` the current NPU inside the block (no-op for None or
    a negative index)."""

    def __init__(self, device: Any) -> None:
        self.idx = _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx < 0:
            return
        devices.use(devices.check_index(self.idx, "torch.npu.device"))
        self.prev_idx = devices.current_device()
        devices.set_current_device(self.idx)

    def __exit__(self, *exc: Any) -> bool:
        if self.idx >= 0:
            devices.set_current_device(self.prev_idx)
        return False


_select = device  # the class, where a parameter is named ``device``


class device_of(device):  # noqa: N801
    """The NPU of a tensor (or storage) as a context manager; a host object selects nothing."""

    def __init__(self, obj: Any) -> None:
        index = placement.npu_of(obj) if isinstance(obj, torch.Tensor) else None
        super().__init__(-1 if index is None else index)


def synchronize(device: Any = None) -> None:
    """Wait for the NPU's work: its copies in flight (the rest is done already). The device is
    checked."""
    devices.lazy_init()
    with _select(device):
        stream_state.wait_device(devices.current_device())


def can_device_access_peer(device_id: Any, peer_device_id: Any) -> bool:
    """Whether ``device_id`` can reach ``peer_device_id``'s memory: two NPUs of a node can (all
    emulated NPUs share the host's memory); a device is not its own peer, as on the NPU."""
    device_id = _get_device_index(device_id, optional=True)
    peer_device_id = _get_device_index(peer_device_id, optional=True)
    count = devices.device_count()
    # torch_npu 1.x's words ("devide"), which its tests match
    word = "devide" if _TORCH_1 else "device"
    if not 0 <= device_id < count:
        raise AssertionError(f"Invalid {word} id" + pta_error(ErrCode.VALUE))
    if not 0 <= peer_device_id < count:
        raise AssertionError(f"Invalid peer {word} id" + pta_error(ErrCode.VALUE))
    return device_id != peer_device_id


# --- streams ------------------------------------------------------------------------------------


def _make_default(index: int) -> Stream:
    return Stream(stream_id=0, device_index=index)


def current_stream(device: Any = None) -> Stream:
    """The calling thread's current stream on ``device`` (the current NPU by default)."""
    devices.lazy_init()
    index = devices.index_of(_get_device_index(device, optional=True), "torch.npu.current_stream")
    return stream_state.current(index, _make_default)


def default_stream(device: Any = None) -> Stream:
    devices.lazy_init()
    index = devices.index_of(_get_device_index(device, optional=True), "torch.npu.default_stream")
    return stream_state.default(index, _make_default)


def set_stream(stream: Optional[Stream]) -> None:
    """Make ``stream`` current on its device (None: no-op)."""
    if stream is None:
        return
    stream_state.set_current(stream.device_index, stream)


class StreamContext:
    """Context manager that makes ``stream`` current on its device inside the block, and the
    current NPU's current stream back after it (no-op for None)."""

    def __init__(self, stream: Optional[Stream]) -> None:
        self.stream = stream
        self.idx = _get_device_index(None, True)
        self.src_prev_stream: Optional[Stream] = None
        self.dst_prev_stream: Optional[Stream] = None

    def __enter__(self) -> None:
        if self.stream is None or self.idx == -1:
            return
        self.src_prev_stream = current_stream()
        if self.src_prev_stream.device_index != self.stream.device_index:
            self.dst_prev_stream = current_stream(self.stream.device_index)
        set_stream(self.stream)

    def __exit__(self, *exc: Any) -> None:
        if self.stream is None or self.idx == -1:
            return
        if self.dst_prev_stream is not None:
            set_stream(self.dst_prev_stream)
        set_stream(self.src_prev_stream)


@contextlib.contextmanager
def _stream_generator(stream: Optional[Stream]) -> Iterator[None]:
    """torch_npu 1.x's ``stream``: the same selection, as a generator context manager."""
    with StreamContext(stream):
        yield


def stream(stream: Optional[Stream]) -> Union[StreamContext, Any]:
    """``with torch.npu.stream(s):`` runs the block with ``s`` current."""
    return _stream_generator(stream) if _TORCH_1 else StreamContext(stream)


def _erase_stream(tensor: torch.Tensor, stream: Stream) -> None:
    """``torch_npu.erase_stream(tensor, stream)``: forget that ``stream`` uses ``tensor``
    (``Tensor.record_stream``), so its memory returns to the pool when it is freed. The emulated
    NPU runs in order and records nothing, so the arguments are only checked."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(
            f"tensor should be torch.Tensor, could not be {type(tensor)}" + pta_error(ErrCode.TYPE)
        )
    if not isinstance(stream, Stream):
        raise TypeError(
            f"stream should be torch_npu.npu.Stream, could not be {type(stream)}"
            + pta_error(ErrCode.TYPE)
        )


# --- synchronisation debugging --------------------------------------------------------------

_sync_debug_mode = [0]
_SYNC_MODES = {"default": 0, "warn": 1, "error": 2}


def set_sync_debug_mode(debug_mode: Union[int, str]) -> None:
    """Whether operations that synchronise with the host warn (1, "warn") or fail (2, "error");
    0 ("default") lets them run. The emulated NPU is the host, so none has to wait for it."""
    if isinstance(debug_mode, str):
        if debug_mode not in _SYNC_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, "
                "`error`" + pta_error(ErrCode.PARAM)
            )
        debug_mode = _SYNC_MODES[debug_mode]
    if isinstance(debug_mode, bool) or debug_mode not in (0, 1, 2):
        raise RuntimeError(
            "invalid value of debug_mode, expected one of 0,1,2" + pta_error(ErrCode.PARAM)
        )
    _sync_debug_mode[0] = int(debug_mode)


def get_sync_debug_mode() -> int:
    return _sync_debug_mode[0]


def current_blas_handle() -> None:
    """The NPU has no BLAS handle (torch_npu warns and answers None)."""
    warnings.warn("NPU does not use blas handle.")
    return None


# --- the float status ----------------------------------------------------------------------


def get_npu_overflow_flag() -> bool:
    """Whether the float status records an overflow. In INF/NAN mode the status is not kept,
    and torch_npu refuses the call, pointing to ``npu_check_overflow``."""
    if is_support_inf_nan():
        raise RuntimeError(
            "Unsupported api when soc_version >= Ascend910B1, please use "
            "npu_check_overflow" + pta_error(ErrCode.NOT_SUPPORT)
        )
    return float_status.get()


def clear_npu_overflow_flag() -> None:
    """Clear the float status; in INF/NAN mode a warning that it is useless, as torch_npu's."""
    if is_support_inf_nan():
        warnings.warn(
            "When soc_version >= Ascend910B1, clear_npu_overflow_flag is useless. Please remove it."
        )
        return
    float_status.clear()


def is_support_inf_nan() -> bool:
    """Whether the NPU runs in INF/NAN mode (Ascend 910B: fp16 overflow gives inf and NaN) rather
    than saturating and raising the float status (Ascend 910): the chip's default, or what
    ``INF_NAN_MODE_FORCE_DISABLE`` or ``APEXNPU_INF_NAN_MODE`` choose."""
    return overflow_mode.inf_nan()


def is_bf16_supported(including_emulation: bool = False) -> bool:
    """bfloat16 compute: the Ascend 910B family and later have it, the 910 family has not."""
    return soc.has_bf16()


def get_soc_version() -> int:
    """torch_npu's SocVersion number of the emulated chip (102 for Ascend910A, 220 for
    Ascend910B1, ...; ``APEXNPU_SOC_VERSION`` chooses the chip)."""
    return soc.version()


def npu_check_overflow(grad: Union[float, torch.Tensor]) -> bool:
    """Whether a step overflowed. In INF/NAN mode: whether ``grad`` (a number, or a tensor whose
    sum is taken) is inf or NaN. Otherwise the float status decides (and is cleared when set);
    ``grad`` is not read."""
    if not is_support_inf_nan():
        overflow = bool(get_npu_overflow_flag())
        if overflow:
            clear_npu_overflow_flag()
        return overflow
    if isinstance(grad, torch.Tensor):
        total = float(grad.float().sum())
    elif isinstance(grad, (int, float)):
        total = float(grad)
    else:
        raise RuntimeError(
            f"npu_check_overflow: expected a float or a tensor, got {type(grad).__name__}"
        )
    return not math.isfinite(total)


from ._cann import _is_gte_cann_version, get_cann_version  # noqa: E402,F401
