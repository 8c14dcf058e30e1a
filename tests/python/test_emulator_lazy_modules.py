"""LazyModules on the NPU (Huawei's test_lazy_modules asks the same): a lazy module moved to or
made on the NPU materializes its parameters and buffers there at its first forward, through
``npu()``, ``to("npu:N")``, ``device="npu"``, ``half()`` and back to the host. Both torches."""

import warnings

import pytest
import torch
import torch.nn.functional as F

from overlay_support import use_overlay

use_overlay()
import torch_npu  # noqa: E402,F401

warnings.filterwarnings("ignore", message="Lazy modules are a new feature")


def materialized(module, x):
    out = module(x)
    assert not any(torch.nn.parameter.is_lazy(p) for p in module.parameters())
    return out


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.nn.LazyLinear(4).npu(),
        lambda: torch.nn.LazyLinear(4).to("npu:1"),
        lambda: torch.nn.LazyLinear(4, device="npu:1"),
        lambda: torch.nn.LazyLinear(4).npu().cpu().to("npu:1"),
    ],
    ids=["npu", "to", "device", "round_trip"],
)
def test_a_lazy_linear_materializes_on_its_npu(make):
    module = make()
    want = 0 if "npu:1" not in str(module.weight.device) else 1
    assert torch.nn.parameter.is_lazy(module.weight) and module.weight.device.index == want
    x = torch.randn(2, 3).to(module.weight.device)
    before = torch.npu.memory_allocated(want)
    out = materialized(module, x)
    assert type(module.weight) is torch.nn.Parameter and module.weight.shape == (4, 3)
    assert {str(p.device) for p in module.parameters()} == {f"npu:{want}"}
    ref = F.linear(x.cpu(), module.weight.detach().cpu(), module.bias.detach().cpu())
    assert out.device == x.device and torch.equal(out.cpu(), ref)
    # Its memory is the NPU's (the weight's and the bias's blocks, and the output's), and it
    # trains there.
    assert torch.npu.memory_allocated(want) >= before + 3 * 512
    optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
    before = module.weight.detach().clone()
    module(x).sum().backward()
    optimizer.step()
    assert module.weight.grad.device == x.device and not torch.equal(module.weight, before)


def test_half_keeps_a_lazy_module_on_the_npu_and_buffers_follow():
    module = torch.nn.LazyLinear(4).npu().half()
    assert str(module.weight.device) == "npu:0" and module.weight.dtype == torch.float16
    out = materialized(module, torch.randn(2, 3).half().npu())
    assert out.dtype == torch.float16 and module.weight.dtype == torch.float16
    assert str(module.weight.device) == "npu:0"
    norm = torch.nn.LazyBatchNorm1d().npu()
    materialized(norm, torch.randn(4, 3).npu())
    assert {str(t.device) for t in list(norm.parameters()) + list(norm.buffers())} == {"npu:0"}


def test_a_lazy_module_brought_back_materializes_on_the_host():
    module = torch.nn.LazyLinear(4).npu().cpu()
    assert module.weight.device.type == "cpu" and not module.weight.is_npu
    materialized(module, torch.randn(2, 3))
    assert module.weight.device.type == "cpu" and not module.weight.is_npu
    # A lazy tensor's to() that changes nothing is itself, as torch's.
    lazy = torch.nn.LazyLinear(4).npu().weight
    assert lazy.to("npu:0") is lazy and lazy.to(torch.float32) is lazy
    assert lazy.to(torch.float64).dtype == torch.float64 and lazy.to(torch.float64).is_npu
