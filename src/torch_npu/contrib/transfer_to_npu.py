"""Ascend's automatic migration of CUDA scripts: importing this module makes CUDA code run on the
(emulated) NPU unchanged.

After ``import torch_npu.contrib.transfer_to_npu``: "cuda"/"cuda:N" devices and
``torch.device("cuda", N)`` name NPUs wherever a device is taken (makers, ``to``, modules,
``torch.load``'s map_location, DDP's device ids, ``torch.get_device_module``, ``torch.Generator``,
``torch.Event``); ``.cuda()`` is ``.npu()`` and ``Tensor.is_cuda`` is ``is_npu``;
``torch.cuda.*`` answers for the NPUs (every name ``torch.npu`` has, ``torch.cuda.amp`` and its
modules among them); ``torch.autocast("cuda")`` and torch 2.x's per-device autocast state
(``torch.is_autocast_enabled()``, ``get_autocast_dtype``, ``custom_fwd(device_type="cuda")``)
are the NPU's; the "nccl" backend of ``torch.distributed`` (also as "cuda:nccl") is hccl; and
``torch.profiler.profile`` is ``torch_npu.profiler.profile``.

Most of this the emulator does where devices are parsed (``devices.cuda_means_npu``); the
wrappers here are for the places that parse devices themselves. The module's helpers have
torch_npu's names, as tools written for real torch_npu call them: ``_wrapper_cuda``,
``_wrapper_hccl``, ``_wrapper_profiler``, ``_replace_cuda_to_npu_in_dict``,
``_del_nccl_device_backend_map``, and ``_wrapper_libraries_func`` with the optional
``apis_config.json`` beside this file (``{package: {"version": min, "apis": {qualified name:
"function" | "method"}}}``: those library functions see torch's own ``torch.cuda.is_available``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import json
import logging
import os
import re
import sys
import types
from typing import Any, Callable, Dict, List, Optional

import torch
import torch.distributed as dist

import torch_npu  # noqa: F401 - the emulated NPU first
from .. import _wraps
from .._device import devices
from ..npu.amp import autocast_state

# torch's own answer, before torch.cuda answers for the NPU (libraries may need it).
is_available = torch.cuda.is_available
config_path = os.path.join(os.path.dirname(os.path.realpath(__file__)), "apis_config.json")

_MAX_CONFIG_BYTES = 10 * 1024**2
_MAX_CONFIG_NAME = 200
_CUDA_DEVICE = re.compile(r"^cuda(:\d+)?$")
_BACKEND = re.compile(r"^[\w:, ]*$")
_DEVICE_KWARGS = ("device", "device_type", "map_location", "device_id")


# --- mapping arguments --------------------------------------------------------------------------


def _npu_device(value: Any, replace_int: bool) -> Any:
    """``value`` with a CUDA device it names turned into the same NPU; anything else as is."""
    if isinstance(value, str) and _CUDA_DEVICE.match(value.strip()):
        return "npu" + value.strip()[4:]
    if isinstance(value, torch.device) and value.type == "cuda":
        return torch.device("npu" if value.index is None else f"npu:{value.index}")
    if replace_int and isinstance(value, int) and not isinstance(value, bool):
        return f"npu:{value}"
    if isinstance(value, dict):
        return _replace_cuda_to_npu_in_dict(value)
    return value


def _replace_cuda_to_npu_in_dict(device_dict: Dict[Any, Any]) -> Dict[Any, Any]:
    """A copy of ``device_dict`` (a map_location, say) with "cuda" read as "npu" in its string
    keys and values."""

    def swap(x: Any) -> Any:
        return x.replace("cuda", "npu") if isinstance(x, str) else x

    return {swap(key): swap(value) for key, value in device_dict.items()}


def _replace_cuda_to_npu_in_list(args_list: List[Any], replace_int: bool) -> List[Any]:
    return [_npu_device(arg, replace_int) for arg in args_list]


def _replace_cuda_to_npu_in_kwargs(kwargs: Dict[str, Any], device_arg: str, device: Any) -> None:
    kwargs[device_arg] = _npu_device(device, True)


def _wrapper_cuda(fn: Callable) -> Callable:
    """``fn`` taking CUDA devices for NPUs: in its arguments, in the keyword arguments
    ``device``, ``device_type``, ``map_location`` and ``device_id`` (an int there names an NPU,
    and positionally too for ``to``/``to_empty``), and in ``device_ids`` lists and tuples."""
    replace_int = getattr(fn, "__name__", "") in ("to", "to_empty")

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        args = tuple(_replace_cuda_to_npu_in_list(list(args), replace_int))
        for name in _DEVICE_KWARGS:
            if kwargs.get(name) is not None:
                _replace_cuda_to_npu_in_kwargs(kwargs, name, kwargs[name])
        ids = kwargs.get("device_ids")
        if isinstance(ids, (list, tuple)):
            kwargs["device_ids"] = type(ids)(_replace_cuda_to_npu_in_list(list(ids), replace_int))
        return fn(*args, **kwargs)

    return _wraps.mark(call, fn)


def _hccl_backend(backend: Any) -> Any:
    """A backend spec with NCCL read as HCCL and CUDA as the NPU: "nccl" -> "hccl",
    "cuda:nccl" -> "npu:hccl", "cpu:gloo,cuda:nccl" -> "cpu:gloo,npu:hccl"."""
    if not isinstance(backend, str) or not _BACKEND.match(backend):
        return backend
    return re.sub(r"\bcuda\b", "npu", re.sub(r"\bnccl\b", "hccl", str(backend)))


def _wrapper_hccl(fn: Callable) -> Callable:
    """``fn`` (``init_process_group``, ``new_group``) taking the "nccl" backend for hccl."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        args = tuple(_hccl_backend(arg) for arg in args)
        if "backend" in kwargs:
            kwargs["backend"] = _hccl_backend(kwargs["backend"])
        return fn(*args, **kwargs)

    return _wraps.mark(call, fn)


