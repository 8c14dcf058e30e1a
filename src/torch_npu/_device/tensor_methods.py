"""The NPU side of ``torch.Tensor``, ``torch.nn.Parameter`` and ``torch.nn.Module`` on the
emulated NPU.

``npu()``, ``to("npu:N")`` and ``cpu()`` move tensors between the host and the NPUs as torch does
between devices: a tensor that changes device is a new tensor (a copy), one already there is
returned as it is. ``is_npu``, ``device`` (``npu:N``) and ``type()``
("torch.npu.HalfTensor") report the NPU; ``numpy()`` of an NPU tensor is refused as on the NPU,
and so are ``apply_``, ``map_`` and ``map2_``, which torch runs on CPU tensors only.
``type_as(other)`` takes ``other``'s device with its dtype, as torch's does. Modules move in
place: their parameters and buffers are put on the NPU. Pinning gives host memory from the pinned
cache (``pinned``), and so does a non-blocking copy from an NPU to the host, as torch_npu's; an
NPU tensor is never pinned. ``to`` and ``contiguous`` refuse the memory formats torch_npu refuses
(``memory_formats``); ``storage()``, ``untyped_storage()`` and ``storage_offset()`` report a
re-pointed tensor's own storage (``own_storage``).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import torch

from .._fp16 import mode as emulation
from . import (
    device_args,
    devices,
    formats,
    memory_formats,
    named_tensors,
    own_storage,
    pinned,
    placement,
    streams,
    tensor_types,
)
from .devices import NpuDevice
from . import lazy_params, torch_device
from .torch_device import TorchDevice

_TensorBase = torch._C._TensorBase
_KEEP = object()  # the call names no device: the result stays where torch's rules put it
_NPUS: Dict[int, Any] = {}


def npu_device(index: int) -> Any:
    """The (shared, immutable) ``torch.device`` of NPU ``index``: torch's own on torch 2.x, an
    NpuDevice on torch 1.13."""
    dev = _NPUS.get(index)
    if dev is None:
        dev = _NPUS[index] = TorchDevice("npu", index) if torch_device.NATIVE else NpuDevice(index)
    return dev


def _device_like(x: Any) -> bool:
    return isinstance(x, (str, TorchDevice, NpuDevice)) or (
        isinstance(x, int) and not isinstance(x, bool)
    )


def target(args: Tuple[Any, ...], kwargs: Dict[str, Any], what: str):
    """(where a ``to(...)``-style call moves a tensor: an NPU index, None for the host or another
    device, or _KEEP; the args with the CPU for an NPU device)."""
    if args and isinstance(args[0], torch.Tensor):  # to(other)
        return placement.npu_of(args[0]), args, kwargs
    position = 0 if args and _device_like(args[0]) else None
    npu, where, args, kwargs = device_args.to_host(args, kwargs, what, position)
    if npu is not None:
        return npu, args, kwargs
    if device_args.names_a_device(args, kwargs, where):
        return None, args, kwargs
    return _KEEP, args, kwargs


class _Transfer(torch.autograd.Function):
    """A move between devices that autograd sees: the gradient goes back to the source's
    device and dtype, as torch's own device copies do."""

    @staticmethod
    def forward(ctx, source, index, convert):
        ctx.source_npu = placement.npu_of(source)
        ctx.source_dtype = source.dtype
        out = convert(source)
        if out is source:
            out = _copy(source)
        return _moved(out, index)

    @staticmethod
    def backward(ctx, grad):
        back = grad.to(ctx.source_dtype)
        if back is grad:
            back = grad.detach()
        return placement.put(back, ctx.source_npu), None, None


def transfer(
    source: torch.Tensor, index: Optional[int], convert: Callable[[torch.Tensor], torch.Tensor]
) -> torch.Tensor:
    """``convert(source)`` (torch's own call) with the result on ``index`` (None: the host). A
    tensor that changes device is a new tensor, as it is on the NPU."""
    if placement.npu_of(source) == index:
        return convert(source)
    if source.requires_grad and torch.is_grad_enabled():
        return _Transfer.apply(source, index, convert)
    out = convert(source)
    if out is source:
        out = _copy(source)
    return _moved(out, index)


def _copy(source: torch.Tensor) -> torch.Tensor:
    """A copy of ``source`` for another device as torch's ``_to_copy`` makes it, strides kept
    when ``source`` is non-overlapping and dense (a copy between devices is not an NPU
    operation's new output, which would be contiguous)."""
    if source.layout != torch.strided:
        return source.clone()  # sparse: its indices and values copied (no memory format)
    out = torch.empty_like(source, memory_format=torch.preserve_format)
    out.copy_(source)
    return out


