"""``torch.npu.amp.autocast`` on the emulated NPU: torch's CUDA autocast policy, above autograd.

The emulated NPU's tensors are CPU tensors underneath, which torch's own autocast kernels never
see as "npu", so the emulator applies the policy itself: inside an NPU autocast region each
torch call made from Python meets the policy of ``autocast_policy`` (the lower-precision dtype
for matmuls and convolutions, fp32 for losses, norms and exponentials, ...), applied by a
torch-function mode, so the casts are recorded by autograd and gradients return to the
parameters in their own dtype. A torch-function mode sees the call a Python-level torch function
receives, not the calls it makes inside, so such functions (``torch.nn.functional.*``) take the
policy of their name, and ``autocast_policy`` lists the composite ones by what they run. fp32
leaf tensors that require grad (weights) are cast once per outermost region. Only NPU tensors
of a floating dtype other than float64 are cast, as torch casts only the device's tensors.
The emulator's own code (``torch_npu._ops``' operators, forward and backward, and the rest of
its private modules) stands for single NPU kernels, which autocast never looks inside: torch calls
made from there meet no policy (an emulated flash attention computes its scores in fp32, as the
kernel does, whether or not autocast is on).

The state (enabled, dtype, cache) is torch's (``autocast_state``): on torch 2.x
``torch.autocast("npu")`` and ``torch.amp.autocast("npu")`` are torch's own class, whose regions
for "npu" the emulator follows, and ``torch.npu.amp.autocast`` is that class for "npu", as in
torch_npu. On torch 1.13, whose autocast knows only CUDA and the CPU, ``torch.npu.amp.autocast``
keeps the state in the GPU's slot, as torch_npu 1.x does, and ``torch.autocast`` takes "npu".
The lower-precision dtype is float16, or bfloat16 on a chip that has it (``APEXNPU_SOC_VERSION``
of the 910B family); on a 910, bfloat16 autocast is refused as torch_npu refuses it (torch 2.x:
warned and disabled, from ``get_amp_supported_dtype``; torch 1.x: an error).
"""

from __future__ import annotations

import functools
import sys
import threading
import warnings
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode

from ..._device import devices, placement
from ..._fp16 import fp32_copies
from . import autocast_state
from .autocast_policy import BANNED, BANNED_MESSAGE, FP32, LOWER_PRECISION, POLICY, PROMOTE
from .autocast_state import DEVICE, PER_DEVICE

_TorchAutocastClass = torch.amp.autocast_mode.autocast


def is_enabled() -> bool:
    """Whether the calling thread is inside an enabled NPU autocast region."""
    return autocast_state.is_autocast_enabled()


def get_autocast_dtype() -> torch.dtype:
    return autocast_state.get_autocast_dtype()


# --- regions: the function mode that applies the policy, and the weight cache ------------------


class _Regions(threading.local):
    """The calling thread's NPU autocast regions: how deep, the mode pushed by the outermost
    enabled one, whether each open region pushed it, and the casts of weights made since the
    outermost region began."""

    def __init__(self) -> None:
        self.depth = 0
        self.mode: Optional[TorchFunctionMode] = None
        self.pushed: List[bool] = []
        self.cache: Dict[Tuple[int, torch.dtype], Tuple[Any, torch.Tensor]] = {}


_regions = _Regions()


def _enter_region() -> None:
    """A region begins, its state already set. The mode is pushed by the first enabled region
    only: a disabled one leaves torch's function-mode stack as it is, as autocast on a device
    pushes nothing (``nn.MultiheadAttention`` keeps its fast path under
    ``torch.autocast("npu", enabled=False)``, which any active function mode would turn off)."""
    push = _regions.mode is None and is_enabled()
    if push:
        mode = _AutocastMode()
        mode.__enter__()
        _regions.mode = mode
    _regions.pushed.append(push)
    _regions.depth += 1


def _exit_region() -> None:
    _regions.depth -= 1
    pushed = _regions.pushed.pop() if _regions.pushed else False
    if pushed:
        mode, _regions.mode = _regions.mode, None
        if mode is not None:
            mode.__exit__(None, None, None)
    if _regions.depth == 0:
        for _, casted in _regions.cache.values():
            fp32_copies.forget(casted)
        _regions.cache.clear()  # cached casts never outlive the outermost region


# --- the policy -----------------------------------------------------------------------------------


def _eligible(x: Any) -> bool:
    """A tensor autocast casts: floating, not float64, on the NPU (torch's rule for its device)."""
    return (
        isinstance(x, torch.Tensor)
        and x.is_floating_point()
        and x.dtype != torch.float64
        and placement.npu_of(x) is not None
    )


