"""torch.accelerator (torch >= 2.6) on the emulated NPU, as device-agnostic scripts use it (and
Huawei's DDP hook tests: ``torch.accelerator.set_device_index(rank)``): the current device, its
context manager, synchronize, streams and the memory functions answer as torch.npu's do."""

import pytest
import torch

from overlay_support import use_overlay

use_overlay()
import torch_npu  # noqa: E402,F401

pytestmark = pytest.mark.skipif(
    not hasattr(torch, "accelerator"), reason="torch.accelerator is torch >= 2.6's"
)


@pytest.fixture(autouse=True)
def on_npu0():
    torch.npu.set_device(0)
    yield
    torch.npu.set_device(0)


def test_the_current_device_is_the_npus():
    acc = torch.accelerator
    assert acc.is_available() and acc.current_accelerator().type == "npu"
    acc.set_device_index(1)
    assert acc.current_device_index() == 1 == torch.npu.current_device()
    assert torch.empty(2, device="npu").device == torch.device("npu", 1)
    acc.set_device_index("npu:0")
    assert torch.npu.current_device() == 0
    acc.set_device_index(-1)  # no-op, as torch's
    assert torch.npu.current_device() == 0
    with acc.device_index(2):
        assert torch.npu.current_device() == 2 and acc.current_device_index() == 2
        assert torch.ones(1).to(acc.current_accelerator()).device == torch.device("npu", 2)
    assert torch.npu.current_device() == 0
    with acc.device_index(None):
        assert torch.npu.current_device() == 0
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        acc.set_device_index("cpu")


def test_synchronize_streams_and_memory_are_torch_npus(monkeypatch):
    acc = torch.accelerator
    stream, before = torch.npu.Stream(device=1), torch.npu.current_stream(1)
    acc.set_stream(stream)
    try:
        assert acc.current_stream(1) is torch.npu.current_stream(1) == stream
    finally:
        acc.set_stream(before)
    acc.synchronize()
    acc.synchronize(1)
    acc.reset_peak_memory_stats(1)
    base = acc.memory_allocated(1)
    x = torch.empty(1 << 20, device="npu:1")
    assert acc.memory_allocated(1) == torch.npu.memory_allocated(1) >= base + x.nbytes
    assert acc.max_memory_allocated(1) == torch.npu.max_memory_allocated(1)
    assert acc.memory_reserved(1) == torch.npu.memory_reserved(1)
    assert acc.memory_stats(1) == torch.npu.memory_stats(1)
    # An NPU's free memory is the host's available memory here, which other processes change
    # between two readings: both calls see the one reading taken first.
    from torch_npu._device import memory as npu_memory

    reading = npu_memory.host_memory()
    monkeypatch.setattr(npu_memory, "host_memory", lambda: reading)
    assert acc.get_memory_info(1) == torch.npu.mem_get_info(1) == reading
    del x
    acc.empty_cache()
    assert acc.memory_allocated(1) == base
