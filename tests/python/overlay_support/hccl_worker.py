"""One rank of the hccl tests: ``python hccl_worker.py SCENARIO``, launched by ranks.launch.

Prints one JSON line with what the test checks; an exception prints {"error": type, "message"}.
"""

import datetime
import json
import os
import sys
import traceback

import torch
import torch.distributed as dist


def collectives(rank, world):
    """Every collective with an allowed dtype; results the test compares with their sums."""
    out = {}
    for dtype in (torch.float32, torch.float16, torch.int32, torch.int8, torch.int64):
        t = torch.full((3,), rank + 1, dtype=dtype)
        dist.all_reduce(t)
        out[f"all_reduce_{dtype}"] = t.tolist()
    for dtype in (torch.int64, torch.bool, torch.float64, torch.uint8):
        parts = [torch.zeros(2, dtype=dtype) for _ in range(world)]
        dist.all_gather(
            parts, torch.full((2,), rank % 2 if dtype == torch.bool else rank, dtype=dtype)
        )
        out[f"all_gather_{dtype}"] = [p.tolist() for p in parts]
    b = torch.arange(4.0) * (rank + 1)
    dist.broadcast(b, src=1)
    out["broadcast"] = b.tolist()
    gathered = [torch.zeros(2, dtype=torch.int32) for _ in range(world)]
    dist.all_gather(gathered, torch.full((2,), rank, dtype=torch.int32))
    out["all_gather"] = [g.tolist() for g in gathered]
    flat = torch.zeros(2 * world)
    dist.all_gather_into_tensor(flat, torch.full((2,), float(rank)))
    out["all_gather_into_tensor"] = flat.tolist()
    r = torch.full((2,), float(rank))
    dist.reduce(r, dst=0)
    out["reduce"] = r.tolist() if rank == 0 else None
    bucket = [torch.zeros(1) for _ in range(world)] if rank == 0 else None
    dist.gather(torch.full((1,), float(rank)), bucket, dst=0)
    out["gather"] = [g.tolist() for g in bucket] if rank == 0 else None
    got = torch.zeros(1)
    dist.scatter(
        got, [torch.full((1,), float(i * 10)) for i in range(world)] if rank == 0 else None, src=0
    )
    out["scatter"] = got.tolist()
    rs = torch.zeros(1)
    dist.reduce_scatter(rs, [torch.full((1,), float(i + rank)) for i in range(world)])
    out["reduce_scatter"] = rs.tolist()
    a2a = [torch.zeros(1) for _ in range(world)]
    dist.all_to_all(a2a, [torch.full((1,), float(rank * 10 + i)) for i in range(world)])
    out["all_to_all"] = [t.tolist() for t in a2a]
    flags = [torch.zeros(1, dtype=torch.bool) for _ in range(world)]
    dist.all_to_all(flags, [torch.tensor([(rank + i) % 2 == 1]) for i in range(world)])
    out["all_to_all_bool"] = [f.tolist() for f in flags]
    single = torch.zeros(world)
    dist.all_to_all_single(single, torch.arange(world, dtype=torch.float32) + rank * 10)
    out["all_to_all_single"] = single.tolist()
    peer = (rank + 1) % world
    send, recv = torch.full((2,), float(rank)), torch.zeros(2)
    ops = [dist.P2POp(dist.isend, send, peer), dist.P2POp(dist.irecv, recv, (rank - 1) % world)]
    for req in dist.batch_isend_irecv(ops):
        req.wait()
    out["batch_isend_irecv"] = recv.tolist()
    if world == 2:
        if rank == 0:
            dist.send(torch.full((1,), 7.0), dst=1)
        else:
            t = torch.zeros(1)
            dist.recv(t, src=0)
            out["send_recv"] = t.tolist()
    objects = [None] * world
    dist.all_gather_object(objects, {"rank": rank})
    out["all_gather_object"] = objects
    listed = [rank, "x"] if rank == 0 else [None, None]
    dist.broadcast_object_list(listed, src=0)
    out["broadcast_object_list"] = listed
    sub = dist.new_group(list(range(world)), backend="hccl")
    t = torch.ones(1)
    dist.all_reduce(t, group=sub)
    out["new_group"] = [dist.get_backend(sub), t.tolist()]
    out["backend"] = dist.get_backend()
    out["is_hccl_available"] = dist.is_hccl_available()
    return out


