"""Every torch function that makes a tensor on a given device accepts the emulated NPU.

The list is not kept by hand: it is every aten operator whose schema has a ``device`` argument
and that torch exposes as ``torch.<name>`` (``zeros``, ``randn``, ``arange``, ``eye``, ``full``,
the ``*_like`` functions, windows, ...), as ``torch.fft.<name>`` or as a ``Tensor.new_*``
method, plus the few makers that are not aten operators (``torch.tensor``, ``as_tensor``,
``asarray``, ``Tensor.new_tensor``). Each is wrapped so that an NPU device runs the call on the
CPU and puts the result on that NPU. A call without a device runs unchanged: a new tensor goes
to the current NPU only after ``torch.set_default_tensor_type(torch.npu.FloatTensor)``, and
``*_like``/``new_*`` results follow their input through the emulation.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from .. import _wraps
from . import device_args, devices, placement, tensor_types, torch_made

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


def wrap_maker(original: Callable, what: str, position: Optional[int] = None,
               derived: bool = False, source: Optional[Callable[..., Any]] = None) -> Callable:
    """``original`` accepting NPU devices. ``source(args)`` names the tensor a derived maker
    without a device follows when the emulation does not see it (``Tensor.new_tensor``)."""

    @functools.wraps(original)
    def maker(*args: Any, **kwargs: Any) -> Any:
        npu, where, args, kwargs = device_args.to_host(args, kwargs, what, position)
        with torch_made.script_call():
            out = original(*args, **kwargs)
        if not isinstance(out, torch.Tensor):
            return out
        if npu is not None:
            return placement.put(out, npu)
        if device_args.names_a_device(args, kwargs, where):
            return placement.put(out, None)  # an explicit host device
        if derived:
            if source is not None:
                placement.put(out, placement.npu_of(source(args)))
            return out
        if tensor_types.default_is_npu():
            placement.put(out, devices.current_device())
        return out

    _wraps.mark(maker, original)
    return maker


def _install_function(namespace: Any, name: str, position: Optional[int] = None) -> None:
    original = getattr(namespace, name)
    if _wraps.is_wrapper(original):
        return
    prefix = "torch." if namespace is torch else namespace.__name__ + "."
    maker = wrap_maker(original, prefix + name, position, _derived(name))
    setattr(namespace, name, maker)
    _wraps.stand_for_in_torchscript(maker, original)


def _install_method(name: str, source: Optional[Callable[..., Any]] = None) -> None:
    original = getattr(torch.Tensor, name)
    if _wraps.is_wrapper(original):
        return
    setattr(torch.Tensor, name,
            wrap_maker(original, "Tensor." + name, None, derived=True, source=source))


def _self(args: Tuple[Any, ...]) -> Any:
    return args[0] if args else None


def install() -> None:
    functions, methods = _aten_makers()
    for namespace, name in functions:
        _install_function(namespace, name)
    for name, position in _EXTRA_TORCH_MAKERS.items():
        if hasattr(torch, name):
            _install_function(torch, name, position)
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
