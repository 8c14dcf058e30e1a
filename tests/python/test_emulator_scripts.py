"""What Ascend scripts do at their top and in their models, on the emulated NPU, on whichever
torch runs the test (ctest runs it on torch 1.13 and 2.x):
- TorchScript over tensor makers (timm's anti-aliasing layer is a scripted class) after
  ``import torch_npu``;
- CPU and NPU tensors refused together as on the NPU, in torch's words;
- the small APIs scripts call: the profilers, torch_npu.utils and torch_npu.npu.utils, the HF32
  switches;
- both overflow modes of the NPU through torch.npu.amp.GradScaler: saturation with the float
  status (Ascend 910, the default) and INF/NAN (Ascend 910B, APEXNPU_INF_NAN_MODE=1).
Each case runs in a fresh interpreter over the emulator's package alone (no apex)."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

import overlay_support

FP16_MAX = 65504.0


def run(code, **env):
    """``code`` run as a script file (TorchScript reads its source) in a fresh interpreter; its
    last line of output, as JSON."""
    full = dict(os.environ)
    full["PYTHONPATH"] = os.pathsep.join([overlay_support.SRC_DIR, full.get("PYTHONPATH", "")])
    full.update(env)
    with tempfile.TemporaryDirectory() as work:
        script = os.path.join(work, "script.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(code))
        proc = subprocess.run(
            [sys.executable, script], env=full, capture_output=True, text=True, timeout=300
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_scripted_code_calls_tensor_makers():
    out = run("""
        import json, torch, torch_npu

        @torch.jit.script
        def blur(x: torch.Tensor) -> torch.Tensor:
            filt = torch.tensor([1.0, 2.0, 1.0], dtype=torch.float)
            return x + torch.zeros(3) + torch.ones(3, dtype=torch.float32) * filt.sum()

        @torch.jit.script
        class Downsample:
            def __init__(self, channels: int):
                self.filt = torch.tensor([1.0, 2.0, 1.0]) / torch.full([3], 4.0)
                self.channels = channels

            def weights(self) -> torch.Tensor:
                return self.filt.repeat(self.channels)

        @torch.jit.script
        def follows_its_input(x: torch.Tensor) -> torch.Tensor:
            return x * torch.ones_like(x) + torch.full_like(x, 2.0)

        npu = follows_its_input(torch.ones(3).npu())
        print(json.dumps([blur(torch.ones(3)).tolist(), Downsample(2).weights().tolist(),
                          str(npu.device), npu.tolist()]))
    """)
    assert out == [[5.0, 5.0, 5.0], [0.25, 0.5, 0.25] * 2, "npu:0", [3.0, 3.0, 3.0]]


MIXING = [
    ("linear", "torch.nn.Linear(4, 2).npu()(torch.randn(3, 4))"),
    ("add", "torch.ones(3).npu() + torch.ones(3)"),
    ("matmul", "torch.ones(2, 2) @ torch.ones(2, 2).npu()"),
    ("in place", "torch.ones(3).npu().add_(torch.ones(3))"),
    ("cat", "torch.cat([torch.ones(2).npu(), torch.ones(2)])"),
    ("two npus", "torch.ones(3).npu(0) + torch.ones(3).npu(1)"),
]


@pytest.mark.parametrize("name,expression", MIXING, ids=[m[0] for m in MIXING])
def test_cpu_and_npu_tensors_do_not_mix(name, expression):
    out = run(f"""
        import json, torch, torch_npu
        try:
            {expression}
            print(json.dumps(None))
        except RuntimeError as e:
            print(json.dumps(str(e)))
    """)
    assert out is not None, f"{name}: mixing devices was accepted"
    assert out.startswith(
        "Expected all tensors to be on the same device, but found at least two devices, "
    ), out
    devices = "npu:0 and npu:1" if name == "two npus" else "cpu"
    assert devices in out, out


def test_backward_formulas_make_their_tensors_on_the_npu():
    """torch's backward of max/min/topk/sort/kthvalue/median over a dimension and of cummax
    makes a zeros tensor with the gradient's options and scatters into it: on the NPU that is
    an NPU tensor, so the gradient is the host's and on the NPU; a zeros tensor the script
    makes on the host still does not mix."""
    out = run("""
        import json, torch, torch_npu
        reductions = {
            "max": lambda x: torch.max(x, 0)[0], "min": lambda x: x.min(1, keepdim=True)[0],
            "topk": lambda x: x.topk(2, 1)[0], "sort": lambda x: x.sort(1)[0],
            "kthvalue": lambda x: x.kthvalue(2, 1)[0], "median": lambda x: x.median(1)[0],
            "cummax": lambda x: x.cummax(1)[0],
        }
        results = {}
        for name, f in reductions.items():
            host = torch.randn(4, 5, generator=torch.Generator().manual_seed(1))
            x = host.clone().npu().requires_grad_()
            f(x).mul(torch.arange(1.0, 3.0).npu()[0]).sum().backward()
            want = host.clone().requires_grad_()
            f(want).sum().backward()
            results[name] = [str(x.grad.device), torch.equal(x.grad.cpu(), want.grad)]
        try:
            torch.zeros(4, 5).scatter(0, torch.zeros(1, 5, dtype=torch.long).npu(),
                                      torch.ones(1, 5).npu())
            results["script's zeros"] = "mixed"
        except RuntimeError as e:
            results["script's zeros"] = str(e).split(",")[0]
        print(json.dumps(results))
    """)
    assert out.pop("script's zeros") == "Expected all tensors to be on the same device"
    assert out == {
        name: ["npu:0", True]
        for name in ("max", "min", "topk", "sort", "kthvalue", "median", "cummax")
    }


def test_what_may_mix_as_on_the_npu():
    out = run("""
        import json, torch, torch_npu
        x = torch.arange(6.0).npu()
        results = [
            (x * torch.tensor(2.0)).device,                    # a 0-dim host scalar
            x[torch.tensor([0, 5])].device,                     # host indices
            x.clone().copy_(torch.ones(6)).device,              # copies between devices
            torch.ones(6).copy_(x).device,
            x.to("cpu").device, torch.ones(2).to("npu:1").device,
        ]
        print(json.dumps([str(d) for d in results]))
    """)
    assert out == ["npu:0", "npu:0", "npu:0", "cpu", "cpu", "npu:1"]


def test_the_small_apis_scripts_call_at_their_top(tmp_path):
    out = run(f"""
        import json, os, torch, torch_npu
        import torch_npu.npu.utils
        torch.npu.matmul.allow_hf32 = True
        torch.npu.conv.allow_hf32 = False
        with torch.autograd.profiler.profile(use_npu=True) as prof:
            (torch.ones(8).npu() * 2).sum()
        prof.export_chrome_trace({str(tmp_path / "autograd.json")!r})
        with torch_npu.profiler.profile(
                activities=[torch_npu.profiler.ProfilerActivity.CPU,
                            torch_npu.profiler.ProfilerActivity.NPU],
                schedule=torch_npu.profiler.schedule(wait=0, warmup=0, active=1, repeat=1),
                on_trace_ready=torch_npu.profiler.tensorboard_trace_handler({str(tmp_path)!r}),
                experimental_config=torch_npu.profiler._ExperimentalConfig(
                    profiler_level=torch_npu.profiler.ProfilerLevel.Level0)) as prof:
            for _ in range(2):
                torch.ones(4).npu().sum()
                prof.step()
        with torch.npu.profile({str(tmp_path / "cann")!r}):
            torch.ones(1).npu()
        torch.npu.global_step_inc()
        torch.npu.set_start_fuzz_compile_step(3)
        print(json.dumps([torch_npu.npu.utils.is_support_inf_nan(),
                          torch_npu.npu.utils.npu_check_overflow(1.0),
                          torch.npu.utils is torch_npu.npu.utils,
                          torch.npu.matmul.allow_hf32, torch.npu.conv.allow_hf32]))
    """)
    assert out == [False, False, True, True, False]
    assert (tmp_path / "autograd.json").stat().st_size > 0
    assert [p for p in os.listdir(tmp_path) if p.endswith(".json") and p != "autograd.json"]


OVERFLOW_STEP = """
    import json, torch, torch_npu
    from torch_npu.npu import utils
    scaler = torch.npu.amp.GradScaler(init_scale=2.0 ** 16, growth_interval=1000)
    w = torch.nn.Parameter(torch.ones(4).npu())
    opt = torch.optim.SGD([w], lr=0.1)
    big = torch.full((4,), 4.0).half().npu()
    with torch.npu.amp.autocast():
        # 4 * 65536 * 4 overflows fp16: saturated to 65504 (910) or inf (910B)
        grad_half = (scaler.scale(torch.ones(4).npu()).half() * big)
    value = grad_half[0].item()
    try:
        flag = torch.npu.get_npu_overflow_flag()
    except RuntimeError as e:  # torch_npu has no float status in INF/NAN mode
        flag = str(e)
    w.grad = grad_half.float()
    scaler.step(opt)
    scaler.update()
    print(json.dumps([utils.is_support_inf_nan(), value, flag, scaler.get_scale(),
                      w.detach().cpu().tolist(), utils.npu_check_overflow(grad_half.float())]))
"""


@pytest.mark.parametrize("mode", ["saturation", "inf_nan"])
def test_both_overflow_modes_skip_the_step_in_grad_scaler(mode):
    env = {"APEXNPU_INF_NAN_MODE": "1" if mode == "inf_nan" else "0"}
    inf_nan, value, flag, scale, weights, check = run(OVERFLOW_STEP, **env)
    assert inf_nan == (mode == "inf_nan")
    if mode == "inf_nan":
        assert value == float("inf")  # a GPU's overflow; there is no float status to read
        assert "please use npu_check_overflow" in flag
        assert check  # the values tell
    else:
        assert value == FP16_MAX and flag  # saturated, and the float status says so
        assert not check  # npu_check_overflow read (and cleared) the status: nothing since
    assert scale == 2.0**15 and weights == [1.0] * 4  # skipped, backed off


def test_a_bad_overflow_mode_is_a_clear_error():
    proc = subprocess.run(
        [sys.executable, "-c", "import torch, torch_npu; torch.npu.utils.is_support_inf_nan()"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=overlay_support.SRC_DIR, APEXNPU_INF_NAN_MODE="yes"),
    )
    assert proc.returncode != 0 and "APEXNPU_INF_NAN_MODE='yes'" in proc.stderr
