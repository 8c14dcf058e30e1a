"""torch.npu's runtime APIs on the emulated NPU, as torch_npu has them: streams and events, the
memory the NPU tensors hold (torch_npu's statistics, snapshot, fraction and out-of-memory
errors), what a device is, the NPUs' own random number generators, torch_npu._C, the refusal
of a forked process, and torch_npu.utils.collect_env. Both torches."""

import collections
import contextlib
import copy
import pickle
import subprocess
import sys
import textwrap
import time

import pytest
import torch

from overlay_support import overlay_env, use_overlay

use_overlay()
import torch_npu  # noqa: E402
import torch_npu._C  # noqa: E402
from torch_npu._device import memory as npu_memory  # noqa: E402
from torch_npu._device import soc  # noqa: E402

TORCH_1 = int(torch.__version__.split(".")[0]) < 2


@pytest.fixture(autouse=True)
def on_npu0():
    torch.npu.set_device(0)
    yield
    torch.npu.set_device(0)


def run_child(code, **env_changes):
    env = overlay_env()
    env.update(env_changes)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


# --- devices ------------------------------------------------------------------------------------


def test_device_arguments_are_read_as_torch_npu_reads_them():
    index = torch_npu.npu._get_device_index
    assert index(3) == 3 and index("npu:2") == 2 and index(torch.device("npu", 5)) == 5
    assert index(None, optional=True) == 0 and index("npu", optional=True) == 0
    assert index(torch.npu.device(4)) == 4
    assert index("cpu", allow_cpu=True) == -1
    with pytest.raises(RuntimeError, match="Invalid device string: 'npu0'"):
        index("npu0", optional=True)
    with pytest.raises(ValueError, match="Expected a npu device, but got: cpu"):
        index(torch.device("cpu"), optional=True)
    with pytest.raises(ValueError, match="Expected a npu or cpu device, but got: cuda:0"):
        index("cuda:0", allow_cpu=True)
    with pytest.raises(ValueError, match="Expected a torch.device with a specified index"):
        index(None)
    for bad in (torch.device("cpu"), "cpu"):
        with pytest.raises(ValueError, match="Expected a npu device, but got: cpu"):
            torch.npu.synchronize(bad)
    torch.npu.synchronize(torch.device("npu:7"))


def test_device_of_and_device_are_context_managers_of_classes():
    x = torch.ones(2).npu(6)
    selected = torch.npu.device_of(x)
    assert isinstance(selected, torch.npu.device_of) and isinstance(selected, torch.npu.device)
    with selected:
        assert torch.npu.current_device() == 6
    assert torch.npu.current_device() == 0
    with torch.npu.device_of(torch.ones(2)), torch.npu.device(-1):  # the host: nothing
        assert torch.npu.current_device() == 0


def test_device_properties_describe_the_chip():
    p = torch.npu.get_device_properties(0)
    assert type(p) is torch_npu._C._NPUDeviceProperties
    assert p.name == soc.name() == torch.npu.get_device_name()
    assert p.total_memory == torch.npu.mem_get_info()[1] > 0
    assert (p.cube_core_num, p.vector_core_num, p.L2_cache_size) == soc.cores()
    assert len(str(p.uuid)) == 36 and len(p.uuid.bytes) == 16
    assert str(torch.npu.get_device_properties("npu:0").uuid) == str(p.uuid)
    assert str(torch.npu.get_device_properties(1).uuid) != str(p.uuid)
    assert repr(p).startswith(
        f"_NPUDeviceProperties(name='{p.name}', total_memory="
        f"{p.total_memory // 2**20}MB, cube_core_num="
    )
    with pytest.raises(AttributeError):
        p.name = "other"
    with pytest.raises(AssertionError, match="Invalid device id"):
        torch.npu.get_device_properties(8)
    previous = soc.select("Ascend910B1")
    try:
        b1 = torch.npu.get_device_properties(0)
        assert (b1.name, b1.cube_core_num, b1.vector_core_num, b1.L2_cache_size) == (
            "Ascend910B1",
            24,
            48,
            192 * 2**20,
        )
        soc.select("Ascend910B4")
        assert torch.npu.get_device_properties(0).L2_cache_size == 96 * 2**20
        soc.select("Ascend910A")
        assert (
            torch.npu.get_device_properties(0).cube_core_num,
            torch.npu.get_device_properties(0).vector_core_num,
        ) == (32, 0)
    finally:
        soc.select(previous)


