"""``torch_npu.npu``, which is ``torch.npu``, on the emulated NPU.

The functions Ascend scripts call on ``torch.npu`` (devices, seeds, synchronisation, streams and
events, memory queries, the float status, the ``torch.npu.*Tensor`` types, compile options, the
``matmul``/``conv`` settings, ``amp`` and ``utils``), answered by the emulator.
"""
from __future__ import annotations

import os
import re
import sys
import types
import warnings
from typing import Any, Dict, NamedTuple, Optional, Tuple

import torch

from .._device import devices, placement, soc, tensor_types
from .._device.memory import (empty_cache, max_memory_allocated, max_memory_cached,  # noqa: F401
                              max_memory_reserved, mem_get_info, memory_allocated, memory_cached,
                              memory_reserved, memory_stats, memory_summary,
                              reset_max_memory_allocated, reset_max_memory_cached,
                              reset_peak_memory_stats)
from .._device.streams import (Event, Stream, current_stream, default_stream,  # noqa: F401
                               set_stream, stream)
from .._fp16 import float_status
from .._fp16 import mode as emulation

_FLOAT_STATUS_SIZE = 8


def is_available() -> bool:
    return True


def device_count() -> int:
    return devices.device_count()


def set_device(device: Any) -> None:
    devices.set_current_device(devices.index_of(device, "torch.npu.set_device"))
    emulation.enable()


def current_device() -> int:
    return devices.current_device()


def get_device_name(device: Any = None) -> str:
    """The chip's SoC name, as torch_npu reports it (``Ascend910A``, ``Ascend910B1``, ...):
    ``APEXNPU_SOC_VERSION`` chooses it (see ``_device.soc``)."""
    devices.index_of(device, "torch.npu.get_device_name")
    return soc.name()


class DeviceProperties(NamedTuple):
    name: str
    total_memory: int


def get_device_properties(device: Any = None) -> DeviceProperties:
    devices.index_of(device, "torch.npu.get_device_properties")
    return DeviceProperties(soc.name(), mem_get_info()[1])


def synchronize(device: Any = None) -> None:
    """The emulated NPU runs synchronously; nothing to wait for."""
    devices.index_of(device, "torch.npu.synchronize")


def _is_in_bad_fork() -> bool:
    """torch 2.x asks a device module this before seeding it (the emulated NPU forks fine)."""
    return False


def is_initialized() -> bool:
    return emulation.is_enabled()


def init() -> None:
    emulation.enable()


class device:  # noqa: N801 - torch.npu.device(idx) is a context manager
    """Context manager that makes ``device`` the current NPU inside the block."""

    def __init__(self, device: Any) -> None:
        self.index = None if device is None or (isinstance(device, int) and device < 0) \
            else devices.index_of(device, "torch.npu.device")
        self.previous = -1

    def __enter__(self) -> None:
        if self.index is not None:
            self.previous = devices.current_device()
            devices.set_current_device(self.index)

    def __exit__(self, *exc: Any) -> None:
        if self.index is not None:
            devices.set_current_device(self.previous)


def device_of(tensor: torch.Tensor) -> device:
    """``torch.npu.device_of(t)``: the NPU of ``t`` as a context manager (no-op for the host)."""
    return device(placement.npu_of(tensor))


# --- the float status ---------------------------------------------------------------------------

def get_npu_overflow_flag() -> bool:
    """Whether the float status records an overflow."""
    return float_status.get()


def clear_npu_overflow_flag() -> None:
    float_status.clear()


def npu_alloc_float_status() -> torch.Tensor:
    """A float-status buffer, as torch_npu's ``npu_alloc_float_status``."""
    return placement.put(torch.zeros(_FLOAT_STATUS_SIZE, dtype=torch.float32),
                         devices.current_device())


def npu_get_float_status(status: torch.Tensor) -> torch.Tensor:
    """Fill ``status`` from the device flag (element 0 non-zero means overflow) and return it."""
    status.zero_()
    if float_status.get():
        status[0] = 1.0
    return status


def npu_clear_float_status(status: torch.Tensor) -> torch.Tensor:
    float_status.clear()
    status.zero_()
    return status


# --- options that tune the real NPU's compiler: accepted and recorded --------------------------

_options: Dict[str, Any] = {}


def set_start_fuzz_compile_step(step: int) -> None:
    _options["fuzz_compile_start_step"] = int(step)


def global_step_inc() -> None:
    """The real NPU counts training steps for its fuzzy compilation; nothing to count here."""


