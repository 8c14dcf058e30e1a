"""The fast path of the fp16 emulation: the general path's arithmetic, bit for bit, at less cost.

Each fp16 operation still runs in fp32 on exact copies of its inputs and is rounded back with
NPU saturation, so values and float status are those of ``general_path``. What changes is how:
- the schema facts are read once per op (``op_schema``), the output dtypes once per call
  signature (``output_dtypes``) instead of a meta run per call;
- fp16 inputs are widened by the runtime in one pass (``fp32_copies``) into memory reused from
  op to op (``scratch_pool``), except arguments whose values the op never reads, which get an
  fp32 tensor of their layout (``unread_args``);
- relu and its backward run in one runtime pass over fp16 memory (``half_kernels``);
- arguments are walked directly instead of through torch's pytree.
bf16 operations (a 910B's) take it too: bf16 inputs are widened by the runtime into pooled memory
as fp16 ones are, results are rounded by the runtime's ``float_to_bf16`` in the chip's mode, and
bf16 copies, conversions and sums run in one runtime pass (``bf16_kernels``), in either mode,
and in INF/NAN mode the operations torch's bf16 kernels compute as the general path does run
there (``bf16_torch_kernels``). Large bf16 matrix products come to neither path (``bf16_gemms``).
In INF/NAN mode fp16 results are rounded by the general path's own ``to_reduced``: the one-pass
fp16 kernels and the runtime's saturating fp16 stores apply in saturation mode only.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from .. import _runtime
from . import (
    bf16_kernels,
    bf16_torch_kernels,
    fp32_copies,
    general_path,
    half_kernels,
    op_schema,
    output_dtypes,
    overflow_mode,
    saturation,
    scratch_pool,
    unread_args,
)

_HALF = torch.float16
_BF16 = torch.bfloat16
_FLOAT = torch.float32
_REDUCED = (_HALF, _BF16)
_CHALF = torch.complex32
_Tensor = torch.Tensor


def _upcast(x: Any, rt: Any) -> Any:
    """general_path._upcast, through lists and tuples as pytree goes."""
    if isinstance(x, _Tensor):
        if x.dtype == _HALF or x.dtype == _BF16:
            return fp32_copies.to_fp32(x, rt, pooled=True)
        return x
    if x is _HALF or x is _BF16:
        return _FLOAT
    if isinstance(x, (list, tuple)):
        return type(x)(_upcast(v, rt) for v in x)
    return x


def _upcast_args(func: Any, args: Sequence[Any], rt: Any) -> List[Any]:
    unread = unread_args.UNREAD.get(func)
    if unread is None:
        return [_upcast(a, rt) for a in args]
    up = []
    for i, a in enumerate(args):
        like = None
        if i in unread and isinstance(a, _Tensor) and a.dtype in _REDUCED:
            like = fp32_copies.fp32_like(a, pooled=True)
        up.append(like if like is not None else _upcast(a, rt))
    return up


def leaves(args: Sequence[Any], kwargs: Dict[str, Any]) -> List[Any]:
    """The leaves of ``(args, kwargs)`` in pytree's order."""
    found: List[Any] = []
    for x in args:
        if isinstance(x, (list, tuple, dict)):
            _walk(x, found)
        else:
            found.append(x)
    for x in kwargs.values():
        if isinstance(x, (list, tuple, dict)):
            _walk(x, found)
        else:
            found.append(x)
    return found


def _walk(x: Any, found: List[Any]) -> None:
    if isinstance(x, (list, tuple)):
        for v in x:
            _walk(v, found)
    elif isinstance(x, dict):
        for v in x.values():
            _walk(v, found)
    else:
        found.append(x)


def runs_unchanged(func: Any) -> bool:
    return op_schema.schema_of(func).unchanged


def output_leaves(result: Any) -> List[Any]:
    return _flat_outputs(result)[0]


def _flat_outputs(result: Any) -> Tuple[List[Any], Any]:
    """(leaves, rebuild) of an op's result: a tensor or a tuple/list of tensors directly, anything
    else through pytree (the order pytree gives, which the expected dtypes follow)."""
    if isinstance(result, _Tensor):
        return [result], None
    if type(result) in (tuple, list) and all(isinstance(x, _Tensor) for x in result):
        return list(result), type(result)
    flat, spec = tree_flatten(result)
    return flat, spec


def _rebuild(flat: List[Any], how: Any) -> Any:
    if how is None:
        return flat[0]
    if how is tuple or how is list:
        return how(flat)
    return tree_unflatten(flat, how)


