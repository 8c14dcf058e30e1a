"""Every torch function that makes a tensor on a given device accepts the emulated NPU.

The list is not kept by hand: it is every aten operator whose schema has a ``device`` argument
and that torch exposes as ``torch.<name>`` (``zeros``, ``randn``, ``arange``, ``eye``, ``full``,
the ``*_like`` functions, windows, ...), as ``torch.fft.<name>`` or as a ``Tensor.new_*``
method, plus the few makers that are not aten operators (``torch.tensor``, ``as_tensor``,
``asarray``, ``Tensor.new_tensor``). Each is wrapped so that an NPU device runs the call on the
CPU and puts the result on that NPU. A call without a device takes the device of torch 2.x's
device context when it is one of torch's constructors (``default_device``); otherwise it runs
unchanged: a new tensor goes to the current NPU only after
``torch.set_default_tensor_type(torch.npu.FloatTensor)``, and ``*_like``/``new_*`` results follow
their input through the emulation. ``pin_memory=True`` gives pinned host memory (``pinned``); an
NPU tensor is made only in the contiguous format (``memory_formats``). Named tensors (torch 1.x)
are made outside the emulation (``named_tensors``).
"""

from __future__ import annotations

import functools
import sys
import warnings
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Tuple

import torch

from .. import _wraps
from . import (
    default_device,
    device_args,
    devices,
    formats,
    generators,
    memory,
    memory_formats,
    named_tensors,
    pinned,
    placement,
    tensor_types,
    torch_device,
    torch_made,
)

# Makers torch exposes that are not aten operators, and where their device may sit positionally.
_EXTRA_TORCH_MAKERS = {"tensor": None, "as_tensor": None, "asarray": None}
# Operators handled elsewhere (Tensor.to, pinning) or not makers.
_NOT_MAKERS = {"to", "pin_memory", "is_pinned", "tensor", "as_tensor"}


def _aten_makers() -> Tuple[List[Tuple[Any, str]], List[str]]:
    """(namespace, name) of the torch functions and the Tensor methods that take a device."""
    functions: List[Tuple[Any, str]] = []
    methods: List[str] = []
    seen = set()
    for schema in torch._C._jit_get_all_schemas():
        namespace, _, name = schema.name.partition("::")
        if namespace != "aten" or name.startswith("_") or name in _NOT_MAKERS or name in seen:
            continue
        if not any(arg.name == "device" for arg in schema.arguments):
            continue
        seen.add(name)
        if name.startswith("new_") and hasattr(torch.Tensor, name):
            methods.append(name)
        elif callable(getattr(torch, name, None)) and not isinstance(getattr(torch, name), type):
            # (a class such as torch.Generator takes a device too, but stays a class)
            functions.append((torch, name))
        elif name.startswith("fft_") and callable(getattr(torch.fft, name[4:], None)):
            functions.append((torch.fft, name[4:]))
    return functions, methods


def _derived(name: str) -> bool:
    """Whether the maker's result follows an input tensor (``zeros_like``, ``new_zeros``)."""
    return name.endswith("_like") or name.startswith("new_")


def _pinning(
    args: Tuple[Any, ...], kwargs: Dict[str, Any], npu: Optional[int], where: device_args.Where
) -> Tuple[bool, Dict[str, Any]]:
    """(whether the call asks for pinned memory, kwargs without that request). Pinned memory is
    host memory: an NPU or another device refuses it, as torch does."""
    if not kwargs.get("pin_memory"):
        return False, kwargs
    if npu is not None or (
        device_args.names_a_device(args, kwargs, where)
        and torch.device(device_args.find(args, kwargs)[0]).type != "cpu"
    ):
        raise RuntimeError("Only dense CPU tensors can be pinned")
    return True, dict(kwargs, pin_memory=False)


