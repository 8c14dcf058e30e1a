"""torch_npu's ShardedGradScaler on one emulated NPU (the ranks' agreement is tested over hccl
in test_emulator_fsdp.py): its names, ``scale`` keeping the loss's dtype, unscaling fp16 and
host (CPU-offloaded) gradients in place to ``grad / scale``, skipping a step whose gradients
hold an inf or (on a 910) raised the float status, backing off, and its place in
``torch.distributed.fsdp.sharded_grad_scaler`` once torch_npu is imported, whichever of the
two comes first, without torch_npu importing FSDP."""

import subprocess
import sys
import textwrap

import pytest
import torch

from overlay_support import overlay_env, use_overlay

use_overlay()
import torch_npu  # noqa: E402
from torch_npu._fp16 import float_status  # noqa: E402
from torch_npu.npu.amp import sharded_grad_scaler  # noqa: E402
from torch_npu.npu.amp.sharded_grad_scaler import ShardedGradScaler  # noqa: E402

TORCH2 = int(torch.__version__.split(".")[0]) >= 2


@pytest.fixture(autouse=True)
def clear_status():
    torch.npu.set_device(0)
    float_status.clear()
    yield
    float_status.clear()


def test_names_as_torch_npu_has_them():
    assert ShardedGradScaler is sharded_grad_scaler._ShardedGradScaler
    assert torch_npu._ShardedGradScaler is ShardedGradScaler
    assert issubclass(ShardedGradScaler, torch.npu.amp.GradScaler)


def test_scale_keeps_each_outputs_dtype():
    scaler = ShardedGradScaler(init_scale=4.0)
    half = torch.tensor([1.5], dtype=torch.float16).npu()
    one = scaler.scale(half)
    assert one.dtype == torch.float16 and one.is_npu and one.item() == 6.0
    pair = scaler.scale([half, torch.tensor([2.0]).npu()])
    assert [t.dtype for t in pair] == [torch.float16, torch.float32]
    assert [t.item() for t in pair] == [6.0, 8.0]
    assert ShardedGradScaler(enabled=False).scale(half) is half
    with pytest.raises(ValueError, match="meta.*NPU or on the host"):
        scaler.scale(torch.empty(1, device="meta"))


def model_with_grads(dtype, device, grads):
    params = [torch.nn.Parameter(torch.zeros(len(g), dtype=dtype, device=device)) for g in grads]
    for p, g in zip(params, grads):
        p.grad = torch.tensor(g, dtype=dtype, device=device)
    return params, torch.optim.SGD(params, lr=1.0)


@pytest.mark.parametrize(
    "dtype,device",
    [(torch.float16, "npu"), (torch.float32, "npu"), (torch.float32, "cpu")],
    ids=["npu-fp16", "npu-fp32", "host-fp32"],
)
def test_unscales_in_place_and_steps(dtype, device):
    scaler = ShardedGradScaler(init_scale=8.0, growth_interval=1)
    scaler.scale(torch.ones(1).npu())  # the first scale makes the scale tensor
    grads = [[8.0, -16.0, 4.0], [2.0]]
    params, opt = model_with_grads(dtype, device, grads)
    scaler.step(opt)
    for p, g in zip(params, grads):
        want = torch.tensor([-x / 8.0 for x in g])  # SGD, lr 1: p - grad / scale
        assert p.dtype == dtype and torch.equal(p.detach().float().cpu(), want)
    scaler.update()
    assert scaler.get_scale() == 16.0  # grown after growth_interval clean steps


def test_an_inf_in_a_gradient_skips_the_step_and_backs_off():
    scaler = ShardedGradScaler(init_scale=8.0)
    scaler.scale(torch.ones(1).npu())
    params, opt = model_with_grads(torch.float16, "npu", [[1.0, float("inf")]])
    assert scaler.step(opt) is None
    assert torch.equal(params[0].detach().cpu(), torch.zeros(2, dtype=torch.float16))
    scaler.update()
    assert scaler.get_scale() == 4.0


@pytest.mark.skipif(torch.npu.utils.is_support_inf_nan(), reason="a 910's saturation only")
def test_a_saturated_fp16_overflow_skips_the_step_on_a_910():
    scaler = ShardedGradScaler(init_scale=8.0)
    loss = scaler.scale(torch.tensor([1.0], dtype=torch.float16).npu())
    params, opt = model_with_grads(torch.float32, "npu", [[1.0, 2.0]])
    big = torch.tensor([60000.0], dtype=torch.float16).npu() * 2  # saturates at 65504
    assert big.item() == 65504.0 and float_status.get()  # finite: only the status knows
    scaler.step(opt)
    assert torch.equal(params[0].detach().cpu(), torch.zeros(2)) and loss.item() == 8.0
    scaler.update()
    assert scaler.get_scale() == 4.0


@pytest.mark.skipif(
    not TORCH2,
    reason="torch 1.13 cannot import torch.distributed.fsdp on "
    "Python 3.11 (a dataclass of its sharded tensors is refused)",
)
@pytest.mark.parametrize("first", ["torch_npu", "fsdp"])
def test_torch_fsdp_scaler_is_torch_npus(first):
    imports = ["import torch_npu", "import torch.distributed.fsdp.sharded_grad_scaler as module"]
    code = textwrap.dedent(f"""
        import sys
        {imports[0] if first == "torch_npu" else imports[1]}
        fsdp_after_torch_npu = "torch.distributed.fsdp" in sys.modules
        {imports[1] if first == "torch_npu" else imports[0]}
        assert module.ShardedGradScaler is torch_npu._ShardedGradScaler
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler
        assert ShardedGradScaler.__module__ == "torch_npu.npu.amp.sharded_grad_scaler"
        print(fsdp_after_torch_npu)
    """)
    done = subprocess.run(
        [sys.executable, "-c", code], env=overlay_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    if first == "torch_npu":
        assert done.stdout.strip() == "False"  # torch_npu did not import FSDP itself
