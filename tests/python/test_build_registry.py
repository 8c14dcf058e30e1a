"""The runtime's optimizer registry is the one list of optimizers.

A throwaway kind added to src/runtime/optim/registry.h alone (a copy of apexnpu's data, one new
row: FusedSgd under a new name with Nesterov defaults) reaches the binding's OPTIMIZERS and
OPTIMIZER_CLASSES, the manifest, and, with its Python class added to the overlay's npu_fused
list as README's recipe says, `apex.optimizers` in a pip-installed wheel, where it trains through
the runtime's kernels like torch.optim.SGD. The real registry and the overlay agree class for
class."""

import json
import os
import shutil
import subprocess
import textwrap

import pytest

import build_helpers as bh

KIND = "sgd_nesterov_throwaway"
CLASS = "NpuFusedThrowawayNesterovSGD"
ROW_ANCHOR = 'OptimizerKind<FusedSgd>{"sgd", "NpuFusedSGD"},\n'
NEW_ROW = (
    '    OptimizerKind<FusedSgd>{"%s", "%s",\n'
    "                            SgdOptions{.momentum = 0.9, .nesterov = true}},\n" % (KIND, CLASS)
)
OVERLAY_MODULE = textwrap.dedent(
    '''\
    """A throwaway optimizer of the registry test: Nesterov SGD through its own runtime kind."""
    from .npu_fused_sgd import NpuFusedSGD


    class %s(NpuFusedSGD):
        RUNTIME_KIND = "%s"

        def __init__(self, params, lr, momentum=0.9):
            super().__init__(params, lr=lr, momentum=momentum, nesterov=True)
    '''
    % (CLASS, KIND)
)