def _moved(out: torch.Tensor, index: Optional[int]) -> torch.Tensor:
    """``out``, a copy made for another device, put on NPU ``index`` (None: the host, where it
    is in ND)."""
    return placement.put(out if index is not None else formats.drop(out), index)


_modes_enabled = getattr(torch._C, "_is_torch_function_mode_enabled", lambda: False)
# torch 1.13 pauses the torch-function modes with this; torch 2.x's DisableTorchFunction does.
_no_function_modes = getattr(
    torch.overrides, "_no_torch_function_mode", torch._C.DisableTorchFunction
)


def _torch_own(method: Callable) -> Callable:
    """torch's own ``method``, called without torch-function modes (autocast's): a mode would
    send the call to its public API, which is the override here, and run it twice."""

    def call(*args: Any, **kwargs: Any) -> Any:
        if not _modes_enabled():
            return method(*args, **kwargs)
        with _no_function_modes():
            return method(*args, **kwargs)

    return call


_base_to = _torch_own(_TensorBase.to)
_base_cpu = _torch_own(_TensorBase.cpu)
_base_type = _torch_own(_TensorBase.type)
_base_numpy = _torch_own(_TensorBase.numpy)
_base_apply_ = _torch_own(_TensorBase.apply_)
_base_map_ = _torch_own(_TensorBase.map_)
_base_map2_ = _torch_own(_TensorBase.map2_)
_base_device = _TensorBase.device
_base_data = _TensorBase.data
_base_is_cpu = _TensorBase.is_cpu
_base_get_device = _TensorBase.get_device
_base_record_stream = _torch_own(_TensorBase.record_stream)
_base_contiguous = _torch_own(_TensorBase.contiguous)


def _check_format(
    self: torch.Tensor, where: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]
) -> None:
    """Refuse a copy that makes or moves an NPU tensor into a format torch_npu refuses; a ``to``
    that returns the tensor itself (same place, dtype and format) is no copy."""
    memory_format = kwargs.get("memory_format")
    if memory_format in (None, torch.preserve_format):
        return
    source = placement.npu_of(self)
    if source is None and (where is _KEEP or where is None):
        return  # host to host: torch's business
    dtype = torch._C._nn._parse_to(*args, **kwargs)[1]
    moves = not (where is _KEEP or where == source) or (dtype is not None and dtype != self.dtype)
    if not moves and not kwargs.get("copy") and self.is_contiguous(memory_format=memory_format):
        return
    if source is None:
        memory_formats.check_new(memory_format)  # the NPU allocates the copy
    else:
        memory_formats.check_copy(memory_format)


def _lazy_to(self: torch.Tensor, where: Any, args: Any, kwargs: Any) -> torch.Tensor:
    """``to`` of a LazyModule's uninitialized tensor (``where`` as ``target`` gives it): one of
    its class where the call says, or itself when that changes nothing (torch would refuse the
    emulator's ``to``, which is not on its list)."""
    device, dtype = torch._C._nn._parse_to(*args, **kwargs)[:2]
    index = placement.npu_of(self)
    host = _base_device.__get__(self)
    if where is _KEEP:
        where = index
        device = npu_device(index) if index is not None else host
    elif where is not None:
        device = npu_device(where)
    stays = where == index if where is not None else index is None and device == host
    if stays and dtype in (None, self.dtype):
        return self
    return lazy_params.converted(self, device, dtype)


