"""The emulated NPU's devices: how many there are, which one is current, and how one is named.

An Atlas 800 node has eight NPUs, so the emulator has eight by default (``APEXNPU_DEVICE_COUNT``
sets another number); all of them are backed by the CPU. As on the NPU, the current device
belongs to the calling thread and starts at 0.

As torch_npu, the NPUs are initialised on first use (a call that names a device to work on, or
asks which is current), an NPU's context is made when it is first used, and a process forked
after the NPUs were initialised cannot use them: its first use raises "Cannot re-initialize NPU
in forked subprocess", as on the NPU, whose runtime does not survive a fork.
torch_npu for torch 1.x is torch's ``xla`` device type underneath (its ``native_device``), so
on torch 1.x an ``xla`` device names an NPU too.

``torch.device("npu:N")`` gives an ``NpuDevice``: torch 1.13's own ``torch.device`` type cannot
name an NPU, so the emulator's functions that take a device (see ``device_args``) read this class
and hand torch the CPU.
"""

from __future__ import annotations

import os
import threading
import traceback
from typing import Any, Callable, List, Optional, Tuple

import torch

COUNT_VARIABLE = "APEXNPU_DEVICE_COUNT"
DEFAULT_COUNT = 8
MAX_COUNT = 64

_count: Optional[int] = None
_thread = threading.local()
# torch_npu 1.x's device type inside torch ("native_device"); 2.x renames PrivateUse1 "npu".
NATIVE_TYPE = "xla" if int(torch.__version__.split(".")[0]) < 2 else "npu"
_BAD_FORK = (
    "Cannot re-initialize NPU in forked subprocess. To use NPU with multiprocessing, "
    "you must use the 'spawn' start method"
)
_init = {"done": False, "bad_fork": False}


VISIBLE_VARIABLE = "ASCEND_RT_VISIBLE_DEVICES"


def _installed_count() -> int:
    """How many NPUs the emulated machine has (``APEXNPU_DEVICE_COUNT``, default 8)."""
    text = os.environ.get(COUNT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_COUNT
    if not text.isdigit() or not 1 <= int(text) <= MAX_COUNT:
        raise ValueError(
            f"{COUNT_VARIABLE}={text!r}: expected a whole number of emulated "
            f"NPUs from 1 to {MAX_COUNT}"
        )
    return int(text)


def _visible_count(installed: int) -> int:
    """How many of the ``installed`` NPUs the process sees, by the rules torch_npu reads
    ``ASCEND_RT_VISIBLE_DEVICES`` with: unset, all; otherwise the indices in its leading run of
    digits and commas (``"0,1x"`` is ``0,1``), up to an empty one (``"0,,1"`` is ``0``); an
    index that is not above the one before it makes none visible (the runtime wants them
    ascending), and the list stops at the first index the machine does not have."""
    text = os.environ.get(VISIBLE_VARIABLE)
    if text is None:
        return installed
    end = 0
    while end < len(text) and (text[end].isdigit() or text[end] == ","):
        end += 1
    indices: List[int] = []
    for entry in text[:end].split(","):
        if not entry:
            break
        indices.append(int(entry))
    visible = 0
    for position, index in enumerate(indices):
        if position > 0 and index <= indices[position - 1]:
            return 0
        if index >= installed:
            break
        visible += 1
    return visible


def device_count() -> int:
    """How many emulated NPUs the process sees. As torch_npu, the count is read afresh until
    the NPUs are initialised (a script may set ``ASCEND_RT_VISIBLE_DEVICES`` after importing
    torch_npu), and fixed from then on."""
    global _count
    if _count is not None:
        return _count
    count = _visible_count(_installed_count())
    if _init["done"]:
        _count = count
    return count


_contexts = set()  # the NPUs whose runtime context exists: the ones used


def lazy_init() -> None:
    """Initialise the NPUs on first use; in a process forked after that, refuse as torch_npu."""
    if _init["done"]:
        return
    if _init["bad_fork"]:
        raise RuntimeError(_BAD_FORK)
    from . import acl_init, memory  # (memory imports this module)

    acl_init.start()  # the environment's ACL settings, checked as torch_npu starts ACL
    memory.configure()  # the allocator reads its settings as it starts
    _init["done"] = True
    device_count()  # fixed from now on, as the runtime fixes it when it starts
    queued, _queued_calls[:] = list(_queued_calls), []
    for callback, where in queued:
        try:
            callback()
        except Exception as e:
            raise RuntimeError(
                f"NPU call failed lazily at initialization with error: {e}\n\n"
                f"NPU call was originally invoked at:\n\n{where}"
            ) from e


# Calls waiting for the NPUs to be initialised, each with the stack that queued it.
_queued_calls: List[Tuple[Callable[[], Any], str]] = []


def lazy_call(callback: Callable[[], Any]) -> None:
    """Run ``callback`` now if the NPUs are initialised, else when they are, as
    ``torch.npu._lazy_call`` does (DeepSpeed sets NPU generator states through it)."""
    if _init["done"]:
        callback()
    else:
        _queued_calls.append((callback, "".join(traceback.format_stack())))


def use(index: int) -> int:
    """NPU ``index`` is used (a call names it, or runs on it as the current device): the NPUs
    are initialised and its context made. Returns ``index``."""
    if index not in _contexts:
        lazy_init()
        _contexts.add(index)
    return index


def has_context(index: int) -> bool:
    """Whether NPU ``index`` has been used (torch_npu's primary context exists)."""
    return index in _contexts


def is_initialized() -> bool:
    return _init["done"]


def in_bad_fork() -> bool:
    """Whether this process was forked from one that had initialised the NPUs."""
    return _init["bad_fork"]


def _after_fork_in_child() -> None:
    if _init["done"]:
        _init["done"], _init["bad_fork"] = False, True
        _contexts.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def current_device() -> int:
    """The calling thread's current NPU (0 until ``set_device``); no initialisation, so that the
    emulator's own bookkeeping may ask in any process."""
    return getattr(_thread, "index", 0)


def set_current_device(index: int) -> None:
    _thread.index = index


class NpuDevice:
    """An emulated NPU as ``torch.device("npu:N")`` names it: ``type == "npu"``, ``index`` N or
    None (the current device, resolved where the device is used)."""

    __slots__ = ("_index",)

    def __init__(self, index: Optional[int] = None) -> None:
        if index is not None:
            index = check_index(index, "torch.device")
        object.__setattr__(self, "_index", index)

    @property
    def type(self) -> str:
        return "npu"

    @property
    def index(self) -> Optional[int]:
        return self._index

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"torch.device attribute {name!r} is read-only")

    def __str__(self) -> str:
        return "npu" if self._index is None else f"npu:{self._index}"

    def __repr__(self) -> str:
        if self._index is None:
            return "device(type='npu')"
        return f"device(type='npu', index={self._index})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NpuDevice):
            return self._index == other._index
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("npu", self._index))

    def __reduce__(self):
        import torch

        return (torch.device, (str(self),))


