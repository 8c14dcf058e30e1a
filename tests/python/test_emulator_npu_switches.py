"""torch.npu's switches and settings that Huawei's torch_npu tests reach (test_torch_backends,
test_torch_npu): the SDP backend flags (torch's own), the deterministic region around a
backward, aclnn's HF32 switch (the convolutions'), core limits, the operator timeout,
``Event.recorded_time``, ``ASCEND_RT_VISIBLE_DEVICES`` read as torch_npu reads it until the NPUs
start, and ``as_tensor`` copying host memory to the NPU. Both torches."""

import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import torch

from overlay_support import overlay_env, use_overlay

use_overlay()
import torch_npu  # noqa: E402,F401

TORCH_1 = int(torch.__version__.split(".")[0]) < 2


@pytest.mark.skipif(TORCH_1, reason="torch 1.13 has no scaled dot-product attention backends")
def test_sdp_switches_are_torchs_flags():
    before = torch.backends.cuda.flash_sdp_enabled()
    try:
        with pytest.warns(UserWarning, match="only sets the global variable"):
            torch.npu.enable_flash_sdp(False)
        assert torch.backends.cuda.flash_sdp_enabled() is False
        assert torch.npu.flash_sdp_enabled() is False
        with torch.npu.sdp_kernel(enable_flash=True, enable_math=False):
            assert torch.npu.flash_sdp_enabled() and not torch.npu.math_sdp_enabled()
        assert not torch.npu.flash_sdp_enabled() and torch.npu.math_sdp_enabled()
        with pytest.raises(TypeError, match="enabled must be a bool"):
            torch.npu.enable_math_sdp(1)
    finally:
        torch.backends.cuda.enable_flash_sdp(before)
    assert torch.npu.preferred_linalg_library("cusolver") == torch._C._LinalgBackend.Default


def test_deterministic_region_covers_forward_and_backward():
    """Algorithms are deterministic from an enable to a disable going forward, and from the
    disable back to the enable going backward; values pass unchanged."""
    seen = []

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(("forward", torch.are_deterministic_algorithms_enabled()))
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            seen.append(("backward", torch.are_deterministic_algorithms_enabled()))
            return grad

    assert not torch.are_deterministic_algorithms_enabled()
    x = torch.ones(2, 2, device="npu:0", requires_grad=True)
    y = torch.npu.enable_deterministic_with_backward(x * 3)
    y = Probe.apply(y)
    y = torch.npu.disable_deterministic_with_backward(y)
    assert not torch.are_deterministic_algorithms_enabled()
    (y * 2).sum().backward()
    assert seen == [("forward", True), ("backward", True)]
    assert not torch.are_deterministic_algorithms_enabled()
    assert torch.equal(x.grad.cpu(), torch.full((2, 2), 6.0))


def test_aclnn_hf32_is_the_convolutions_switch():
    assert torch.npu.aclnn.allow_hf32 is True  # torch_npu's default for convolutions
    with torch.npu.aclnn.flags(allow_hf32=False):
        assert torch.npu.conv.allow_hf32 is False
        assert torch.npu.aclnn.allow_hf32 is False
    assert torch.npu.conv.allow_hf32 is True
    torch.npu.conv.allow_hf32 = False
    try:
        assert torch.npu.aclnn.allow_hf32 is False
    finally:
        torch.npu.aclnn.allow_hf32 = True
    assert torch.npu.conv.allow_hf32 is True


def test_device_limits_and_timeout_are_checked_and_kept():
    props = torch.npu.get_device_properties(0)
    want = {"cube_core_num": props.cube_core_num, "vector_core_num": props.vector_core_num}
    assert torch.npu.get_device_limit(1) == want
    torch.npu.set_device_limit(1, 4)
    assert torch.npu.get_device_limit(1) == dict(want, cube_core_num=4)
    for bad in ("0", 0.0, None, True):
        with pytest.raises(TypeError, match="device must be an int"):
            torch.npu.set_device_limit(bad)
    with pytest.raises(AssertionError, match="Invalid device id"):
        torch.npu.get_device_limit(torch.npu.device_count())
    torch.npu.set_op_timeout_ms(1000)
    with pytest.raises(OverflowError, match="negative value to unsigned"):
        torch.npu.set_op_timeout_ms(-1)
    with pytest.raises(OverflowError, match="Overflow"):
        torch.npu.set_op_timeout_ms(2**32)
    torch.npu.use_compatible_impl(True)
    assert torch.npu.are_compatible_impl_enabled() is True
    torch.npu.use_compatible_impl(False)
    assert torch.npu.are_compatible_impl_enabled() is False