class profile:  # noqa: N801 - torch.npu.profile(path) is a context manager
    """``torch.npu.profile(profiler_result_path, use_e2e_profiler=False, config=None)``: CANN
    profiling of the block on a real NPU. The emulated NPU has no CANN: the block runs as it
    is and nothing is written (profile it with ``torch.profiler``)."""

    def __init__(self, profiler_result_path: str = "./", use_e2e_profiler: bool = False,
                 config: Any = None) -> None:
        self.result_path = profiler_result_path

    def __enter__(self) -> "profile":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


def set_compile_mode(jit_compile: bool = False) -> None:
    _options["jit_compile"] = bool(jit_compile)


def set_option(option: Dict[str, Any]) -> None:
    if not isinstance(option, dict):
        raise TypeError(f"torch.npu.set_option: expected a dict, got {type(option).__name__}")
    _options.update(option)


def is_bf16_supported(including_emulation: bool = False) -> bool:
    """bfloat16 compute: the Ascend 910B family and later have it, the 910 family has not."""
    return soc.has_bf16()


_CAPABILITY_NOTE = ("The return value of get_device_capability is only for compatibility with "
                    "PyTorch and does not represent the actual capability of the NPU device.")


def get_device_capability(device: Any = None) -> Optional[Tuple[int, int]]:
    """As torch_npu: None on every chip (the NPU has no CUDA compute capability), unless
    ``TORCH_NPU_DEVICE_CAPABILITY`` ("major.minor") says what to answer; a warning either way."""
    text = os.environ.get("TORCH_NPU_DEVICE_CAPABILITY")
    if not text:
        warnings.warn("You can set the device capability via the environment variable "
                      f"TORCH_NPU_DEVICE_CAPABILITY. {_CAPABILITY_NOTE}")
        return None
    match = re.match(r"^(\d+)\.(\d+)$", text)
    if not match:
        warnings.warn("torch.npu.get_device_capability can't parse TORCH_NPU_DEVICE_CAPABILITY "
                      f"environment variable: {text}. Expected format is 'major.minor' where "
                      "major and minor are non-negative integers (e.g., '8.0').")
        return None
    warnings.warn(_CAPABILITY_NOTE)
    return int(match.group(1)), int(match.group(2))


config = types.SimpleNamespace(allow_internal_format=False)
# TF32-like "HF32" on Ascend 910B for matmul and convolution; the emulator computes in fp32.
matmul = types.SimpleNamespace(allow_hf32=False)
conv = types.SimpleNamespace(allow_hf32=True)

for _name, _cls in tensor_types.TYPES.items():
    globals()[_name] = _cls

from . import amp, random, utils  # noqa: E402
from .amp import is_autocast_enabled  # noqa: E402,F401
from .random import (get_rng_state, get_rng_state_all, initial_seed,  # noqa: E402,F401
                     manual_seed, manual_seed_all, seed, seed_all, set_rng_state,
                     set_rng_state_all)


def __getattr__(name: str) -> Any:
    # Asked when read, as torch_npu fills it in once the devices are known.
    if name == "default_generators":
        return random.default_generators()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# torch_npu's graph mode ended with its releases for torch 2.0; from 2.1 ``torch.npu.graph`` is
# torch_npu's NPUGraph capture, which the emulator does not have, so the module stays unseen.
if tuple(int(part) for part in torch.__version__.split(".")[:2]) < (2, 1):
    from . import graph  # noqa: E402,F401
    from .graph import (disable_graph_mode, enable_graph_mode, is_graph_mode,  # noqa: E402,F401
                        launch_graph)


def install() -> None:
    """Make this module ``torch.npu`` (and ``torch.npu.amp``), as torch_npu does."""
    register = getattr(torch, "_register_device_module", None)
    if getattr(torch, "npu", None) is not sys.modules[__name__]:
        if register is not None and not hasattr(torch, "npu"):
            register("npu", sys.modules[__name__])
        else:
            torch.npu = sys.modules[__name__]
            sys.modules["torch.npu"] = sys.modules[__name__]
    sys.modules["torch.npu.amp"] = amp
    sys.modules["torch.npu.utils"] = utils
    sys.modules["torch.npu.random"] = random
    amp.install_torch_autocast()
    torch.npu_alloc_float_status = npu_alloc_float_status
    torch.npu_get_float_status = npu_get_float_status
    torch.npu_clear_float_status = npu_clear_float_status