# Python functions the policy casts at their entry whose code asks whether two arguments are one
# tensor: ``multi_head_attention_forward`` takes its packed self-attention path (one linear of
# the input) only when ``query is key is value``. A device's autocast casts below Python, inside
# that path, so the input is cast once there; here a tensor passed to them several times is cast
# once too. Operators keep torch's rule, a cast per argument (``matmul(a, a)`` casts twice and
# the two gradients meet in fp32).
_CAST_ONCE = frozenset({"multi_head_attention_forward"})


def _cast(x: Any, dtype: torch.dtype, done: Optional[Dict[int, torch.Tensor]] = None) -> Any:
    """``x`` (a tensor, or a list or tuple of them) as autocast casts it to ``dtype``; ``done``,
    for a function of ``_CAST_ONCE``, holds the casts made for the call by the id of their
    source."""
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(v, dtype, done) for v in x)
    if not _eligible(x) or x.dtype == dtype:
        return x
    if done is None:
        return _cast_tensor(x, dtype)
    made = done.get(id(x))
    if made is None:
        made = done[id(x)] = _cast_tensor(x, dtype)
    return made


def _cacheable(x: torch.Tensor, dtype: torch.dtype) -> bool:
    """torch's rule for the casts its cache keeps: an fp32 leaf that requires grad (a weight),
    cast to the lower precision, while the cache is on."""
    return (
        dtype != torch.float32
        and x.dtype == torch.float32
        and x.requires_grad
        and x.is_leaf
        and not x._is_view()
        and torch.is_autocast_cache_enabled()
    )


