"""One rank of the hccl agreement and timeout tests: ``python hccl_agreement_worker.py SCENARIO``.

Prints one JSON line with what the test checks: per case, the error this rank got
([type, message]) or its result; an exception outside the cases prints {"error", "message"}.
"""

import datetime
import json
import os
import sys
import time
import traceback

import torch
import torch.distributed as dist


def _attempt(fn):
    try:
        return ["ok", fn()]
    except Exception as e:  # the case's verdict, reported to the test
        return [type(e).__name__, str(e)]


def mismatches(rank, world):
    """Collectives whose ranks disagree, each refused on every rank; then a good one, which
    must still give the right result (a refusal moves no data and leaves the group usable)."""
    out = {}

    def all_reduce(t):
        dist.all_reduce(t)
        return t.tolist()

    # The case: an integer all_reduce of 4 elements against 3.
    out["all_reduce_int_sizes"] = _attempt(
        lambda: all_reduce(torch.ones(4 if rank == 0 else 3, dtype=torch.int32))
    )
    out["all_reduce_dtypes"] = _attempt(
        lambda: all_reduce(torch.ones(3, dtype=torch.float32 if rank == 0 else torch.int32))
    )
    out["all_reduce_float_sizes"] = _attempt(lambda: all_reduce(torch.ones(2 + 3 * rank)))
    # HCCL counts elements: shapes may differ where the counts agree.
    out["all_reduce_shapes"] = _attempt(
        lambda: all_reduce(torch.ones(2, 3) if rank == 0 else torch.ones(6))
    )

    def broadcast(t, src=0):
        dist.broadcast(t, src=src)
        return t.tolist()

    out["broadcast_sizes"] = _attempt(lambda: broadcast(torch.full((4 + 2 * rank,), 1.0 + rank)))
    out["broadcast_int_dtypes"] = _attempt(
        lambda: broadcast(torch.arange(3, dtype=torch.int64 if rank == 0 else torch.int32))
    )
    out["broadcast_roots"] = _attempt(lambda: broadcast(torch.ones(2), src=rank))

    def all_gather(n):
        parts = [torch.zeros(n) for _ in range(world)]
        dist.all_gather(parts, torch.ones(n))
        return [p.tolist() for p in parts]

    out["all_gather_sizes"] = _attempt(lambda: all_gather(2 + rank))

    def into_tensor(size):
        flat = torch.zeros(size)
        dist.all_gather_into_tensor(flat, torch.ones(2))
        return flat.tolist()

    # Rank 1's output cannot hold the result: rank 1 refuses, and rank 0 learns of it.
    out["all_gather_into_tensor_output"] = _attempt(lambda: into_tensor(4 if rank == 0 else 5))

    def reduce_scatter_tensor(n):
        got = torch.zeros(n)
        dist.reduce_scatter_tensor(got, torch.ones(n * world))
        return got.tolist()

    out["reduce_scatter_tensor_sizes"] = _attempt(lambda: reduce_scatter_tensor(1 + rank))

    def all_to_all_single(in_splits, out_splits):
        got = torch.zeros(sum(out_splits))
        dist.all_to_all_single(got, torch.ones(sum(in_splits)), out_splits, in_splits)
        return got.tolist()

    # Rank 0 sends 2 elements to rank 1, which expects 3.
    out["all_to_all_single_splits"] = _attempt(
        lambda: (
            all_to_all_single([1, 2], [1, 1]) if rank == 0 else all_to_all_single([1, 1], [3, 1])
        )
    )

    def reduce_scatter(n):
        got = torch.zeros(n)
        dist.reduce_scatter(got, [torch.ones(n) for _ in range(world)])
        return got.tolist()

    out["reduce_scatter_sizes"] = _attempt(lambda: reduce_scatter(2 + rank))

    def all_to_all(sizes_out):
        got = [torch.zeros(n) for n in sizes_out]
        dist.all_to_all(got, [torch.ones(2) for _ in range(world)])
        return [t.tolist() for t in got]

    # Every rank sends 2 elements to each; rank 1 expects 1 from rank 0.
    out["all_to_all_sizes"] = _attempt(lambda: all_to_all([2, 2] if rank == 0 else [1, 2]))

    def gather(n):
        bucket = [torch.zeros(n) for _ in range(world)] if rank == 0 else None
        dist.gather(torch.ones(n), bucket, dst=0)
        return [t.tolist() for t in bucket] if bucket else None

    out["gather_sizes"] = _attempt(lambda: gather(1 + rank))

    def scatter(src):
        got = torch.zeros(1)
        dist.scatter(got, [torch.ones(1) for _ in range(world)] if rank == src else None, src=src)
        return got.tolist()

    out["scatter_roots"] = _attempt(lambda: scatter(rank))

    def reduce(dst):
        t = torch.ones(2)
        dist.reduce(t, dst=dst)
        return t.tolist()

    out["reduce_roots"] = _attempt(lambda: reduce(rank))
    # Ranks out of step: one all-reduces while the other broadcasts, or waits in a barrier.
    out["out_of_step"] = _attempt(
        lambda: all_reduce(torch.ones(2)) if rank == 0 else broadcast(torch.ones(2))
    )
    out["barrier_against_all_reduce"] = _attempt(
        lambda: dist.barrier() if rank == 0 else all_reduce(torch.ones(1))
    )
    # A dtype only rank 0's HCCL refuses: rank 1 must not wait for it.
    out["one_rank_refuses_dtype"] = _attempt(
        lambda: all_reduce(torch.ones(2, dtype=torch.float64 if rank == 0 else torch.float32))
    )
    out["after"] = _attempt(lambda: all_reduce(torch.full((3,), rank + 1, dtype=torch.int32)))
    return out