def run_in_fp32(func: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    """``general_path.run_in_fp32``, with the same results."""
    rt = _runtime.runtime_kernels()
    inf_nan = overflow_mode.inf_nan()
    if not inf_nan:  # the one-pass fp16 kernels store saturating
        done = half_kernels.run(func, args, kwargs, rt)
        if done is not half_kernels.NOT_HANDLED:
            return done
    done = bf16_kernels.run(func, args, kwargs, rt, not inf_nan)
    if done is not bf16_kernels.NOT_HANDLED:
        return done
    if inf_nan:
        done = bf16_torch_kernels.run(func, args, kwargs, rt)
        if done is not bf16_torch_kernels.NOT_HANDLED:
            return done
    flat: List[Any] = []
    try:
        flat, how = _round_trip(func, args, kwargs, rt, inf_nan)
    finally:
        scratch_pool.give_back(flat)
    return _rebuild(flat, how)


def _round_trip(
    func: Any, args: Sequence[Any], kwargs: Dict[str, Any], rt: Any, inf_nan: bool
) -> Tuple[List[Any], Any]:
    schema = op_schema.schema_of(func)
    expected = output_dtypes.expected_dtypes(func, args, kwargs, general_path.meta_dtypes)

    up_args = _upcast_args(func, args, rt)
    up_kwargs = {k: _upcast(v, rt) for k, v in kwargs.items()} if kwargs else kwargs
    if not schema.written:  # most operations: new outputs only
        flat, how = _flat_outputs(func(*up_args, **up_kwargs))
        _narrow(flat, expected, args, kwargs, rt, (), inf_nan)
        return flat, how
    scratch_by_alias: Dict[frozenset, Tuple[torch.Tensor, torch.Tensor]] = {}
    listed: List[Tuple[torch.Tensor, torch.Tensor]] = []  # written elements of tensor lists
    stores: Dict[int, Tuple[torch.Tensor, torch.Tensor]] = {}  # by id(original): what to store
    for arg in schema.written:
        key, original = op_schema.written_value(arg, args, kwargs)
        if isinstance(original, _Tensor) and original.dtype in _REDUCED:
            scratch = up_args[key] if isinstance(key, int) else up_kwargs[key]
            memory = general_path.shared_memory(original)
            if memory is not None:  # its elements share memory: see shared_memory
                wide = fp32_copies.to_fp32(memory, rt, pooled=False)
                scratch = wide.as_strided(original.shape, original.stride(), 0)
                if isinstance(key, int):
                    up_args[key] = scratch
                else:
                    up_kwargs[key] = scratch
                stores[id(original)] = (memory, wide)
            scratch_by_alias[arg.alias] = (original, scratch)
        elif isinstance(original, (list, tuple)):
            scratch = up_args[key] if isinstance(key, int) else up_kwargs[key]
            listed.extend(
                (x, scratch[i])
                for i, x in enumerate(original)
                if isinstance(x, _Tensor) and x.dtype in _REDUCED
            )

    result = func(*up_args, **up_kwargs)

    for original, scratch in list(scratch_by_alias.values()) + listed:
        saturation.store_reduced(*stores.get(id(original), (original, scratch)), rt)

    flat, how = _flat_outputs(result)
    # Returns that alias a written argument are that argument itself.
    if scratch_by_alias and len(schema.written_returns) == len(flat):
        for i, alias in enumerate(schema.written_returns):
            if alias is not None and alias in scratch_by_alias:
                flat[i] = scratch_by_alias[alias][0]
    _narrow(
        flat,
        expected,
        args,
        kwargs,
        rt,
        {id(orig) for orig, _ in scratch_by_alias.values()},
        inf_nan,
    )
    return flat, how


def _narrow(
    flat: List[Any],
    expected: Any,
    args: Sequence[Any],
    kwargs: Dict[str, Any],
    rt: Any,
    written: Any,
    inf_nan: bool,
) -> None:
    """Round the fp32 outputs among ``flat`` that would be fp16 (bf16) to that dtype, in place;
    ``written``: ids of outputs that are written arguments (already stored)."""
    fallback = None
    for i, x in enumerate(flat):
        if not isinstance(x, _Tensor) or (written and id(x) in written):
            continue
        if expected is not None and i < len(expected):
            want = expected[i]
        else:
            if fallback is None:
                fallback = general_path.fallback_dtype_among(leaves(args, kwargs))
            want = fallback
        if want == _HALF and x.dtype != _HALF and x.is_floating_point():
            flat[i] = (
                saturation.to_reduced(x, _HALF, rt) if inf_nan else saturation.host_to_fp16(x, rt)
            )
        elif want == _BF16 and x.dtype != _BF16 and x.is_floating_point():
            flat[i] = saturation.host_to_bf16(x, rt, inf_nan)
        elif want == _CHALF and x.dtype != _CHALF and x.is_complex():
            flat[i] = x.to(_CHALF)  # complex32 and fp16 operands: a complex32 result