def _wrapper_profiler(fn: Callable) -> Callable:
    """``torch.profiler.profile`` without a CUDA ``experimental_config`` (only torch_npu's own
    ``_ExperimentalConfig`` reaches the NPU's profiler), with a warning when one is dropped."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        config = kwargs.get("experimental_config")
        if "experimental_config" in kwargs and not isinstance(
            config, torch_npu.profiler._ExperimentalConfig
        ):
            logging.warning(
                "The parameter experimental_config of torch.profiler.profile has "
                "been removed by transfer_to_npu because it can only be used with "
                "CUDA. Please manually modify the code to use an "
                "experimental_config parameter that supports NPU."
            )
            del kwargs["experimental_config"]
        return fn(*args, **kwargs)

    return call


# --- libraries that must see torch's own torch.cuda.is_available ------------------------------


def _check_input_file_valid(file_path: str) -> bool:
    """Whether ``file_path`` is a config worth reading: no symlink, an existing readable file
    with a name of at most 200 characters and at most 10 MiB."""
    if os.path.islink(os.path.abspath(file_path)):
        return False
    real = os.path.realpath(file_path)
    if not os.path.exists(real) or not os.access(real, os.R_OK):
        return False
    if len(os.path.basename(real)) > _MAX_CONFIG_NAME:
        return False
    return os.path.getsize(real) <= _MAX_CONFIG_BYTES


def _load_json_file(file_path: str) -> Dict[str, Any]:
    """The JSON object in ``file_path``, or {} when the file is not valid, not JSON or not an
    object."""
    if not _check_input_file_valid(file_path):
        return {}
    try:
        with open(file_path, "r") as file:
            loaded = json.load(file)
    except json.JSONDecodeError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _wrapper_libraries_func(fn: Callable) -> Callable:
    """``fn`` running with torch's own ``torch.cuda.is_available`` (no CUDA on an NPU host)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        patched = torch.cuda.is_available
        torch.cuda.is_available = is_available
        try:
            return fn(*args, **kwargs)
        finally:
            torch.cuda.is_available = patched

    return call


