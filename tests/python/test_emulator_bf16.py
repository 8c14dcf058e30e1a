"""bfloat16 on the emulated NPU: a 910B (``APEXNPU_SOC_VERSION=Ascend910B1``) computes bf16
operations in fp32 and rounds each result once to nearest even, as its units accumulate in fp32;
a 910 refuses bf16 arithmetic. Each case runs in a fresh interpreter, as the chip is read once."""

import subprocess
import sys
import textwrap

import overlay_support


def run(code, chip="Ascend910B1", **env):
    environ = overlay_support.overlay_env()
    for name in (
        "APEXNPU_SOC_VERSION",
        "APEXNPU_INF_NAN_MODE",
        "INF_NAN_MODE_ENABLE",
        "INF_NAN_MODE_FORCE_DISABLE",
    ):
        environ.pop(name, None)
    if chip is not None:
        environ["APEXNPU_SOC_VERSION"] = chip
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


def lines(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.split()


# Each aten op on bf16 NPU tensors against the same op on their fp32 values, rounded once to
# bf16: bit for bit (the reference rounds exactly once, as the emulated NPU must).
ROUNDED_ONCE = """
    import torch, torch_npu
    import torch.nn.functional as F
    torch.manual_seed(0)
    bf = torch.bfloat16
    a = torch.randn(32, 48).to(bf)
    b = torch.randn(48, 16).to(bf)
    c = torch.randn(32, 48).to(bf)
    img = torch.randn(2, 3, 8, 8).to(bf)
    w = torch.randn(4, 3, 3, 3).to(bf)
    cases = {
        "mm": (lambda x, y, z, i, k: x @ y),
        "mul": (lambda x, y, z, i, k: x * 3),
        "add": (lambda x, y, z, i, k: x + z),
        "div": (lambda x, y, z, i, k: x / 7),
        "softmax": (lambda x, y, z, i, k: torch.softmax(x, -1)),
        "layer_norm": (lambda x, y, z, i, k: F.layer_norm(x, (48,))),
        "gelu": (lambda x, y, z, i, k: F.gelu(x)),
        "sum": (lambda x, y, z, i, k: x.sum(0)),
        "conv2d": (lambda x, y, z, i, k: F.conv2d(i, k, padding=1)),
        "exp": (lambda x, y, z, i, k: torch.exp(x)),
    }
    for name, fn in cases.items():
        npu = fn(a.npu(), b.npu(), c.npu(), img.npu(), w.npu())
        ref = fn(a.float(), b.float(), c.float(), img.float(), w.float()).to(bf)
        print(name, npu.dtype == bf, npu.device.type, torch.equal(npu.cpu(), ref))
"""


def test_bf16_operations_are_computed_in_fp32_and_rounded_once():
    out = lines(run(ROUNDED_ONCE))
    assert len(out) == 4 * 10
    for i in range(0, len(out), 4):
        assert out[i + 1 : i + 4] == ["True", "npu", "True"], out[i : i + 4]


def test_bf16_in_place_and_out_arguments_are_rounded_once():
    out = lines(
        run("""
        import torch, torch_npu
        torch.manual_seed(1)
        x = torch.randn(100).to(torch.bfloat16)
        y = torch.randn(100).to(torch.bfloat16)
        xn, yn = x.npu(), y.npu()
        ptr = xn.data_ptr()
        xn.mul_(1.1).add_(yn)
        ref = (x.float() * 1.1).to(torch.bfloat16)
        ref = (ref.float() + y.float()).to(torch.bfloat16)
        out = torch.empty(100, dtype=torch.bfloat16, device="npu")
        torch.mul(xn, yn, out=out)
        print(xn.data_ptr() == ptr, torch.equal(xn.cpu(), ref),
              torch.equal(out.cpu(), (ref.float() * y.float()).to(torch.bfloat16)))
    """)
    )
    assert out == ["True", "True", "True"]


def test_bf16_backward_gives_bf16_gradients_close_to_fp32():
    out = lines(
        run("""
        import torch, torch_npu
        torch.manual_seed(2)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(),
                                    torch.nn.Linear(32, 1))
        x = torch.randn(8, 16)
        ref = torch.nn.Sequential(*[m for m in model])  # same modules, fp32 on the host
        loss32 = ref(x).pow(2).mean()
        loss32.backward()
        g32 = model[0].weight.grad.clone()
        model.zero_grad()
        bf = model.to(torch.bfloat16).npu()
        loss = bf(x.to(torch.bfloat16).npu()).float().pow(2).mean()
        loss.backward()
        g = bf[0].weight.grad
        # bf16 keeps 8 significant bits: 2**-7 relative, a few roundings deep.
        rel = (g.float().cpu() - g32).abs().max() / g32.abs().max()
        print(g.dtype, g.device.type, float(rel) < 0.05,
              abs(float(loss) - float(loss32)) / float(loss32) < 0.02)
    """)
    )
    assert out == ["torch.bfloat16", "npu", "True", "True"]


def test_bf16_overflow_follows_the_910bs_mode():
    code = """
        import torch, torch_npu
        from torch_npu.npu import utils
        x = torch.tensor([3e38, 1.0]).to(torch.bfloat16).npu()
        y = x * 4
        print(float(y[0].float()), float(y[1].float()), torch.npu.get_npu_overflow_flag()
              if not utils.is_support_inf_nan() else "-")
    """
    assert lines(run(code)) == ["inf", "4.0", "-"]
    saturated = lines(run(code, INF_NAN_MODE_FORCE_DISABLE="1"))
    assert saturated[1:] == ["4.0", "True"]
    assert float(saturated[0]) == 3.3895313892515355e38  # bf16's largest finite value


def test_a_910_refuses_bf16_arithmetic_and_still_moves_bf16_data():
    proc = run(
        """
        import torch, torch_npu
        x = torch.ones(4, dtype=torch.bfloat16).npu()  # a copy: moves bytes
        back = x.cpu()
        print(x.dtype, back.dtype, torch.npu.is_bf16_supported())
        x + x
    """,
        chip=None,
    )
    assert proc.returncode != 0
    assert proc.stdout.split() == ["torch.bfloat16", "torch.bfloat16", "False"]
    assert "aten::add: bfloat16 is not supported on Ascend910A" in proc.stderr
    assert "APEXNPU_SOC_VERSION=Ascend910B1" in proc.stderr
    assert "ERR01007 OPS feature not supported" in proc.stderr


def test_host_bf16_operations_stay_cpu_torchs():
    out = lines(
        run(
            """
        import torch, torch_npu
        from torch_npu._fp16 import mode
        torch.manual_seed(3)
        a = torch.randn(16, 64).to(torch.bfloat16)
        b = torch.randn(64, 8).to(torch.bfloat16)
        inside = a @ b
        mode.disable()
        print(mode.is_enabled(), torch.equal(inside, a @ b))
    """,
            chip=None,
        )
    )
    assert out == ["False", "True"]
