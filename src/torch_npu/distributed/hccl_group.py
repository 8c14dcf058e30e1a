"""The process group behind ``hccl`` on the emulated NPU: gloo underneath, with these changes.

- Floating-point sums and products are reduced in rank order: every element is
  ``((x0 + x1) + x2) + ...`` whatever its place in the buffer. Gloo's ring all-reduce adds in an
  order that depends on where an element falls in its buffer, and torch DDP re-buckets gradients
  after its first iteration, so the same gradients summed over three or more ranks could round
  differently in a run resumed from a checkpoint. In rank order, every rank and every resumed
  run gets the same bits. (The values go round by all-gather; the emulator favours
  reproducibility over bandwidth.)
- bool tensors travel as uint8, as torch_npu hands them to HCCL (gloo has no bool), and bfloat16
  ones (a 910B's) as float16 views of their bits where they only move (torch 1.13's gloo has no
  bfloat16); bfloat16 reductions go round by all-gather too, max and min included, and are
  reduced here in rank order, each step rounded to bfloat16.
- The collectives HCCL has and torch 1.13's gloo lacks (all_gather into one tensor,
  reduce_scatter, all_to_all of lists) are made of the ones gloo has, under torch 1.13's and
  torch 2.x's names; all_gather takes outputs of any shape with the input's number of elements,
  as HCCL does.

- Every collective but point-to-point ones starts with an exchange in which the ranks agree on
  what they pass (``hccl_agreement``): a disagreement is an error on every rank, not gloo's abort
  or a partial result; and a rank that never comes makes the others fail after the group's exec
  timeout (``hccl_timeouts``: HCCL_EXEC_TIMEOUT, or the timeout the script gave).

torch DDP calls this group from C++ and computes on the tensors in the futures of the works it
returns, beside NPU tensors; so a collective returns a finished work whose future holds the
caller's own tensors, once gloo's work on their aliases is done (point-to-point ones excepted).
"""

from __future__ import annotations

import collections
import warnings
from typing import Any, Deque, List, Optional, Sequence

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import AllgatherOptions, _create_work_from_future

from .._device import devices, formats
from .._fp16 import mode as emulation
from . import hccl_agreement, hccl_timeouts
from .hccl_agreement import NONE, Record

_ORDERED = {"SUM", "AVG", "PRODUCT", "PREMUL_SUM"}
_PICKED = {"MIN": torch.minimum, "MAX": torch.maximum}
# What HCCL pre-multiplies (torch_npu's PREMUL_SUM: each rank scales its tensor, then they sum).
_PREMUL_DTYPES = (torch.float16, torch.float32, torch.bfloat16, torch.float64)
# Integers HCCL reduces as int32 (torch_npu casts them there and the result back).
_AS_INT32 = (torch.uint8, torch.bool)


def op_name(op: Any) -> str:
    """The name of a ``ReduceOp`` (``SUM``, ``PRODUCT``, ...)."""
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        if op == getattr(dist.ReduceOp, name):
            return name
    return str(op)


def _premul_factor(op: Any) -> Any:
    """The factor of a PREMUL_SUM ``ReduceOp`` (a number or a tensor), as
    ``torch.distributed._make_nccl_premul_sum`` stored it."""
    state = op.__getstate__()
    if not state:  # torch 1.13 keeps the factor in C++ only
        raise RuntimeError(
            "hccl: a PREMUL_SUM reduction needs torch 2.x, whose ReduceOp gives its factor "
            "back to Python"
        )
    return state[1]


def _flat(value: Any) -> List[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _flat(item)]
    return []


# torch_npu 2.x refuses a private-format tensor at an offset; torch_npu 1.x (for torch 1.x) only
# warned, once, and went on.
_REFUSES_FORMAT_OFFSETS = int(torch.__version__.split(".")[0]) >= 2
_FORMAT_OFFSET_WARNING = (
    "The storage data_ptr is different from tensor data_ptr. Maybe this tensor is not "
    "suitable for HCCL."
)


