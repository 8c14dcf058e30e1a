"""The dtypes an operation's outputs would have with native fp16 kernels, remembered per call.

The general path finds them on every call by running the op on meta copies of its arguments
(``general_path.meta_dtypes``). That answer is a function of what the meta call receives:
the op, each tensor's dtype, sizes, strides and layout (``to("meta")`` keeps nothing else), and
the other arguments' values. The fast path keys a table on exactly that and runs the meta call
once per key. Arguments whose meta copy could carry more (complex, sparse or quantized tensors,
objects such as generators) make the call uncached: it is computed every time, as before.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

Dtypes = Optional[List[Optional[torch.dtype]]]
_MAX_ENTRIES = 4096  # shapes can vary (sequence lengths); the table is cleared when this full
_table: Dict[Any, Dtypes] = {}

_UNCACHEABLE = object()
_VALUE_TYPES = (
    bool,
    int,
    str,
    type(None),
    torch.dtype,
    torch.device,
    torch.layout,
    torch.memory_format,
)
_PLAIN_DTYPES = frozenset(
    {
        torch.float16,
        torch.float32,
        torch.float64,
        torch.bfloat16,
        torch.int8,
        torch.uint8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.bool,
    }
)


_STRIDED = torch.strided
_Tensor = torch.Tensor


def _key(x: Any) -> Any:
    if isinstance(x, _Tensor):
        dtype = x.dtype
        if dtype not in _PLAIN_DTYPES or x.layout != _STRIDED:
            return _UNCACHEABLE
        try:
            return (dtype, x.shape, x.stride())  # torch.Size hashes and compares as a tuple
        except (RuntimeError, ValueError):
            # A lazy module's uninitialized parameter (``module.half()`` before it is
            # materialized) refuses its shape: computed uncached, as the general path does.
            return _UNCACHEABLE
    if isinstance(x, float):
        return (float, x.hex())  # -0.0 and 0.0 differ; every NaN is one key
    if isinstance(x, _VALUE_TYPES):
        return (type(x), x)
    if isinstance(x, (list, tuple)):
        keys = []
        for v in x:
            k = _key(v)
            if k is _UNCACHEABLE:
                return _UNCACHEABLE
            keys.append(k)
        return (type(x), tuple(keys))
    return _UNCACHEABLE


_NAMED = object()  # separates the positional keys from the (name, key) pairs


def call_key(func: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    """The table key of a call, or None when the call is not cached. Every call asks, so it is
    one flat tuple built in one pass: the op, a key per positional argument, then the names and
    keys of the keyword arguments (a name is a str, an argument's key never is)."""
    key = [func]
    for x in args:
        k = _key(x)
        if k is _UNCACHEABLE:
            return None
        key.append(k)
    if kwargs:
        key.append(_NAMED)
        for name, value in kwargs.items():
            k = _key(value)
            if k is _UNCACHEABLE:
                return None
            key.append(name)
            key.append(k)
    return tuple(key)


def expected_dtypes(
    func: Any,
    args: Tuple[Any, ...],
    kwargs: Dict[str, Any],
    compute: Callable[[Any, Any, Any], Dtypes],
) -> Dtypes:
    """``compute(func, args, kwargs)`` (the meta call), once per key."""
    key = call_key(func, args, kwargs)
    if key is None:
        return compute(func, args, kwargs)
    try:
        return _table[key]
    except KeyError:
        pass
    found = compute(func, args, kwargs)
    if len(_table) >= _MAX_ENTRIES:
        _table.clear()
    _table[key] = found
    return found
