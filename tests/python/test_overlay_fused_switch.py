"""APEXNPU_FUSED_OPTIMIZER=1: an unchanged script's torch.optim.SGD/Adam/AdamW/Adadelta/RMSprop
are apex's NpuFused ones (the script imports torch_npu and apex, as Ascend scripts do, and names
only torch.optim's classes).

Each script trains 30 steps and saves its parameters and optimizer state. With the switch on
it must give the very bits NpuFusedX gives when the script names it (the same update on the same
combined buffers), and its state_dict must load into torch's own class (switch off), whose
further 10 steps match NpuFusedX's further 10 within 1e-5 relative (atol 1e-6): the parity
tolerance of test_overlay_optimizers.
"""

import subprocess
import sys
import textwrap

import pytest
import torch

import overlay_support

SCRIPT = textwrap.dedent("""
    import sys
    import torch
    import torch_npu  # noqa: F401
    import apex.npu  # noqa: F401 - what the wheel's apex/__init__ imports
    from torch import nn
    import torch.nn.functional as F

    name, optimizer_from, out, resume = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    KWARGS = {"SGD": dict(lr=0.05, momentum=0.9, weight_decay=1e-3),
              "Adam": dict(lr=1e-2, weight_decay=1e-3, foreach=False),
              "AdamW": dict(lr=1e-2),
              "Adadelta": dict(lr=1.0, weight_decay=1e-2),
              "RMSprop": dict(lr=1e-3, momentum=0.9, centered=True)}
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 4))
    if optimizer_from == "torch":
        cls = getattr(torch.optim, name)
    else:
        from apex.optimizers import npu_fused
        cls = getattr(npu_fused, "NpuFused" + name)
        KWARGS[name].pop("foreach", None)
    opt = cls(model.parameters(), **KWARGS[name])
    first = 0
    if resume != "-":
        saved = torch.load(resume)
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        first = 30
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(16, 6, generator=g), torch.randint(0, 4, (16,), generator=g))
            for _ in range(40)]
    for x, y in data[first:first + (30 if resume == "-" else 10)]:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                "class": type(opt).__module__ + "." + type(opt).__name__}, out)
""")

NAMES = ["SGD", "Adam", "AdamW", "Adadelta", "RMSprop"]


def run(tmp_path, name, optimizer_from, switch, resume="-", tag=""):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    out = tmp_path / f"{name}-{optimizer_from}-{switch}{tag}.pt"
    env = overlay_support.overlay_env()
    env["APEXNPU_FUSED_OPTIMIZER"] = switch
    proc = subprocess.run(
        [sys.executable, str(script), name, optimizer_from, str(out), str(resume)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return torch.load(out), proc.stderr


@pytest.mark.parametrize("name", NAMES)
def test_torch_optim_is_the_fused_optimizer_under_the_switch(tmp_path, name):
    switched, notice = run(tmp_path, name, "torch", "1")
    fused, quiet = run(tmp_path, name, "apex", "0")
    plain, _ = run(tmp_path, name, "torch", "0")
    assert switched["class"] == f"apex.optimizers.npu_fused_{name.lower()}.NpuFused{name}"
    assert plain["class"] == f"torch.optim.{name.lower()}.{name}"
    lines = [line for line in notice.splitlines() if "APEXNPU_FUSED_OPTIMIZER" in line]
    assert lines == [
        f"apex: APEXNPU_FUSED_OPTIMIZER=1: torch.optim.{name} is "
        f"apex.optimizers.npu_fused_{name.lower()}.NpuFused{name}"
    ], notice
    assert "APEXNPU_FUSED_OPTIMIZER" not in quiet
    for key, value in switched["model"].items():
        assert torch.equal(value, fused["model"][key]), key
    assert switched["optimizer"]["state"].keys() == plain["optimizer"]["state"].keys()
    for index, state in switched["optimizer"]["state"].items():
        assert state.keys() == plain["optimizer"]["state"][index].keys(), name
        for key, value in state.items():
            assert torch.equal(
                torch.as_tensor(value), torch.as_tensor(fused["optimizer"]["state"][index][key])
            ), key


@pytest.mark.parametrize("name", NAMES)
def test_the_switched_state_dict_loads_into_torchs_class(tmp_path, name):
    switched, _ = run(tmp_path, name, "torch", "1")
    saved = tmp_path / "saved.pt"
    torch.save(switched, saved)
    by_torch, _ = run(tmp_path, name, "torch", "0", resume=saved, tag="-resumed")
    by_fused, _ = run(tmp_path, name, "apex", "0", resume=saved, tag="-resumed")
    assert by_torch["class"] == f"torch.optim.{name.lower()}.{name}"
    for key, value in by_torch["model"].items():
        assert not torch.equal(value, switched["model"][key]), key  # it trained on
        torch.testing.assert_close(value, by_fused["model"][key], rtol=1e-5, atol=1e-6)


def test_maximize_stays_torchs_and_unknown_values_are_refused(tmp_path):
    code = """
        import torch, torch_npu, apex.npu
        from apex.optimizers.npu_fused import NpuFusedAdam
        p = [torch.nn.Parameter(torch.zeros(2))]
        assert isinstance(torch.optim.Adam(p, lr=0.1), NpuFusedAdam)
        assert isinstance(torch.optim.SGD(p, 0.1, 0.9), torch.optim.SGD)
        kept = torch.optim.Adam(p, lr=0.1, maximize=True)
        assert type(kept).__module__ == "torch.optim.adam", type(kept)
        import sys
        assert sys.modules["torch.optim.adam"].Adam is type(kept)
        try:
            torch.optim.Adam(p, lr=0.1, nonsense=1)
        except TypeError as e:
            print("refused")
    """
    env_code = "import os; os.environ['APEXNPU_FUSED_OPTIMIZER'] = '1'\n"
    assert overlay_support.run_with_emulator(env_code + textwrap.dedent(code)) == ["refused"]
