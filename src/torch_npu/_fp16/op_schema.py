"""What the emulation needs from an aten operation's schema.

The general path (``emulation``) asks ``runs_unchanged`` and reads the written arguments on
every call; the fast path keeps the same answers in a table keyed by the op (``schema_of``).
"""

from __future__ import annotations

from typing import Any, Dict, NamedTuple, Optional, Tuple

import torch


class WrittenArg(NamedTuple):
    position: int  # index among the positional arguments
    name: str
    kwarg_only: bool
    alias: frozenset


class OpSchema(NamedTuple):
    name: str
    unchanged: bool  # runs_unchanged(func)
    written: Tuple[WrittenArg, ...]  # arguments the op writes (in-place, ``out=``)
    written_returns: Tuple[Optional[frozenset], ...]  # per return: its alias set if written


_table: Dict[Any, OpSchema] = {}


def schema_of(func: Any) -> OpSchema:
    found = _table.get(func)
    if found is None:
        found = _table[func] = _read(func)
    return found


def _read(func: Any) -> OpSchema:
    schema = func._schema
    written = tuple(
        WrittenArg(i, a.name, a.kwarg_only, frozenset(a.alias_info.before_set))
        for i, a in enumerate(schema.arguments)
        if a.alias_info is not None and a.alias_info.is_write
    )
    returns = tuple(
        frozenset(r.alias_info.before_set)
        if r.alias_info is not None and r.alias_info.is_write
        else None
        for r in schema.returns
    )
    return OpSchema(schema.name, runs_unchanged(func), written, returns)


def written_value(
    arg: WrittenArg, args: Tuple[Any, ...], kwargs: Dict[str, Any]
) -> Tuple[Any, Any]:
    """(key, value) of a written argument in this call, as the general path finds it: the
    position when passed positionally, else the name."""
    if arg.kwarg_only or arg.position >= len(args):
        return arg.name, kwargs.get(arg.name)
    return arg.position, args[arg.position]


# Operations with nothing to compute: storage changes, allocations whose values are unspecified
# (an fp32 round trip would read the garbage through the saturation check and raise the float
# status, as DDP's bucket allocation did), and ``_unsafe_view``, a view whose schema does not say
# so (reshape and matmul's results use it): torch and the NPU return the input's memory, which
# a round trip would copy and store saturating.
UNCHANGED_OPS = frozenset(
    {
        "aten::set_",
        "aten::resize_",
        "aten::resize_as_",
        "aten::empty",
        "aten::empty_like",
        "aten::empty_strided",
        "aten::new_empty",
        "aten::new_empty_strided",
        "aten::_unsafe_view",
        # asks whether two tensors are views of the same memory: fp32 copies never are
        "aten::is_set_to",
        # FSDP2's copy of the shards (already in the buffer's dtype) into a
        # new all-gather buffer: it moves values, and the buffer's other
        # ranks' parts hold none yet, which a rounding pass would misread.
        "fsdp::all_gather_copy_in",
    }
)


def runs_unchanged(func: Any) -> bool:
    """Views and metadata changes must act on the original tensor, never on an fp32 copy; so
    must collectives (``c10d::``), which fill their tensors in place and do no arithmetic the
    NPU would do differently (their schemas do not mark the tensors as written); allocations
    have no values to round; nor have operations on dtypes alone (``promote_types``,
    ``can_cast``), whose fp16 arguments are answers, not values."""
    schema = func._schema
    if schema.name.startswith("c10d::"):
        return True
    if not any("Tensor" in str(a.type) for a in (*schema.arguments, *schema.returns)):
        return True
    if any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns):
        return True
    if torch.Tag.inplace_view in getattr(func, "tags", ()):
        return True
    return schema.name in UNCHANGED_OPS