def refusals(rank, world):
    """Each refused call's error type and message."""
    calls = {
        "all_reduce_float64": lambda: dist.all_reduce(torch.ones(2, dtype=torch.float64)),
        "broadcast_bfloat16": lambda: dist.broadcast(torch.ones(2, dtype=torch.bfloat16), src=0),
        "all_gather_bfloat16": lambda: dist.all_gather(
            [torch.ones(1, dtype=torch.bfloat16)] * world, torch.ones(1, dtype=torch.bfloat16)
        ),
        "reduce_scatter_uint8": lambda: dist.reduce_scatter(
            torch.zeros(1, dtype=torch.uint8), [torch.ones(1, dtype=torch.uint8)] * world
        ),
        "isend_bfloat16": lambda: dist.isend(torch.ones(1, dtype=torch.bfloat16), dst=0),
    }
    out = {}
    for name, call in calls.items():
        try:
            call()
            out[name] = None
        except Exception as e:  # the refusal under test
            out[name] = [type(e).__name__, str(e)]
    return out


def ordered(rank, world):
    """Float sums equal the rank-order sum ((x0 + x1) + x2) + ..., bit for bit, at every size."""
    out = {}
    for dtype in (torch.float32, torch.float16):
        for n in (1, 7, 1000, 4099):
            mine = None
            want = None
            for r in range(world):
                g = torch.Generator().manual_seed(100 * r + n)
                x = (
                    torch.randn(n, generator=g) * 10.0 ** torch.randint(-3, 4, (n,), generator=g)
                ).to(dtype)
                mine = x.clone() if r == rank else mine
                want = x.clone() if want is None else want + x
            dist.all_reduce(mine)
            out[f"{dtype}-{n}"] = bool(torch.equal(mine, want))
    return out


def bits(rank, world):
    """Tensors of any dtype broadcast as views of their bytes in the four every HCCL carries
    (apex's collective_dtypes)."""
    from apex.npu.ddp.collective_dtypes import bits_view

    out = {}
    for dtype in (torch.int64, torch.float64, torch.bool, torch.bfloat16, torch.uint8, torch.int16):
        t = (torch.arange(5) * (rank + 3)).to(dtype)
        scalar = torch.tensor(7 * (rank + 1), dtype=torch.int64) if dtype == torch.int64 else None
        dist.broadcast(bits_view(t), src=0)
        if scalar is not None:
            dist.broadcast(bits_view(scalar), src=0)  # a 0-dim counter, as BatchNorm's
            out["scalar"] = int(scalar)
        out[str(dtype)] = t.tolist()
    return out


def gather_shapes(rank, world):
    """all_gather into outputs of another shape with the input's number of elements, as HCCL
    takes them: Ascend's combine_ddp gathers a 0-d count into 1-element tensors."""
    out = {}
    count = torch.tensor(float(rank + 1))  # 0-d
    ones = [torch.zeros(1) for _ in range(world)]
    dist.all_gather(ones, count)
    out["scalar_into_1"] = [t.tolist() for t in ones]
    grid = torch.arange(6, dtype=torch.float16).view(2, 3) + 10 * rank
    flat = [torch.zeros(6, dtype=torch.float16) for _ in range(world)]
    dist.all_gather(flat, grid)
    out["2x3_into_6"] = [t.tolist() for t in flat]
    strided = [torch.zeros(3, 4)[:, ::2] for _ in range(world)]  # (3, 2), not contiguous
    dist.all_gather(strided, grid.float())
    out["2x3_into_strided_3x2"] = [t.tolist() for t in strided]
    try:
        dist.all_gather([torch.zeros(3) for _ in range(world)], torch.zeros(2))
        out["2_into_3"] = None
    except Exception as e:  # the refusal under test
        out["2_into_3"] = [type(e).__name__, str(e)]
    return out


def bf16_values(rank, n):
    """Rank ``rank``'s bfloat16 values of size ``n`` (the test makes the same ones): spread over
    magnitudes, so that sums round."""
    g = torch.Generator().manual_seed(1000 * rank + n)
    scale = 10.0 ** torch.randint(-3, 4, (n,), generator=g)
    return (torch.randn(n, generator=g) * scale).to(torch.bfloat16)


