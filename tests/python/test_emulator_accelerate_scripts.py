"""accelerate's own test scripts (``accelerate/test_utils/scripts``, what ``accelerate test`` and
accelerate's multi-device CI run), unchanged, under ``accelerate launch`` on 2 emulated NPUs
(torch 2.x, with accelerate). accelerate picks the NPU itself (``MULTI_NPU``, backend hccl), and
each script asserts its own results: process control, RNG synchronisation, the prepared
dataloaders against a single-process run, training on 2 ranks against 1 (fp32, fp16 and bf16),
gradient sync and accumulation, the collectives of ``accelerate.utils``, FSDP weight merging
and DDP communication hooks."""

import importlib.util
import os

import pytest
import torch

from overlay_support import accelerate_runs

pytestmark = [
    pytest.mark.skipif(
        int(torch.__version__.split(".")[0]) < 2,
        reason="accelerate needs torch 2.x",
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("accelerate") is None,
        reason="needs accelerate (the torch 2.x venv of scripts/torch2_venv.sh has it)",
    ),
]


def script(name):
    import accelerate.test_utils

    return os.path.join(os.path.dirname(accelerate.test_utils.__file__), "scripts", name)


def launch(tmp_path, name, soc="Ascend910B1", mixed_precision="no"):
    return accelerate_runs.run(
        str(tmp_path), soc, script(name), ["--multi_gpu", "--mixed_precision", mixed_precision]
    )


def succeeded(proc):
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    return proc.stdout


@pytest.mark.parametrize(
    "soc, mixed_precision", [("Ascend910B1", "no"), ("Ascend910B1", "bf16"), ("Ascend910A", "fp16")]
)
def test_accelerate_test_script(tmp_path, soc, mixed_precision):
    out = succeeded(launch(tmp_path, "test_script.py", soc, mixed_precision))
    assert out.count("Distributed environment: DistributedType.MULTI_NPU  Backend: hccl") == 2
    assert "Device: npu:0" in out and "Device: npu:1" in out
    assert f"Mixed precision type: {mixed_precision}" in out
    assert out.count("Training yielded the same results on one CPU or distributed setup") == 4


def test_accelerate_collectives(tmp_path):
    out = succeeded(launch(tmp_path, "test_ops.py"))
    assert "Device: npu:0" in out and "testing gather" in out


def test_accelerate_gradient_sync(tmp_path):
    out = succeeded(launch(tmp_path, "test_sync.py"))
    assert "**Test Distributed `no_sync` context manager**" in out


@pytest.mark.skipif(
    importlib.util.find_spec("torchdata") is None,
    reason="the script's stateful-dataloader tests need torchdata (in scripts/torch2_venv.sh)",
)
def test_accelerate_distributed_data_loop(tmp_path):
    out = succeeded(launch(tmp_path, "test_distributed_data_loop.py"))
    assert "Test joining uneven inputs" in out


def test_accelerate_fsdp_weight_merging(tmp_path):
    succeeded(launch(tmp_path, "test_merge_weights.py"))


def test_accelerate_ddp_comm_hooks(tmp_path):
    """The plain and fp16 hooks match DDP without a hook; the bf16 hook is refused by torch's
    DDP, which admits it on CUDA with NCCL 2.10+ or XPU only: torch_npu leaves that check as it
    is, so on an NPU the script stops there too."""
    proc = launch(tmp_path, "test_ddp_comm_hook.py")
    assert proc.stdout.count("Test DDP comm hook: fp16, comm wrapper: no") == 2, proc.stderr
    assert proc.returncode != 0
    assert "BF16 all reduce communication hook required CUDA 11+" in proc.stderr
    assert "AssertionError" not in proc.stderr and "Mismatched elements" not in proc.stderr