def test_peer_access_sync_debug_mode_and_handles():
    assert torch.npu.can_device_access_peer(0, 1) is True
    assert torch.npu.can_device_access_peer(0, 0) is False
    word = "devide" if TORCH_1 else "device"  # torch_npu 1.x's spelling
    with pytest.raises(AssertionError, match=f"Invalid {word} id"):
        torch.npu.can_device_access_peer(-1, 0)
    with pytest.raises(AssertionError, match=f"Invalid peer {word} id"):
        torch.npu.can_device_access_peer(0, 8)
    assert torch.npu.get_sync_debug_mode() == 0
    try:
        torch.npu.set_sync_debug_mode("warn")
        assert torch.npu.get_sync_debug_mode() == 1
        torch.npu.set_sync_debug_mode(2)
        with pytest.raises(RuntimeError, match="expected one of 0,1,2"):
            torch.npu.set_sync_debug_mode(3)
        with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`"):
            torch.npu.set_sync_debug_mode("loud")
        assert torch.npu.get_sync_debug_mode() == 2
    finally:
        torch.npu.set_sync_debug_mode("default")
    with pytest.warns(UserWarning, match="blas handle"):
        assert torch.npu.current_blas_handle() is None
    with pytest.warns(UserWarning, match="aclnn.version"):
        assert torch.npu.aclnn.version() is None
    assert torch.npu.get_allocator_backend() == "native"


# --- streams and events -------------------------------------------------------------------------


def test_streams_have_ids_handles_and_torch_npu_reprs():
    import torch_npu.npu.streams as streams_module

    assert streams_module.Stream is torch.npu.Stream
    default = torch.npu.current_stream()
    assert default is torch.npu.default_stream() and default.stream_id == 0
    s, t = torch.npu.Stream(), torch.npu.Stream(device="npu:3", priority=-1)
    assert s != default and s.npu_stream not in (0, default.npu_stream, t.npu_stream)
    assert t.device == torch.device("npu:3") and t.device_index == 3 and t.priority == -1
    same = torch.npu.Stream(stream_id=s.stream_id, device_index=0, device_type=s.device_type)
    assert same == s and hash(same) == hash(s) and same.npu_stream == s.npu_stream
    assert repr(s) == f"<torch_npu.npu.Stream device=npu:0 npu_stream={s.npu_stream:#x}>"
    e = torch.npu.Event()
    assert repr(e) == "<torch_npu.npu.Event uninitialized>"
    s.record_event(e)
    assert repr(e) == f"<torch_npu.npu.Event {e.npu_event:#x}>" and e.npu_event != 0
    with pytest.raises(RuntimeError, match="does not match recording stream's device 3"):
        e.record(t)
    assert s.query() and e.query() and s.synchronize() is None


def test_stream_context_sets_both_devices_streams_and_restores_them():
    s1 = torch.npu.Stream(device=1)
    manager = torch.npu.stream(s1)
    assert isinstance(manager, contextlib._GeneratorContextManager) == TORCH_1
    assert isinstance(manager, torch.npu.StreamContext) != TORCH_1
    with manager:
        assert torch.npu.current_stream(1) is s1
        assert torch.npu.current_stream(0) is torch.npu.default_stream(0)
    assert torch.npu.current_stream(1) is torch.npu.default_stream(1)
    with torch.npu.stream(None):
        assert torch.npu.current_stream() is torch.npu.default_stream()


def test_events_time_what_ran_between_their_records():
    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    start.record()
    time.sleep(0.02)
    torch.npu.current_stream().record_event(end)
    assert 15.0 <= start.elapsed_time(end) < 2000.0
    with pytest.raises(RuntimeError, match="must be recorded"):
        start.elapsed_time(torch.npu.Event(enable_timing=True))


def test_erase_stream_checks_what_it_is_given():
    s = torch.npu.Stream()
    x = torch.ones(4, device="npu")
    x.record_stream(s)
    assert torch_npu.erase_stream(x, s) is None
    with pytest.raises(TypeError, match="tensor should be torch.Tensor"):
        torch_npu.erase_stream([1], s)
    with pytest.raises(TypeError, match="stream should be torch_npu.npu.Stream"):
        torch_npu.erase_stream(x, 0)


# --- memory ---------------------------------------------------------------------------------------


def test_npu_tensors_hold_torch_npu_blocks_until_freed():
    before = torch.npu.memory_allocated()
    x = torch.zeros(1000, device="npu")  # 4000 bytes: +32, rounded up to 512
    assert torch.npu.memory_allocated() - before == 4096
    view = x[10:]
    assert torch.npu.memory_allocated() - before == 4096  # a view holds no memory
    big = torch.empty(300, 1024, device="npu")  # 1.17 MiB: the large pool
    stats = torch.npu.memory_stats()
    assert isinstance(stats, collections.OrderedDict) and list(stats) == sorted(stats)
    assert stats["allocated_bytes.all.current"] == before + 4096 + 1228800 + 512
    assert stats["allocated_bytes.large_pool.current"] >= 1228800 + 512
    assert stats["reserved_bytes.all.current"] == stats["allocated_bytes.all.current"]
    assert stats["num_ooms"] == 0 and stats["max_split_size"] == -1
    peak = torch.npu.max_memory_allocated()
    del x, view, big
    assert torch.npu.memory_allocated() == before
    assert torch.npu.max_memory_allocated() == peak >= before + 4096 + 1229312
    torch.npu.reset_peak_memory_stats()
    assert torch.npu.max_memory_allocated() == before
    empty = torch.zeros(0, device="npu")
    assert torch.npu.memory_allocated() == before and empty.is_npu  # nothing allocated
    on_1 = torch.ones(10, device="npu:1")
    assert torch.npu.memory_allocated(1) >= 512 and torch.npu.memory_allocated(0) == before
    del on_1


def test_snapshot_agrees_with_the_statistics():
    keep = [torch.ones(n, device="npu") for n in (3, 70000, 400000)]
    segments = torch.npu.memory_snapshot()
    for device in {s["device"] for s in segments}:
        stats = torch.npu.memory_stats(device)
        mine = [s for s in segments if s["device"] == device]
        for pool in ("large", "small"):
            chosen = [s for s in mine if s["segment_type"] == pool]
            assert stats[f"segment.{pool}_pool.current"] == len(chosen)
            assert stats[f"reserved_bytes.{pool}_pool.current"] == sum(
                s["total_size"] for s in chosen
            )
            assert stats[f"allocation.{pool}_pool.current"] == sum(
                b["state"] == "active_allocated" for s in chosen for b in s["blocks"]
            )
    assert any(s["requested_size"] == 1600000 and s["total_size"] == 1600512 for s in segments)
    del keep


def test_summary_is_torch_npus_table():
    summary = torch.npu.memory_summary()
    lines = summary.splitlines()
    assert lines[1] == "|                  PyTorch NPU memory summary, device ID 0" + " " * 18 + "|"
    assert lines[3].startswith("|            NPU OOMs: 0 ")
    assert "npuMalloc retries: 0" in lines[3]
    assert "| Allocated memory      |" in summary and "from large pool" in summary
    assert "from large pool" not in torch.npu.memory_summary(abbreviated=True)


def test_raw_allocations_count_until_deleted():
    before = torch.npu.memory_allocated()
    pointer = torch.npu.caching_allocator_alloc(100)
    assert isinstance(pointer, int) and torch.npu.memory_allocated() == before + 512
    torch.npu.caching_allocator_delete(pointer)
    assert torch.npu.memory_allocated() == before
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        torch.npu.caching_allocator_delete(pointer)
    with pytest.raises(TypeError, match="Invalid type for stream argument"):
        torch.npu.caching_allocator_alloc(8, stream="s")


def test_a_process_fraction_holds_allocations_back():
    with pytest.raises(TypeError, match="Invalid type"):
        torch.npu.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match="Invalid fraction value"):
        torch.npu.set_per_process_memory_fraction(1.5)
    total = torch.npu.get_device_properties(0).total_memory
    ooms = torch.npu.memory_stats()["num_ooms"]
    x = torch.zeros(16, device="npu")
    torch.npu.set_per_process_memory_fraction(0.001)
    try:
        assert torch.npu.get_per_process_memory_fraction() == 0.001
        fits = torch.empty(int(total * 0.0005), dtype=torch.int8, device="npu")
        with pytest.raises(
            RuntimeError,
            match=r"NPU out of memory\. Tried to allocate "
            r"[0-9.]+ [KMG]iB \(NPU 0; .* allowed; ",
        ):
            torch.empty(int(total * 0.001), dtype=torch.int8, device="npu")
        assert torch.npu.memory_stats()["num_ooms"] == ooms + 1
        torch.zeros(int(total * 0.0006), dtype=torch.int8, device="npu:1")  # its own limit
        del fits
    finally:
        torch.npu.set_per_process_memory_fraction(1.0)
    x.fill_(1)
    assert bool((x == 1).all())


def test_host_allocation_failures_read_as_torch_npus():
    if TORCH_1:  # torch_npu 1.x formats any size
        match = r"NPU out of memory\. Tried to allocate 8000000000\.00 GiB \(NPU 0; "
    else:  # torch_npu 2.x refuses 1 EiB and more first
        match = r"^NPU out of memory\. Tried to allocate more than 1EB memory\.$"
    with pytest.raises(RuntimeError, match=match):
        torch.empty(1024**3 * 8000000000, dtype=torch.int8, device="npu")
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator"):  # the host's stays torch's
        torch.empty(1024**3 * 8000000000, dtype=torch.int8)
    assert npu_memory.format_size(1000) == "1000 bytes"
    assert npu_memory.format_size(3 * 2**20) == "3.00 MiB"


# --- random numbers -------------------------------------------------------------------------------


def test_npu_seeds_leave_the_host_generator_alone():
    torch.manual_seed(3)
    host_state = torch.get_rng_state()
    assert torch.npu.initial_seed() == 3 and int(torch.npu.get_rng_state()[0]) == 3
    torch.npu.manual_seed(2)
    assert torch.equal(torch.get_rng_state(), host_state)
    assert torch.npu.initial_seed() == 2 and torch.npu.get_rng_state(1)[0] == 3
    a = torch.randn(5, device="npu")
    torch.rand(7)  # host draws do not move the NPU's
    torch.npu.manual_seed(2)
    assert torch.equal(torch.randn(5, device="npu").cpu(), a.cpu())
    # at offset 0 a seed gives the host's numbers for that seed
    torch.manual_seed(2)
    assert torch.equal(torch.randn(5), a.cpu())


def test_states_are_torch_npus_seed_and_offset():
    torch.npu.manual_seed(258)
    state = torch.npu.get_rng_state()
    assert state.dtype == torch.uint8 and state.tolist() == [2, 1] + [0] * 14
    x = torch.empty(8, device="npu").uniform_()
    after = torch.npu.get_rng_state()
    assert after[8:].tolist() != [0] * 8  # the offset moved
    torch.npu.set_rng_state(state)
    assert torch.equal(torch.empty(8, device="npu").uniform_().cpu(), x.cpu())
    torch.npu.set_rng_state(torch.tensor([7, 0, 0, 0, 0, 0, 0, 0], dtype=torch.uint8))
    assert torch.npu.initial_seed() == 7 and torch.npu.default_generators[0].get_offset() == 0
    with pytest.raises(RuntimeError, match="RNG state is wrong size"):
        torch.npu.set_rng_state(torch.zeros(5, dtype=torch.uint8))
    states = torch.npu.get_rng_state_all()
    assert len(states) == torch.npu.device_count()
    torch.npu.set_rng_state_all(states)


def test_each_npu_draws_from_its_own_generator():
    torch.npu.manual_seed_all(11)
    on_0 = torch.rand(6, device="npu:0")
    torch.npu.default_generators[1].manual_seed(99)
    torch.npu.set_device(1)
    assert torch.npu.initial_seed() == 99
    torch.npu.set_device(0)
    torch.npu.manual_seed(11)
    assert torch.equal(torch.rand(6, device="npu:0").cpu(), on_0.cpu())
    generator = torch.npu.default_generators[3]
    assert isinstance(generator, torch.Generator) and generator.device == torch.device("npu:3")


def test_random_operations_of_npu_tensors_draw_from_the_npu():
    x = torch.ones(64, device="npu")

    def draws():
        return [
            torch.nn.functional.dropout(x, 0.5).cpu(),
            torch.rand_like(x).cpu(),
            torch.randperm(20, device="npu").cpu(),
            x.clone().normal_().cpu(),
            torch.bernoulli(torch.full((16,), 0.5, device="npu")).cpu(),
        ]

    torch.npu.manual_seed(5)
    host = torch.get_rng_state()
    first = draws()
    assert torch.equal(torch.get_rng_state(), host)  # the host generator did not move
    torch.manual_seed(1234)  # the host's seed changes nothing of the NPU's numbers
    torch.npu.manual_seed(5)
    assert all(torch.equal(a, b) for a, b in zip(draws(), first))
    torch.npu.manual_seed(6)
    assert not torch.equal(draws()[0], first[0])


def test_torch_generator_makes_npu_generators():
    g = torch.Generator(device="npu:1")
    assert str(g.device) == "npu:1" and isinstance(g, torch.Generator)
    assert isinstance(torch.default_generator, torch.Generator)
    assert torch.Generator().device == torch.device("cpu")
    g.manual_seed(42)
    a = torch.randn(4, device="npu:1", generator=g)
    assert g.initial_seed() == 42 and g.get_offset() == 1
    g.manual_seed(42)
    assert torch.equal(torch.randn(4, device="npu:1", generator=g).cpu(), a.cpu())
    twin = pickle.loads(pickle.dumps(g))
    assert str(twin.device) == "npu:1" and torch.equal(twin.get_state(), g.get_state())
    assert torch.equal(copy.deepcopy(g).get_state(), g.get_state())
    host = torch.Generator().manual_seed(42)  # a host generator stays the caller's choice
    assert torch.equal(
        torch.randn(4, device="npu", generator=host).cpu(),
        torch.randn(4, generator=torch.Generator().manual_seed(42)),
    )


def test_torch_npu_1x_generator_class():
    gen = torch_npu._C.Generator()
    assert gen.device.type == "cpu"
    gen.set_state(torch.get_rng_state())
    assert torch.equal(gen.get_state(), torch.get_rng_state())
    for device in ("npu", "npu:0", torch.device("npu:0"), 0, torch.ones(1).npu().device):
        assert torch_npu._C.Generator(device).device.type == "npu"
        assert torch_npu._C.Generator(device=device).device.type == "npu"
    seeded = torch_npu._C.Generator("npu:2").manual_seed(1234)
    assert seeded.initial_seed() == 1234 and seeded.device == torch.device("npu:2")


# --- torch_npu._C ---------------------------------------------------------------------------------


def test_torch_npu_c_answers_for_the_emulated_npu():
    c = torch_npu._C
    assert c._npu_get_soc_version() == soc.version() == torch_npu.npu.utils.get_soc_version()
    assert c._npu_getDeviceCount() == torch.npu.device_count()
    assert c._npu_getCurrentStream(0) == (0, 0, torch.npu.current_stream().device_type)
    assert c._npu_memoryStats(0)["allocated_bytes"]["all"]["current"] == torch.npu.memory_allocated(
        0
    )
    assert c._npu_getDeviceName() == soc.name()
    assert c._npu_is_bf16_supported() == soc.has_bf16()
    assert not hasattr(c, "_npu_eraseStream")  # no behaviour behind it here


def test_set_option_checks_the_values_torch_npu_checks():
    option = {"ACL_AICORE_NUM": 8, "ACL_OP_DEBUG_LEVEL": "2", "ACL_DEBUG_DIR": "anything"}
    assert torch.npu.set_option(option) is None
    assert option["ACL_AICORE_NUM"] == "8"  # taken as strings, in the caller's dict too
    torch.npu.set_option({"ACL_PRECISION_MODE": "must_keep_origin_dtype"})
    with pytest.warns(UserWarning, match="ACL_OP_SELECT_IMPL_MODE will be deprecated"):
        torch.npu.set_option({"ACL_OP_SELECT_IMPL_MODE": "high_precision"})
    refused = [
        ("ACL_PRECISION_MODE", "500"),
        ("ACL_OP_SELECT_IMPL_MODE", "100"),
        ("ACL_OP_DEBUG_LEVEL", "300"),
        ("ACL_OP_COMPILER_CACHE_MODE", "2"),
        ("ACL_AICORE_NUM", "at"),
        ("ACL_AICORE_NUM", "33"),
    ]
    for name, value in refused:
        with pytest.raises(ValueError, match=f"value of {name} should be in .* but got {value}"):
            torch.npu.set_option({name: value})
    with pytest.raises(TypeError, match="expected a dict"):
        torch.npu.set_option([("ACL_AICORE_NUM", "1")])


def _start_npu(tmp_path, config=None, **env):
    """stderr and exit code of a child that starts an NPU with ``env`` (and, as
    TORCH_ACL_INIT_CONFIG_PATH, a file holding ``config`` when it is a string)."""
    full = overlay_env()
    full.update(env)
    if config is not None:
        path = tmp_path / "acl.json"
        path.write_text(config)
        full["TORCH_ACL_INIT_CONFIG_PATH"] = str(path)
    code = "import torch, torch_npu; torch_npu.npu.set_device(0); print('started')"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=180
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_acl_start_checks_the_users_acl_json(tmp_path):
    code, out = _start_npu(tmp_path, '{"dump": {"dump_scene": "lite_exception"}}')
    assert code == 0 and "started" in out, out
    for config, message, error in (
        ("not a json{{{", "Failed to parse user acl json", "ERR00009"),
        ("", "Failed to parse user acl json", "ERR00009"),
        ('{"defaultDevice": {"default_device": "0"}}', "contains 'defaultDevice'", "ERR00003"),
    ):
        code, out = _start_npu(tmp_path, config)
        assert code != 0 and message in out and error in out, out
    code, out = _start_npu(tmp_path, TORCH_ACL_INIT_CONFIG_PATH=str(tmp_path / "none.json"))
    assert code != 0 and "none.json is invalid" in out, out


def test_acl_start_resets_an_unknown_op_init_mode(tmp_path):
    code, out = _start_npu(tmp_path, ACL_OP_INIT_MODE="999")
    assert code == 0 and "Get env ACL_OP_INIT_MODE not in [0, 1, 2]" in out, out
    code, out = _start_npu(tmp_path, ACL_OP_INIT_MODE="2")
    assert code == 0 and "ACL_OP_INIT_MODE" not in out, out


def test_empty_strided_npu_is_empty_strided_on_the_current_npu():
    """torch_npu._C._empty_strided_npu(sizes, strides, dtype), inductor's allocation path."""
    made = torch_npu._C._empty_strided_npu((3, 4), (8, 1), torch.float16)
    want = torch.empty_strided((3, 4), (8, 1), dtype=torch.float16, device="npu")
    assert made.device == torch.device("npu:0") and made.dtype == torch.float16
    assert made.shape == (3, 4) and made.stride() == (8, 1)
    assert made.storage().size() == want.storage().size() == 20
    assert torch_npu._C._empty_strided_npu((0, 3), (0, 0), torch.bool).shape == (0, 3)
    if torch.npu.device_count() > 1:
        with torch.npu.device(1):
            assert torch_npu._C._empty_strided_npu((2,), (1,), torch.int32).device.index == 1
    with pytest.raises(RuntimeError, match="exactly 3 args"):
        torch_npu._C._empty_strided_npu((2,), (1,))
    with pytest.raises(RuntimeError, match="tuple of ints"):
        torch_npu._C._empty_strided_npu([2], (1,), torch.float32)
    with pytest.raises(RuntimeError, match="must be a torch.dtype"):
        torch_npu._C._empty_strided_npu((2,), (1,), "float32")


# --- a fork after the NPU was used, and the environment report ------------------------------------


def test_a_forked_process_cannot_use_the_npu_again():
    out = run_child("""
        import multiprocessing, torch, torch_npu

        def child(queue):
            try:
                torch.device("npu:0")  # naming a device uses nothing
                torch.tensor([2]).to("npu:0")
                queue.put("used")
            except RuntimeError as e:
                queue.put(str(e))

        def forked():
            queue = multiprocessing.get_context("fork").Queue()
            p = multiprocessing.get_context("fork").Process(target=child, args=(queue,))
            p.start()
            p.join(60)
            return queue.get(timeout=60)

        torch.tensor([2])  # torch's lazy imports in the parent, once for both children
        print(forked().split(".")[0] == "used")  # not used yet: the child may
        contexts = torch_npu._C._npu_hasPrimaryContext
        torch.zeros(1, device="npu:1")  # makes npu:1's context, not npu:0's
        print(torch.npu.is_initialized(), contexts(0), contexts(1))
        print(forked().split(".")[0])
        print(torch.tensor([2]).to("npu:0").is_npu, contexts(0))
    """)
    assert out.splitlines() == [
        "True",
        "True False True",
        "Cannot re-initialize NPU in forked subprocess",
        "True True",
    ]


def test_collect_env_reports_the_emulated_npu():
    out = run_child(
        """
        import runpy, sys
        sys.argv = ["collect_env"]
        runpy.run_module("torch_npu.utils.collect_env", run_name="__main__")
    """,
        APEXNPU_SOC_VERSION="Ascend910B2",
    )
    assert out.startswith("Collecting environment information...\nPyTorch version: ")
    assert "Torch-npu version: " in out and "CANN:\nnot known" in out
    assert (
        "NPU:\n8 x Ascend910B2 (SocVersion 221), emulated on the CPU; overflow mode: INF/NAN" in out
    )