def _bits(t):
    """A bfloat16 tensor's bit patterns (int16), so that the test compares bits, not values."""
    return t.cpu().view(torch.int16).tolist()


def bf16(rank, world):
    """bfloat16 collectives on NPU tensors, as a 910B's HCCL carries them; every result as bits."""
    npu = torch.device("npu", rank)
    out = {}
    for n in (1, 7, 1000):
        for op in ("SUM", "MAX", "MIN"):
            t = bf16_values(rank, n).to(npu)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            out[f"all_reduce_{op}_{n}"] = _bits(t)
    t = bf16_values(rank, 7).to(npu)
    dist.reduce(t, dst=world - 1)
    out["reduce"] = _bits(t) if rank == world - 1 else None
    rows = bf16_values(rank, 2 * world).to(npu)
    mine = torch.zeros(2, dtype=torch.bfloat16, device=npu)
    dist.reduce_scatter(mine, list(rows.chunk(world)))
    out["reduce_scatter"] = _bits(mine)
    flat = torch.zeros(2 * world, dtype=torch.bfloat16, device=npu)
    dist.reduce_scatter_tensor(flat[:2], rows)
    out["reduce_scatter_tensor"] = _bits(flat[:2])
    parts = [torch.zeros(3, dtype=torch.bfloat16, device=npu) for _ in range(world)]
    dist.all_gather(parts, bf16_values(rank, 3).to(npu))
    out["all_gather"] = [_bits(p) for p in parts]
    dist.all_gather_into_tensor(flat, bf16_values(rank, 2).to(npu))
    out["all_gather_into_tensor"] = _bits(flat)
    b = bf16_values(rank, 5).to(npu)
    dist.broadcast(b, src=world - 1)
    out["broadcast"] = _bits(b)
    a2a = torch.zeros(world, dtype=torch.bfloat16, device=npu)
    dist.all_to_all_single(a2a, bf16_values(rank, world).to(npu))
    out["all_to_all_single"] = _bits(a2a)
    got = torch.zeros(4, dtype=torch.bfloat16, device=npu)
    ops = [
        dist.P2POp(dist.isend, bf16_values(rank, 4).to(npu), (rank + 1) % world),
        dist.P2POp(dist.irecv, got, (rank - 1) % world),
    ]
    for req in dist.batch_isend_irecv(ops):
        req.wait()
    out["send_recv"] = _bits(got)
    try:
        dist.all_reduce(bf16_values(rank, 2).to(npu), op=dist.ReduceOp.PRODUCT)
        out["product"] = None
    except TypeError as e:  # a 910B's HCCL has no product of bfloat16
        out["product"] = str(e)
    # DDP's gradient all-reduce (torch's C++ calling the group): the bucket mean, every rank
    # the same bits.
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3).to(torch.bfloat16).to(npu)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    ddp(bf16_values(rank, 8).view(2, 4).to(npu)).float().sum().backward()
    out["ddp_grad"] = _bits(model.weight.grad)
    return out


def bf16_refused(rank, world):
    """Each bfloat16 collective's refusal on a chip without bfloat16."""
    calls = {
        "all_reduce": lambda: dist.all_reduce(torch.ones(2, dtype=torch.bfloat16).npu()),
        "broadcast": lambda: dist.broadcast(torch.ones(2, dtype=torch.bfloat16).npu(), src=0),
        "all_gather": lambda: dist.all_gather(
            [torch.ones(1, dtype=torch.bfloat16).npu()] * world,
            torch.ones(1, dtype=torch.bfloat16).npu(),
        ),
    }
    out = {}
    for name, call in calls.items():
        try:
            call()
            out[name] = None
        except Exception as e:  # the refusal under test
            out[name] = [type(e).__name__, str(e)]
    return out


def relaxed(rank, world):
    t = torch.full((2,), rank + 1, dtype=torch.float64)
    dist.all_reduce(t)
    return {"all_reduce_float64": t.tolist()}


