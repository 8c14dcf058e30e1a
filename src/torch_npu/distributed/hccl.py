"""``init_process_group("hccl")`` on the emulated NPU: HCCL's rules, carried by gloo.

Ascend's collective communication (HCCL) allocates devices per node in groups of 1, 2, 4 or 8
(``DEVICES_PER_NODE``) and carries the data types of its chip (``hccl_dtypes``: a 910 no
bfloat16, a 910B bfloat16 too). The emulator runs hccl process groups on gloo and refuses what
HCCL refuses, with an error naming the call and the rule, so that code passing here does not
first fail on the NPU:
- devices per node: checked by ``init_process_group("hccl")`` before it meets the other ranks
  (so that every rank refuses at once, and none is left waiting for a rank that has already
  gone), and again when the default hccl group is made, for a world size only the rendezvous
  tells; per node is LOCAL_WORLD_SIZE when the launcher sets it (torchrun does), else the whole
  world (one node);
- data types: checked on every collective that code calls through ``torch.distributed`` on an
  hccl group. The byte and size tensors that torch's object collectives (all_gather_object, ...)
  move for you, and torch's own traffic from C++ (DDP's parameter checks, bucket all-reduces and
  buffer broadcasts), are not checked: the real stack carries them too.
``APEXNPU_HCCL_STRICT=0`` relaxes both rules on the emulator. A rank that refuses a collective
tells its peers first (``hccl_agreement``), so that they fail too rather than wait for it.

Waits are bounded as HCCL bounds them (``hccl_timeouts``): the making of a group by
HCCL_CONNECT_TIMEOUT, each collective by HCCL_EXEC_TIMEOUT; a ``timeout=`` given to
``init_process_group``, ``new_group`` or ``ProcessGroupHCCL.Options`` wins over both.

Gloo binds to loopback unless GLOO_SOCKET_IFNAME names an interface (ranks on several hosts need
it). The group itself (``hccl_group``) reduces in rank order and has the collectives gloo lacks.

The backend names the NPU as its device, as torch_npu registers it: on torch 2.x
``init_process_group`` takes it device-qualified (``"npu:hccl"``, which ``get_backend`` reports
as given) and ``device_id=torch.device("npu", N)``, which binds the group to that NPU
(``bound_device_id``, which torch's barrier and subgroups read), as torch_npu's group is bound.
torch 1.13 takes neither (its own errors say so).
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from typing import Any, Callable, Iterator, Optional

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d as c10d

from .. import _wraps
from . import hccl_agreement, hccl_dtypes, hccl_timeouts
from .hccl_dtypes import MOVED_DTYPES, REDUCED_DTYPES, STRICT_VARIABLE  # noqa: F401 - names
from .hccl_group import HcclOptions, HcclProcessGroup, op_name

NAME = "hccl"
DEVICES_PER_NODE = (1, 2, 4, 8)


# Collectives whose tensors are checked, by the name torch.distributed gives them.
COLLECTIVES = (
    "all_reduce",
    "all_reduce_coalesced",
    "reduce",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "_all_gather_base",
    "all_gather_coalesced",
    "gather",
    "scatter",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "_reduce_scatter_base",
    "all_to_all",
    "all_to_all_single",
    "send",
    "recv",
    "isend",
    "irecv",
    "batch_isend_irecv",
)
# The collectives that compute on their data (the rest only move it).
REDUCTIONS = frozenset(
    {
        "all_reduce",
        "all_reduce_coalesced",
        "reduce",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "_reduce_scatter_base",
    }
)
# Collectives of Python objects: the tensors they move internally are torch's, not the caller's.
OBJECT_COLLECTIVES = (
    "all_gather_object",
    "gather_object",
    "broadcast_object_list",
    "scatter_object_list",
)

_inside_object_collective = threading.local()
# Where the timeout of the group being made was given (init_process_group, new_group), if it was.
_given_timeout = threading.local()


def strict() -> bool:
    value = os.environ.get(STRICT_VARIABLE, "1").strip()
    if value not in ("0", "1"):
        raise ValueError(
            f"{STRICT_VARIABLE}={value!r}: expected 1 (HCCL's rules, the default) or 0 (relaxed)"
        )
    return value == "1"


def _count_from_environment(name: str) -> Optional[int]:
    """The count a launcher's variable (WORLD_SIZE, LOCAL_WORLD_SIZE) holds, None if unset."""
    text = os.environ.get(name, "").strip()
    return int(text) if text.isdigit() else None


