"""The fused optimizers' descriptions (``optimizer_kinds``), one per kind for apex's and
torch_npu's classes alike.

- One source: torch_npu's ``_optimizer_kinds`` in the source tree is a link to the overlay's file
  (``apexnpu build`` copies its bytes into the emulator's wheel: test_build_emulator_wheel.py).
- Every kind of the runtime's registry has a description, and each package's class of it takes
  its signature and defaults from there; with every option that adds state on, a description
  keeps the state buffers the binding says its kernel reads (``OPTIMIZER_KINDS``; built from
  this checkout with $APEXNPU_BINARY, skipped without it).
- A kind needs no front module: the class ``fronts_lacking`` makes from its description alone
  steps bit for bit as the package's own front where that front changes no step hook (3 steps
  on fp32 parameters of several shapes, torch operations).
"""

import glob
import importlib.util
import inspect
import os

import pytest
import torch

import build_helpers as bh
import overlay_support

overlay_support.use_overlay()
from apex.optimizers import npu_fused, optimizer_kinds  # noqa: E402
from apex.optimizers.npu_fused_optim_base import NpuFusedOptimizerBase as ApexBase  # noqa: E402
from torch_npu import optim as npu_optim  # noqa: E402
from torch_npu.optim import _optimizer_kinds  # noqa: E402

STEP_HOOKS = ("_torch_update", "_state_spec", "_runtime_options", "_before_group_steps")
# package -> (its namespace of classes, its base, its copy of the descriptions)
PACKAGES = {
    "apex": (npu_fused, ApexBase, optimizer_kinds),
    "torch_npu": (npu_optim, npu_optim.NpuFusedOptimizerBase, _optimizer_kinds),
}


def test_torch_npus_descriptions_are_the_overlays_file():
    link = os.path.join(overlay_support.SRC_DIR, "torch_npu", "optim", "_optimizer_kinds.py")
    source = os.path.join(overlay_support.OVERLAY_DIR, "apex", "optimizers", "optimizer_kinds.py")
    assert os.path.islink(link)
    assert os.path.realpath(link) == os.path.realpath(source)


def test_every_registry_kind_is_described_with_its_class():
    kinds = {kind.runtime: kind.class_name for kind in optimizer_kinds.KINDS.values()}
    assert kinds == dict(bh.registry_kinds())


def binding():
    """The runtime's binding built from this checkout, loaded on its own (None: no binary)."""
    built = overlay_support.runtime_dir()
    if built is None:
        pytest.skip(overlay_support.RUNTIME_SKIP_REASON)
    (path,) = glob.glob(os.path.join(built, "torch_npu", "_apexnpu*"))
    spec = importlib.util.spec_from_file_location("_apexnpu", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The options that add state buffers, set so that each adds its buffer.
STATEFUL = dict(amsgrad=True, momentum=0.9, centered=True)


def test_each_description_keeps_the_state_its_kernel_reads():
    facts = binding().OPTIMIZER_KINDS
    for kind in optimizer_kinds.KINDS.values():
        group = dict(kind.options, **{k: v for k, v in STATEFUL.items() if k in kind.options})
        names = {name for name, _ in kind.state(group)}
        assert names == set(facts[kind.runtime]["state"]), kind.runtime


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_each_class_takes_its_signature_from_the_description(package):
    namespace, _, kinds = PACKAGES[package]
    for kind in kinds.KINDS.values():
        cls = getattr(namespace, kind.class_name)
        assert cls.RUNTIME_KIND == kind.runtime
        if "__init__" not in cls.__dict__:
            assert inspect.signature(cls.__init__) == kind.signature(package), kind.class_name


def start_values():
    gen = torch.Generator().manual_seed(3)
    return [torch.randn(shape, generator=gen) for shape in [(6, 4), (6,), (3, 2, 2), (1,)]]


def trained(cls, options, values):
    params = [torch.nn.Parameter(v.clone()) for v in values]
    opt = cls(params, **options)
    gen = torch.Generator().manual_seed(5)
    for _ in range(3):
        for p in params:
            p.grad = torch.randn(p.shape, generator=gen)
        opt.step()
    return [p.detach().clone() for p in params]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_a_front_made_from_a_description_steps_as_the_packages_own(package, monkeypatch):
    monkeypatch.setenv("APEXNPU_OPTIM_PATH", "torch")
    namespace, base, kinds = PACKAGES[package]
    made = kinds.fronts_lacking(base, {"__name__": "made_here"})
    compared = 0
    for kind in kinds.KINDS.values():
        own = getattr(namespace, kind.class_name)
        own_classes = own.__mro__[: own.__mro__.index(base)]
        hooks = any(hook in vars(c) for c in own_classes for hook in STEP_HOOKS)
        if hooks or own.KIND is not kind:
            continue  # the package computes this kind otherwise
        required = kind.signature(package).parameters["lr"].default is kinds.required
        options = {"lr": 0.01} if required else {}
        values = start_values()
        for got, want in zip(
            trained(made[kind.class_name], options, values), trained(own, options, values)
        ):
            assert torch.equal(got, want), kind.class_name
        compared += 1
    assert compared >= 6
