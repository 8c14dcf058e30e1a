"""``torch.save`` and ``torch.load`` on the emulated NPU.

A checkpoint records where each storage lives. The emulator writes NPU tensors' storages with the
location a real NPU writes ("npu:N"), so checkpoints move between the emulator and real NPUs both
ways. Loading puts tensors where ``map_location`` says, as on the NPU: None keeps each where it
was saved, "npu"/"npu:N"/an NPU ``torch.device`` puts every tensor on that NPU, "cpu" on the
host, "meta" (or a dict's "meta") gives meta tensors, shapes without data, and a dict maps
saved locations ("npu:0", "cpu") to new ones. A callable ``map_location``
runs as given; the storages it moves to an NPU (``storage.to(device="npu:0")``, torch 2.x) put
their tensors on that NPU, the others stay on the host. Moving a storage to an NPU gives a host
copy, the emulated NPU's memory (torch's own would call an NPU allocator there is none of).
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Iterator, Optional

import torch

from .. import _wraps
from . import devices, meta, placement

_WHAT = "torch.load(map_location=...)"
_saving = threading.local()  # storage address -> NPU index, while torch.save runs
# While torch.load runs: ``placed`` (storage address -> where torch restored it) and the
# ``map_location`` given, or ``moved`` (storage address -> NPU index) under a callable one.
_loading = threading.local()


def tensors_in(obj: Any, seen: Optional[set] = None) -> Iterator[torch.Tensor]:
    """Every tensor reachable from ``obj`` through containers and modules (and their grads)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        yield obj
        if obj.grad is not None:
            yield from tensors_in(obj.grad, seen)
    elif isinstance(obj, torch.nn.Module):
        for t in list(obj.parameters()) + list(obj.buffers()):
            yield from tensors_in(t, seen)
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from tensors_in(value, seen)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            yield from tensors_in(value, seen)


def _storage_address(t: torch.Tensor) -> int:
    return (t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()).data_ptr()


def _storage_address_or_none(t: torch.Tensor) -> Optional[int]:
    """The address of ``t``'s storage; None for a tensor subclass without one of its own (a
    wrapper of other tensors, such as FSDP's ShardedTensor, refuses to give a storage)."""
    try:
        return _storage_address(t)
    except (RuntimeError, NotImplementedError):
        return None


def _npu_location(storage: Any) -> Optional[str]:
    """The location torch.save records for a storage of an NPU tensor ("npu:N")."""
    table = getattr(_saving, "table", None)
    if not table:
        return None
    index = table.get(storage.data_ptr())
    return None if index is None else f"npu:{index}"


def _host_storage(storage: Any, location: str) -> Any:
    """torch's restore step for a storage going to ``location`` (the saved one, or where
    ``map_location`` sends it), tried before torch's own: an NPU's storages load into host
    memory, the emulated NPU's backing. While the emulator's ``torch.load`` runs, where each
    storage goes is noted, for its tensors to be put there."""
    placed = getattr(_loading, "placed", None)
    if placed is not None:
        _check_restorable(location)
        placed[storage.data_ptr()] = location
    if location.startswith("npu") or (devices.cuda_means_npu and location.startswith("cuda")):
        return storage
    return None


def _check_restorable(location: str) -> None:
    """Refuse a storage that would go neither to the host, an NPU nor meta, in words saying what
    to pass (torch's own would speak of a missing CUDA)."""
    if location == "cpu" or meta.names_meta(location):
        return
    if location.startswith("npu") or location.startswith("cuda"):
        if devices.npu_index(location, "torch.load") is not None:
            return
    if getattr(_loading, "map_location", None) is None:
        raise RuntimeError(
            f"torch.load: a storage was saved on {location!r}, which this machine "
            "does not have; pass map_location='npu' (or 'cpu') to place it, or "
            "import torch_npu.contrib.transfer_to_npu for CUDA checkpoints"
        )
    raise RuntimeError(f"{_WHAT}: {location!r} names neither the host ('cpu') nor an NPU")


