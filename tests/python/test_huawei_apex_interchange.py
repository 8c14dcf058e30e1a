"""Scripts and checkpoints move both ways between Huawei's apex and ours (issue 28).

Huawei's apex (built from APEXNPU_TEST_ASCEND as in test_huawei_apex_on_emulator.py) runs in a
venv of its own beside the emulator's wheel; ours (apex's wheel and the emulator's, from
APEXNPU_TEST_UPSTREAM) in another; both over the torch running this test.
overlay_support/interchange_worker.py runs in each:

- For every NpuFused optimizer, at O1 and O2, with and without combine_grad: a checkpoint
  (model, optimizer and amp state_dicts) written by either apex is resumed by both, and the
  other apex's resume must give the same bits as the writer's own (masters, model weights and
  loss scale after six more steps). Ours steps with torch operations (APEXNPU_OPTIM_PATH=torch),
  the formulas Ascend's apex writes; the static power-of-two loss scale unscales exactly.
- A subclass overriding ``_group_step`` (as published BERT code does) must change the update
  exactly as on Ascend, and the combined getters must give lists of Ascend's shape.

Skips with a message without APEXNPU_TEST_ASCEND, APEXNPU_TEST_UPSTREAM, APEXNPU_BINARY or
torch's C++ headers. Both venvs are built once per run (module fixture), so several cases in one
pytest run share them; ``-k "huawei-ours-O2-1"`` picks one case, and the worker takes optimizer
names to look at one by hand.
"""

import os
import shutil
import subprocess

import pytest
import torch

import build_helpers as bh
from overlay_support import huawei_apex, wheels

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "overlay_support", "interchange_worker.py")
ASCEND = os.environ.get("APEXNPU_TEST_ASCEND")
UPSTREAM = os.environ.get("APEXNPU_TEST_UPSTREAM")
CASES = [(level, combine) for level in ("O1", "O2") for combine in ("0", "1")]


@pytest.fixture(scope="module")
def pythons(tmp_path_factory):
    """{"huawei": its venv's python, "ours": ours} and a folder holding only the worker."""
    if not ASCEND or not UPSTREAM:
        pytest.skip(
            "APEXNPU_TEST_ASCEND and APEXNPU_TEST_UPSTREAM must both be set (git "
            "directories of Ascend's apex and NVIDIA Apex) to build Huawei's apex"
        )
    huawei, _ = huawei_apex.venv_with_huawei_apex(tmp_path_factory, ASCEND, UPSTREAM)
    ours = wheels.installed_wheels_env(tmp_path_factory)["APEXNPU_VENV_PYTHON"]
    runs = tmp_path_factory.mktemp("interchange")
    shutil.copy(WORKER, runs)  # run from a folder that holds nothing else of ours
    return {"huawei": huawei, "ours": ours}, runs


def run(pythons, who, *args):
    pys, runs = pythons
    env = dict(bh.venv_env(), OMP_NUM_THREADS="2", APEXNPU_OPTIM_PATH="torch")
    proc = subprocess.run(
        [pys[who], "interchange_worker.py"] + [str(a) for a in args],
        cwd=str(runs),
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, f"{who}: " + proc.stdout[-2000:] + proc.stderr[-4000:]


_resumed = {}


def resumed(pythons, level, combine, writer, reader):
    """What ``reader`` gets resuming ``writer``'s checkpoints (made once per case)."""
    key = (level, combine, writer, reader)
    if key not in _resumed:
        _, runs = pythons
        folder = runs / f"{writer}-{level}-{combine}"
        if not folder.exists():
            folder.mkdir()
            run(pythons, writer, "write", level, combine, folder)
        out = runs / f"{writer}-{reader}-{level}-{combine}.pt"
        run(pythons, reader, "resume", level, combine, folder, out)
        _resumed[key] = torch.load(str(out))
    return _resumed[key]


@pytest.mark.parametrize("level, combine", CASES)
@pytest.mark.parametrize("writer, reader", [("huawei", "ours"), ("ours", "huawei")])
def test_a_checkpoint_resumes_in_the_other_apex_to_the_writers_bits(
    pythons, level, combine, writer, reader
):
    own = resumed(pythons, level, combine, writer, writer)
    other = resumed(pythons, level, combine, writer, reader)
    assert sorted(own) == sorted(other) and len(own) == 10
    for name in own:
        assert own[name]["scale"] == other[name]["scale"] == 128.0
        for kind in ("master", "model"):
            assert len(own[name][kind]) == len(other[name][kind]) == 4
            for a, b in zip(own[name][kind], other[name][kind]):
                assert torch.equal(a, b), (name, kind, (a - b).abs().max().item())


@pytest.fixture(scope="module")
def hooks(pythons):
    _, runs = pythons
    got = {}
    for who in ("huawei", "ours"):
        run(pythons, who, "hooks", runs / f"hooks-{who}.pt")
        got[who] = torch.load(str(runs / f"hooks-{who}.pt"))
    return got


def test_a_subclass_overriding_group_step_updates_as_on_ascend(hooks):
    theirs, ours = hooks["huawei"], hooks["ours"]
    assert ours["subclass_steps"] == theirs["subclass_steps"] == [4] * 6
    assert len(ours["subclass_master"]) == len(theirs["subclass_master"]) == 6
    for a, b in zip(ours["subclass_master"], theirs["subclass_master"]):
        assert torch.equal(a, b)


def test_combined_getters_give_lists_of_ascends_shape(hooks):
    theirs, ours = hooks["huawei"], hooks["ours"]
    # O2 with fp16 Linear and fp32 BatchNorm parameters: [fp16 model kind, fp32 kind], fp32 masks.
    assert ours["getters"] == theirs["getters"]
    assert [len(v) for v in ours["getters"].values()] == [2] * 6
    assert ours["sgd_getters"] == theirs["sgd_getters"]
    assert ours["sgd_getters"]["get_model_combined_params"] == []
    # The options amp leaves on the optimizer, as Ascend's amp does: as given to amp.initialize,
    # None when not given (torch's SGD with combine_grad=True; the fused Adam without it).
    for kind in ("attributes", "fused_attributes"):
        assert ours[kind] == theirs[kind], (kind, ours[kind], theirs[kind])
        assert "missing" not in ours[kind].values()
    assert ours["attributes"]["accelerate"] is True and ours["attributes"]["combine_ddp"] is None
    assert ours["fused_attributes"]["accelerate"] is None
    assert ours["fused_attributes"]["is_npu_fused_optimizer"] is True
