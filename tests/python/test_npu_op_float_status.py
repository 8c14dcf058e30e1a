"""torch_npu.npu_alloc_float_status / npu_get_float_status / npu_clear_float_status at
torch_npu's top level, as op-plugin's kernels behave: on Ascend 910 (the default chip) the
status is read into the buffer given, on a 910B into a new int32 tensor; clearing returns new
zeros and leaves its input alone; modes other than 0 and 1 raise op-plugin's error."""

import subprocess
import sys
import textwrap

import pytest
import torch

import overlay_support
from overlay_support.npu_op_checks import float_status, on_npu, torch_npu


def overflow():
    x = on_npu(torch.tensor([40000.0]), torch.float16)
    return x + x  # beyond 65504: saturates and raises the status


def test_alloc_gives_eight_fp32_zeros_on_the_npu():
    for given in (on_npu(torch.randn(2, 3)), on_npu(torch.ones(4), torch.float16)):
        status = torch_npu.npu_alloc_float_status(input=given)
        assert status.is_npu and status.dtype == torch.float32 and status.shape == (8,)
        assert not status.cpu().any()


def test_get_reads_the_status_into_the_buffer_on_a_910():
    float_status.clear()
    buffer = torch_npu.npu_alloc_float_status(on_npu(torch.zeros(8)))
    got = torch_npu.npu_get_float_status(buffer)
    assert got is buffer and not got.cpu().any()
    overflow()
    got = torch_npu.npu_get_float_status(buffer, mode=0)
    assert got is buffer and got.cpu()[0] != 0 and not got.cpu()[1:].any()
    assert float_status.get(), "reading leaves the status set"


def test_clear_clears_and_returns_new_zeros():
    overflow()
    given = on_npu(torch.full((8,), 3.0))
    cleared = torch_npu.npu_clear_float_status(input=given)
    assert not float_status.get()
    assert cleared is not given and cleared.is_npu and cleared.shape == (8,)
    assert cleared.dtype == given.dtype and not cleared.cpu().any()
    assert (given.cpu() == 3.0).all()
    status = torch_npu.npu_get_float_status(torch_npu.npu_alloc_float_status(given))
    assert status.cpu()[0] == 0


@pytest.mark.parametrize("name", ["npu_get_float_status", "npu_clear_float_status"])
def test_modes_other_than_0_and_1_raise(name):
    with pytest.raises(
        RuntimeError,
        match=r"mode only supported for ORIGINAL_MODE\(0\) "
        r"DEBUG_MODE\(1\), but got mode:2",
    ):
        getattr(torch_npu, name)(on_npu(torch.zeros(8)), 2)


def test_a_910b_reads_the_status_into_a_new_int32_tensor():
    code = """
        import os, torch, torch_npu
        buffer = torch_npu.npu_alloc_float_status(torch.zeros(8).npu())
        quiet = torch_npu.npu_get_float_status(buffer)
        x = torch.tensor([40000.0], dtype=torch.float16).npu()
        x + x
        loud, debug = (torch_npu.npu_get_float_status(buffer, m) for m in (0, 1))
        print(quiet is buffer, quiet.dtype, tuple(quiet.shape), int(quiet.cpu()[0]),
              loud.dtype, int(loud.cpu()[0]), int(debug.cpu()[0]), bool(buffer.cpu().any()))
        torch_npu.npu_clear_float_status(buffer)
        print(int(torch_npu.npu_get_float_status(buffer).cpu()[0]))
    """
    env = overlay_support.overlay_env()
    env.update(APEXNPU_SOC_VERSION="Ascend910B1", INF_NAN_MODE_FORCE_DISABLE="1")
    env.pop("APEXNPU_INF_NAN_MODE", None)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [
        "False",
        "torch.int32",
        "(8,)",
        "0",
        "torch.int32",
        "1",
        "1",
        "False",
        "0",
    ]
