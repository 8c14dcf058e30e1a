"""``torch_npu.npu``, which is ``torch.npu``, on the emulated NPU.

The functions Ascend scripts call on ``torch.npu``: devices (``utils``) and what they are
(``get_device_properties``), streams and events (``streams``), memory (``memory``), seeds and
generators (``random``), the float status, the ``torch.npu.*Tensor`` and ``*Storage`` types,
compile options, the ``matmul``/``conv`` settings, ``amp`` and ``utils``, answered by the emulator
as torch_npu answers them.
"""

# ruff: noqa: E402, F401  (imports placed after setup code, re-exports)
from __future__ import annotations

import os
import re
import sys
import types
import warnings
from typing import Any, Dict, Optional, Tuple

import torch

from .._device import devices, generators, placement, soc, tensor_types
from .._fp16 import float_status
from .._fp16 import mode as emulation
from ..utils._error_code import ErrCode, pta_error
from . import streams
from ._properties import _NPUDeviceProperties
from .memory import (
    caching_allocator_alloc,
    caching_allocator_delete,
    empty_cache,
    get_allocator_backend,
    get_per_process_memory_fraction,
    host_empty_cache,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_max_memory_cached,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
)
from .streams import Event, Stream, SyncLaunchStream  # noqa: F401
from .utils import (
    StreamContext,
    _get_device_index,
    can_device_access_peer,
    clear_npu_overflow_flag,
    current_blas_handle,
    current_device,
    current_stream,
    default_stream,
    device,
    device_count,
    device_of,
    get_npu_overflow_flag,
    get_sync_debug_mode,
    is_available,
    is_bf16_supported,
    set_device,
    set_stream,
    set_sync_debug_mode,
    stream,
    synchronize,
)

_FLOAT_STATUS_SIZE = 8

if devices.NATIVE_TYPE != "npu":
    # torch_npu 1.x: the device type inside torch, and the name scripts use.
    native_device = devices.NATIVE_TYPE
    npu_device = "npu"


def _lazy_init() -> None:
    """Initialise the NPUs (once); refused in a process forked after they were."""
    devices.lazy_init()


def _lazy_call(callback: Any) -> None:
    """Run ``callback`` now if the NPUs are initialised, else once they are."""
    devices.lazy_call(callback)


def _is_in_bad_fork() -> bool:
    """Whether this process was forked from one that had used the NPUs (torch 2.x asks before
    seeding them)."""
    return devices.in_bad_fork()


def is_initialized() -> bool:
    return devices.is_initialized() and not devices.in_bad_fork()


def init() -> None:
    devices.lazy_init()
    emulation.enable()


def _checked_index(device: Any) -> int:
    index = _get_device_index(device, optional=True)
    if not 0 <= index < devices.device_count():
        raise AssertionError("Invalid device id" + pta_error(ErrCode.VALUE))
    return index


def get_device_name(device: Any = None) -> str:
    """The chip's SoC name, as torch_npu reports it (``Ascend910A``, ``Ascend910B1``, ...):
    ``APEXNPU_SOC_VERSION`` chooses it (see ``_device.soc``)."""
    _checked_index(device)
    return soc.name()


def get_device_properties(device: Any = None) -> _NPUDeviceProperties:
    """The NPU's name, memory (the host's), cores, L2 cache and UUID."""
    index = _checked_index(device)
    devices.lazy_init()
    return _NPUDeviceProperties(index)


def utilization(device: Any = None) -> int:
    """The NPU's busy percentage: the emulated NPU is the host, which reports none."""
    _checked_index(device)
    return 0


# --- the float status ---------------------------------------------------------------------------


def npu_alloc_float_status() -> torch.Tensor:
    """A float-status buffer, as torch_npu's ``npu_alloc_float_status``."""
    return placement.put(
        torch.zeros(_FLOAT_STATUS_SIZE, dtype=torch.float32), devices.current_device()
    )


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

    def __init__(
        self, profiler_result_path: str = "./", use_e2e_profiler: bool = False, config: Any = None
    ) -> None:
        self.result_path = profiler_result_path

    def __enter__(self) -> "profile":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


def set_compile_mode(jit_compile: bool = False) -> None:
    _options["jit_compile"] = bool(jit_compile)


def _aicore_count(value: str) -> bool:
    return value.isdigit() and 1 <= int(value) <= 32


# The values torch_npu accepts for the ACL compile options it checks (others pass unchecked):
# a list of the accepted strings, or a test of the string.
_OPTION_VALUES: Dict[str, Any] = {
    "ACL_PRECISION_MODE": ["allow_fp32_to_fp16", "must_keep_origin_dtype"],
    "ACL_OP_SELECT_IMPL_MODE": ["high_performance", "high_precision"],
    "ACL_AICORE_NUM": _aicore_count,
    "ACL_OP_DEBUG_LEVEL": ["0", "1", "2", "3", "4"],
    "ACL_OP_COMPILER_CACHE_MODE": ["disable", "enable", "force"],
}
_DEPRECATED_OPTIONS = ("ACL_OP_SELECT_IMPL_MODE", "ACL_OPTYPELIST_FOR_IMPLMODE")


