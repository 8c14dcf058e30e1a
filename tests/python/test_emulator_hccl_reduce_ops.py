"""What torch_npu's HCCL group does beyond gloo's reductions, on the emulated NPU, as Huawei's own
distributed tests (test_allreduce.py, test_broadcast.py, ...) expect of it:

- ``ReduceOp.AVG`` of integers (HCCL has no AVG): the sum, divided by the group's size rounding
  toward zero; uint8 by way of int32, so a sum past 255 does not wrap before the division;
- ``torch_npu.distributed._make_hccl_premul_sum(factor)`` (torch 2.x): each rank's tensor times
  the factor, then summed; a PREMUL_SUM of integers is refused;
- a tensor of a private format (FRACTAL_NZ) that does not start its storage (a view past its
  first row) is refused by every collective and by send, with torch_npu's words; when one rank
  passes such a tensor its peer fails too rather than wait, and the group stays usable (torch
  2.x; torch_npu 1.x, on torch 1.13, warns and carries it);
- ``torch_npu.distributed.all_gather_into_tensor_uneven`` and ``reduce_scatter_tensor_uneven``
  (runs of rows of unequal lengths), and the backend's ``_group_start``/``_group_end``;
- a rank's send to itself (batch_isend_irecv among all ranks), which gloo has no link for;
- on torch 1.13, ``torch.distributed.ProcessGroupHCCL``, as torch_npu 1.x names it.

Two real processes on gloo (loopback); expected values are written out from the definitions.
"""

import json
import textwrap

import pytest
import torch

import overlay_support
from overlay_support import ranks

TORCH2 = int(torch.__version__.split(".")[0]) >= 2
OFFSET_ERROR = "For a tensor of internal format, it's storage_offset must be 0"