def test_event_recorded_time_is_the_record_time_in_microseconds():
    event = torch.npu.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="must be recorded"):
        event.recorded_time()
    before = time.time_ns() // 1000
    event.record()
    after = time.time_ns() // 1000
    assert isinstance(event.recorded_time(), int)
    assert before <= event.recorded_time() <= after


# ASCEND_RT_VISIBLE_DEVICES -> the NPUs seen (of 8): a leading run of digits and commas, up to
# an empty entry; indices must ascend (else none); the list stops at an index not installed.
VISIBLE = [("", 0), ("0,1", 2), ("0, 1", 1), ("2,5,7", 3), ("0,9,1", 1), ("1,0", 0), ("0,,1", 1)]


def test_visible_devices_are_read_until_the_npus_start():
    code = f"""
        import os
        import torch, torch_npu
        print(torch.npu.device_count())
        for visible, _ in {VISIBLE!r}:
            os.environ["ASCEND_RT_VISIBLE_DEVICES"] = visible
            print(torch.npu.device_count(), torch_npu._C._npu_getDeviceCount())
        os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "1,2,3"
        torch.empty(1, device="npu")  # the NPUs start: the count is fixed from here
        os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"
        print(torch.npu.device_count())
        """
    env = overlay_env()
    env.pop("ASCEND_RT_VISIBLE_DEVICES", None)
    env["APEXNPU_DEVICE_COUNT"] = "8"
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    want = ["8"] + [f"{count} {count}" for _, count in VISIBLE] + ["3"]
    assert proc.stdout.splitlines() == want


def test_as_tensor_to_the_npu_copies_host_memory():
    array = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    host = torch.as_tensor(array)
    npu = torch.as_tensor(host, device="npu:0")
    assert host.device.type == "cpu" and npu.device == torch.device("npu:0")
    npu.add_(1)
    assert array.tolist() == [1.0, 2.0, 3.0] and host.tolist() == [1.0, 2.0, 3.0]
    from_array = torch.as_tensor(array, device="npu:0")
    from_array.mul_(2)
    assert array.tolist() == [1.0, 2.0, 3.0]
    assert torch.as_tensor(npu, device="npu:0") is npu  # already there: no copy
    assert torch.asarray(host, device="npu:0").data_ptr() != host.data_ptr()


@pytest.mark.parametrize(
    "conf, error",
    [
        ("expandable_segments:True,per_process_memory_fraction:0.001", None),
        ("per_process_memory_fraction:", "expecting per_process_memory_fraction value"),
        ("per_process_memory_fraction:1.5", r"invalid, set it in \[0.0, 1.0\]"),
        ("per_process_memory_fraction:-0.1", r"invalid, set it in \[0.0, 1.0\]"),
    ],
)
def test_alloc_conf_fraction(conf, error, monkeypatch):
    """What the allocator reads as the NPUs start (``configure``, called here again): the
    fraction holds every NPU to its share of the (host's) memory; a bad value is refused."""
    from torch_npu._device import memory

    monkeypatch.setenv("PYTORCH_NPU_ALLOC_CONF", conf)
    try:
        if error is not None:
            with pytest.raises(RuntimeError, match=error):
                memory.configure()
            return
        memory.configure()
        assert torch.npu.get_per_process_memory_fraction(1) == 0.001
        total = torch.npu.get_device_properties(1).total_memory
        with pytest.raises(RuntimeError, match="NPU out of memory.*allowed"):
            torch.empty(int(total * 0.002), dtype=torch.int8, device="npu:1")
    finally:
        monkeypatch.delenv("PYTORCH_NPU_ALLOC_CONF")
        memory.configure()
    assert torch.npu.get_per_process_memory_fraction(1) == 1.0


@pytest.mark.skipif(TORCH_1, reason="torch 1.13's storages take no NPU device")
def test_storage_made_on_the_npu_holds_a_tensor_set_to_it():
    """torch would crash on the NPU's unregistered allocator; the emulated NPU's storage is
    host memory. The NPU describes such a storage as a vector, so a matrix set to it casts
    to NZ as a vector does (on a 910B it stays ND)."""
    host = torch.arange(16, dtype=torch.float32)
    storage = torch.UntypedStorage(host.untyped_storage().nbytes(), device="npu")
    storage.copy_(host.untyped_storage())
    matrix = torch.empty([], device="npu").set_(storage, 0, [4, 4], [4, 1])
    assert matrix.device == torch.device("npu:0")
    assert torch.equal(matrix.cpu(), host.reshape(4, 4))
    vector = torch.zeros(16, device="npu")
    as_vector = torch_npu.get_npu_format(torch_npu.npu_format_cast(vector, 29))
    assert torch_npu.get_npu_format(torch_npu.npu_format_cast(matrix, 29)) == as_vector
    made = torch.zeros(4, 4, device="npu")
    assert torch_npu.get_npu_format(torch_npu.npu_format_cast(made, 29)) == 29
    with pytest.raises(RuntimeError, match="npu:9 does not exist"):
        torch.UntypedStorage(4, device="npu:9")


