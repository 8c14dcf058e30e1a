"""``torch.npu.FloatStorage`` and the other legacy typed storages of the NPU (torch 2.x).

As torch's ``torch.cuda.FloatStorage``: calling one makes a typed storage of its dtype on the
NPU (``BoolStorage(4)``, ``BoolStorage([True, False])``, ``BoolStorage()``), and
``isinstance(x.storage(), torch.npu.BoolStorage)`` holds for an NPU tensor of its dtype. The
emulated NPU's memory is the host's, so torch reports these storages' device as the CPU; the
class test asks the emulator's memory bookkeeping instead: the storage is one an NPU tensor was
put in, or one made on the NPU by itself. torch 1.x makes its typed storages otherwise and has
no NPU device type: the classes exist on torch 2.x only.
"""

from __future__ import annotations

from typing import Any, Dict

import torch

from .._device import memory, storage_makers

DTYPES: Dict[str, torch.dtype] = {
    "DoubleStorage": torch.float64,
    "FloatStorage": torch.float32,
    "HalfStorage": torch.float16,
    "BFloat16Storage": torch.bfloat16,
    "LongStorage": torch.int64,
    "IntStorage": torch.int32,
    "ShortStorage": torch.int16,
    "CharStorage": torch.int8,
    "ByteStorage": torch.uint8,
    "BoolStorage": torch.bool,
}
_LegacyStorage = getattr(torch.storage, "_LegacyStorage", None)
SUPPORTED = _LegacyStorage is not None and hasattr(torch.storage, "_get_device_from_module")


def on_npu(storage: Any) -> bool:
    """Whether the typed storage ``storage`` is NPU memory."""
    untyped = getattr(storage, "_untyped_storage", None)
    if untyped is None:
        return False
    if getattr(untyped, storage_makers.MADE_ALONE, False):
        return True
    return memory.npu_of_storage(untyped) is not None


# Ways of making a storage over host memory (a buffer, a weak pointer, a shared file).
_HOST_ONLY = ("from_buffer", "_new_with_weak_ptr", "_new_shared_filename")


def _refused(what: str) -> Any:
    def refuse(cls: Any, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{what}: Not available for NPU storage")

    return refuse


def make_classes(module_name: str) -> Dict[str, type]:
    """The storage classes, named for ``module_name`` (whose last part, ``npu``, tells torch
    their device)."""
    if not SUPPORTED:
        return {}

    class _Meta(type(_LegacyStorage)):  # type: ignore[misc]
        def __instancecheck__(cls, instance: Any) -> bool:
            return (
                type(instance) is torch.TypedStorage
                and instance.dtype == cls._dtype
                and on_npu(instance)
            )

    made = {}
    for name, dtype in DTYPES.items():
        made[name] = _Meta(
            name,
            (_LegacyStorage,),
            {
                "__module__": module_name,
                "_dtype": dtype,
                "dtype": dtype,
                **{what: classmethod(_refused(what)) for what in _HOST_ONLY},
                "is_cuda": False,
                "is_sparse": False,
            },
        )
    for cls in made.values():
        torch._storage_classes.add(cls)
    return made