WORKER = textwrap.dedent(
    """
    import json, os, sys, traceback
    import torch
    import torch.distributed as dist
    import torch_npu

    rank = int(os.environ["RANK"])
    torch.npu.set_device(rank)
    torch_npu.npu.config.allow_internal_format = True
    dist.init_process_group("hccl")
    out = {}

    def error_of(fn):
        try:
            fn()
        except RuntimeError as e:
            return str(e)
        return None

    # AVG of integers: rank 0 [1, -5, 7], rank 1 [4, -6, 8]: sums [5, -11, 15].
    t = torch.tensor([[1, -5, 7], [4, -6, 8]][rank], dtype=torch.int32).npu()
    dist.all_reduce(t, dist.ReduceOp.AVG)
    out["avg_int32"] = t.cpu().tolist()
    u = torch.tensor([[200, 3], [100, 4]][rank], dtype=torch.uint8).npu()
    dist.all_reduce(u, dist.ReduceOp.AVG)
    out["avg_uint8"] = u.cpu().tolist()
    r = torch.tensor([[9, -3], [2, -4]][rank], dtype=torch.int64).npu()
    dist.reduce(r, 0, dist.ReduceOp.AVG)
    if rank == 0:
        out["reduce_avg_int64"] = r.cpu().tolist()
    outputs = torch.empty(2, dtype=torch.int32).npu()
    inputs = torch.tensor([[1, 2, 3, -7], [4, 5, 6, 2]][rank], dtype=torch.int32).npu()
    dist.reduce_scatter_tensor(outputs, inputs, dist.ReduceOp.AVG)
    out["reduce_scatter_avg"] = outputs.cpu().tolist()

    premul = getattr(torch_npu.distributed, "_make_hccl_premul_sum", None)
    out["has_premul"] = premul is not None
    out["hccl_available"] = torch_npu.distributed.is_hccl_available()
    if premul is not None:
        f = torch.tensor([[1.5, -2.0], [0.25, 4.0]][rank]).npu()
        dist.all_reduce(f, premul(2.0))
        out["premul_fp32"] = f.cpu().tolist()
        h = torch.tensor([[1.5, -2.0], [0.25, 4.0]][rank], dtype=torch.float16).npu()
        dist.all_reduce(h, premul(torch.tensor([0.5]).npu()))
        out["premul_fp16_tensor_factor"] = h.cpu().float().tolist()
        i = torch.tensor([1, 2], dtype=torch.int32).npu()
        out["premul_int32"] = error_of(lambda: dist.all_reduce(i, premul(2.0)))

    # A group of collectives (HcclGroupStart/End) completes as its calls would.
    backend = dist.distributed_c10d._get_default_group()._get_backend(torch.device("npu"))
    backend._group_start()
    a = torch.full((2,), float(rank + 1)).npu()
    b = a * 10
    works = [dist.all_reduce(a, async_op=True), dist.all_reduce(b, async_op=True)]
    backend._group_end()
    for w in works:
        w.wait()
    out["grouped"] = a.cpu().tolist() + b.cpu().tolist()
    out["group_end_unmatched"] = error_of(backend._group_end)

    # batch_isend_irecv among all ranks, each rank itself included (receives posted first).
    received = [torch.full((peer + 1,), -1.0).npu() for peer in range(2)]
    ops = []
    for peer in range(2):
        ops.append(dist.P2POp(dist.irecv, received[peer], peer))
        ops.append(dist.P2POp(dist.isend, torch.full((rank + 1,), 10.0 * rank + peer).npu(), peer))
    for req in dist.batch_isend_irecv(ops):
        req.wait()
    out["p2p_with_self"] = [t.cpu().tolist() for t in received]

    # torch_npu 1.x names HCCL's group class in torch.distributed.
    pg_class = getattr(dist, "ProcessGroupHCCL", None)
    subgroup = dist.new_group([0, 1])
    out["new_group_is_hccl"] = None if pg_class is None else isinstance(subgroup, pg_class)

    # all_to_all_single's split sizes are checked in torch's (c10d's) words.
    out["split_sizes"] = error_of(
        lambda: dist.all_to_all_single(
            torch.zeros(3).npu(), torch.arange(3.0).npu(), [1, 2], [2, 2]
        )
    )

    # Unequal parts: rank 0 has 1 row, rank 1 has 3 (rows of 2).
    splits = [1, 3]
    part = (torch.arange(2 * splits[rank], dtype=torch.float32) + 10 * rank).view(-1, 2).npu()
    gathered = torch.zeros(4, 2).npu()
    torch_npu.distributed.all_gather_into_tensor_uneven(gathered, part, splits)
    out["gather_uneven"] = gathered.cpu().tolist()
    whole = (torch.arange(8, dtype=torch.float32) * (rank + 1)).view(4, 2).npu()
    mine = torch.zeros(splits[rank], 2).npu()
    work = torch_npu.distributed.reduce_scatter_tensor_uneven(mine, whole, splits, async_op=True)
    work.wait()
    out["reduce_scatter_uneven"] = mine.cpu().tolist()
    even = torch.zeros(2, 2, dtype=torch.int32).npu()
    torch_npu.distributed.reduce_scatter_tensor_uneven(
        even, whole.int(), op=dist.ReduceOp.MAX
    )
    out["reduce_scatter_uneven_even_max"] = even.cpu().tolist()
    host = torch.zeros(4, 2)
    out["uneven_host"] = torch_npu.distributed.all_gather_into_tensor_uneven(
        host, part.cpu(), splits
    ) is None and host.sum().item() == 0
    out["uneven_bad_splits"] = error_of(
        lambda: torch_npu.distributed.reduce_scatter_tensor_uneven(mine, whole, [2, 3])
    )

    # A FRACTAL_NZ tensor viewed past its first rows does not start its storage.
    nz = torch_npu.npu_format_cast(torch.ones(4, 16).npu(), 29)
    view = nz[2:]
    out["all_reduce_nz_view"] = error_of(lambda: dist.all_reduce(view))
    out["broadcast_nz_view"] = error_of(lambda: dist.broadcast(view, 0))
    gathered = [torch.empty(2, 16).npu() for _ in range(2)]
    out["all_gather_nz_view"] = error_of(lambda: dist.all_gather(gathered, view))
    if int(torch.__version__.split(".")[0]) >= 2:  # torch_npu 1.x sends it (a warning)
        out["send_nz_view"] = error_of(lambda: dist.send(view, 1 - rank))
    # The whole NZ tensor (offset 0) and an ND view at an offset pass.
    whole = nz.clone()
    dist.all_reduce(whole)
    out["all_reduce_nz_whole"] = whole.cpu().sum().item()
    plain = torch.ones(4, 16).npu()[2:]
    dist.all_reduce(plain)
    out["all_reduce_nd_view"] = plain.cpu().sum().item()
    # Only rank 0 passes the NZ view: rank 1 learns of it and fails too.
    mine = view if rank == 0 else torch.ones(2, 16).npu()
    out["one_rank_nz_view"] = error_of(lambda: dist.all_reduce(mine))
    after = torch.full((3,), float(rank + 1)).npu()
    dist.all_reduce(after)
    out["after"] = after.cpu().tolist()
    dist.destroy_process_group()
    print(json.dumps(out))
    """
)


@pytest.fixture(scope="module", params=["Ascend910A", "Ascend910B1"])
def results(request, tmp_path_factory):
    worker = tmp_path_factory.mktemp("hccl_reduce_ops") / "worker.py"
    worker.write_text(WORKER)
    env = overlay_support.overlay_env()
    for name in ("APEXNPU_HCCL_STRICT", "GLOO_SOCKET_IFNAME", "APEXNPU_INF_NAN_MODE"):
        env.pop(name, None)
    env["APEXNPU_SOC_VERSION"] = request.param
    done = ranks.launch([str(worker)], 2, env, timeout=300)
    for r in done:
        assert r.returncode == 0 and r.stdout.strip(), r
    return [json.loads(r.stdout.strip().splitlines()[-1]) for r in done]