@pytest.mark.skipif(TORCH_1, reason="torch 1.13 keeps no storage objects to follow a capsule")
def test_dlpack_round_trip_stays_on_the_npu_and_shares_memory():
    from torch.utils.dlpack import from_dlpack, to_dlpack

    npu = torch.randn(2, 3, device="npu:1").t()
    back = from_dlpack(to_dlpack(npu))
    assert back.device == torch.device("npu:1")
    assert back.data_ptr() == npu.data_ptr() and back.stride() == npu.stride()
    npu.fill_(7.0)
    assert torch.equal(back.cpu(), torch.full((3, 2), 7.0))
    assert torch.from_dlpack(npu).device == torch.device("npu:1")
    host = torch.randn(3)
    assert from_dlpack(to_dlpack(host)).device.type == "cpu"
    assert torch.from_dlpack(np.arange(3.0)).device.type == "cpu"


@pytest.mark.skipif(TORCH_1, reason="torch_npu 1.x saved NPU tensors in the legacy format")
def test_legacy_save_refuses_npu_tensors_as_torch_npu(tmp_path):
    path = str(tmp_path / "x.pt")
    with pytest.raises(RuntimeError, match="not an NPUStorageImpl"):
        torch.save({"w": torch.ones(2, device="npu")}, path, _use_new_zipfile_serialization=False)
    torch.save({"w": torch.ones(2)}, path, _use_new_zipfile_serialization=False)
    assert torch.equal(torch.load(path)["w"], torch.ones(2))
    torch.save({"w": torch.ones(2, device="npu")}, path)  # the zip format saves them
    assert torch.load(path)["w"].device == torch.device("npu:0")


def test_cann_versions_are_unknown_without_cann():
    from torch_npu.npu.utils import _is_gte_cann_version, get_cann_version

    assert get_cann_version() == "" and get_cann_version(module="DRIVER") == ""
    assert torch_npu.utils.get_cann_version("CANN") == ""
    assert _is_gte_cann_version("8.1.RC1") is False


def test_sparse_tensor_moves_to_the_npu_and_back():
    indices = torch.tensor([[0, 1, 2], [1, 2, 0]])
    host = torch.sparse_coo_tensor(indices, torch.tensor([3.0, 4.0, 5.0]), (3, 3)).coalesce()
    npu = host.npu()
    assert npu.is_sparse and npu.device == torch.device("npu:0")
    assert torch.equal(npu.to_dense().cpu(), host.to_dense())
    assert torch.equal(npu.cpu().to_dense(), host.to_dense())
    # torch's refusal of a COO tensor's CSR indices (torch 1.13 finds no kernel instead)
    with pytest.raises(NotImplementedError if TORCH_1 else RuntimeError, match="crow_indices"):
        npu.crow_indices()


def test_full_infers_its_dtype_from_the_fill_value():
    for device in ("cpu", "npu:0"):
        assert torch.full((2,), True, device=device).dtype == torch.bool
        assert torch.full(size=(2,), fill_value=False, device=device).dtype == torch.bool
        assert torch.full((2,), 1, device=device).dtype == torch.int64
        assert torch.full((2,), 1.0, device=device).dtype == torch.get_default_dtype()


def test_npurt_raw_streams_are_handles_made_and_taken_back():
    import ctypes

    rt = torch.npu.npurt()
    stream = ctypes.c_void_p()
    assert rt.npuStreamCreate(ctypes.addressof(stream)) == 0
    assert stream.value
    other = ctypes.c_void_p()
    assert rt.npuStreamCreate(ctypes.addressof(other)) == 0 and other.value != stream.value
    assert rt.npuStreamDestroy(stream.value) == 0
    assert rt.npuStreamDestroy(stream.value) == 107000  # ACL_ERROR_RT_PARAM_INVALID: gone
    assert rt.npuStreamCreate(0) == 107000
    assert rt.npuStreamDestroy(other.value) == 0