def bound(rank, world):
    """What a group made with a device-qualified backend or a device_id is: its backend's name,
    the NPU it is bound to (its subgroups' too), and hccl's collectives and rules on it."""
    default = dist.group.WORLD
    sub = dist.new_group(list(range(world)))
    t = torch.full((2,), float(rank + 1), dtype=torch.float16).npu(rank)
    dist.all_reduce(t, group=sub)
    dist.barrier()  # torch 2.x passes the bound NPU to the barrier
    try:
        dist.all_reduce(torch.ones(1, dtype=torch.float64).npu(rank))
        refused = None
    except TypeError as e:  # hccl's rules hold under any spelling of its name
        refused = str(e).split(":")[0]
    bound_to = getattr(default, "bound_device_id", None)
    sub_bound = getattr(sub, "bound_device_id", None)
    return {
        "backend": dist.get_backend(),
        "sub_backend": dist.get_backend(sub),
        "bound": None if bound_to is None else str(bound_to),
        "sub_bound": None if sub_bound is None else str(sub_bound),
        "sum": t.tolist(),
        "sum_device": str(t.device),
        "float64_refused": refused,
    }


def _init_bound(form):
    rank = int(os.environ["RANK"])
    npu = torch.device("npu", rank)
    if form == "npu_hccl":
        dist.init_process_group("npu:hccl")
    elif form == "hccl_device_id":
        dist.init_process_group("hccl", device_id=npu)
    elif form == "npu_hccl_device_id":
        dist.init_process_group(backend="npu:hccl", device_id=npu)
    elif form == "device_id":  # torch picks the NPU's backend
        dist.init_process_group(device_id=npu)
    elif form == "int_device_id":  # an index of the accelerator, the NPU
        dist.init_process_group("hccl", device_id=rank)
    elif form == "cuda_nccl":  # a CUDA script under Ascend's automatic migration
        import torch_npu.contrib.transfer_to_npu  # noqa: F401

        dist.init_process_group(backend="cuda:nccl", device_id=torch.device(f"cuda:{rank}"))
    else:
        raise ValueError(f"unknown form {form!r}")


def bound_forms(forms):
    """Each form's ``bound`` result (or its error), one group after another, each met on its
    own port of HCCL_TEST_PORTS (a store's keys must not meet the previous group's)."""
    ports = os.environ["HCCL_TEST_PORTS"].split(",")
    results = {}
    for form, port in zip(forms, ports):
        os.environ["MASTER_PORT"] = port
        try:
            _init_bound(form)
            results[form] = bound(dist.get_rank(), dist.get_world_size())
            dist.barrier()
            dist.destroy_process_group()
        except Exception as e:  # reported to the test
            results[form] = {
                "error": type(e).__name__,
                "message": str(e),
                "trace": traceback.format_exc(),
            }
    return results


def init(scenario):
    if scenario == "init_tcp":
        env = os.environ
        dist.init_process_group(
            "hccl",
            init_method=f"tcp://127.0.0.1:{env['MASTER_PORT']}",
            rank=int(env["RANK"]),
            world_size=int(env["WORLD_SIZE"]),
        )
    elif scenario == "init_alone":  # the other ranks never come: waiting would time out
        dist.init_process_group("hccl", timeout=datetime.timedelta(seconds=60))
    else:
        dist.init_process_group("hccl")  # env://, from the launcher's variables


def main(scenario):
    import torch_npu  # noqa: F401 - the emulated NPU and its hccl (tests import this module too)

    if scenario.startswith("bound:"):
        print(json.dumps(bound_forms(scenario.split(":", 1)[1].split(","))))
        return
    try:
        init(scenario)
        rank, world = dist.get_rank(), dist.get_world_size()
        if scenario in ("collectives", "init_tcp"):
            result = collectives(rank, world)
        elif scenario == "refusals":
            result = refusals(rank, world)
        elif scenario == "ordered":
            result = ordered(rank, world)
        elif scenario == "bits":
            result = bits(rank, world)
        elif scenario == "gather_shapes":
            result = gather_shapes(rank, world)
        elif scenario == "relaxed":
            result = relaxed(rank, world)
        elif scenario == "bf16":
            result = bf16(rank, world)
        elif scenario == "bf16_refused":
            result = bf16_refused(rank, world)
        else:
            result = {"backend": dist.get_backend(), "world": world}
        dist.barrier()
        dist.destroy_process_group()
    except Exception as e:  # reported to the test
        result = {"error": type(e).__name__, "message": str(e), "trace": traceback.format_exc()}
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1])