def devices_per_node(world_size: int) -> int:
    per_node = _count_from_environment("LOCAL_WORLD_SIZE")
    return world_size if per_node is None else per_node


def check_devices_per_node(world_size: int) -> None:
    per_node = devices_per_node(world_size)
    if strict() and per_node not in DEVICES_PER_NODE:
        raise ValueError(
            f"init_process_group('hccl'): {per_node} processes per node: HCCL "
            f"allocates {hccl_dtypes.said(DEVICES_PER_NODE, 'or')} devices per node "
            f"({hccl_dtypes.CONSTRAINTS}); {hccl_dtypes.RELAX}"
        )


def _names_hccl(backend: Any) -> bool:
    """Whether an ``init_process_group`` backend argument asks for hccl: ``"hccl"`` or a
    ``"device:backend"`` list naming it."""
    if backend is None:
        return False
    return any(part.split(":")[-1].strip() == NAME for part in str(backend).lower().split(","))


def _known_world_size(world_size: Any) -> int:
    """The world size as the caller gave it, else WORLD_SIZE (env:// reads it), else 0: only
    the rendezvous knows (a tcp:// address carrying it, a store)."""
    if isinstance(world_size, int) and world_size > 0:
        return world_size
    return _count_from_environment("WORLD_SIZE") or 0


def _checked_init(original: Callable) -> Callable:
    signature = inspect.signature(original)

    @functools.wraps(original)
    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:  # torch's own error says what (torch 1.13 takes no device_id)
            return original(*args, **kwargs)
        backend = bound.arguments.get("backend")
        device_id = bound.arguments.get("device_id")
        if backend is None and isinstance(device_id, torch.device) and device_id.type == "npu":
            backend = NAME  # torch picks the NPU's backend for it
        if not _names_hccl(backend):
            return original(*args, **kwargs)
        world_size = _known_world_size(bound.arguments.get("world_size", -1))
        if world_size or _count_from_environment("LOCAL_WORLD_SIZE") is not None:
            check_devices_per_node(world_size)
        if bound.arguments.get("timeout") is not None:  # the script's bound wins
            wait = hccl_timeouts.given(bound.arguments["timeout"], "init_process_group")
            with _timeout_given_to("init_process_group"):
                return _connecting(wait, original, args, kwargs)
        hccl_timeouts.exec_bound(strict())  # a bad HCCL_EXEC_TIMEOUT is refused before meeting
        wait = hccl_timeouts.connect_bound(strict())
        bound.arguments["timeout"] = wait.timeout
        return _connecting(wait, original, bound.args, bound.kwargs)

    _wraps.mark(init_process_group, original)
    return init_process_group


def _connecting(wait: hccl_timeouts.Bound, make: Callable, args: Any, kwargs: Any) -> Any:
    """``make(*args, **kwargs)``, making an hccl group within ``wait``: running out of it is an
    error that says so (gloo's and the store's say "Socket Timeout" and the like)."""
    try:
        return make(*args, **kwargs)
    except (RuntimeError, OSError) as error:
        if not hccl_timeouts.is_timeout(error):
            raise
        raise RuntimeError(
            f"hccl: the group was not made within {wait.source}: a rank did not "
            "come (it stalled, failed, or was given another MASTER_ADDR, "
            f"MASTER_PORT or world size) ({error})"
        ) from error


class _timeout_given_to:  # noqa: N801 - used like a function
    """Within the block, groups made have the timeout given to ``where`` (not HCCL's)."""

    def __init__(self, where: str) -> None:
        self.where = where

    def __enter__(self) -> None:
        self.outer = getattr(_given_timeout, "where", None)
        _given_timeout.where = self.where

    def __exit__(self, *exc: Any) -> None:
        _given_timeout.where = self.outer