def copy_data_dir(root):
    """apexnpu's bundled data (patches, templates, the runtime and emulator sources) under root."""
    for rel in (
        "patches",
        "templates",
        os.path.join("src", "runtime"),
        os.path.join("src", "torch_npu"),
    ):
        shutil.copytree(
            os.path.join(bh.REPO, rel),
            os.path.join(root, rel),
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    return root


def add_throwaway_kind(data):
    registry = os.path.join(data, "src", "runtime", "optim", "registry.h")
    with open(registry) as f:
        text = f.read()
    assert ROW_ANCHOR in text, "registry.h no longer has the sgd row this test inserts after"
    with open(registry, "w") as f:
        f.write(text.replace(ROW_ANCHOR, ROW_ANCHOR + NEW_ROW, 1))
    optimizers = os.path.join(data, "patches", "overlay", "apex", "optimizers")
    with open(os.path.join(optimizers, "npu_fused_throwaway.py"), "w") as f:
        f.write(OVERLAY_MODULE)
    npu_fused = os.path.join(optimizers, "npu_fused.py")
    with open(npu_fused) as f:
        text = f.read()
    anchor = "\n__all__ = ["
    assert anchor in text
    text = text.replace(
        anchor, '\nfrom .npu_fused_throwaway import %s\n%s\n    "%s",' % (CLASS, anchor, CLASS), 1
    )
    with open(npu_fused, "w") as f:
        f.write(text)


def package_tree(data, root):
    """The overlay's apex package with the upstream files it needs, as npu.patch leaves them:
    apex/__init__.py, apex/optimizers/__init__.py importing npu_fused's list, and
    apex/contrib/__init__.py (without it contrib is no package, and the wheel leaves it out)."""
    shutil.copytree(os.path.join(data, "patches", "overlay", "apex"), os.path.join(root, "apex"))
    bh.write_files(
        {
            "apex/__init__.py": '"""Package root stand-in: upstream Apex is not needed here."""\n',
            "apex/optimizers/__init__.py": "from .npu_fused import *  # noqa: F401,F403\n",
            "apex/contrib/__init__.py": "",
        },
        root,
    )
    return root


@pytest.fixture(scope="module")
def throwaway_build(tmp_path_factory):
    work = tmp_path_factory.mktemp("registry")
    data = copy_data_dir(str(work / "data"))
    add_throwaway_kind(data)
    tree = package_tree(data, str(work / "tree"))
    out = str(work / "dist")
    doc = bh.build_for_system_python(
        tree, out, bh.shared_cache_dir(tmp_path_factory), "--wheel", env={"APEXNPU_DATA_DIR": data}
    )
    return doc, work


def test_a_registry_row_reaches_the_manifest(throwaway_build):
    doc, _ = throwaway_build
    with open(doc["manifest"]) as f:
        runtime = json.load(f)["runtime"]
    assert KIND in runtime["optimizers"] and "sgd" in runtime["optimizers"]
    assert runtime["optimizers"] == sorted(runtime["optimizers"])
    assert runtime["optimizer_classes"][KIND] == CLASS
    assert runtime["optimizer_classes"]["sgd"] == "NpuFusedSGD"


CHECK_INSTALLED = textwrap.dedent(
    """
    import torch
    from apex import _apexnpu as rt
    import apex.optimizers as optimizers
    from apex.optimizers import %(cls)s

    assert "%(kind)s" in rt.OPTIMIZERS, rt.OPTIMIZERS
    assert rt.OPTIMIZER_CLASSES["%(kind)s"] == "%(cls)s"
    assert "%(cls)s" in optimizers.npu_fused.__all__
    # Its defaults are the registry row's.
    options = rt.Optimizer("%(kind)s", {"lr": 0.1}).options()
    assert options["momentum"] == 0.9 and options["nesterov"] is True, options

    torch.manual_seed(0)
    model = torch.nn.Linear(8, 3)
    reference = torch.nn.Linear(8, 3)
    reference.load_state_dict(model.state_dict())
    ours = %(cls)s(model.parameters(), lr=0.05)
    theirs = torch.optim.SGD(reference.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    for step in range(5):
        x = torch.randn(4, 8)
        for net, opt in ((model, ours), (reference, theirs)):
            opt.zero_grad()
            net(x).pow(2).sum().backward()
            opt.step()
    for a, b in zip(model.parameters(), reference.parameters()):
        # fp32 rounding apart (the kernel orders the Nesterov update its own way)
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    print("ok")
"""
    % {"kind": KIND, "cls": CLASS}
)


def test_a_registry_row_and_an_overlay_class_reach_the_installed_package(throwaway_build, tmp_path):
    doc, _ = throwaway_build
    vpy = bh.make_venv(str(tmp_path / "venv"))
    # apex reaches the NPU through torch_npu: the emulator's wheel of the same build beside it.
    installed = bh.pip(vpy, "install", "--no-index", doc["wheel"], doc["emulator"]["wheel"])
    assert installed.returncode == 0, installed.stdout
    env = dict(bh.venv_env(), APEXNPU_OPTIM_PATH="runtime")  # the runtime's kernels, or fail
    proc = subprocess.run(
        [vpy, "-c", CHECK_INSTALLED],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        universal_newlines=True,
        cwd=str(tmp_path),
    )
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout


CHECK_REGISTRY = textwrap.dedent("""
    import sys
    from apex import _apexnpu as rt
    import apex.optimizers as optimizers

    assert tuple(rt.OPTIMIZER_CLASSES) == rt.OPTIMIZERS
    for kind, name in rt.OPTIMIZER_CLASSES.items():
        cls = getattr(optimizers, name, None)
        assert cls is not None, "apex.optimizers lacks %s (the registry's class for %s)" % (name, kind)
        assert cls.RUNTIME_KIND == kind, (name, cls.RUNTIME_KIND, kind)
    kinds = {getattr(optimizers, name).RUNTIME_KIND for name in optimizers.npu_fused.__all__}
    assert kinds - {None} == set(rt.OPTIMIZERS), kinds
    print("ok")
""")


def test_the_overlay_has_a_class_for_every_registry_kind(tmp_path_factory, tmp_path):
    """The real registry against the real overlay: every kind's class exists with that kind,
    and every overlay class's kind is in the registry."""
    tree = package_tree(bh.REPO, str(tmp_path / "tree"))
    out = str(tmp_path / "dist")
    doc = bh.build_for_system_python(tree, out, bh.shared_cache_dir(tmp_path_factory))
    env = dict(
        bh.venv_env(), PYTHONPATH=os.pathsep.join([doc["layout"], doc["emulator"]["layout"]])
    )
    check = subprocess.run(
        [bh.SYSTEM_PYTHON, "-c", CHECK_REGISTRY],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        universal_newlines=True,
        cwd=str(tmp_path),
    )
    assert check.returncode == 0 and check.stdout.strip().endswith("ok"), check.stdout
