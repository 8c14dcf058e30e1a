"""apex's start-up hook: a script written for Baidu's AIAK-Training, which imports torch and never
apex, gets AIAK's names from apex's wheel (``apex-aiak-startup.pth`` and ``_apex_aiak_startup``
at the root of site-packages) when an ``AIAK_*`` variable is set; without one nothing changes.

Two halves:

- the hook's logic over stand-in ``torch``, ``torch_npu`` and ``apex`` packages in a site
  directory holding the overlay's two files (no torch; milliseconds): when apex is imported
  for each import order, the off switch, the failures;
- the real thing: apex's and the emulator's wheels built by apexnpu from this checkout and
  pip-installed into a venv over the running Python's torch (Debian's 1.13 or 2.13), where
  AIAK's example runs unchanged. Needs APEXNPU_BINARY and APEXNPU_TEST_UPSTREAM (skips, saying
  so, without them).
"""

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from overlay_support import OVERLAY_DIR, wheels

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(HERE, "overlay_support", "amp_scenarios")
PTH, MODULE = "apex-aiak-startup.pth", "_apex_aiak_startup"
HOOK_FILES = (PTH, MODULE + ".py")


def clean_env(**extra):
    """os.environ without AIAK_* and APEXNPU_AIAK_STARTUP, with ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("AIAK_") and k not in ("APEXNPU_AIAK_STARTUP", "PYTHONPATH")
    }
    env.update(extra)
    return env


# --- The hook's logic, over stand-ins ---------------------------------------------------------

STANDINS = {
    "_events.py": "log = []\n",
    # torch >= 2.5 imports a device package's entry point at the end of `import torch`
    # (torch_npu's autoload); STANDIN_AUTOLOAD=1 does the same.
    "torch/__init__.py": """
        import os, _events
        _events.log.append("torch starts")
        if os.environ.get("STANDIN_AUTOLOAD") == "1":
            import torch_npu
        _events.log.append("torch done")
    """,
    "torch_npu/__init__.py": """
        import torch, _events
        _events.log.append("torch_npu done")
    """,
    "apex/__init__.py": """
        import os, _events
        _events.log.append("apex starts")
        if os.environ.get("STANDIN_APEX") == "raises":
            raise ValueError("AIAK_FUSED_OPTIMIZER='2': expected 0 or 1")
        import torch, torch_npu
    """,
}


@pytest.fixture
def site_dir(tmp_path):
    """A site directory with the overlay's two hook files and the stand-ins."""
    for name in HOOK_FILES:
        shutil.copy(os.path.join(OVERLAY_DIR, name), tmp_path / name)
    for rel, text in STANDINS.items():
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    return tmp_path


def standin_run(site, code, **env):
    """Runs ``code`` in an isolated Python (no site-packages) that processes ``site`` as a site
    directory; returns (process, the events and our modules as the code left them)."""
    prologue = f"import site, sys; site.addsitedir({str(site)!r})\n"
    epilogue = (
        "\nimport json, _events\nprint(json.dumps({'log': _events.log, 'modules': sorted("
        "m for m in sys.modules if m in ('apex', %r)), 'finders': [type(f).__module__ "
        "for f in sys.meta_path]}))" % MODULE
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", prologue + code + epilogue],
        capture_output=True,
        text=True,
        env=clean_env(**env),
        timeout=60,
    )
    out = json.loads(proc.stdout.splitlines()[-1]) if proc.returncode == 0 else None
    return proc, out


ORDERS = {
    # AIAK's scripts: torch first; apex then imports torch_npu itself.
    "torch first": (
        "import torch\nimport torch_npu",
        ["torch starts", "torch done", "apex starts", "torch_npu done"],
    ),
    "torch_npu first": (
        "import torch_npu\nimport torch",
        ["torch starts", "torch done", "torch_npu done", "apex starts"],
    ),
    "torch alone": (
        "import torch",
        ["torch starts", "torch done", "apex starts", "torch_npu done"],
    ),
}


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_apex_is_imported_once_torch_and_torch_npu_have_run(site_dir, order):
    code, expected = ORDERS[order]
    proc, out = standin_run(site_dir, code, AIAK_FUSED_OPTIMIZER="1")
    assert proc.returncode == 0, proc.stderr
    assert out["log"] == expected
    assert MODULE not in out["finders"]  # the finder left sys.meta_path
    assert proc.stderr == ""