def stall(rank, world):
    """Rank 1 stalls before its all_reduce, far longer than the group's bound; rank 0 must
    fail within the bound. Rank 1 then finds rank 0 gone, and fails too."""
    dist.all_reduce(torch.ones(2))  # torch's first collective imports more: not the bound's
    if rank == 1:
        time.sleep(float(os.environ["STALL_SECONDS"]))
    start = time.monotonic()
    verdict = _attempt(lambda: dist.all_reduce(torch.ones(2)))
    return {"all_reduce": verdict, "seconds": time.monotonic() - start}


def connect_alone():
    """This rank comes to a group whose other rank never does."""
    start = time.monotonic()
    given = os.environ.get("INIT_TIMEOUT")
    kwargs = {"timeout": datetime.timedelta(seconds=float(given))} if given else {}
    verdict = _attempt(lambda: dist.init_process_group("hccl", **kwargs))
    return {"init": verdict, "seconds": time.monotonic() - start}


def main(scenario):
    import torch_npu  # noqa: F401 - the emulated NPU and its hccl

    try:
        if scenario == "connect_alone":
            result = connect_alone()
            print(json.dumps(result), flush=True)
            os._exit(0)  # nothing to tear down: no group was made
        given = os.environ.get("INIT_TIMEOUT")
        kwargs = {"timeout": datetime.timedelta(seconds=float(given))} if given else {}
        dist.init_process_group("hccl", **kwargs)
        rank, world = dist.get_rank(), dist.get_world_size()
        if scenario == "mismatches":
            result = mismatches(rank, world)
            dist.barrier()
            dist.destroy_process_group()
        elif scenario == "stall":
            result = stall(rank, world)
            # The group is broken (as on an NPU after a timeout): leave without tearing it down.
            print(json.dumps(result), flush=True)
            os._exit(0)
        else:
            raise ValueError(f"unknown scenario {scenario!r}")
    except Exception as e:  # reported to the test
        result = {"error": type(e).__name__, "message": str(e), "trace": traceback.format_exc()}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
