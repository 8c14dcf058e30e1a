"""What ``torch.npu.get_device_properties`` tells of an emulated NPU, in torch_npu's type
(``torch_npu._C._NPUDeviceProperties``): the chip's name and cores (``_device.soc``), the memory
the NPU has (the host's), and a UUID that stays the same for a device of a machine."""

from __future__ import annotations

import socket
import uuid
from typing import List, Optional

from .._device import memory, soc

_MIB = 1 << 20


class _CUuuid:
    """A device UUID, as torch_npu gives it: ``bytes`` (16 numbers) and its 8-4-4-4-12 text."""

    def __init__(self, value: uuid.UUID) -> None:
        self._value = value

    @property
    def bytes(self) -> List[int]:
        return list(self._value.bytes)

    def __str__(self) -> str:
        return str(self._value)

    def __repr__(self) -> str:
        return str(self._value)


def _machine() -> str:
    try:
        with open("/etc/machine-id") as f:
            return f.read().strip() or socket.gethostname()
    except OSError:
        return socket.gethostname()


class _NPUDeviceProperties:
    """Read-only properties of one NPU."""

    def __init__(self, index: int) -> None:
        cube, vector, l2 = soc.cores()
        self.name = soc.name()
        self.total_memory = memory.total_memory()
        self.cube_core_num = cube
        self.vector_core_num = vector
        self.L2_cache_size = l2
        # CUDA's fields, which torch_npu has for compatibility: unset but for the processors
        # (torch's DataParallel balance check reads them): the vector cores, else the cube's.
        self.major: Optional[int] = None
        self.minor: Optional[int] = None
        self.is_multi_gpu_board: Optional[int] = None
        self.is_integrated: Optional[int] = None
        self.multi_processor_count: Optional[int] = vector or cube
        self.max_threads_per_multi_processor: Optional[int] = None
        self.warp_size: Optional[int] = None
        self.regs_per_multiprocessor: Optional[int] = None
        self.gcnArchName: Optional[str] = None
        self.uuid = _CUuuid(
            uuid.uuid5(uuid.NAMESPACE_OID, f"apexnpu-emulated-npu/{_machine()}/{self.name}/{index}")
        )

    def __setattr__(self, key: str, value: object) -> None:
        if "uuid" in self.__dict__:
            raise AttributeError(f"readonly attribute {key!r}")
        object.__setattr__(self, key, value)

    def __repr__(self) -> str:
        return (
            f"_NPUDeviceProperties(name='{self.name}', total_memory="
            f"{self.total_memory // _MIB}MB, cube_core_num={self.cube_core_num}, "
            f"vector_core_num={self.vector_core_num}, uuid={self.uuid}, "
            f"L2_cache_size={self.L2_cache_size // _MIB}MB)"
        )


_NPUDeviceProperties.__module__ = _CUuuid.__module__ = "torch_npu._C"