def set_option(option: Dict[str, Any]) -> None:
    """torch_npu's ACL options: each value is taken as its string and checked where torch_npu
    checks it (a ValueError naming what is accepted), the deprecated ones warn. The emulated
    NPU compiles nothing, so the options are only recorded."""
    if not isinstance(option, dict):
        raise TypeError(
            f"torch.npu.set_option: expected a dict, got {type(option).__name__}"
            + pta_error(ErrCode.PARAM)
        )
    for name, value in option.items():
        text = str(value)
        accepted = _OPTION_VALUES.get(name)
        ok = accepted is None or (accepted(text) if callable(accepted) else text in accepted)
        if not ok:
            what = "1 to 32" if callable(accepted) else str(accepted)
            raise ValueError(
                f"value of {name} should be in {what} but got {value}" + pta_error(ErrCode.PARAM)
            )
        if name in _DEPRECATED_OPTIONS:
            warnings.warn(
                f"{name} will be deprecated in a future version. The accuracy or performance "
                "may not be optimal when configuring this option. We do not recommend setting it."
            )
        option[name] = text
    _options.update(option)


_CAPABILITY_NOTE = (
    "The return value of get_device_capability is only for compatibility with "
    "PyTorch and does not represent the actual capability of the NPU device."
)


def get_device_capability(device: Any = None) -> Optional[Tuple[int, int]]:
    """As torch_npu: None on every chip (the NPU has no CUDA compute capability), unless
    ``TORCH_NPU_DEVICE_CAPABILITY`` ("major.minor") says what to answer; a warning either way."""
    text = os.environ.get("TORCH_NPU_DEVICE_CAPABILITY")
    if not text:
        warnings.warn(
            "You can set the device capability via the environment variable "
            f"TORCH_NPU_DEVICE_CAPABILITY. {_CAPABILITY_NOTE}"
        )
        return None
    match = re.match(r"^(\d+)\.(\d+)$", text)
    if not match:
        warnings.warn(
            "torch.npu.get_device_capability can't parse TORCH_NPU_DEVICE_CAPABILITY "
            f"environment variable: {text}. Expected format is 'major.minor' where "
            "major and minor are non-negative integers (e.g., '8.0')."
        )
        return None
    warnings.warn(_CAPABILITY_NOTE)
    return int(match.group(1)), int(match.group(2))


config = types.SimpleNamespace(allow_internal_format=False)
# TF32-like "HF32" on Ascend 910B for matmul and convolution; the emulator computes in fp32.
matmul = types.SimpleNamespace(allow_hf32=False)
conv = types.SimpleNamespace(allow_hf32=True)

for _name, _cls in tensor_types.TYPES.items():
    globals()[_name] = _cls

from . import _accelerator, aclnn, amp, memory, random, utils  # noqa: E402,F401
from ._backends import (  # noqa: E402,F401
    enable_flash_sdp,
    enable_math_sdp,
    enable_mem_efficient_sdp,
    flash_sdp_enabled,
    math_sdp_enabled,
    mem_efficient_sdp_enabled,
    preferred_linalg_library,
    sdp_kernel,
)
from ._limits import (  # noqa: E402,F401
    are_compatible_impl_enabled,
    get_device_limit,
    set_device_limit,
    set_op_timeout_ms,
    use_compatible_impl,
)
from .deterministic import (  # noqa: E402,F401
    disable_deterministic_with_backward,
    enable_deterministic_with_backward,
)
from .npurt import npurt  # noqa: E402,F401
from .amp import is_autocast_enabled  # noqa: E402,F401
from .random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)


from ._storages import make_classes as _make_storage_classes  # noqa: E402

globals().update(_make_storage_classes(__name__))  # FloatStorage, ... (torch 2.x)


def __getattr__(name: str) -> Any:
    # Asked when read, as torch_npu fills it in once the devices are known.
    if name == "default_generators":
        return random.default_generators()
    if name == "_in_bad_fork":  # torch_npu 1.x's flag
        return devices.in_bad_fork()
    if name == "_initialized":  # torch's checkpoint saves the NPUs' RNG states once it is set
        return is_initialized()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# torch_npu's graph mode ended with its releases for torch 2.0; from 2.1 ``torch.npu.graph`` is
# torch_npu's NPUGraph capture, which the emulator does not have, so the module stays unseen.
if tuple(int(part) for part in torch.__version__.split(".")[:2]) < (2, 1):
    from . import graph  # noqa: E402,F401
    from .graph import disable_graph_mode, enable_graph_mode, is_graph_mode, launch_graph


def install() -> None:
    """Make this module ``torch.npu`` (and its submodules ``torch.npu.*``), as torch_npu does;
    ``torch.Generator`` makes NPU generators, and on torch 1.x ``torch.manual_seed`` seeds the
    NPUs, as torch_npu 1.x has it."""
    register = getattr(torch, "_register_device_module", None)
    if getattr(torch, "npu", None) is not sys.modules[__name__]:
        if register is not None and not hasattr(torch, "npu"):
            register("npu", sys.modules[__name__])
        else:
            torch.npu = sys.modules[__name__]
            sys.modules["torch.npu"] = sys.modules[__name__]
    for name, module in (
        ("amp", amp),
        ("utils", utils),
        ("random", random),
        ("streams", streams),
        ("memory", memory),
    ):
        sys.modules[f"torch.npu.{name}"] = module
    amp.install_torch_autocast()
    _accelerator.install()
    generators.install()
    random.install_seeding_of_torch()
    torch.npu_alloc_float_status = npu_alloc_float_status
    torch.npu_get_float_status = npu_get_float_status
    torch.npu_clear_float_status = npu_clear_float_status


from .. import _C  # noqa: E402,F401 - torch_npu._C, as torch_npu has it once imported