def test_torch_autoloading_torch_npu_makes_apex_wait_for_torch(site_dir):
    proc, out = standin_run(
        site_dir, "import torch", AIAK_FP16_COMPRESSION="1", STANDIN_AUTOLOAD="1"
    )
    assert proc.returncode == 0, proc.stderr
    # torch_npu finishes inside torch's import: apex starts only when torch has finished too.
    assert out["log"] == ["torch starts", "torch_npu done", "torch done", "apex starts"]


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"AIAK_FUSED_OPTIMIZER": "1", "APEXNPU_AIAK_STARTUP": "0"},
        {"AIAKX": "1", "XAIAK_FUSED_OPTIMIZER": "1"},
    ],
    ids=["no AIAK variable", "switched off", "near names"],
)
def test_without_an_aiak_variable_nothing_is_imported_or_hooked(site_dir, env):
    proc, out = standin_run(site_dir, "import torch\nimport torch_npu", **env)
    assert proc.returncode == 0, proc.stderr
    assert out["log"] == ["torch starts", "torch done", "torch_npu done"]
    assert out["modules"] == [] and MODULE not in out["finders"]
    assert proc.stderr == ""


def test_a_bad_switch_value_is_an_error_naming_it(site_dir):
    proc, out = standin_run(
        site_dir, "import torch", AIAK_FUSED_OPTIMIZER="1", APEXNPU_AIAK_STARTUP="yes"
    )
    assert proc.returncode == 0, proc.stderr  # site reports a failing .pth line, and goes on
    assert "APEXNPU_AIAK_STARTUP='yes': expected 1" in proc.stderr, proc.stderr
    assert PTH in proc.stderr
    assert out["log"] == ["torch starts", "torch done"]


def test_without_apex_torch_works_and_one_line_says_why(site_dir):
    shutil.rmtree(site_dir / "apex")
    proc, out = standin_run(
        site_dir, "import torch", AIAK_FUSED_OPTIMIZER="1", AIAK_FP16_COMPRESSION="0"
    )
    assert proc.returncode == 0, proc.stderr
    assert out["log"] == ["torch starts", "torch done"]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(
        "apex: AIAK_FP16_COMPRESSION, AIAK_FUSED_OPTIMIZER set, but apex cannot be imported"
    ), lines
    assert "No module named 'apex'" in lines[0]


def test_apex_refusing_an_aiak_value_fails_the_import_with_its_message(site_dir):
    proc, _ = standin_run(site_dir, "import torch", AIAK_FUSED_OPTIMIZER="2", STANDIN_APEX="raises")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        "ValueError: AIAK_FUSED_OPTIMIZER='2': expected 0 or 1"
    )


def test_the_hook_module_runs_on_the_oldest_python_we_build_for():
    source = open(os.path.join(OVERLAY_DIR, MODULE + ".py")).read()
    ast.parse(source, feature_version=(3, 7))
    lines = [line for line in open(os.path.join(OVERLAY_DIR, PTH)) if not line.startswith("#")]
    # site runs a .pth line that starts with "import"; the rest of the file is comments.
    assert len(lines) == 1 and lines[0].startswith("import ")


# --- The real thing: the wheels installed by pip ---------------------------------------------


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory):
    return wheels.amp_venv(tmp_path_factory, "aiak-startup")