def _timed_new_group(original: Callable) -> Callable:
    """torch's ``new_group``, noting whether the script gave its timeout (which then bounds the
    new group's collectives instead of HCCL_EXEC_TIMEOUT)."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def new_group(*args: Any, **kwargs: Any) -> Any:
        try:
            given = signature.bind(*args, **kwargs).arguments.get("timeout") is not None
        except TypeError:  # torch's own error says what
            return original(*args, **kwargs)
        if not given:
            return original(*args, **kwargs)
        with _timeout_given_to("new_group"):
            return original(*args, **kwargs)

    _wraps.mark(new_group, original)
    return new_group


def _gloo_device() -> Any:
    interface = os.environ.get("GLOO_SOCKET_IFNAME", "").split(",")[0].strip() or "lo"
    return dist.ProcessGroupGloo.create_device(interface=interface)


def _create_group(options: Any, pg_options: Any = None) -> Any:
    if not options.global_ranks_in_group:  # the default group: the job's allocation
        check_devices_per_node(options.group_size)
    gloo = dist.ProcessGroupGloo._Options()
    gloo._devices = [_gloo_device()]
    gloo._threads = 2
    given = pg_options if isinstance(pg_options, HcclOptions) else None
    if given is not None and given._timeout:
        wait = connect = hccl_timeouts.given(given._timeout, "ProcessGroupHCCL.Options")
    elif getattr(_given_timeout, "where", None):
        wait = connect = hccl_timeouts.given(options.timeout, _given_timeout.where)
    else:
        wait, connect = hccl_timeouts.exec_bound(strict()), hccl_timeouts.connect_bound(strict())
    _connecting(
        connect,
        _all_ranks_arrive,
        (options.store, options.group_rank, options.group_size, connect.timeout),
        {},
    )
    gloo._timeout = wait.timeout  # gloo's own waits: every collective's (and its links')
    inner = _connecting(
        wait,
        dist.ProcessGroupGloo,
        (options.store, options.group_rank, options.group_size, gloo),
        {},
    )
    ranks = list(options.global_ranks_in_group or [])
    label = f" of the group of global ranks {ranks}" if ranks else ""
    group = HcclProcessGroup(inner, options.group_rank, options.group_size, given, wait, label)
    _register_devices(group, inner)
    return group


def _all_ranks_arrive(store: Any, rank: int, size: int, timeout: Any) -> None:
    """Wait, at most ``timeout``, until every rank of a group being made has come. Gloo links
    its ranks under its own timeout, which bounds collectives too (torch 1.13's gloo has no
    other): so the making of the group is bounded here first. ``store`` is the group's own
    (torch prefixes it with the group's name)."""
    store.set(f"hccl_arrived/{rank}", "1")
    store.wait([f"hccl_arrived/{r}" for r in range(size)], timeout)


def _register_devices(group: Any, inner: Any) -> None:
    """Give the hccl group gloo as its backend for the NPU in torch 2.x's per-device table, as
    torch_npu registers HCCL for the NPU. torch uses the group made in Python as it is and
    registers no backend on it, yet reads the table: a group's name (``group_name``, which
    DeviceMesh and the functional collectives of FSDP2 and DTensor resolve groups by) is its
    backends', and ``_device_types`` names the device FSDP's sharded state dicts place their
    shards on ("rank:0/npu:0"). Collectives called on the group still run its own (Python)
    methods."""
    register = getattr(group, "_register_backend", None)
    if register is None:  # torch 1.13: no per-device backends
        return
    register(torch.device("npu"), dist.ProcessGroup.BackendType.CUSTOM, inner)


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dist.P2POp):
        yield value.tensor


def _is_hccl(group: Any) -> bool:
    try:
        return _names_hccl(dist.get_backend(group))
    except (RuntimeError, ValueError):  # not a member, or no group yet: torch says so itself
        return False
    except AssertionError:  # a group made in Python (comm_hooks'): its collectives check theirs
        return False