def _version_at_least(current: str, minimum: str) -> bool:
    def parts(text: str) -> List[int]:
        return [int(p) for p in re.findall(r"\d+", text)[:3]]

    return parts(current) >= parts(minimum)


def _owner_and_name(qualified: str, kind: str) -> Optional[List[Any]]:
    """The object holding ``qualified`` and its attribute name: a module for a "function", a
    class for a "method" (``module.Class.method``)."""
    try:
        if kind == "function":
            module, _, name = qualified.rpartition(".")
            return [importlib.import_module(module), name]
        if kind == "method":
            module, cls, name = qualified.rsplit(".", 2)
            return [getattr(importlib.import_module(module), cls), name]
    except (ImportError, AttributeError, ValueError):
        return None
    return None


def _do_wrapper_libraries_func(config: Dict[str, Any]) -> None:
    for package, entry in config.items():
        try:
            installed = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
        if not isinstance(entry, dict) or not entry.get("version") or not entry.get("apis"):
            continue
        if not _version_at_least(installed, str(entry["version"])):
            continue
        for qualified, kind in entry["apis"].items():
            found = _owner_and_name(qualified, kind)
            if found and getattr(found[0], found[1], None) is not None:
                setattr(found[0], found[1], _wrapper_libraries_func(getattr(*found)))


# --- torch.distributed ----------------------------------------------------------------------------


def _del_nccl_device_backend_map() -> None:
    """Forget torch's default backend for CUDA tensors (nccl): CUDA is the NPU now, whose
    default (hccl) torch finds under "npu"."""
    backend = torch.distributed.Backend
    if hasattr(backend, "default_device_backend_map"):
        backend.default_device_backend_map.pop("cuda", None)


def _process_group_hccl() -> Any:
    c10d = getattr(getattr(torch_npu, "_C", None), "_distributed_c10d", None)
    return getattr(c10d, "ProcessGroupHCCL", None) or getattr(
        torch_npu.distributed, "ProcessGroupHCCL", None
    )


def _patch_distributed() -> None:
    c10d = dist.distributed_c10d
    dist.init_process_group = _wrapper_hccl(_wrapper_cuda(dist.init_process_group))
    if hasattr(c10d, "_new_group_with_tag"):  # torch 2.x: new_group and friends come here
        c10d._new_group_with_tag = _wrapper_hccl(c10d._new_group_with_tag)
    else:
        dist.new_group = _wrapper_hccl(dist.new_group)
    dist.is_nccl_available = getattr(dist, "is_hccl_available", lambda: True)
    hccl_group = _process_group_hccl()
    if hccl_group is not None:
        dist.ProcessGroupNCCL = c10d.ProcessGroupNCCL = hccl_group
    if hasattr(dist.ProcessGroup, "_get_backend"):
        dist.ProcessGroup._get_backend = _wrapper_cuda(dist.ProcessGroup._get_backend)
    if hasattr(dist, "init_device_mesh"):
        _del_nccl_device_backend_map()
        import torch.distributed.device_mesh as mesh

        mesh.init_device_mesh = _wrapper_cuda(mesh.init_device_mesh)
        dist.init_device_mesh = mesh.init_device_mesh
        mesh.DeviceMesh.__init__ = _wrapper_cuda(mesh.DeviceMesh.__init__)


# --- torch.cuda is the NPU ------------------------------------------------------------------------

_NOT_CUDA = {"install", "graph"}  # the emulator's installer; torch_npu 1.x's graph mode


def _npu_names() -> Dict[str, Any]:
    """What ``torch.npu`` offers as its API: its functions, classes, tensor types, settings and
    submodules (not the modules it merely imports)."""
    npu = torch.npu
    names: Dict[str, Any] = {}
    for name, value in vars(npu).items():
        if name.startswith("_") or name in _NOT_CUDA:
            continue
        if isinstance(value, types.ModuleType):
            if value.__name__.startswith(npu.__name__ + "."):
                names[name] = value
        elif str(getattr(value, "__module__", "") or "").startswith(
            ("torch_npu", "torch.npu")
        ) or isinstance(value, types.SimpleNamespace):
            names[name] = value
    names["default_generators"] = npu.default_generators
    return names