def venv_run(vpy, code, cwd, **env):
    proc = subprocess.run(
        [vpy, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=clean_env(**env),
        cwd=str(cwd),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc, json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_apex_wheel_installs_the_hook_beside_apex(venv_python, tmp_path):
    _, out = venv_run(
        venv_python,
        """
        import importlib.metadata as m, json, sysconfig
        files = sorted(str(f) for f in m.files("apex") if "/" not in str(f))
        top = m.distribution("apex").read_text("top_level.txt").split()
        print(json.dumps({"purelib": sysconfig.get_path("purelib"), "files": files, "top": top}))
    """,
        tmp_path,
    )
    # In RECORD (pip uninstall removes them), beside Ascend's change_data_ptr module.
    assert [f for f in out["files"] if not f.endswith(".so")] == sorted(HOOK_FILES)
    assert MODULE in out["top"] and "apex" in out["top"]
    for name in HOOK_FILES:  # installed as the overlay has them
        with open(os.path.join(out["purelib"], name)) as got, open(
            os.path.join(OVERLAY_DIR, name)
        ) as want:
            assert got.read() == want.read(), name


def test_aiaks_example_runs_unchanged_without_importing_apex(venv_python, tmp_path):
    script = os.path.join(SCENARIOS, "aiak_seed004.py")
    imported = set()
    for node in ast.walk(ast.parse(open(script).read())):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert "apex" not in imported and "torch_npu" in imported
    env = clean_env(
        AIAK_FUSED_OPTIMIZER="1",
        AIAK_FP16_COMPRESSION="1",
        AIAK_HIERARCHICAL_ALLREDUCE="0",
        AIAK_POWERSGD_COMPRESSION="0",
    )
    proc = subprocess.run(
        [venv_python, script],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    first, last = out["losses"]  # random labels: the loss falls to about half
    assert last < 0.6 * first, out
    assert out["param_dtype"] == "torch.float16"  # O2: aiak_amp_decorate is amp_decorate
    assert out["optimizer"] == "NpuFusedSGD"  # AIAK_FUSED_OPTIMIZER=1
    assert out["comm_hook"] == "fp16_compress_hook"  # AIAK_FP16_COMPRESSION=1
    assert out["lamb"] == "apex.optimizers.lamb.LAMB"
    before, after = out["lamb_probe"]  # 30 steps of LAMB lower the loss on one batch
    assert before == out["lamb_losses"][0] and after < 0.97 * before, out


PROBE = """
    import importlib, json, sys
    {imports}
    import torch
    out = {{"apex": sorted(m for m in sys.modules if m.split(".")[0] in ("apex", "{module}")),
            "finders": [type(f).__module__ for f in sys.meta_path],
            "torch_sgd": torch.optim.SGD is importlib.import_module("torch.optim.sgd").SGD,
            "optim_getattr": "__getattr__" in vars(torch.optim),
            "lamb": "LAMB" in vars(torch.optim) or hasattr(torch.optim, "LAMB")}}
    if "torch_npu" in sys.modules:
        out["amp_names"] = [hasattr(m, n) for m in (torch.npu.amp, torch.cuda.amp)
                            for n in ("aiak_amp_decorate", "aiak_amp_parameters")]
        p = torch.zeros(2, device="npu", requires_grad=True)
        from torch.optim import SGD
        out["sgd"] = [(type(o).__module__, type(o).__mro__[1].__name__)
                      for o in (torch.optim.SGD([p], lr=0.1), SGD([p], lr=0.1))]
    print(json.dumps(out))
"""
# AIAK's own order (torch, torch_npu, transfer_to_npu) is its example's, above.
TRANSFER = "from torch_npu.contrib import transfer_to_npu"
IMPORTS = {
    "torch_npu first": "import torch_npu\nimport torch\n" + TRANSFER,
    "torch alone": "import torch",
}


@pytest.mark.parametrize("imports", sorted(IMPORTS))
def test_the_names_arrive_whichever_is_imported_first(venv_python, tmp_path, imports):
    code = PROBE.format(imports=IMPORTS[imports].replace("\n", "\n    "), module=MODULE)
    proc, out = venv_run(venv_python, code, tmp_path, AIAK_FUSED_OPTIMIZER="1")
    assert "apex" in out["apex"] and "apex.npu.aiak_names" in out["apex"]
    assert MODULE not in out["finders"]
    assert not out["torch_sgd"] and out["lamb"]
    # torch.npu.amp has the names; torch.cuda.amp is the same module under transfer_to_npu.
    # With torch alone, apex imported torch_npu itself: the NPU is there, torch.cuda is CUDA's.
    cuda = imports != "torch alone"
    assert out["amp_names"] == [True, True, cuda, cuda]
    fused = ["apex.optimizers.npu_fused_sgd", "NpuFusedSGD"]  # the switched class's base
    assert out["sgd"] == [fused, fused]
    said = [line for line in proc.stderr.splitlines() if "torch.optim.SGD" in line]
    assert said == [
        "apex: AIAK_FUSED_OPTIMIZER=1: torch.optim.SGD is apex.optimizers.npu_fused_sgd.NpuFusedSGD"
    ], proc.stderr  # once, by its name


def test_without_an_aiak_variable_torch_is_untouched(venv_python, tmp_path):
    # (APEXNPU_AIAK_STARTUP=0 acts in the same .pth line: the stand-ins check it.)
    imports = "import torch\nimport torch_npu\n" + TRANSFER
    code = PROBE.format(imports=imports.replace("\n", "\n    "), module=MODULE)
    proc, out = venv_run(venv_python, code, tmp_path)
    assert out["apex"] == []  # neither apex nor the hook's module was imported
    assert MODULE not in out["finders"]
    assert out["torch_sgd"] and not out["optim_getattr"] and not out["lamb"]
    assert out["amp_names"] == [False] * 4
    torchs = ["torch.optim.sgd", "Optimizer"]
    assert out["sgd"] == [torchs, torchs] and proc.stderr == ""