def internal_format_offset_error(call: str, *tensors: Any) -> Optional[RuntimeError]:
    """The error HCCL gives for a tensor in a private format (FRACTAL_NZ, NC1HWC0, ...) that does
    not start its storage: HCCL counts such a tensor by its storage, so it must own it from its
    start (torch_npu 1.x warns instead). On an NPU a view shares its base's storage and so its
    format; the emulator keeps the format on the base, so a view is judged by its base's."""
    for t in _flat(tensors):
        fmt = int(formats.get_npu_format(t))
        if fmt in formats.BASE_FORMATS and t._base is not None:
            fmt = int(formats.get_npu_format(t._base))
        if fmt not in formats.BASE_FORMATS and t.storage_offset() != 0:
            if not _REFUSES_FORMAT_OFFSETS:
                warnings.warn(_FORMAT_OFFSET_WARNING)  # once per place, as Python's filter does
                return None
            return RuntimeError(
                f"hccl: {call}: For a tensor of internal format, it's storage_offset must be 0 "
                f"(a tensor in format {fmt} at offset {t.storage_offset()}; make it contiguous "
                "in its own storage with .clone() first)"
            )
    return None


def _refuse_internal_format_offset(call: str, tensors: Any) -> None:
    error = internal_format_offset_error(call, tensors)
    if error is not None:
        raise error


def _deliver(sent: Sequence[torch.Tensor], received: Sequence[torch.Tensor]) -> None:
    """Copy a rank's send to itself into its receive: as many elements, of one dtype."""
    for source, target in zip(sent, received):
        if source.numel() != target.numel() or source.dtype != target.dtype:
            raise RuntimeError(
                f"hccl: a rank's send to itself of {source.numel()} {source.dtype} elements "
                f"does not fit its receive of {target.numel()} {target.dtype} elements"
            )
        target.copy_(source.reshape(target.shape))


def _carried(x: Any) -> Any:
    """``x`` (a tensor, or lists of them) as gloo gets it: aliases of the same memory without
    the NPU mark, bool tensors as uint8 views of their bytes and bfloat16 ones as float16 views
    of their bits (gloo only moves them: the bits arrive)."""
    with emulation.paused():
        return _alias(x)


def _plain(x: Any) -> Any:
    """``x`` as aliases of the same memory and dtype without the NPU mark (for reductions, whose
    dtype gloo must see as it is); see ``_carried``."""
    with emulation.paused():
        return _alias(x, keep_dtype=True)


# The latest gloo works, kept from being freed in gloo's threads. A tensor made in Python is freed
# with the GIL; a gloo thread that drops a work's last reference after the interpreter began to
# finalise asks for the GIL and is ended by CPython, through frames that may not unwind
# ("terminate called without an active exception"). Kept here, a work is freed in Python's thread:
# when newer works push it out, or at exit.
_recent_works: Deque[Any] = collections.deque(maxlen=8)


def _kept(work: Any) -> Any:
    """``work``, kept among the latest works (see ``_recent_works``)."""
    _recent_works.append(work)
    return work


def _answering(inner: Any, result: Any) -> Any:
    """A finished work whose future holds ``result`` (the caller's own tensors, on which DDP's
    and PowerSGD's hooks compute beside NPU tensors), once gloo's work on ``_carried`` aliases
    is done. Waited for here: chaining gloo's future with a Python callback would need the GIL
    in gloo's thread, which a waiter in C++ may hold, and torch 1.13 calls no Python override of
    a work's ``wait``."""
    _kept(inner).wait()
    return _finished(result)


def _finished(result: Any) -> Any:
    """A finished work whose future holds ``result``."""
    future = torch.futures.Future()
    future.set_result(result)
    return _create_work_from_future(future)


def _with_op(opts: Any, op: Any) -> Any:
    """A copy of collective options ``opts`` reducing by ``op`` (the caller's stay as they are:
    torch's options objects cannot be copied, so their fields are)."""
    new = type(opts)()
    for name in dir(opts):
        if not name.startswith("_") and name != "reduceOp" and not callable(getattr(opts, name)):
            setattr(new, name, getattr(opts, name))
    new.reduceOp = op
    return new


def _alias(x: Any, keep_dtype: bool = False) -> Any:
    if isinstance(x, torch.Tensor):
        if keep_dtype:  # bool as its uint8 bytes: torch 1.13's gloo reduces no bool
            return x.view(torch.uint8 if x.dtype == torch.bool else x.dtype)
        if x.dtype == torch.bool:
            return x.view(torch.uint8)
        return x.view(torch.float16 if x.dtype == torch.bfloat16 else x.dtype)
    if isinstance(x, (list, tuple)):
        return [_alias(v, keep_dtype) for v in x]
    return x