# Set by torch_npu.contrib.transfer_to_npu: CUDA devices then name emulated NPUs.
cuda_means_npu = False


def _npu_type(name: str) -> bool:
    return name == "npu" or name == NATIVE_TYPE or (cuda_means_npu and name == "cuda")


def check_index(index: Any, what: str) -> int:
    """``index`` as an NPU index, or a clear error naming ``what`` asked for it."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"{what}: an NPU index must be an int, got {index!r}")
    count = device_count()
    if not 0 <= index < count:
        raise RuntimeError(
            f"{what}: npu:{index} does not exist: the emulated NPU has {count} "
            f"devices, npu:0 to npu:{count - 1} (set {COUNT_VARIABLE} for more)"
        )
    return index


def parse_npu_string(text: str, what: str) -> Optional[int]:
    """The NPU index a device string names (the current device for a bare "npu"), or None when
    it names no NPU. Malformed NPU strings are errors."""
    name, sep, rest = text.partition(":")
    if not _npu_type(name.strip()):
        return None
    if not sep:
        return current_device()
    if not rest.isdigit():
        raise RuntimeError(f"{what}: invalid device string {text!r}: expected 'npu' or 'npu:N'")
    return check_index(int(rest), what)


def _named_npu(device: Any, what: str) -> Optional[int]:
    if isinstance(device, NpuDevice):
        return current_device() if device.index is None else device.index
    if isinstance(device, str):
        return parse_npu_string(device, what)
    type_name = getattr(device, "type", None)
    # torch 2.x's own torch.device("npu:N"); "cuda" after transfer_to_npu; torch 1.x's "xla"
    if isinstance(type_name, str) and _npu_type(type_name):
        index = getattr(device, "index", None)
        return current_device() if index is None else check_index(index, what)
    return None


def npu_index(device: Any, what: str) -> Optional[int]:
    """The emulated NPU that ``device`` (a string, ``torch.device`` or ``NpuDevice``) names, or
    None when it names another device (or is None); the NPU is used from then on (see ``use``).
    ``what`` names the call in errors."""
    if device is None:
        return None
    index = _named_npu(device, what)
    return None if index is None else use(index)


def index_of(device: Any, what: str) -> int:
    """The NPU index of a ``torch.npu`` call's device argument: None (current), an int, 'npu',
    'npu:N' or an NPU ``torch.device``; the NPU is used from then on."""
    if device is None:
        return use(current_device())
    if isinstance(device, int) and not isinstance(device, bool):
        return use(check_index(device, what))
    index = npu_index(device, what)
    if index is None:
        raise ValueError(
            f"{what}: not an NPU device: {device!r} (expected an int, 'npu', "
            "'npu:N' or torch.device('npu:N'))"
        )
    return index


def get_device_index(device: Any, optional: bool = False, allow_cpu: bool = False) -> int:
    """torch_npu's ``_get_device_index``: the index of ``device`` (an int, returned as it is; a
    device string or ``torch.device``; a ``torch.npu.device``; or None, the current NPU when
    ``optional``). A host device is -1 when ``allow_cpu``; another device is refused with
    torch_npu's message."""
    from ..utils._error_code import ErrCode, pta_error

    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if isinstance(device, str):
        device = torch.device(device)  # "Invalid device string: ..." as torch says
    index = getattr(device, "idx", None)  # a torch.npu.device
    if isinstance(index, int):
        return index
    if device is not None:
        type_name = getattr(device, "type", None)
        if not isinstance(type_name, str):
            raise ValueError(
                f"Expected a torch.device with a specified index or an integer, but "
                f"got:{device}" + pta_error(ErrCode.VALUE)
            )
        if type_name == "cpu" and allow_cpu:
            return -1
        if not _npu_type(type_name):
            wanted = "a npu or cpu device" if allow_cpu else "a npu device"
            raise ValueError(f"Expected {wanted}, but got: {device}" + pta_error(ErrCode.VALUE))
        index = getattr(device, "index", None)
        if index is not None:
            return index
    if not optional:
        raise ValueError(
            f"Expected a torch.device with a specified index or an integer, but "
            f"got:{device}" + pta_error(ErrCode.VALUE)
        )
    return current_device()