def _cast_tensor(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return _cached_cast(x, dtype) if _cacheable(x, dtype) else x.to(dtype)


def _cached_cast(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The cast of the cacheable ``x``, made at its first use in the region."""
    key = (id(x), dtype)
    hit = _regions.cache.get(key)
    if hit is not None and hit[0]() is x:
        return hit[1]
    casted = x.to(dtype)
    _regions.cache[key] = (weakref.ref(x), casted)
    # Only autocast holds the cast, so its values change only through operations autograd
    # sees: a recurrent cell stepped over time widens it once, not at every step.
    fp32_copies.keep(casted)
    return casted


def _cast_cached(x: Any, dtype: torch.dtype) -> Any:
    """``x`` (a tensor, or a list or tuple of them) with only the casts autocast's cache keeps
    made (weights'), the other tensors as they are."""
    if isinstance(x, (list, tuple)):
        return type(x)([_cast_cached(v, dtype) for v in x])
    hit = _regions.cache.get((id(x), dtype))
    if hit is not None and hit[0]() is x and x.requires_grad and x.dtype == torch.float32:
        # A weight cast before in the region: the same object, still what the cache keeps (a
        # leaf stays a leaf, and not a view), unless its dtype or requires_grad changed.
        if placement.npu_of(x) is not None and torch.is_autocast_cache_enabled():
            return hit[1]
    if _eligible(x) and x.dtype != dtype and _cacheable(x, dtype):
        return _cached_cast(x, dtype)
    return x


# --- kernels that make the casts of their arguments themselves --------------------------------

_CASTS_INSIDE: Dict[Callable, Callable[[Tuple[Any, ...], torch.dtype], Any]] = {}


def casts_inside(wrapper: Callable, run: Callable[[Tuple[Any, ...], torch.dtype], Any]) -> None:
    """Let the emulator's kernel ``wrapper``, standing for a torch function the policy casts to
    the lower precision, make autocast's casts of its arguments itself: a call meets
    ``run(args, dtype)`` with the weights already cast (the cached casts, shared by every call
    of the region) and the other tensors uncast, and ``run`` computes what the call of the cast
    arguments gives, values, gradients and float status alike, or returns None for a call it
    does not cover (autocast then casts and calls as usual). A recurrent cell stepped over
    time so makes no cast of its own per step, and its gradient none back."""
    _CASTS_INSIDE[wrapper] = run


def _flat(values: Any) -> List[Any]:
    out: List[Any] = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_flat(v))
        else:
            out.append(v)
    return out


def _promoted(args: Any, kwargs: Dict[str, Any], lower: torch.dtype) -> torch.dtype:
    """torch's promote rule: from the lower-precision dtype, fp32 wins over it, and two
    different lower-precision dtypes meet in fp32; float64 inputs are left out."""
    found = lower
    for x in _flat(args) + _flat(list(kwargs.values())):
        if _eligible(x) and x.dtype != found:
            found = torch.float32
    return found


def _name(func: Any) -> str:
    return getattr(func, "__name__", "")


# Modules whose torch calls are the emulator's kernels: the private packages (torch_npu._ops,
# _fp16, _device, ...). torch_npu's public Python (contrib's layers) is code autocast applies to.
_KERNEL_PREFIX = "torch_npu._"
# Code of the emulator's wrappers put in place of a torch function (the NPU's SDPA): their
# frames count as torch's own, so a call through them meets the policy as the torch call.
_STAND_INS: set = set()


def stands_for_torch(wrapper: Callable) -> None:
    """Let autocast see calls through ``wrapper`` as calls of the torch function it replaces."""
    _STAND_INS.add(wrapper.__code__)


def _called_by_kernel() -> bool:
    """Whether the torch call being handled comes from the emulator's kernels: the first caller
    outside torch itself (torch.nn.functional, torch.overrides, Module.__call__, ...) is one of
    its private modules."""
    frame = sys._getframe(2)  # the caller of __torch_function__
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module != "torch" and not module.startswith("torch.") and frame.f_code not in _STAND_INS:
            return module.startswith(_KERNEL_PREFIX)
        frame = frame.f_back
    return False


def _apply(policy: str, func: Callable, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    if policy == BANNED:
        raise RuntimeError(BANNED_MESSAGE)
    if policy == LOWER_PRECISION:
        dtype = get_autocast_dtype()
        inside = _CASTS_INSIDE.get(func)
        if inside is not None and not kwargs:
            out = inside(_cast_cached(args, dtype), dtype)
            if out is not None:
                return out
    elif policy == FP32:
        dtype = torch.float32
    elif policy == PROMOTE:
        dtype = _promoted(args, kwargs, get_autocast_dtype())
    else:  # FP32_SET_OPT_DTYPE: fp32 through the op's dtype argument, unless the call gives one
        first = next((a for a in _flat(args) if isinstance(a, torch.Tensor)), None)
        if _eligible(first) and kwargs.get("dtype") is None and len(args) <= 2:
            kwargs = dict(kwargs, dtype=torch.float32)
        return func(*args, **kwargs)
    done: Optional[Dict[int, torch.Tensor]] = {} if _name(func) in _CAST_ONCE else None
    return func(*_cast(args, dtype, done), **{k: _cast(v, dtype, done) for k, v in kwargs.items()})


class _AutocastMode(TorchFunctionMode):
    """Applies the policy to each torch call while NPU autocast is enabled."""

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not is_enabled():
            return func(*args, **kwargs)
        policy = POLICY.get(_name(func))
        if policy == FP32 and _name(func) == "interpolate" and kwargs.get("mode") == "area":
            policy = None  # area runs adaptive average pooling, which autocast leaves alone
        if policy is not None and not _called_by_kernel():
            return _apply(policy, func, args, kwargs)
        return func(*args, **kwargs)


# --- the context manager ----------------------------------------------------------------------

_BF16_REFUSED = "Current NPU Device does not support bfloat16. Please switch dtype to float16."


class autocast(_TorchAutocastClass):  # noqa: N801 - torch.npu.amp.autocast
    """``torch.npu.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True)``:
    ``torch.autocast("npu", ...)``; a context manager and a decorator. Nested regions may turn
    it off (``enabled=False``) or back on."""

    def __init__(
        self, enabled: bool = True, dtype: torch.dtype = torch.float16, cache_enabled: bool = True
    ) -> None:
        if PER_DEVICE:
            super().__init__(DEVICE, enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
            return
        # torch 1.x: torch's class refuses "npu"; the region is kept here, as torch_npu 1.x.
        self.device = DEVICE
        self.fast_dtype = get_autocast_dtype() if dtype is None else dtype
        self._cache_enabled = (
            torch.is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        )
        if self.fast_dtype not in (torch.float16, torch.bfloat16, torch.float32):
            raise RuntimeError(
                f"torch.npu.amp.autocast: unsupported dtype {self.fast_dtype}; "
                "expected torch.float16 or torch.bfloat16"
            )
        if (
            self.fast_dtype == torch.bfloat16
            and torch.bfloat16 not in autocast_state.get_amp_supported_dtype()
        ):
            raise RuntimeError(_BF16_REFUSED)
        self._enabled = bool(enabled)

    if not PER_DEVICE:

        def __enter__(self) -> "autocast":
            self._saved = (is_enabled(), get_autocast_dtype(), torch.is_autocast_cache_enabled())
            autocast_state.set_autocast_enabled(self._enabled)
            autocast_state.set_autocast_dtype(self.fast_dtype)
            torch.autocast_increment_nesting()
            torch.set_autocast_cache_enabled(self._cache_enabled)
            _enter_region()
            return self

        def __exit__(self, *exc: Any) -> bool:
            _exit_region()
            if torch.autocast_decrement_nesting() == 0:
                torch.clear_autocast_cache()
            enabled, dtype, cache_enabled = self._saved
            autocast_state.set_autocast_enabled(enabled)
            autocast_state.set_autocast_dtype(dtype)
            torch.set_autocast_cache_enabled(cache_enabled)
            return False


def _npu_region(region: Any) -> bool:
    return getattr(region, "device", None) == DEVICE and not torch._jit_internal.is_scripting()


def _follow_torch_regions() -> None:
    """torch 2.x: make every region of torch's autocast class for "npu" (``torch.autocast``,
    ``torch.amp.autocast``, this module's ``autocast``, torch's ``custom_fwd``/``custom_bwd``
    and checkpoint recomputation) apply the policy while it lasts."""
    cls = _TorchAutocastClass
    if getattr(cls, "_apexnpu_follows_npu", False):
        return
    torch_enter, torch_exit = cls.__enter__, cls.__exit__

    @functools.wraps(torch_enter)
    def __enter__(self):
        result = torch_enter(self)
        if _npu_region(self):
            _enter_region()
        return result

    @functools.wraps(torch_exit)
    def __exit__(self, exc_type, exc_val, exc_tb):
        if _npu_region(self):
            _exit_region()
        return torch_exit(self, exc_type, exc_val, exc_tb)

    cls.__enter__, cls.__exit__ = __enter__, __exit__
    cls._apexnpu_follows_npu = True


class _TorchAutocast:
    """torch 1.x's ``torch.autocast`` that also takes ``device_type="npu"`` (and "cuda" after
    transfer_to_npu); torch 2.x's takes "npu" itself."""

    def __init__(self, original: type) -> None:
        self._original = original

    def __call__(
        self,
        device_type: str,
        dtype: Optional[torch.dtype] = None,
        enabled: bool = True,
        cache_enabled: Optional[bool] = None,
    ):
        if device_type == DEVICE or (device_type == "cuda" and devices.cuda_means_npu):
            return autocast(enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
        return self._original(
            device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled
        )

    def __instancecheck__(self, obj: object) -> bool:
        return isinstance(obj, (self._original, autocast))


def install() -> None:
    """Put NPU autocast into torch (idempotent)."""
    if PER_DEVICE:
        _follow_torch_regions()
    elif not isinstance(torch.autocast, _TorchAutocast):
        torch.autocast = _TorchAutocast(torch.autocast)  # type: ignore[assignment]
        torch.amp.autocast = torch.autocast  # type: ignore[attr-defined]


# --- custom autograd Functions ---------------------------------------------------------------


def _deprecated(name: str) -> None:
    warnings.warn(
        f"`torch_npu.npu.amp.{name}(args...)` is deprecated. Please use "
        f"`torch.amp.{name}(args..., device_type='npu')` instead.",
        FutureWarning,
        stacklevel=3,
    )


def _cast_inputs(value: Any, dtype: torch.dtype) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(dtype) if _eligible(value) else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_inputs(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd: Optional[Callable] = None, *, cast_inputs: Optional[torch.dtype] = None):
    """For a custom autograd Function's forward: record the autocast dtype and state on ``ctx``
    (``ctx._dtype``, ``ctx._fwd_used_autocast``) for ``custom_bwd``; with ``cast_inputs``, inside
    an autocast region, run it with autocast off on NPU floating inputs cast to that dtype."""
    if PER_DEVICE:
        _deprecated("custom_fwd")
        return torch.amp.custom_fwd(fwd, device_type=DEVICE, cast_inputs=cast_inputs)
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        ctx._dtype = get_autocast_dtype()
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_enabled()
            return fwd(ctx, *args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_enabled():
            return fwd(ctx, *args, **kwargs)
        with autocast(enabled=False):
            return fwd(ctx, *_cast_inputs(args, cast_inputs), **_cast_inputs(kwargs, cast_inputs))

    return forward


def custom_bwd(bwd: Callable) -> Callable:
    """For a custom autograd Function's backward: autocast as its forward ran (state and
    dtype)."""
    if PER_DEVICE:
        _deprecated("custom_bwd")
        return torch.amp.custom_bwd(bwd, device_type=DEVICE)

    @functools.wraps(bwd)
    def backward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        with autocast(
            enabled=getattr(ctx, "_fwd_used_autocast", False),
            dtype=getattr(ctx, "_dtype", torch.float16),
        ):
            return bwd(ctx, *args, **kwargs)

    return backward