def _checked(name: str, original: Callable) -> Callable:
    signature = inspect.signature(original)

    @functools.wraps(original)
    def collective(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        group = bound.arguments.get("group")
        ops = bound.arguments.get("p2p_op_list")
        if ops:
            group = ops[0].group
        if not _is_hccl(group):
            return original(*args, **kwargs)
        if not getattr(_inside_object_collective, "active", False) and strict():
            op = bound.arguments.get("op", dist.ReduceOp.SUM)
            try:
                hccl_dtypes.check(
                    name,
                    name in REDUCTIONS,
                    (t for v in bound.arguments.values() for t in _tensors(v)),
                    op_name(op),
                )
            except TypeError as refusal:
                _tell_peers(name, group, refusal)
                raise
        return original(*args, **kwargs)

    _wraps.mark(collective, original)
    return collective


def _tell_peers(name: str, group: Any, refusal: TypeError) -> None:
    """Tell the peers of ``group`` that this rank refuses collective ``name``, so that they fail
    too rather than wait for it (point-to-point calls have no exchange: their peer is not
    waiting in one). Raises ``refusal`` once they know."""
    if name not in hccl_agreement.CODES:
        return
    group = group if group is not None else c10d._get_default_group()
    if isinstance(group, HcclProcessGroup):
        group._agree(
            hccl_agreement.Record(name, group.size()).refuse(refusal, hccl_agreement.REFUSED_DTYPE)
        )


def _object_collective(original: Callable) -> Callable:
    @functools.wraps(original)
    def collective(*args: Any, **kwargs: Any) -> Any:
        outer = getattr(_inside_object_collective, "active", False)
        _inside_object_collective.active = True
        try:
            return original(*args, **kwargs)
        finally:
            _inside_object_collective.active = outer

    _wraps.mark(collective, original)
    return collective


def _binding(original: Callable) -> Callable:
    """torch 2.x's ``_new_process_group_helper``, binding an hccl group to its ``device_id``.

    torch sets ``bound_device_id`` on the group it made before the backend's creator ran; the
    hccl group replaces that one (it is a ProcessGroup itself), so the binding is set again on
    it, for the default group (``init_process_group(device_id=...)``) and subgroups alike."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def helper(*args: Any, **kwargs: Any) -> Any:
        made = original(*args, **kwargs)
        device_id = signature.bind(*args, **kwargs).arguments.get("device_id")
        group = made[0] if isinstance(made, tuple) else made
        if device_id is not None and isinstance(group, HcclProcessGroup):
            group.bound_device_id = device_id
        return made

    _wraps.mark(helper, original)
    return helper


def _replace(name: str, wrap: Callable[[Callable], Callable]) -> None:
    original = getattr(c10d, name, None)
    if original is None or _wraps.is_wrapper(original):
        return
    wrapped = wrap(original)
    setattr(c10d, name, wrapped)  # what torch's own functions call
    if getattr(dist, name, None) is original:
        setattr(dist, name, wrapped)


def register() -> None:
    """Make "hccl" a torch.distributed backend on gloo with HCCL's rules (idempotent)."""
    if not dist.is_available():
        return
    strict()  # a bad APEXNPU_HCCL_STRICT is an error now, not at the first collective
    if NAME.upper() in dist.Backend._plugins:
        if dist.Backend._plugins[NAME.upper()].creator_fn is not _create_group:
            raise RuntimeError(
                "an hccl backend is already registered with torch.distributed "
                "(the real torch_npu?); the emulated NPU will not replace it"
            )
        return
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:  # torch 2.x
        # The NPU's backend, as torch_npu registers it; and the host's too, since the emulated
        # NPU's tensors are host tensors to torch's C++.
        dist.Backend.register_backend(
            NAME, _create_group, extended_api=True, devices=["cpu", "npu"]
        )
    else:
        dist.Backend.register_backend(NAME, _create_group, extended_api=True)
        # torch_npu 1.x puts its distributed package in torch's place, HCCL's group class with
        # it: scripts test ``isinstance(group, torch.distributed.ProcessGroupHCCL)``.
        if not hasattr(dist, "ProcessGroupHCCL"):
            dist.ProcessGroupHCCL = HcclProcessGroup
    for name in COLLECTIVES:
        _replace(name, functools.partial(_checked, name))
    for name in OBJECT_COLLECTIVES:
        _replace(name, _object_collective)
    _replace("init_process_group", _checked_init)
    _replace("new_group", _timed_new_group)
    if "device_id" in inspect.signature(c10d._new_process_group_helper).parameters:
        _replace("_new_process_group_helper", _binding)
    dist.is_hccl_available = lambda: True
