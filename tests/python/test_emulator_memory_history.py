"""torch.npu.memory's history and snapshot (what torch's memory viewer reads), the pinned host
cache's release, and HCCL's process-group options, as torch_npu has them."""

import overlay_support


def run(code):
    return overlay_support.run_with_emulator(code)


def test_the_history_records_allocations_with_their_stacks():
    out = run("""
        import pickle, tempfile, os, torch, torch_npu
        torch.npu.memory._record_memory_history(max_entries=100)

        def make():
            return torch.randn(1000, device="npu")

        a = make()
        addr = a.untyped_storage().data_ptr() if hasattr(a, "untyped_storage") else \\
            a.storage().data_ptr()
        del a
        b = torch.ones(10, device="npu:1")
        s = torch.npu.memory._snapshot()
        mine = [e for e in s["device_traces"][0] if e["addr"] == addr]
        print([e["action"] for e in mine], mine[0]["frames"][0]["name"],
              [e["action"] for e in s["device_traces"][1]][-1:],
              any(seg["device"] == 1 and seg["frames"] for seg in s["segments"]))
        path = os.path.join(tempfile.mkdtemp(), "snap.pickle")
        torch.npu.memory._dump_snapshot(path)
        with open(path, "rb") as f:
            print(sorted(pickle.load(f)))
        torch.npu.memory._record_memory_history(enabled=None)
        c = torch.ones(10, device="npu")
        print(torch.npu.memory._snapshot()["device_traces"][0])
    """)
    assert out == [
        "['alloc',",
        "'free_completed']",
        "make",
        "['alloc']",
        "True",
        "['device_traces',",
        "'segments']",
        "[]",
    ]


def test_host_empty_cache_and_hccl_options():
    out = run("""
        import torch, torch_npu
        x = torch.empty(1 << 16, pin_memory=True)
        del x
        torch.npu.host_empty_cache()
        torch_npu._C._npu_hostEmptyCache()
        from torch_npu._C._distributed_c10d import ProcessGroupHCCL
        options = ProcessGroupHCCL.Options()
        options.hccl_config = {"hccl_buffer_size": 200}
        print(options.is_high_priority_stream, options.hccl_config["hccl_buffer_size"],
              ProcessGroupHCCL.__name__)
    """)
    assert out == ["False", "200", "HcclProcessGroup"]