def test_avg_of_integers_is_the_sum_divided_rounding_toward_zero(results):
    for got in results:
        assert got["avg_int32"] == [2, -5, 7]  # 5/2, -11/2, 15/2 toward zero (floor: -6)
        assert got["avg_uint8"] == [150, 3]  # 300/2: summed in int32, not wrapped to 44/2
        # reduce_scatter of [1,2,3,-7] and [4,5,6,2]: sums [5,7 | 9,-5], halves [2,3 | 4,-2]
    assert results[0]["reduce_scatter_avg"] == [2, 3]
    assert results[1]["reduce_scatter_avg"] == [4, -2]
    assert results[0]["reduce_avg_int64"] == [5, -3]  # 11/2, -7/2 toward zero


def test_premul_sum_scales_each_rank_then_sums(results):
    for got in results:
        assert got["hccl_available"] is True
        assert got["has_premul"] is TORCH2
        if not TORCH2:
            continue
        assert got["premul_fp32"] == [3.5, 4.0]  # 2 * (1.5 + 0.25), 2 * (-2 + 4)
        assert got["premul_fp16_tensor_factor"] == [0.875, 1.0]  # exact in fp16
        assert "PreMulSum Data type must be half, float, bfloat16 or double" in got["premul_int32"]


@pytest.mark.skipif(not TORCH2, reason="torch_npu 1.x (torch 1.x) only warns of such a tensor")
def test_a_private_format_view_at_an_offset_is_refused(results):
    for rank, got in enumerate(results):
        for call in ("all_reduce", "broadcast", "all_gather", "send"):
            assert OFFSET_ERROR in got[f"{call}_nz_view"], (rank, call, got[f"{call}_nz_view"])
        assert got["all_reduce_nz_whole"] == 2 * 64
        assert got["all_reduce_nd_view"] == 2 * 32
        assert got["after"] == [3.0, 3.0, 3.0]  # the group still works
    assert OFFSET_ERROR in results[0]["one_rank_nz_view"]
    # The peer is told that rank 0 refused, instead of waiting for it.
    assert "rank 0 refused it" in results[1]["one_rank_nz_view"]


@pytest.mark.skipif(TORCH2, reason="torch_npu 2.x refuses such a tensor")
def test_torch_npu_1_reduces_a_private_format_view_at_an_offset(results):
    for got in results:
        for call in ("all_reduce", "broadcast", "all_gather", "one_rank"):
            assert got[f"{call}_nz_view"] is None, (call, got[f"{call}_nz_view"])
        assert got["after"] == [3.0, 3.0, 3.0]


def test_a_group_of_collectives_completes_and_an_unmatched_end_is_refused(results):
    for got in results:
        assert got["grouped"] == [3.0, 3.0, 30.0, 30.0]
        assert "_group_end() without a _group_start()" in got["group_end_unmatched"]
        assert got["split_sizes"].startswith("Split sizes doesn't match total dim 0 size")


def test_torch_npu_1_names_hccl_groups_in_torch_distributed(results):
    for got in results:
        assert got["new_group_is_hccl"] is (None if TORCH2 else True)


def test_a_rank_sends_to_itself_in_a_batch(results):
    # Peer p sends p + 1 values of 10 * p + (the receiver's rank).
    for rank, got in enumerate(results):
        assert got["p2p_with_self"] == [[10.0 * p + rank] * (p + 1) for p in range(2)]


def test_uneven_collectives_gather_and_scatter_runs_of_rows(results):
    # Rank 0's one row [0, 1], then rank 1's three rows [10..15].
    rows = [[0.0, 1.0], [10.0, 11.0], [12.0, 13.0], [14.0, 15.0]]
    # The sum of both ranks' inputs: arange(8) * 1 + arange(8) * 2 = 3 * arange(8).
    total = [[3.0 * (2 * i), 3.0 * (2 * i + 1)] for i in range(4)]
    for rank, got in enumerate(results):
        assert got["gather_uneven"] == rows
        assert got["reduce_scatter_uneven"] == (total[:1] if rank == 0 else total[1:])
        # Evenly split (no sizes), by MAX: rank 1's values, twice rank 0's, rows 2 by 2.
        doubled = [[2 * (2 * i), 2 * (2 * i + 1)] for i in range(4)]
        assert got["reduce_scatter_uneven_even_max"] == doubled[2 * rank : 2 * rank + 2]
        assert got["uneven_host"] is True  # host tensors: a warning, nothing done
        assert "input_split_sizes [2, 3] for 4 rows" in got["uneven_bad_splits"]