def _nvtx() -> types.ModuleType:
    """NVTX ranges mark profiles on a GPU; on the NPU they mark nothing."""
    module = types.ModuleType("torch.cuda.nvtx")
    module.range_push = lambda msg: 0
    module.range_pop = lambda: 0
    module.mark = lambda msg: None

    class range:  # noqa: N801 - torch.cuda.nvtx.range is a context manager
        def __init__(self, msg: str, *args: Any, **kwargs: Any) -> None:
            pass

        def __enter__(self) -> None:
            pass

        def __exit__(self, *exc: Any) -> None:
            pass

    module.range = range
    return module


_OWN_MODULES = ("amp", "random")  # torch.cuda's submodules that are the NPU's entirely
_PRIVATE_NAMES = ("_record_memory_history", "_snapshot", "_dump_snapshot")  # scripts call them


def _merge_module(cuda_module: types.ModuleType, npu_module: types.ModuleType) -> None:
    """A submodule of torch.cuda (``memory``, ``streams``, ...) keeps its other names; those the
    NPU's has too answer for the NPU."""
    for name, value in vars(npu_module).items():
        if (
            (name.startswith("_") and name not in _PRIVATE_NAMES)
            or isinstance(value, types.ModuleType)
            or not hasattr(cuda_module, name)
        ):
            continue
        if str(getattr(value, "__module__", "") or "").startswith(("torch_npu", "torch.npu")):
            setattr(cuda_module, name, value)


def _patch_cuda() -> None:
    for name, value in _npu_names().items():
        cuda_module = getattr(torch.cuda, name, None)
        if (
            isinstance(value, types.ModuleType)
            and isinstance(cuda_module, types.ModuleType)
            and name not in _OWN_MODULES
        ):
            _merge_module(cuda_module, value)
        else:
            setattr(torch.cuda, name, value)
    amp = torch.npu.amp
    sys.modules["torch.cuda.amp"] = amp
    for name in ("autocast_mode", "common", "grad_scaler"):
        sys.modules["torch.cuda.amp." + name] = getattr(amp, name)
    sys.modules["torch.cuda.random"] = torch.npu.random
    # As torch_npu: the NPU computes no float64, so CUDA scripts' doubles become floats.
    torch.cuda.DoubleTensor = torch.npu.FloatTensor
    torch.cuda.nvtx = _nvtx()
    torch.Tensor.cuda = torch.Tensor.npu
    torch.Tensor.is_cuda = torch.Tensor.is_npu
    torch.nn.Module.cuda = torch.nn.Module.npu
    host_empty_cache = getattr(getattr(torch_npu, "_C", None), "_npu_hostEmptyCache", None)
    if host_empty_cache is not None:
        torch._C._host_emptyCache = host_empty_cache
    if hasattr(torch.npu, "NPUGraph"):
        torch.cuda.CUDAGraph = torch.npu.NPUGraph