class HcclOptions:
    """``ProcessGroupHCCL.Options``: what a script may say of a new HCCL group (torch_npu's
    fields). HCCL's own settings (``hccl_config``) tune the NPU's links and are kept as given;
    the timeout applies, as gloo's."""

    def __init__(self, is_high_priority_stream: bool = False) -> None:
        self.is_high_priority_stream = is_high_priority_stream
        self.hccl_config: dict = {}
        self.global_ranks_in_group: List[int] = []
        self.group_id = ""
        self._timeout: Optional[Any] = None


def _numel(tensors: Sequence[torch.Tensor]) -> int:
    return sum(t.numel() for t in tensors)


def _other_dtype(tensors: Sequence[torch.Tensor], dtype: torch.dtype) -> torch.dtype:
    """The first of ``tensors``' dtypes that is not ``dtype`` (``dtype`` when all are)."""
    return next((t.dtype for t in tensors if t.dtype != dtype), dtype)


class HcclProcessGroup(dist.ProcessGroup):
    Options = HcclOptions

    def __init__(
        self,
        gloo: Any,
        rank: int,
        size: int,
        options: Optional[HcclOptions] = None,
        exec_bound: Optional[hccl_timeouts.Bound] = None,
        label: str = "",
    ):
        super().__init__(rank, size)
        self.gloo = gloo
        self.options = options if options is not None else HcclOptions()
        # How long a collective waits for its peers (gloo's own timeout is set to it), said in
        # the error when it runs out; and how the group is named in errors (a subgroup's ranks).
        self.exec_bound = exec_bound if exec_bound is not None else hccl_timeouts.exec_bound(True)
        self.label = label
        # A rank's sends to itself and receives from itself, by tag, waiting for their match.
        self._to_self: dict = {}
        self._from_self: dict = {}

    def _agree(self, record: Record, *tensors: Any) -> None:
        """Every rank agrees on ``record`` before data moves (``hccl_agreement``); this rank
        refuses first, as HCCL does, ``tensors`` it cannot pass (see ``_refusal``)."""
        if record.refusal is None and tensors:
            refusal = self._refusal(record, tensors)
            if refusal is not None:
                record.refuse(refusal)
        hccl_agreement.agree(self._gather_records, record, self.exec_bound, self.label)

    @staticmethod
    def _refusal(record: Record, tensors: Any) -> Optional[RuntimeError]:
        """What torch_npu's HCCL group checks of a collective's tensors before it runs: a tensor
        of a private format must start its storage; PREMUL_SUM scales floating-point tensors
        only."""
        error = internal_format_offset_error(record.call, *tensors)
        if error is not None:
            return error
        op = record.values[hccl_agreement.OP]
        if op == hccl_agreement.OPS.index("PREMUL_SUM"):
            wrong = [t.dtype for t in _flat(tensors) if t.dtype not in _PREMUL_DTYPES]
            if wrong:
                return RuntimeError(
                    f"hccl: {record.call} with a PREMUL_SUM of a {wrong[0]} tensor: PreMulSum "
                    "Data type must be half, float, bfloat16 or double"
                )
        return None

    def _gather_records(self, outputs: List[torch.Tensor], input: torch.Tensor) -> None:
        _kept(self.gloo.allgather([outputs], [input])).wait()

    def _record(self, call: str, **fields: Any) -> Record:
        return Record(call, self.size(), **fields)

    def _group_start(self) -> None:
        """Open a group of collectives (HcclGroupStart), which an NPU launches together at
        ``_group_end``. The emulated group runs each collective as it is called (a
        point-to-point one without waiting for its peer), so the calls of a group complete
        with the same values; the depth is kept so that an unmatched end is refused."""
        self._group_depth = getattr(self, "_group_depth", 0) + 1

    def _group_end(self) -> None:
        """Close the group ``_group_start`` opened (HcclGroupEnd)."""
        depth = getattr(self, "_group_depth", 0)
        if depth == 0:
            raise RuntimeError("hccl: _group_end() without a _group_start() before it")
        self._group_depth = depth - 1

    # torch 2.x splits a bound device's backend when it can (NCCL's); HCCL's is not split here.
    supports_splitting = False

    def getBackendName(self) -> str:  # noqa: N802 - c10d's name
        return "hccl"

    def _get_backend(self, device: Any) -> Any:
        """The backend serving ``device``'s tensors, as torch 2.x asks it of a group (for its
        bound device): this group itself, for the NPUs and the host. Another device type is
        refused as torch refuses it."""
        kind = torch.device(device).type
        if kind in ("npu", "cpu") or (kind == "cuda" and devices.cuda_means_npu):
            return self
        raise RuntimeError(f"No backend type associated with device type {kind}")

    # --- reductions in rank order ---------------------------------------------------------------

    @staticmethod
    def _reduced_here(op: str, tensors: Sequence[torch.Tensor]) -> bool:
        """Whether the reduction runs here (float sums, means and products, in rank order; every
        bfloat16 one) rather than in gloo."""
        if op in _ORDERED and all(t.is_floating_point() for t in tensors):
            return True
        return op in _PICKED and any(t.dtype == torch.bfloat16 for t in tensors)

    def _reduce_in_rank_order(self, tensor: torch.Tensor, op: str) -> None:
        parts = [torch.empty_like(tensor) for _ in range(self.size())]
        _kept(self.gloo.allgather([_carried(parts)], [_carried(tensor)])).wait()
        acc = parts[0].clone()
        for part in parts[1:]:
            if op in _PICKED:
                acc = _PICKED[op](acc, part)
            elif op == "PRODUCT":
                acc.mul_(part)
            else:
                acc.add_(part)
        if op == "AVG":
            acc.div_(self.size())
        tensor.copy_(acc)

    def allreduce(self, tensors: List[torch.Tensor], opts: Optional[Any] = None) -> Any:
        opts = opts if opts is not None else dist.AllreduceOptions()
        self._agree(
            self._record(
                "all_reduce",
                tensor=tensors[0],
                op=op_name(opts.reduceOp),
                count=_numel(tensors),
                tensors=len(tensors),
            ),
            tensors,
        )
        return self._allreduce(tensors, opts)

    def _allreduce(self, tensors: List[torch.Tensor], opts: Any) -> Any:
        op = op_name(opts.reduceOp)
        if op == "PREMUL_SUM":  # each rank scales its own tensor, then they sum
            factor = _premul_factor(opts.reduceOp)
            for t in tensors:
                t.mul_(factor)
            return self._allreduce(tensors, _with_op(opts, dist.ReduceOp.SUM))
        if op == "AVG" and not all(t.is_floating_point() for t in tensors):
            return self._integer_mean(tensors, opts)
        if op == "SUM" and any(t.dtype == torch.bool for t in tensors):
            opts = _with_op(opts, dist.ReduceOp.MAX)  # a bool sum is an or, as torch_npu's
        if not self._reduced_here(op, tensors):
            return _answering(self.gloo.allreduce(_plain(tensors), opts), tensors)
        for t in tensors:
            self._reduce_in_rank_order(t, op)
        return _finished(tensors)  # reduced, equal on every rank

    def _integer_mean(self, tensors: List[torch.Tensor], opts: Any) -> Any:
        """AVG of integers, which HCCL (and gloo) has not: torch_npu sums, then divides by the
        group's size rounding toward zero; uint8 and bool by way of int32, as it reduces them."""
        total = _with_op(opts, dist.ReduceOp.SUM)
        for t in tensors:
            wide = t.to(torch.int32) if t.dtype in _AS_INT32 else t
            self._allreduce([wide], total).wait()
            wide.div_(self.size(), rounding_mode="trunc")
            if wide is not t:
                t.copy_(wide)
        return _finished(tensors)

    def allreduce_coalesced(self, tensors: List[torch.Tensor], opts: Optional[Any] = None) -> Any:
        options = dist.AllreduceOptions()
        if opts is not None:
            options.reduceOp = opts.reduceOp
        self._agree(
            self._record(
                "all_reduce_coalesced",
                tensor=tensors[0],
                op=op_name(options.reduceOp),
                count=_numel(tensors),
                tensors=len(tensors),
            ),
            tensors,
        )
        return self._allreduce(tensors, options)

    def reduce(self, tensors: List[torch.Tensor], opts: Any) -> Any:
        self._agree(
            self._record(
                "reduce",
                tensor=tensors[0],
                op=op_name(opts.reduceOp),
                root=opts.rootRank,
                count=_numel(tensors),
                tensors=len(tensors),
            ),
            tensors,
        )
        if op_name(opts.reduceOp) == "SUM" and any(t.dtype == torch.bool for t in tensors):
            opts = _with_op(opts, dist.ReduceOp.MAX)  # as in allreduce
        options = dist.AllreduceOptions()
        options.reduceOp = opts.reduceOp
        op = op_name(opts.reduceOp)
        if self._reduced_here(op, tensors) or op in ("AVG", "PREMUL_SUM"):
            return self._allreduce(tensors, options)  # every rank gets it; dst reads it
        return _answering(self.gloo.reduce(_plain(tensors), opts), tensors)

    def reduce_scatter(
        self, outputs: List[torch.Tensor], input_lists: List[List[torch.Tensor]], opts: Any
    ) -> Any:
        """Rank i's ``inputs[j]`` must hold as many elements as rank j's output (they may differ
        from rank to rank); the ranks agree on that before any data moves."""
        world = self.size()
        inputs = input_lists[0]
        record = self._record(
            "reduce_scatter",
            tensor=outputs[0],
            op=op_name(opts.reduceOp),
            count=NONE,
            tensors=len(outputs),
            out_dtype=_other_dtype(inputs, outputs[0].dtype),
        )
        if len(inputs) != world:
            record.refuse(
                RuntimeError(
                    f"hccl: reduce_scatter of {len(inputs)} input tensors in a group of {world}: "
                    "the input list must hold one tensor per rank"
                )
            )
        else:
            record.flows([t.numel() for t in inputs], [outputs[0].numel()] * world)
        self._agree(record, outputs, input_lists)
        return self._reduce_scatter(outputs, input_lists, opts)

    def _reduce_scatter(
        self, outputs: List[torch.Tensor], input_lists: List[List[torch.Tensor]], opts: Any
    ) -> Any:
        options = dist.AllreduceOptions()
        options.reduceOp = opts.reduceOp
        for output, inputs in zip(outputs, input_lists):
            whole = torch.cat([t.reshape(-1) for t in inputs])
            self._allreduce([whole], options).wait()
            start = sum(t.numel() for t in inputs[: self.rank()])
            output.copy_(whole[start : start + output.numel()].view_as(output))
        return _finished(list(outputs))

    def _reduce_scatter_base(self, output: torch.Tensor, input: torch.Tensor, opts: Any) -> Any:
        world = self.size()
        record = self._record(
            "reduce_scatter_tensor", tensor=output, op=op_name(opts.reduceOp), out_dtype=input.dtype
        )
        if input.numel() != world * output.numel():
            record.refuse(
                RuntimeError(
                    f"hccl: reduce_scatter_tensor of {input.numel()} elements into "
                    f"{output.numel()}: the input must hold the group's size ({world}) times the "
                    "output's elements"
                )
            )
        self._agree(record, output, input)
        return self._reduce_scatter([output], [list(input.reshape(-1).chunk(world))], opts)

    # --- gathers ----------------------------------------------------------------------------------

    def _allgather_base(
        self, output: torch.Tensor, input: torch.Tensor, opts: Optional[Any] = None
    ) -> Any:
        world = self.size()
        record = self._record("all_gather_into_tensor", tensor=input, out_dtype=output.dtype)
        if output.numel() != world * input.numel():
            record.refuse(
                RuntimeError(
                    f"hccl: all_gather_into_tensor of {input.numel()} elements into "
                    f"{output.numel()}: the output must hold the group's size ({world}) times the "
                    "input's elements"
                )
            )
        self._agree(record, output, input)
        return self._allgather_into(output, input)

    def _allgather_into(self, output: torch.Tensor, input: torch.Tensor) -> Any:
        parts = list(_carried(output).view(-1).chunk(self.size()))
        return _answering(self.gloo.allgather([parts], [_carried(input).view(-1)]), [output])

    # torch 2.x calls the single-tensor collectives by these names.
    def all_gather_single(
        self, output: torch.Tensor, input: torch.Tensor, opts: Optional[Any] = None
    ) -> Any:
        return self._allgather_base(output, input, opts)

    def reduce_scatter_single(self, output: torch.Tensor, input: torch.Tensor, opts: Any) -> Any:
        return self._reduce_scatter_base(output, input, opts)

    def all_to_all_single(
        self,
        output: torch.Tensor,
        input: torch.Tensor,
        output_split_sizes: Any,
        input_split_sizes: Any,
        opts: Optional[Any] = None,
    ) -> Any:
        return self.alltoall_base(output, input, output_split_sizes, input_split_sizes, opts)

    def all_gather_single_coalesced(
        self, outputs: Sequence[torch.Tensor], inputs: Sequence[torch.Tensor], opts: Any = None
    ) -> Any:
        for output, input in zip(outputs, inputs):
            self._allgather_base(output, input, opts).wait()
        return _finished(list(outputs))

    def reduce_scatter_single_coalesced(
        self, outputs: Sequence[torch.Tensor], inputs: Sequence[torch.Tensor], opts: Any
    ) -> Any:
        for output, input in zip(outputs, inputs):
            self._reduce_scatter_base(output, input, opts).wait()
        return _finished(list(outputs))

    def alltoall(
        self,
        outputs: Sequence[torch.Tensor],
        inputs: Sequence[torch.Tensor],
        opts: Optional[Any] = None,
    ) -> Any:
        world = self.size()
        record = self._record(
            "all_to_all",
            tensor=inputs[0],
            count=NONE,
            out_dtype=_other_dtype(list(inputs) + list(outputs), inputs[0].dtype),
        )
        if len(inputs) != world or len(outputs) != world:
            record.refuse(
                RuntimeError(
                    f"hccl: all_to_all of {len(inputs)} input and {len(outputs)} output tensors in a "
                    f"group of {world}: each list must hold one tensor per rank"
                )
            )
        else:
            record.flows([t.numel() for t in inputs], [t.numel() for t in outputs])
        self._agree(record, outputs, inputs)
        sent = torch.cat([t.reshape(-1) for t in inputs])
        received = torch.empty(sum(t.numel() for t in outputs), dtype=sent.dtype)
        _kept(
            self.gloo.alltoall_base(
                _carried(received),
                _carried(sent),
                [t.numel() for t in outputs],
                [t.numel() for t in inputs],
                dist.AllToAllOptions(),
            )
        ).wait()
        for out, part in zip(outputs, received.split([t.numel() for t in outputs])):
            out.copy_(part.view_as(out))
        return _finished(list(outputs))

    # --- everything else is gloo's --------------------------------------------------------------

    def broadcast(self, tensors: List[torch.Tensor], opts: Any) -> Any:
        self._agree(
            self._record(
                "broadcast",
                tensor=tensors[0],
                root=opts.rootRank,
                count=_numel(tensors),
                tensors=len(tensors),
            ),
            tensors,
        )
        return _answering(self.gloo.broadcast(_carried(tensors), opts), tensors)

    def allgather(
        self,
        outputs: List[List[torch.Tensor]],
        inputs: List[torch.Tensor],
        opts: Optional[Any] = None,
    ) -> Any:
        """HCCL, like NCCL, asks only that every output hold as many elements as the input (it
        gathers into one flat buffer); gloo wants the input's very shape. Ascend's apex gathers a
        0-d count into 1-element tensors (combine_ddp). So an output of another shape receives
        its values through a view of the input's shape, or through a temporary copied back when
        it cannot be viewed so; a different number of elements is refused as HCCL refuses it."""
        opts = opts if opts is not None else AllgatherOptions()
        world = self.size()
        listed = [t for output_list in outputs for t in output_list]
        record = self._record(
            "all_gather",
            tensor=inputs[0],
            count=_numel(inputs),
            tensors=len(inputs),
            out_dtype=_other_dtype(listed, inputs[0].dtype),
        )
        if any(len(output_list) != world for output_list in outputs):
            record.refuse(
                RuntimeError(
                    f"hccl: all_gather into {[len(o) for o in outputs][0]} output tensors in a group "
                    f"of {world}: the output list must hold one tensor per rank"
                )
            )
        else:
            for output_list, input in zip(outputs, inputs):
                wrong = [o for o in output_list if o.numel() != input.numel()]
                if wrong:
                    record.refuse(
                        RuntimeError(
                            f"hccl: all_gather of a {tuple(input.shape)} tensor into a "
                            f"{tuple(wrong[0].shape)} one: all tensor operands to scatter/gather "
                            "must have the same number of elements"
                        )
                    )
            if len(inputs) == 1:
                record.flows([inputs[0].numel()] * world, [o.numel() for o in outputs[0]])
        self._agree(record, outputs, inputs)
        gathered, staged = [], []
        for output_list, input in zip(outputs, inputs):
            row = []
            for output in output_list:
                if output.shape == input.shape:
                    row.append(output)
                elif output.is_contiguous():
                    row.append(output.view(input.shape))
                else:
                    temporary = output.new_empty(input.shape)
                    staged.append((output, temporary))
                    row.append(temporary)
            gathered.append(row)
        work = _answering(self.gloo.allgather(_carried(gathered), _carried(inputs), opts), outputs)
        if not staged:
            return work
        work.wait()
        for output, temporary in staged:
            output.copy_(temporary.reshape(output.shape))
        return _finished(outputs)

    def allgather_coalesced(self, outputs: Any, inputs: Any, opts: Optional[Any] = None) -> Any:
        world = self.size()
        listed = [t for output_list in outputs for t in output_list]
        record = self._record(
            "all_gather_coalesced",
            tensor=inputs[0],
            count=_numel(inputs),
            tensors=len(inputs),
            out_dtype=_other_dtype(listed, inputs[0].dtype),
        )
        if len(outputs) != world or any(
            [t.numel() for t in output_list] != [t.numel() for t in inputs]
            for output_list in outputs
        ):
            record.refuse(
                RuntimeError(
                    "hccl: all_gather_coalesced: the outputs must hold, for each of the group's "
                    f"{world} ranks, tensors of the inputs' numbers of elements"
                )
            )
        self._agree(record, outputs, inputs)
        return _answering(
            self.gloo.allgather_coalesced(
                _carried(outputs),
                _carried(inputs),
                opts if opts is not None else AllgatherOptions(),
            ),
            outputs,
        )

    def gather(self, outputs: Any, inputs: Any, opts: Any) -> Any:
        world, root = self.size(), opts.rootRank
        record = self._record(
            "gather", tensor=inputs[0], root=root, count=_numel(inputs), tensors=len(inputs)
        )
        received = outputs[0] if self.rank() == root and outputs else []
        sends = [inputs[0].numel() if j == root else 0 for j in range(world)]
        if self.rank() == root and len(received) != world:
            record.refuse(
                RuntimeError(
                    f"hccl: gather into {len(received)} output tensors in a group of {world}: the "
                    "root's output list must hold one tensor per rank"
                )
            )
        else:
            record.flows(sends, [t.numel() for t in received] or [0] * world)
            record.values[hccl_agreement.OUT_DTYPE] = hccl_agreement.dtype_code(
                _other_dtype(received, inputs[0].dtype)
            )
        self._agree(record, outputs, inputs)
        return _answering(self.gloo.gather(_carried(outputs), _carried(inputs), opts), outputs)

    def scatter(self, outputs: Any, inputs: Any, opts: Any) -> Any:
        world, root = self.size(), opts.rootRank
        record = self._record(
            "scatter", tensor=outputs[0], root=root, count=_numel(outputs), tensors=len(outputs)
        )
        given = inputs[0] if self.rank() == root and inputs else []
        expects = [outputs[0].numel() if j == root else 0 for j in range(world)]
        if self.rank() == root and len(given) != world:
            record.refuse(
                RuntimeError(
                    f"hccl: scatter of {len(given)} input tensors in a group of {world}: the root's "
                    "input list must hold one tensor per rank"
                )
            )
        else:
            record.flows([t.numel() for t in given] or [0] * world, expects)
            record.values[hccl_agreement.OUT_DTYPE] = hccl_agreement.dtype_code(
                _other_dtype(given, outputs[0].dtype)
            )
        self._agree(record, outputs, inputs)
        return _answering(self.gloo.scatter(_carried(outputs), _carried(inputs), opts), outputs)

    def alltoall_base(
        self,
        output: torch.Tensor,
        input: torch.Tensor,
        output_split_sizes: Any,
        input_split_sizes: Any,
        opts: Optional[Any] = None,
    ) -> Any:
        record = self._record("all_to_all_single", tensor=input, count=NONE, out_dtype=output.dtype)
        try:
            record.flows(
                self._split_elements(input, input_split_sizes, "input"),
                self._split_elements(output, output_split_sizes, "output"),
            )
        except RuntimeError as error:
            record.refuse(error)
        self._agree(record, output, input)
        return _answering(
            self.gloo.alltoall_base(
                _carried(output),
                _carried(input),
                output_split_sizes,
                input_split_sizes,
                opts if opts is not None else dist.AllToAllOptions(),
            ),
            [output],
        )

    # Point-to-point works are gloo's own (their futures hold the aliases): a send must not wait
    # for its receiver, which may be sending first.
    def send(self, tensors: List[torch.Tensor], dst: int, tag: int) -> Any:
        _refuse_internal_format_offset("send", tensors)
        if dst == self.rank():
            return self._send_to_self(tensors, tag)
        return _kept(self.gloo.send(_carried(tensors), dst, tag))

    def recv(self, tensors: List[torch.Tensor], src: int, tag: int) -> Any:
        _refuse_internal_format_offset("recv", tensors)
        if src == self.rank():
            return self._receive_from_self(tensors, tag)
        return _kept(self.gloo.recv(_carried(tensors), src, tag))

    def recv_anysource(self, tensors: List[torch.Tensor], tag: int) -> Any:
        _refuse_internal_format_offset("recv", tensors)
        return _kept(self.gloo.recv_anysource(_carried(tensors), tag))

    # A rank may send to itself (batch_isend_irecv among all ranks, itself included), as HCCL
    # lets it; gloo has no link from a rank to itself, so the values pass here: a send is kept
    # until its receive is posted, and a receive posted first completes at its send.

    def _send_to_self(self, tensors: List[torch.Tensor], tag: int) -> Any:
        waiting = self._from_self.get(tag)
        if waiting:
            targets, future = waiting.popleft()
            _deliver(tensors, targets)
            future.set_result(targets)
        else:
            kept = [t.clone() for t in tensors]
            self._to_self.setdefault(tag, collections.deque()).append(kept)
        return _finished(tensors)

    def _receive_from_self(self, tensors: List[torch.Tensor], tag: int) -> Any:
        sent = self._to_self.get(tag)
        if sent:
            _deliver(sent.popleft(), tensors)
            return _finished(tensors)
        future = torch.futures.Future()
        self._from_self.setdefault(tag, collections.deque()).append((tensors, future))
        return _create_work_from_future(future)

    def _split_elements(self, tensor: torch.Tensor, splits: Any, name: str) -> List[int]:
        """The elements of ``tensor`` that go to (or come from) each rank in all_to_all_single:
        its rows split by ``splits``, or evenly when none are given."""
        world = self.size()
        rows = tensor.shape[0] if tensor.dim() else 1
        per_row = tensor.numel() // rows if rows else 0
        splits = [int(n) for n in splits] if splits is not None else []
        if not splits:
            if rows % world:
                raise RuntimeError(
                    "Tensor's dim 0 does not divide equally across group size (hccl: "
                    f"all_to_all_single of an {name} of {rows} rows in a group of {world}: "
                    "without split sizes, the rows must divide evenly among the ranks)"
                )
            return [rows // world * per_row] * world
        if len(splits) != world or sum(splits) != rows or min(splits) < 0:
            # torch's words (c10d's split check, which torch_npu's HCCL group runs) first.
            words = (
                "Number of tensor splits not equal to group size"
                if len(splits) != world
                else "Split sizes doesn't match total dim 0 size"
            )
            raise RuntimeError(
                f"{words} (hccl: all_to_all_single with "
                f"{name} split sizes {splits} for {rows} rows in a group of {world}: give one "
                "size per rank, summing to the rows)"
            )
        return [n * per_row for n in splits]

    def barrier(self, opts: Optional[Any] = None) -> Any:
        # The exchange tells a barrier from another collective that a peer calls instead.
        self._agree(self._record("barrier"))
        return self.gloo.barrier(opts if opts is not None else dist.BarrierOptions())

    def monitored_barrier(self, timeout: Any = None, wait_all_ranks: bool = False) -> Any:
        return self.gloo.monitored_barrier(timeout, wait_all_ranks)
