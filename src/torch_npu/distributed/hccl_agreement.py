"""Before an hccl collective moves data, its ranks agree on what they pass.

Gloo, underneath the emulated hccl, trusts every rank to pass tensors that fit each other's: a
rank whose all_reduce is longer than its peer's aborts the process (SIGABRT), and the peer gets a
partial result; a broadcast of unequal sizes mixes both. HCCL instead refuses a collective whose
ranks disagree on its arguments, with an error on every rank. So each collective of the hccl
group starts with one small exchange (an all-gather of ``Record``s, a few integers per rank) and
every rank reaches the same verdict from the same records:

- the call itself (all_reduce against broadcast: ranks out of step), its ReduceOp and its root;
- the dtype and the number of elements that must be equal on every rank (HCCL counts elements:
  shapes may differ where the counts agree, as they may on an NPU);
- what each rank sends to and expects from each peer (``sends``, ``expects``): rank i's
  ``sends[j]`` must be rank j's ``expects[i]`` (gathers, scatters, all_to_all);
- a rank's own refusal (a dtype its HCCL does not carry, an output that cannot hold the
  result): the other ranks learn of it and fail too, rather than wait for a rank that has gone.

A disagreement raises RuntimeError on every rank, naming the collective, the ranks and what
each passed; the refusing rank raises its own error. The exchange is also where a rank waits for
late peers, bounded by the group's exec timeout (``hccl_timeouts``): a rank that never comes
makes the others fail with an error naming the bound, instead of hanging.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence

import torch

from .._fp16 import mode as emulation
from . import hccl_timeouts

# The collectives, by torch.distributed's names (an index is a call's code in a record).
CALLS = (
    "barrier",
    "all_reduce",
    "all_reduce_coalesced",
    "reduce",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_coalesced",
    "gather",
    "scatter",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "all_to_all",
    "all_to_all_single",
)
CODES = {name: i for i, name in enumerate(CALLS)}
CODES.update(
    {
        "_all_gather_base": CODES["all_gather_into_tensor"],
        "_reduce_scatter_base": CODES["reduce_scatter_tensor"],
    }
)
OPS = ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM")
_DTYPES = (
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.bool,
    torch.complex64,
    torch.complex128,
)
_DTYPE_CODE = {dtype: i + 1 for i, dtype in enumerate(_DTYPES)}
_OTHER_DTYPE = 99
NONE = -1

# A rank's own refusals, by code: what the other ranks are told of it.
REFUSED_DTYPE, REFUSED_ARGUMENTS = 1, 2
_REFUSALS = {
    REFUSED_DTYPE: "a dtype its HCCL does not carry in this collective",
    REFUSED_ARGUMENTS: "tensors that do not fit together",
}

# Where each field sits in a record: the first ones must be equal on every rank.
CALL, OP, ROOT, DTYPE, COUNT, TENSORS = range(6)
REFUSAL, NDIM = 6, 7
SHOWN_DIMS = 6  # dims of a rank's first tensor kept for the error message
OUT_DTYPE = NDIM + 1 + SHOWN_DIMS
HEADER = OUT_DTYPE + 1


def dtype_code(dtype: torch.dtype) -> int:
    return _DTYPE_CODE.get(dtype, _OTHER_DTYPE)


def _dtype_said(code: int) -> str:
    if 0 < code <= len(_DTYPES):
        return str(_DTYPES[code - 1]).replace("torch.", "")
    return "another dtype" if code == _OTHER_DTYPE else "none"


class Record:
    """What one rank passes to a collective, as the integers the ranks exchange."""

    def __init__(
        self,
        call: str,
        world: int,
        tensor: Optional[torch.Tensor] = None,
        op: Optional[str] = None,
        root: int = NONE,
        count: Optional[int] = None,
        tensors: int = NONE,
        out_dtype: Optional[torch.dtype] = None,
    ) -> None:
        self.call = call
        self.values = [NONE] * (HEADER + 2 * world)
        v = self.values
        v[CALL] = CODES[call]
        v[OP] = OPS.index(op) if op in OPS else NONE
        v[ROOT] = root
        v[TENSORS] = tensors
        v[REFUSAL] = 0
        if tensor is not None:
            v[DTYPE] = dtype_code(tensor.dtype)
            v[COUNT] = tensor.numel() if count is None else count
            v[NDIM] = tensor.dim()
            v[NDIM + 1 : NDIM + 1 + min(tensor.dim(), SHOWN_DIMS)] = list(tensor.shape)[:SHOWN_DIMS]
        elif count is not None:
            v[COUNT] = count
        v[OUT_DTYPE] = NONE if out_dtype is None else dtype_code(out_dtype)
        self.world = world
        self.refusal: Optional[BaseException] = None

    def flows(self, sends: Sequence[int], expects: Sequence[int]) -> "Record":
        """The elements this rank sends to each rank and expects from each (one per rank)."""
        w = self.world
        if len(sends) == w:
            self.values[HEADER : HEADER + w] = list(sends)
        if len(expects) == w:
            self.values[HEADER + w : HEADER + 2 * w] = list(expects)
        return self

    def refuse(self, error: BaseException, code: int = REFUSED_ARGUMENTS) -> "Record":
        """This rank refuses the call with ``error``, which it raises once its peers know."""
        self.refusal = error
        self.values[REFUSAL] = code
        return self


# all_gather(outputs, input): gathers every rank's ``input`` into ``outputs`` and waits.
Gather = Callable[[List[torch.Tensor], torch.Tensor], None]


def agree(all_gather: Gather, record: Record, bound: hccl_timeouts.Bound, ranks: str = "") -> None:
    """Exchange ``record`` with the group's other ranks through ``all_gather`` and raise, on
    every rank, if they disagree (``bound``: the exec timeout the exchange waits under, named
    when it runs out; ``ranks``: how the group's ranks are named, for a subgroup)."""
    world = record.world
    with emulation.paused():
        mine = torch.tensor(record.values, dtype=torch.int64)
        gathered = torch.empty(world, len(record.values), dtype=torch.int64)
        try:
            all_gather(list(gathered.unbind(0)), mine)
        except RuntimeError as error:
            raise _lost(CALLS[CODES[record.call]], error, bound) from error
        rows = gathered.tolist()
    if record.refusal is not None:
        raise record.refusal
    problem = _disagreement(rows, world)
    if problem:
        raise RuntimeError(f"hccl: {_call_of(rows)} refused on every rank{ranks}: {problem}")


def _lost(call: str, error: RuntimeError, bound: hccl_timeouts.Bound) -> RuntimeError:
    if hccl_timeouts.is_timeout(error):
        return RuntimeError(
            f"hccl: {call} timed out waiting for the other ranks of the group after "
            f"{bound.source}: a rank has stalled, is out of step or has gone; HCCL_EXEC_TIMEOUT "
            f"or a timeout= given to init_process_group sets the bound ({error})"
        )
    return RuntimeError(
        f"hccl: {call} failed: a rank of the group has gone or cannot be reached ({error})"
    )


def _call_of(rows: List[List[int]]) -> str:
    codes = {row[CALL] for row in rows}
    return CALLS[rows[0][CALL]] if len(codes) == 1 else "collectives out of step,"


def _shape(row: List[int]) -> str:
    ndim = row[NDIM]
    if ndim < 0:
        return ""
    dims = row[NDIM + 1 : NDIM + 1 + min(ndim, SHOWN_DIMS)]
    text = ", ".join(str(d) for d in dims) + ("," if ndim == 1 else "")
    return f" of shape ({text}{', ...' if ndim > SHOWN_DIMS else ''})"


def _tensor_said(row: List[int]) -> str:
    count = row[COUNT]
    counted = f" ({count} element{'' if count == 1 else 's'})" if count >= 0 else ""
    dtype = _dtype_said(row[DTYPE])
    article = "an" if dtype[0] in "aeiou" else "a"
    return f"{article} {dtype} tensor{_shape(row)}{counted}"


def _each(rows: List[List[int]], say: Any) -> str:
    return ", ".join(f"rank {r} {say(row)}" for r, row in enumerate(rows))


def _disagreement(rows: List[List[int]], world: int) -> str:
    """What the ranks disagree on, said the same on every rank; "" when they agree."""
    first = rows[0]
    if any(row[CALL] != first[CALL] for row in rows):
        return (
            _each(rows, lambda row: f"calls {CALLS[row[CALL]]}")
            + "; every rank must call the same collectives in the same order"
        )
    refused = [r for r, row in enumerate(rows) if row[REFUSAL]]
    if refused:
        return "; ".join(
            f"rank {r} refused it, passing {_REFUSALS[rows[r][REFUSAL]]} (its own error says which)"
            for r in refused
        )
    if any(row[OP] != first[OP] for row in rows):
        return "the ranks reduce by different ops: " + _each(
            rows, lambda row: f"by {OPS[row[OP]] if row[OP] >= 0 else 'none'}"
        )
    if any(row[ROOT] != first[ROOT] for row in rows):
        return "the ranks name different roots: " + _each(
            rows, lambda row: f"names rank {row[ROOT]}"
        )
    if any(row[TENSORS] != first[TENSORS] for row in rows):
        return (
            "the ranks pass different numbers of tensors: "
            + _each(rows, lambda row: f"passes {row[TENSORS]}")
            + "; every rank must pass as many"
        )
    if any(row[DTYPE] != first[DTYPE] or row[COUNT] != first[COUNT] for row in rows):
        return (
            "the ranks pass different tensors: "
            + _each(rows, lambda row: "passes " + _tensor_said(row))
            + "; every rank must pass as many elements of the same dtype"
        )
    if any(row[OUT_DTYPE] != NONE and row[OUT_DTYPE] != row[DTYPE] for row in rows):
        return "inputs and outputs of different dtypes: " + _each(
            rows, lambda row: f"passes {_dtype_said(row[DTYPE])} and {_dtype_said(row[OUT_DTYPE])}"
        )
    return _flows_disagree(rows, world)


def _flows_disagree(rows: List[List[int]], world: int) -> str:
    mismatched = []
    for i, row in enumerate(rows):
        for j in range(world):
            sent, expected = row[HEADER + j], rows[j][HEADER + world + i]
            if sent != expected:
                mismatched.append(
                    f"rank {i} sends {max(sent, 0)} elements to rank {j}, which "
                    f"expects {max(expected, 0)} from it"
                )
    if not mismatched:
        return ""
    shown = mismatched[:4] + ([f"and {len(mismatched) - 4} more"] if len(mismatched) > 4 else [])
    return (
        "the ranks' tensors do not fit each other: "
        + ", ".join(shown)
        + "; what a rank sends must fill what its peer receives"
    )