class _ProxyType(type):
    """The type of a stand-in for a torch class taking a device (``torch.Generator``,
    ``torch.Event``): objects of the torch class are instances of the stand-in."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls.__mro__[1])

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, cls.__mro__[1])


def _device_taking(original: Any) -> Any:
    """A stand-in for ``original`` whose constructor reads a CUDA device as the NPU and makes an
    ``original`` (a class stays a class: ``isinstance`` and ``issubclass`` hold as for it)."""
    if not isinstance(original, type):
        return _wrapper_cuda(original)

    class Proxy(original, metaclass=type("_Proxy", (_ProxyType, type(original)), {})):
        def __new__(cls, *args: Any, **kwargs: Any):
            args = tuple(_replace_cuda_to_npu_in_list(list(args), False))
            if kwargs.get("device") is not None:
                _replace_cuda_to_npu_in_kwargs(kwargs, "device", kwargs["device"])
            return original(*args, **kwargs)

    Proxy.__name__ = Proxy.__qualname__ = original.__name__
    Proxy.__module__ = original.__module__
    Proxy.__doc__ = original.__doc__
    return Proxy


def _patch_device_parsers() -> None:
    """The torch entry points that read a device themselves."""
    torch.Generator = _device_taking(torch.Generator)
    if hasattr(torch, "Event"):
        torch.Event = _device_taking(torch.Event)
    if hasattr(torch, "get_device_module"):
        torch.get_device_module = _wrapper_cuda(torch.get_device_module)
    kernel = getattr(torch.autograd.profiler_util, "Kernel", None)
    if kernel is not None:
        kernel.__new__ = _wrapper_cuda(kernel.__new__)
    try:
        import torch.utils.cpp_extension as cpp_extension
    except ImportError:
        cpp_extension = None
    if cpp_extension is not None and hasattr(cpp_extension, "include_paths"):
        cpp_extension.include_paths = _wrapper_cuda(cpp_extension.include_paths)
    if hasattr(torch._utils, "_get_available_device_type"):
        torch._utils._get_available_device_type = lambda: "npu"


# --- autocast -------------------------------------------------------------------------------------


def _npu_device_type(device_type: Any) -> Any:
    if device_type is None:
        return autocast_state.DEVICE
    return device_type.replace("cuda", "npu") if isinstance(device_type, str) else device_type


def _patch_autocast() -> None:
    """torch 2.x: "cuda" (and no device at all) in torch's per-device autocast calls is the NPU.
    (torch 1.x keeps NPU autocast in the GPU's slot already, and its ``torch.autocast`` takes
    "cuda" for the NPU once ``cuda_means_npu`` is set.)"""
    if not autocast_state.PER_DEVICE:
        return
    cls = torch.amp.autocast_mode.autocast
    cls.__init__ = _wrapper_cuda(cls.__init__)
    is_enabled, set_enabled = torch.is_autocast_enabled, torch.set_autocast_enabled

    @functools.wraps(is_enabled)
    def is_autocast_enabled(device_type: Optional[str] = None) -> bool:
        return is_enabled(_npu_device_type(device_type))

    @functools.wraps(set_enabled)
    def set_autocast_enabled(*args: Any, **kwargs: Any) -> None:
        if len(args) + len(kwargs) == 1:  # the old form: set_autocast_enabled(enabled)
            return set_enabled(autocast_state.DEVICE, *args, *kwargs.values())
        if args:
            args = (_npu_device_type(args[0]),) + args[1:]
        if "device_type" in kwargs:
            kwargs["device_type"] = _npu_device_type(kwargs["device_type"])
        return set_enabled(*args, **kwargs)

    torch.is_autocast_enabled = is_autocast_enabled
    torch.set_autocast_enabled = set_autocast_enabled
    torch.get_autocast_dtype = _wrapper_cuda(torch.get_autocast_dtype)
    torch.set_autocast_dtype = _wrapper_cuda(torch.set_autocast_dtype)
    torch.get_autocast_gpu_dtype = autocast_state.get_autocast_dtype
    torch.set_autocast_gpu_dtype = autocast_state.set_autocast_dtype
    torch.amp.custom_fwd = _wrapper_cuda(torch.amp.custom_fwd)
    torch.amp.custom_bwd = _wrapper_cuda(torch.amp.custom_bwd)


def _patch_profiler() -> None:
    profiler = torch_npu.profiler
    torch.profiler.profile = _wrapper_profiler(profiler.profile)
    torch.profiler.schedule = profiler.schedule
    torch.profiler.tensorboard_trace_handler = profiler.tensorboard_trace_handler


def _install() -> None:
    if devices.cuda_means_npu:
        return
    devices.cuda_means_npu = True
    _patch_cuda()
    _patch_device_parsers()
    _patch_autocast()
    _patch_profiler()
    if dist.is_available():
        _patch_distributed()
    _do_wrapper_libraries_func(_load_json_file(config_path))


_install()
