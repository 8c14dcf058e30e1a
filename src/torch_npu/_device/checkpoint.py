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
_loading = threading.local()  # storage address -> NPU index, storages moved while torch.load runs


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


def _npu_location(storage: Any) -> Optional[str]:
    """The location torch.save records for a storage of an NPU tensor ("npu:N")."""
    table = getattr(_saving, "table", None)
    if not table:
        return None
    index = table.get(storage.data_ptr())
    return None if index is None else f"npu:{index}"


def _host_storage(storage: Any, location: str) -> Any:
    """Storages saved on an NPU load into host memory, the emulated NPU's backing."""
    return storage if location.startswith("npu") else None


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


def _saved_npu(location: str) -> Optional[int]:
    """The NPU a saved location names (None: the host). CUDA locations are an NPU only under
    transfer_to_npu; otherwise torch's own error for them stands."""
    if location == "cpu":
        return None
    index = devices.npu_index(location, "torch.load")
    if index is None:
        raise RuntimeError(f"torch.load: a storage was saved on {location!r}, which this machine "
                           "does not have; pass map_location='npu' (or 'cpu') to place it, or "
                           "import torch_npu.contrib.transfer_to_npu for CUDA checkpoints")
    return index


def _target(map_location: Any, saved: str) -> Optional[int]:
    """Where a tensor saved at ``saved`` goes under ``map_location``."""
    if map_location is None:
        return _saved_npu(saved)
    if isinstance(map_location, dict):
        return _saved_npu(str(map_location.get(saved, saved)))
    index = devices.npu_index(map_location, _WHAT)
    if index is not None:
        return index
    if str(map_location) == "cpu":
        return None
    raise RuntimeError(f"{_WHAT}: {map_location!r} names neither the host ('cpu') nor an NPU")


def _to_meta(map_location: Any, saved: str) -> bool:
    """Whether ``map_location`` sends a storage saved at ``saved`` to the meta device, where it
    has a size and no data (deferred initialisation: FSDP's, accelerate's)."""
    if isinstance(map_location, dict):
        return meta.names_meta(map_location.get(saved, saved))
    return meta.names_meta(map_location)


def _load_mapped(original: Callable, f: Any, map_location: Callable, *args: Any,
                 **kwargs: Any) -> Any:
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
        index = devices.npu_index(device, "UntypedStorage.to") if not isinstance(device, int) \
            else devices.check_index(device, "UntypedStorage.to")
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
        saved_at: Dict[int, str] = {}

        def keep_on_host(storage: Any, location: str) -> Any:
            if _to_meta(map_location, location):
                return torch.serialization.default_restore_location(storage, "meta")
            saved_at[storage.data_ptr()] = location
            return storage

        obj = original(f, keep_on_host, *args, **kwargs)
        for t in tensors_in(obj):
            if t.is_meta:
                placement.put(t, None)  # on no device (the pickled tensor may carry a mark)
                continue
            saved = saved_at.get(_storage_address(t), "cpu")
            placement.put(t, _target(map_location, saved))
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