def wrap_maker(
    original: Callable,
    what: str,
    position: Optional[int] = None,
    derived: bool = False,
    source: Optional[Callable[..., Any]] = None,
    contextual: bool = False,
) -> Callable:
    """``original`` accepting NPU devices. ``source(args)`` names the tensor a derived maker
    without a device follows when the emulation does not see it (``Tensor.new_tensor``);
    ``contextual`` makers take the device of torch's device context when the call names none."""

    @functools.wraps(original)
    def maker(*args: Any, **kwargs: Any) -> Any:
        if contextual:
            given, where = device_args.find(args, kwargs, position)
            if given is None:
                context = default_device.context_device()
                if context is not None:
                    args, kwargs = device_args.replace(
                        args, kwargs, where or ("kw", "device"), context
                    )
        npu, where, args, kwargs = device_args.to_host(args, kwargs, what, position)
        pin, kwargs = _pinning(args, kwargs, npu, where)
        if what == "torch.full":
            kwargs = _full_dtype(args, kwargs)
        if npu is not None and not derived:
            memory_formats.check_new(kwargs.get("memory_format"))
        with torch_made.script_call(), generators.making_on(npu), memory.allocation_guard(npu):
            if kwargs.get("names") is not None:
                out = named_tensors.call(original, args, kwargs)
            else:
                out = original(*args, **kwargs)
        if not isinstance(out, torch.Tensor):
            return out
        if pin:
            return pinned.pin(out.detach()).requires_grad_(out.requires_grad)
        if npu is not None:
            if what in _SHARING_MAKERS:
                out = _own_memory(out, args, kwargs, npu)
            placement.put(out, npu)
        elif device_args.names_a_device(args, kwargs, where):
            return placement.put(out, None)  # an explicit host device
        elif derived:
            if source is not None:
                placement.put(out, placement.npu_of(source(args)))
        elif tensor_types.default_is_npu():
            placement.put(out, devices.current_device())
        if (
            derived
            and not memory_formats.kept_like(kwargs.get("memory_format"))
            and placement.npu_of(out) is not None
        ):
            out = out.contiguous()  # the NPU makes it in its own (contiguous) layout
        return out

    _wraps.mark(maker, original)
    return maker


