"""The general path of the fp16 emulation: every operation that reads or writes fp16 data runs
in fp32 on torch's own upcasts of its inputs (fp16 NaNs converted as IEEE converts them,
``fp32_copies.widened``), and its fp16 results are rounded back with NPU
saturation (see ``saturation``). bf16 NPU operations (a 910B's) take it too: computed in fp32
and rounded once, as the NPU's units accumulate in fp32. Large bf16 matrix products in INF/NAN
mode do not come here: both paths run them on torch's bf16 GEMM (``bf16_gemms``).

Which outputs are fp16 (bf16) is found by running the op on meta tensors (the dtypes native
kernels would give). In-place and ``out=`` arguments are written back into the original fp16
(bf16) tensors, and returns that alias them are those tensors. It is the reference the fast path
(``fast_path``) is tested against, and what ``APEXNPU_EMULATION_PATH=general`` runs.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from . import fp32_copies, output_dtypes, saturation

_FLOAT = torch.float32
REDUCED = (torch.float16, torch.bfloat16)


def _is_reduced(x: Any) -> bool:
    """A tensor of a reduced dtype (fp16 or bf16), which the op reads through fp32."""
    return isinstance(x, torch.Tensor) and x.dtype in REDUCED


def _upcast(x: Any) -> Any:
    if _is_reduced(x):
        return fp32_copies.widened(x)
    if x is torch.float16 or x is torch.bfloat16:  # a dtype argument
        return _FLOAT
    return x


def _to_meta(x: Any) -> Any:
    return x.to("meta") if isinstance(x, torch.Tensor) else x


def meta_dtypes(func, args, kwargs) -> Optional[List[Optional[torch.dtype]]]:
    """Dtypes the op's tensor outputs would have with native fp16 kernels (from meta tensors)."""
    try:
        out = func(*tree_map(_to_meta, args), **tree_map(_to_meta, kwargs))
    except Exception:  # some ops have no meta kernel in this torch
        return None
    leaves, _ = tree_flatten(out)
    return [x.dtype if isinstance(x, torch.Tensor) else None for x in leaves]


def _fallback_dtype(args, kwargs) -> torch.dtype:
    """Without meta: the dtype argument if there is one, else the first floating input's dtype."""
    return fallback_dtype_among(tree_flatten((args, kwargs))[0])


def fallback_dtype_among(leaves) -> torch.dtype:
    """``_fallback_dtype`` of the call whose leaves (in pytree's order) are ``leaves``."""
    for x in leaves:
        if isinstance(x, torch.dtype):
            return x
    for x in leaves:
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            return x.dtype
    return _FLOAT


def _mutated_half_args(func, args, kwargs) -> List[Tuple[Any, Any, Optional[frozenset]]]:
    """(key, tensor, alias set) for each fp16 (bf16) argument the op writes (in-place, ``out=``).
    A tensor in a written list (``_foreach_add_``'s) has the key (key, index) and no alias
    set (no return aliases a list's element)."""
    found = []
    for index, arg in enumerate(func._schema.arguments):
        if arg.alias_info is None or not arg.alias_info.is_write:
            continue
        if arg.kwarg_only or index >= len(args):
            key: Any = arg.name
            value = kwargs.get(arg.name)
        else:
            key = index
            value = args[index]
        if _is_reduced(value):
            found.append((key, value, frozenset(arg.alias_info.before_set)))
        elif isinstance(value, (list, tuple)):
            found.extend(((key, i), x, None) for i, x in enumerate(value) if _is_reduced(x))
    return found


def shared_memory(x: torch.Tensor) -> Optional[torch.Tensor]:
    """For a written argument whose elements share memory (a zero stride, as ``expand`` or
    ``empty_strided`` make): the memory it spans, as a 1-D view of its own; else None. The
    operation then runs on that memory widened to fp32 and viewed with the argument's strides,
    so torch refuses it where it refuses writing such a tensor (``add_``) and runs it where it
    allows that (``fill_``, ``zero_``), and the memory is stored back whole: a contiguous fp32
    copy would have one element per index, which no copy can write back into shared memory."""
    if x.layout != torch.strided or not x.numel() or torch._debug_has_internal_overlap(x) != 1:
        return None  # a sparse tensor's values are a strided tensor of their own
    span = 1 + sum((n - 1) * st for n, st in zip(x.shape, x.stride()))
    return x.as_strided((span,), (1,), x.storage_offset())


def scratch_of(up_args: Sequence[Any], up_kwargs: Dict[str, Any], key: Any) -> Any:
    """The upcast argument at ``key`` (a position, a name, or (either, list index))."""
    if isinstance(key, tuple):
        return scratch_of(up_args, up_kwargs, key[0])[key[1]]
    return up_args[key] if isinstance(key, int) else up_kwargs[key]


def run_in_fp32(func, args: Sequence[Any], kwargs: Dict[str, Any], cached: bool = False) -> Any:
    """Run ``func`` with fp16 (bf16) inputs upcast to fp32; round fp16 (bf16) results back as
    the NPU stores them. ``cached``: take the output dtypes from the table the fast path keeps
    (``output_dtypes``: the same answer, one meta run per call signature)."""
    if cached:
        expected = output_dtypes.expected_dtypes(func, args, kwargs, meta_dtypes)
    else:
        expected = meta_dtypes(func, args, kwargs)
    mutated = _mutated_half_args(func, args, kwargs)

    up_args = list(tree_map(_upcast, tuple(args)))
    up_kwargs = tree_map(_upcast, dict(kwargs))
    scratch_by_alias: Dict[frozenset, Tuple[torch.Tensor, torch.Tensor]] = {}
    listed: List[Tuple[torch.Tensor, torch.Tensor]] = []  # written elements of tensor lists
    stores: Dict[int, Tuple[torch.Tensor, torch.Tensor]] = {}  # by id(original): what to store
    for key, original, alias in mutated:
        memory = shared_memory(original) if alias is not None else None
        if memory is not None:
            wide = fp32_copies.widened(memory)
            scratch = wide.as_strided(original.shape, original.stride(), 0)
            if isinstance(key, int):
                up_args[key] = scratch
            else:
                up_kwargs[key] = scratch
            stores[id(original)] = (memory, wide)
        pair = (original, scratch_of(up_args, up_kwargs, key))
        if alias is None:
            listed.append(pair)
        else:
            scratch_by_alias[alias] = pair

    result = func(*up_args, **up_kwargs)

    for original, scratch in list(scratch_by_alias.values()) + listed:
        saturation.store_reduced(*stores.get(id(original), (original, scratch)))

    # Returns that alias a written argument are that argument itself.
    returns = func._schema.returns
    flat, spec = tree_flatten(result)
    if len(returns) == len(flat):
        for i, ret in enumerate(returns):
            if ret.alias_info is not None and ret.alias_info.is_write:
                alias = frozenset(ret.alias_info.before_set)
                if alias in scratch_by_alias:
                    flat[i] = scratch_by_alias[alias][0]
    written = {id(orig) for orig, _ in scratch_by_alias.values()}
    fallback = _fallback_dtype(args, kwargs)
    for i, x in enumerate(flat):
        if not isinstance(x, torch.Tensor) or id(x) in written:
            continue
        want = expected[i] if expected is not None and i < len(expected) else fallback
        if want in REDUCED and x.is_floating_point() and x.dtype != want:
            flat[i] = saturation.to_reduced(x, want)
        elif want is torch.complex32 and x.is_complex() and x.dtype != want:
            flat[i] = x.to(want)  # complex32 and fp16 operands: a complex32 result
    return tree_unflatten(flat, spec)
