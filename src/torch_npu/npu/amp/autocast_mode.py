"""``torch.npu.amp.autocast`` on the emulated NPU: torch's CUDA autocast policy, above autograd.

CPU torch 1.13 has no fp16 autocast, so the emulator brings its own: inside ``autocast()`` each
torch call made from Python meets the policy of ``autocast_policy`` (fp16 for matmuls and
convolutions, fp32 for losses, norms and exponentials, ...), applied by a torch-function mode,
so the casts are recorded by autograd and gradients return to the parameters in their own
dtype. A torch-function mode sees the call a Python-level torch function receives, not the calls
it makes inside, so such functions (``torch.nn.functional.*``) take the policy of their name, and
``autocast_policy`` lists the composite ones by what they run. fp32 leaf tensors that require grad (weights) are cast once per outermost region. Only
NPU tensors (on the emulated NPU: tensors backed by host memory) of fp16/fp32 are cast, as torch
casts only CUDA tensors. The fp16 arithmetic itself is the emulation's (``emulation``).

The state (enabled, dtype, cache) belongs to the calling thread, as torch's does.
"""
from __future__ import annotations

import functools
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode

from ..._device import placement
from .autocast_policy import (BANNED, BANNED_MESSAGE, FP32, FP32_SET_OPT_DTYPE, LOWER_PRECISION,
                              POLICY, PROMOTE)


class _State(threading.local):
    def __init__(self) -> None:
        self.stack: List[Tuple[bool, torch.dtype, bool]] = []  # (enabled, dtype, cache_enabled)
        self.cache: Dict[int, Tuple[Any, torch.Tensor]] = {}
        self.depth = 0  # enabled regions entered and not yet left


_state = _State()


def is_enabled() -> bool:
    """Whether the calling thread is inside an enabled ``torch.npu.amp.autocast`` region."""
    return bool(_state.stack) and _state.stack[-1][0]


def get_autocast_dtype() -> torch.dtype:
    return _state.stack[-1][1] if _state.stack else torch.float16


def _eligible(x: Any) -> bool:
    return (isinstance(x, torch.Tensor) and x.dtype in (torch.float16, torch.float32)
            and placement.npu_of(x) is not None)


def _cast(x: Any, dtype: torch.dtype) -> Any:
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(v, dtype) for v in x)
    if not _eligible(x) or x.dtype == dtype:
        return x
    _, _, cache_enabled = _state.stack[-1]
    cacheable = (cache_enabled and dtype == torch.float16 and x.dtype == torch.float32
                 and x.requires_grad and x.is_leaf and not x._is_view())
    if not cacheable:
        return x.to(dtype)
    hit = _state.cache.get(id(x))
    if hit is not None and hit[0]() is x:
        return hit[1]
    casted = x.to(dtype)
    _state.cache[id(x)] = (weakref.ref(x), casted)
    return casted


def _widest(args: Any, kwargs: Dict[str, Any]) -> torch.dtype:
    found = torch.float16
    for x in _flat(args) + _flat(list(kwargs.values())):
        if _eligible(x) and x.dtype == torch.float32:
            found = torch.float32
    return found


def _flat(values: Any) -> List[Any]:
    out: List[Any] = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(_flat(v))
        else:
            out.append(v)
    return out


def _name(func: Any) -> str:
    return getattr(func, "__name__", "")


def _apply(policy: str, func: Callable, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    if policy == BANNED:
        raise RuntimeError(BANNED_MESSAGE)
    if policy == LOWER_PRECISION:
        dtype = get_autocast_dtype()
    elif policy == FP32:
        dtype = torch.float32
    elif policy == PROMOTE:
        dtype = _widest(args, kwargs)
    else:  # FP32_SET_OPT_DTYPE: fp32 through the op's dtype argument, unless the call gives one
        first = next((a for a in _flat(args) if isinstance(a, torch.Tensor)), None)
        if _eligible(first) and kwargs.get("dtype") is None and len(args) <= 2:
            kwargs = dict(kwargs, dtype=torch.float32)
        return func(*args, **kwargs)
    return func(*_cast(args, dtype), **{k: _cast(v, dtype) for k, v in kwargs.items()})


class _AutocastMode(TorchFunctionMode):
    """Applies the policy to each torch call while the thread's autocast state is enabled."""

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not is_enabled():
            return func(*args, **kwargs)
        policy = POLICY.get(_name(func))
        if policy == FP32 and _name(func) == "interpolate" and kwargs.get("mode") == "area":
            policy = None  # area runs adaptive average pooling, which autocast leaves alone
        if policy is not None:
            return _apply(policy, func, args, kwargs)
        return func(*args, **kwargs)


class autocast:  # noqa: N801 - torch.npu.amp.autocast
    """Context manager and decorator: torch's CUDA autocast policy on the (emulated) NPU.

    ``autocast(enabled=True, dtype=torch.float16, cache_enabled=True)``; nested regions may turn
    it off (``enabled=False``) or back on."""

    def __init__(self, enabled: bool = True, dtype: torch.dtype = torch.float16,
                 cache_enabled: bool = True) -> None:
        if dtype not in (torch.float16, torch.bfloat16):
            raise ValueError(f"torch.npu.amp.autocast: dtype must be torch.float16 or "
                             f"torch.bfloat16, got {dtype}")
        if dtype == torch.bfloat16:
            raise RuntimeError("torch.npu.amp.autocast: this NPU (Ascend 910) has no bfloat16; "
                               "use dtype=torch.float16")
        self.enabled = bool(enabled)
        self.dtype = dtype
        self.cache_enabled = bool(cache_enabled)
        self._mode: Optional[_AutocastMode] = None

    def __enter__(self) -> "autocast":
        _state.stack.append((self.enabled, self.dtype, self.cache_enabled))
        if self.enabled:
            _state.depth += 1
            self._mode = _AutocastMode()
            self._mode.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._mode is not None:
            self._mode.__exit__(*exc)
            self._mode = None
            _state.depth -= 1
            if _state.depth == 0:
                _state.cache.clear()  # cached casts never outlive the outermost region
        _state.stack.pop()

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def autocasted(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.enabled, self.dtype, self.cache_enabled):
                return func(*args, **kwargs)

        return autocasted


def _cast_inputs(value: Any, dtype: torch.dtype) -> Any:
    if isinstance(value, torch.Tensor):
        on_npu = placement.npu_of(value) is not None
        return value.to(dtype) if value.is_floating_point() and on_npu else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_inputs(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd: Optional[Callable] = None, *, cast_inputs: Optional[torch.dtype] = None):
    """For a custom autograd Function's forward: with ``cast_inputs``, run it outside autocast on
    inputs cast to that dtype; without, run it as called and let backward follow suit."""
    if fwd is None:
        return functools.partial(custom_fwd, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        if cast_inputs is None or not is_enabled():
            ctx._npu_autocast_forward = is_enabled()
            return fwd(ctx, *args, **kwargs)
        ctx._npu_autocast_forward = False
        with autocast(enabled=False):
            return fwd(ctx, *_cast_inputs(args, cast_inputs), **_cast_inputs(kwargs, cast_inputs))

    return forward


def custom_bwd(bwd: Callable) -> Callable:
    """For a custom autograd Function's backward: autocast as its forward ran."""

    @functools.wraps(bwd)
    def backward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        with autocast(enabled=getattr(ctx, "_npu_autocast_forward", False)):
            return bwd(ctx, *args, **kwargs)

    return backward