def tensor_to(self: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    where, args, kwargs = target(args, kwargs, "Tensor.to")
    if lazy_params.is_lazy(self):
        return _lazy_to(self, where, args, kwargs)
    if "memory_format" in kwargs:
        _check_format(self, where, args, kwargs)
    if where is _KEEP:
        return _base_to(self, *args, **kwargs)
    out = transfer(self, where, lambda t: _base_to(t, *args, **kwargs))
    came_from, went_to = placement.npu_of(self), placement.npu_of(out)
    if (
        came_from != went_to
        and (came_from is None or went_to is None)
        and out is not self
        and torch._C._nn._parse_to(*args, **kwargs)[2]
    ):
        if went_to is None and out.layout == torch.strided:
            out = pinned.pin(out)  # torch_npu copies to pinned memory when it does not block
        # The copy's time on the link starts when the host has made it, as the NPU's DMA would.
        npu = went_to if came_from is None else came_from
        streams.copy_in_flight(npu, streams.current_id(npu), out.numel() * out.element_size())
    return out


def tensor_cpu(self: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    if lazy_params.is_lazy(self):
        return _lazy_to(self, None, (torch.device("cpu"),), {})
    return transfer(self, None, lambda t: _base_cpu(t, *args, **kwargs))


def _npu_named(device: Any, what: str) -> int:
    """The NPU index ``npu(device)`` names (None: the current NPU); another device type is
    refused as torch_npu's generated ``npu`` methods refuse it."""
    if (
        isinstance(device, (str, TorchDevice, NpuDevice))
        and devices.npu_index(device, what) is None
    ):
        raise RuntimeError("Invalid device, must be npu device")
    return devices.index_of(device, what)


def tensor_npu(
    self: torch.Tensor,
    device: Any = None,
    non_blocking: bool = False,
    memory_format: torch.memory_format = torch.preserve_format,
) -> torch.Tensor:
    """``Tensor.npu(device=None)``: this tensor on the current (or the given) NPU."""
    index = _npu_named(device, "Tensor.npu")
    emulation.enable()
    return tensor_to(
        self, npu_device(index), non_blocking=non_blocking, memory_format=memory_format
    )


def tensor_type(
    self: torch.Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any
) -> Any:
    index = placement.npu_of(self)
    if dtype is None:
        name = _base_type(self)
        return name if index is None else tensor_types.npu_type_name(name)
    npu_dtype = tensor_types.npu_dtype(dtype)
    if npu_dtype is not None:
        where = devices.current_device() if index is None else index
        return tensor_to(self, npu_device(where), npu_dtype, non_blocking=non_blocking)
    if isinstance(dtype, torch.dtype):  # a dtype keeps the device
        return _base_type(self, dtype, non_blocking, **kwargs)
    # A host type name moves the tensor to the host.
    return transfer(self, None, lambda t: _base_type(t, dtype, non_blocking, **kwargs))


def tensor_numpy(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
    if placement.npu_of(self) is not None:
        raise TypeError(
            f"can't convert {self.device} device type tensor to numpy. Use "
            "Tensor.cpu() to copy the tensor to host memory first."
        )
    return _base_numpy(self, *args, **kwargs)


def _host_only(name: str, self: torch.Tensor, others: Tuple[Any, ...], labels: Tuple[str, ...]):
    """Refuse ``name`` (``apply_``, ``map_``, ``map2_``: Python callables run element by element)
    as torch does for a tensor off the CPU: its operands must be of ``self``'s type, and ``self``
    on the host."""
    for other, label in zip(others, labels):
        if isinstance(other, torch.Tensor) and placement.npu_of(other) != placement.npu_of(self):
            raise TypeError(
                f"{name}: expected {tensor_type(self)} for {label} (got {tensor_type(other)})"
            )
    if placement.npu_of(self) is not None:
        raise TypeError(f"{name} is only implemented on CPU tensors")


def tensor_apply_(self: torch.Tensor, callable: Any) -> torch.Tensor:
    _host_only("apply_", self, (), ())
    return _base_apply_(self, callable)


def tensor_map_(self: torch.Tensor, tensor: Any, callable: Any) -> torch.Tensor:
    _host_only("map_", self, (tensor,), ("'other'",))
    return _base_map_(self, tensor, callable)


def tensor_map2_(self: torch.Tensor, x: Any, y: Any, callable: Any) -> torch.Tensor:
    _host_only("map2_", self, (x, y), ("argument 'x'", "argument 'y'"))
    return _base_map2_(self, x, y, callable)


def tensor_type_as(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """This tensor with ``other``'s dtype on ``other``'s device (itself when it has both)."""
    return tensor_to(self, other)


def tensor_pin_memory(self: torch.Tensor, device: Any = None) -> torch.Tensor:
    """This host tensor in pinned memory: itself when it is there already, else a copy."""
    if placement.npu_of(self) is not None:
        raise RuntimeError(f"cannot pin '{tensor_type(self)}' only dense CPU tensors can be pinned")
    if pinned.is_pinned(self):
        return self
    return pinned.pin(self)


def tensor_is_pinned(self: torch.Tensor, device: Any = None) -> bool:
    """Whether this is a host tensor in pinned memory; an NPU tensor never is."""
    return placement.npu_of(self) is None and pinned.is_pinned(self)


def tensor_contiguous(
    self: torch.Tensor, memory_format: torch.memory_format = torch.contiguous_format
) -> torch.Tensor:
    if memory_format != torch.contiguous_format and placement.npu_of(self) is not None:
        memory_formats.check_contiguous(self, memory_format)
        if self.is_contiguous():
            return self  # (torch refuses preserve_format, which the NPU takes)
    return _base_contiguous(self, memory_format=memory_format)


def tensor_record_stream(self: torch.Tensor, stream: Any) -> None:
    if getattr(stream, "is_emulated_npu_stream", False):
        return  # the emulated NPU runs in order: nothing to keep alive
    _base_record_stream(self, stream)


def _get_device(self: torch.Tensor) -> Any:
    index = placement.npu_of(self)
    return _base_device.__get__(self) if index is None else npu_device(index)


def tensor_get_device(self: torch.Tensor) -> int:
    """``Tensor.get_device()``: an NPU tensor's index, as torch_npu gives it (-1 on the host)."""
    index = placement.npu_of(self)
    return _base_get_device(self) if index is None else index


def _get_is_npu(self: torch.Tensor) -> bool:
    return placement.npu_of(self) is not None


def _get_is_cpu(self: torch.Tensor) -> bool:
    return placement.npu_of(self) is None and _base_is_cpu.__get__(self)


def _get_data(self: torch.Tensor) -> torch.Tensor:
    if lazy_params.is_lazy(self):
        return lazy_params.data_of(self, _base_data)
    data = _base_data.__get__(self)
    index = placement.npu_of(self)
    return data if index is None else placement.put(data, index)


def _set_data(self: torch.Tensor, value: torch.Tensor) -> None:
    _base_data.__set__(self, value)
    # A LazyModule's tensor refuses the emulator's functions (materialize sets its data before
    # it becomes a Parameter): they read it as a plain tensor.
    with lazy_params.as_plain(self):
        placement.put(self, placement.npu_of(value))
        formats.follow_data(self, value)
        own_storage.forget(self)


_base_parameter_new = torch.nn.Parameter.__new__


def _parameter_new(cls, data: Optional[torch.Tensor] = None, requires_grad: bool = True):
    param = _base_parameter_new(cls, data, requires_grad)
    if data is not None:
        placement.put(param, placement.npu_of(data))
    return param


_base_module_to = torch.nn.Module.to


def module_to(self: torch.nn.Module, *args: Any, **kwargs: Any) -> torch.nn.Module:
    where, host_args, host_kwargs = target(args, kwargs, "Module.to")
    if where is _KEEP or where is None:
        return _base_module_to(self, *host_args, **host_kwargs)
    _, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*host_args, **host_kwargs)
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise TypeError(
            "nn.Module.to only accepts floating point or complex dtypes, but got "
            f"desired dtype={dtype}"
        )
    device = npu_device(where)

    def convert(t: torch.Tensor) -> torch.Tensor:
        t_dtype = dtype if t.is_floating_point() or t.is_complex() else None
        if memory_format is not None and t.dim() in (4, 5):
            return tensor_to(t, device, t_dtype, non_blocking, memory_format=memory_format)
        return tensor_to(t, device, t_dtype, non_blocking)

    emulation.enable()
    return self._apply(convert)


def module_npu(self: torch.nn.Module, device: Any = None) -> torch.nn.Module:
    """``Module.npu(device=None)``: the module, its parameters and buffers on the NPU."""
    return module_to(self, npu_device(_npu_named(device, "Module.npu")))


def install() -> None:
    if getattr(torch.Tensor, "npu", None) is tensor_npu:
        return
    methods = [
        ("to", tensor_to),
        ("cpu", tensor_cpu),
        ("npu", tensor_npu),
        ("type", tensor_type),
        ("type_as", tensor_type_as),
        ("numpy", tensor_numpy),
        ("apply_", tensor_apply_),
        ("map_", tensor_map_),
        ("map2_", tensor_map2_),
        ("pin_memory", tensor_pin_memory),
        ("is_pinned", tensor_is_pinned),
        ("contiguous", tensor_contiguous),
        ("record_stream", tensor_record_stream),
        ("get_device", tensor_get_device),
        ("storage", own_storage.typed_storage),
        ("storage_offset", own_storage.storage_offset),
    ]
    if hasattr(_TensorBase, "untyped_storage"):
        methods.append(("untyped_storage", own_storage.untyped_storage))
    for name, fn in methods:
        doc = getattr(getattr(torch.Tensor, name, None), "__doc__", None)
        setattr(torch.Tensor, name, _method(fn, doc))
    torch.Tensor.device = property(_get_device, doc=_base_device.__doc__)
    torch.Tensor.is_npu = property(_get_is_npu, doc="True if the tensor is on an NPU.")
    torch.Tensor.is_cpu = property(_get_is_cpu, doc=_base_is_cpu.__doc__)
    torch.Tensor.data = property(_get_data, _set_data, doc=_base_data.__doc__)
    torch.nn.Parameter.__new__ = staticmethod(_parameter_new)  # type: ignore[assignment]
    torch.nn.Module.to = module_to
    torch.nn.Module.npu = module_npu
    named_tensors.install()
    lazy_params.install()


def _method(fn: Callable, doc: Optional[str]) -> Callable:
    """``fn`` as a Tensor method documented as torch's."""
    if fn.__doc__ is None and doc:
        try:
            fn.__doc__ = doc
        except AttributeError:  # pragma: no cover - builtins
            pass
    return fn
