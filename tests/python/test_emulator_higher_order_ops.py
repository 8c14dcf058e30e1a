"""torch 2.x's higher-order operators (``out_dtype``, ``cond``) under the emulation: torch hands
them to the emulator's dispatch mode, which runs their kernels so that the aten operations inside
are the emulated NPU's (NPU outputs, the chip's fp16 overflow), and tracing them (``make_fx``)
still records the operator. Values are compared with what plain torch gives for the host. torch
1.13 has no higher-order operators."""

import pytest
import torch

from overlay_support import use_overlay

use_overlay()
import torch_npu  # noqa: E402,F401

pytestmark = pytest.mark.skipif(
    int(torch.__version__.split(".")[0]) < 2, reason="torch 1.13 has no higher-order operators"
)


def out_dtype(*args):
    from torch._higher_order_ops.out_dtype import out_dtype as op

    return op(*args)


@pytest.fixture
def int8_pair():
    g = torch.Generator().manual_seed(0)
    make = lambda: torch.randint(-128, 127, (5, 5), dtype=torch.int8, generator=g)  # noqa: E731
    return make(), make()


def test_out_dtype_of_npu_tensors_runs_on_the_npu(int8_pair):
    x, w = int8_pair
    out = out_dtype(torch.ops.aten.mm.default, torch.int32, x.npu(), w.npu())
    assert out.is_npu and out.dtype == torch.int32
    assert torch.equal(out.cpu(), x.int() @ w.int())


@pytest.mark.parametrize("chip,value", [("chip910", 65504.0), ("chip910b", float("inf"))])
def test_fp16_inside_a_higher_order_operator_is_the_chip_s(chip, value, request):
    request.getfixturevalue(chip)
    a = torch.full((2, 2), 300.0, dtype=torch.float16).npu()  # 2 * 300 * 300 overflows fp16
    out = out_dtype(torch.ops.aten.mm.default, torch.float16, a, a)
    assert out.is_npu and out.cpu().float().tolist() == [[value, value], [value, value]]


def test_cond_runs_its_branch_on_the_npu():
    x = torch.linspace(-1, 1, 5)
    for pred, expected in ((True, x.sin()), (False, x.cos())):
        out = torch.cond(torch.tensor(pred).npu(), torch.sin, torch.cos, (x.npu(),))
        assert out.is_npu
        assert torch.allclose(out.cpu(), expected)


def test_make_fx_traces_out_dtype_of_host_tensors(int8_pair):
    from torch.fx.experimental.proxy_tensor import make_fx

    x, w = int8_pair
    gm = make_fx(lambda a, b: out_dtype(torch.ops.aten.mm.default, torch.int32, a, b))(x, w)
    assert "out_dtype" in gm.code
    assert torch.equal(gm(x, w), x.int() @ w.int())
