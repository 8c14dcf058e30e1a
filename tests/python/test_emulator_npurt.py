"""``torch.npu.npurt()`` (``torch_npu._C._npurt``): host-memory registration with ACL's return
codes, and DeepSpeed's NPU accelerator registering its pinned buffers through it."""

import importlib.util

import pytest

import overlay_support


def test_host_memory_registers_once_and_unregisters_once():
    words = overlay_support.run_with_emulator("""
        import ctypes, torch, torch_npu
        rt = torch.npu.npurt()
        buf = ctypes.create_string_buffer(8192)
        a = ctypes.addressof(buf)
        print(rt is torch_npu._C._npurt,
              rt.npuHostRegister(a, 8192, 2), rt.npuHostRegister(a + 4096, 100, 2),
              rt.npuHostRegister(0, 10, 2), rt.npuHostRegister(a, 0, 2),
              rt.npuHostUnregister(a), rt.npuHostUnregister(a), torch.npu.is_initialized())
    """)
    # registered; overlapping, null and empty refused; unregistered once, then unknown
    assert words == ["True", "0", "107000", "107000", "107000", "0", "107000", "True"]


@pytest.mark.skipif(
    importlib.util.find_spec("deepspeed") is None,
    reason="needs deepspeed (scripts/torch2_venv.sh installs it beside torch 2.x)",
)
def test_deepspeed_registers_its_pinned_host_memory():
    words = overlay_support.run_with_emulator("""
        import ctypes, torch, torch_npu
        from deepspeed.accelerator import get_accelerator
        acc = get_accelerator()
        buf = ctypes.create_string_buffer(8192)
        a = (ctypes.addressof(buf) + 4095) // 4096 * 4096
        print(acc.device_name(), acc.register_host_memory(a, 4096),
              acc.unregister_host_memory(a))
    """)
    assert words[-3:] == ["npu", "True", "None"]