def _wrap_save(original: Callable) -> Callable:
    def save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
        table: Dict[int, int] = {}
        for t in tensors_in(obj):
            index = placement.npu_of(t)
            if index is not None and t.numel() > 0:
                table[_storage_address(t)] = index
        _saving.table = table
        try:
            return original(obj, f, *args, **kwargs)
        finally:
            _saving.table = None

    save.__doc__ = original.__doc__
    _wraps.mark(save, original)
    return save


# torch_npu 2.x's legacy (non-zip) writer reads each storage's NPU descriptor from a storage
# made without one, and refuses: only the zip format saves NPU tensors there.
_LEGACY_REFUSAL = (
    "The npu storage desc is unavailable: the tensor's storage is not an NPUStorageImpl."
)


def _wrap_legacy_save(original: Callable) -> Callable:
    def _legacy_save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
        if any(placement.npu_of(t) is not None for t in tensors_in(obj)):
            raise RuntimeError(_LEGACY_REFUSAL)
        return original(obj, f, *args, **kwargs)

    _wraps.mark(_legacy_save, original)
    return _legacy_save


def _load_mapped(
    original: Callable, f: Any, map_location: Callable, *args: Any, **kwargs: Any
) -> Any:
    """torch.load with a callable ``map_location``: tensors whose storage it moved to an NPU go
    there."""
    outer = getattr(_loading, "moved", None)
    _loading.moved = moved = {}
    try:
        obj = original(f, map_location, *args, **kwargs)
    finally:
        _loading.moved = outer
    if moved:
        for t in tensors_in(obj):
            index = moved.get(_storage_address(t))
            if index is not None:
                placement.put(t, index)
    return obj


def _wrap_storage_to(original: Callable) -> Callable:
    def to(self: Any, *, device: Any, non_blocking: bool = False) -> Any:
        index = (
            devices.npu_index(device, "UntypedStorage.to")
            if not isinstance(device, int)
            else devices.check_index(device, "UntypedStorage.to")
        )
        if index is None:
            return original(self, device=device, non_blocking=non_blocking)
        copy = self.clone() if self.device.type == "cpu" else original(self, device="cpu")
        moved = getattr(_loading, "moved", None)
        if moved is not None:
            moved[copy.data_ptr()] = index
        return copy

    to.__doc__ = original.__doc__
    _wraps.mark(to, original)
    return to


def _wrap_load(original: Callable) -> Callable:
    def load(f: Any, map_location: Any = None, *args: Any, **kwargs: Any) -> Any:
        if callable(map_location) and not isinstance(map_location, dict):
            return _load_mapped(original, f, map_location, *args, **kwargs)
        # torch restores each storage where map_location says (``_host_storage`` notes where);
        # a map given as it is keeps torch's own checks (a wrapper subclass, such as FSDP's
        # ShardedTensor, refuses a callable one).
        outer = getattr(_loading, "placed", None), getattr(_loading, "map_location", None)
        placed: Dict[int, str] = {}
        _loading.placed, _loading.map_location = placed, map_location
        try:
            obj = original(f, map_location, *args, **kwargs)
        finally:
            _loading.placed, _loading.map_location = outer
        for t in tensors_in(obj):
            if t.is_meta:
                placement.put(t, None)  # on no device (the pickled tensor may carry a mark)
                continue
            address = _storage_address_or_none(t)
            if address is None:
                continue  # a wrapper of other tensors (ShardedTensor): they were placed
            location = placed.get(address, "cpu")
            placement.put(t, None if location == "cpu" else devices.npu_index(location, _WHAT))
        return obj

    load.__doc__ = original.__doc__
    _wraps.mark(load, original)
    return load


def install() -> None:
    if _wraps.is_wrapper(torch.load):
        return
    torch.save = _wrap_save(torch.save)
    torch.load = _wrap_load(torch.load)
    storage_to = getattr(torch.UntypedStorage, "to", None)  # torch 2.x
    if storage_to is not None:
        torch.UntypedStorage.to = _wrap_storage_to(storage_to)
    torch.serialization.register_package(5, _npu_location, _host_storage)
    legacy = getattr(torch.serialization, "_legacy_save", None)
    if legacy is not None and devices.NATIVE_TYPE == "npu":  # torch_npu 1.x saved them
        torch.serialization._legacy_save = _wrap_legacy_save(legacy)