def _full_dtype(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """``torch.full``'s kwargs with the dtype its fill value implies (bool), when none is given.

    torch infers bool from a bool fill value; on torch 1.13 a dispatch mode (the emulation's)
    receives the value as a number and makes int64, so the dtype is said here."""
    fill = args[1] if len(args) > 1 else kwargs.get("fill_value")
    if isinstance(fill, bool) and kwargs.get("dtype") is None and kwargs.get("out") is None:
        return dict(kwargs, dtype=torch.bool)
    return kwargs


# Makers that return their source's memory when it is already on the host device they run on.
_SHARING_MAKERS = frozenset({"torch.as_tensor", "torch.asarray"})


def _own_memory(
    out: torch.Tensor, args: Tuple[Any, ...], kwargs: Dict[str, Any], npu: int
) -> torch.Tensor:
    """``out`` itself, or a copy when it shares memory with a source not on NPU ``npu``.

    ``as_tensor``/``asarray`` of a host tensor or a numpy array run on the host return the
    source's own memory; asked for an NPU, they copy it there, as on the NPU. Without the copy,
    the source (a host tensor) would itself become the NPU tensor, and writes to the NPU tensor
    would reach the numpy array."""
    source = args[0] if args else kwargs.get("data", kwargs.get("obj"))
    if isinstance(source, torch.Tensor):
        if placement.npu_of(source) == npu:
            return out
        shared = out is source or (out.numel() > 0 and out.data_ptr() == source.data_ptr())
        return out.clone() if shared else out
    if isinstance(source, (list, tuple, int, float, bool, complex)):
        return out  # made from Python values: new memory already
    return out.clone()  # a buffer (numpy array, bytes, DLPack capsule's owner): not shared


def _install_function(
    namespace: Any,
    name: str,
    position: Optional[int] = None,
    constructors: FrozenSet[Any] = frozenset(),
) -> None:
    original = getattr(namespace, name)
    if _wraps.is_wrapper(original):
        return
    prefix = "torch." if namespace is torch else namespace.__name__ + "."
    maker = wrap_maker(
        original, prefix + name, position, _derived(name), contextual=original in constructors
    )
    setattr(namespace, name, maker)
    _wraps.stand_for_in_torchscript(maker, original)


def _install_method(name: str, source: Optional[Callable[..., Any]] = None) -> None:
    original = getattr(torch.Tensor, name)
    if _wraps.is_wrapper(original):
        return
    setattr(
        torch.Tensor,
        name,
        wrap_maker(original, "Tensor." + name, None, derived=True, source=source),
    )


def _self(args: Tuple[Any, ...]) -> Any:
    return args[0] if args else None


def empty_with_format(
    *size: Any,
    dtype: Optional[torch.dtype] = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Optional[bool] = None,
    acl_format: int = 2,
    names: Any = None,
    base_addr_aligned_kb: Optional[int] = None,
) -> torch.Tensor:
    """``torch_npu.empty_with_format(size, *, dtype, layout, device, pin_memory, acl_format=2)``:
    an uninitialised NPU tensor in the NPU format ``acl_format`` (its values in the plain layout,
    its storage size the format's, see ``formats``). The device must be an NPU, as torch_npu's
    requires; ``base_addr_aligned_kb`` (an allocation alignment) changes nothing on the host."""
    from ..utils._error_code import ErrCode, ops_error, pta_error

    if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
        size = tuple(size[0])
    npu = device_args.npu_named(device, "torch_npu.empty_with_format")
    if npu is None:
        raise RuntimeError(
            "Expected NPU tensor, please check whether the input tensor device is "
            "correct." + pta_error(ErrCode.PARAM)
        )
    if pin_memory:
        raise RuntimeError("Only dense CPU tensors can be pinned" + ops_error(ErrCode.TYPE))
    kwargs: Dict[str, Any] = {"dtype": dtype, "layout": layout, "device": f"npu:{npu}"}
    if names is not None:
        kwargs["names"] = names
    out = torch.empty(size, **kwargs)
    formats.npu_format_cast_(out, acl_format)
    return out


def _torch_empty_with_format(*args: Any, **kwargs: Any) -> torch.Tensor:
    """torch_npu 1.x's ``torch.empty_with_format``, deprecated there for torch_npu's."""
    if not _warned:
        _warned.append(True)
        warnings.warn(
            "torch.empty_with_format is deprecated and will be removed in future "
            "version. Use torch_npu.empty_with_format instead.",
            FutureWarning,
            stacklevel=2,
        )
    return empty_with_format(*args, **kwargs)


_warned: List[bool] = []


def _install_npu_makers() -> None:
    """``torch_npu.empty_with_format``; on torch 1.x also ``torch.empty_with_format``, as
    torch_npu 1.x has it (torch_npu 2.x has only its own)."""
    package = sys.modules.get("torch_npu")
    if package is not None:
        package.empty_with_format = empty_with_format  # type: ignore[attr-defined]
    if not torch_device.NATIVE and not hasattr(torch, "empty_with_format"):
        torch.empty_with_format = _torch_empty_with_format  # type: ignore[attr-defined]


def install() -> None:
    _install_npu_makers()
    functions, methods = _aten_makers()
    constructors = default_device.constructors()  # before torch's functions are wrapped
    for namespace, name in functions:
        _install_function(namespace, name, constructors=constructors)
    for name, position in _EXTRA_TORCH_MAKERS.items():
        if hasattr(torch, name):
            _install_function(torch, name, position, constructors)
    for name in methods:
        _install_method(name)
    # Not aten operators of ``self``: the emulation cannot see what they derive from.
    _install_method("new_tensor", source=_self)
    _install_method("new", source=_self)


def wrapped_names() -> Dict[str, List[str]]:
    """What ``install`` wraps, for tests and diagnostics."""
    functions, methods = _aten_makers()
    names = [("torch." if ns is torch else ns.__name__ + ".") + n for ns, n in functions]
    names += ["torch." + n for n in _EXTRA_TORCH_MAKERS]
    return {"functions": sorted(names), "methods": sorted(methods + ["new_tensor", "new"])}
