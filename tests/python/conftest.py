"""Fixtures shared by the pytest files here (ctest runs each file on its own; pytest still reads
this file, beside them, first)."""

import pytest


@pytest.fixture(params=["torch", "runtime"])
def kernel_path(request, monkeypatch):
    """``APEXNPU_OPTIM_PATH`` for one test, both ways: "torch" (torch operations) or "runtime"
    (the runtime's one-pass kernels; skipped, with the reason, when the runtime cannot be
    built). The NPU's float status is clear before and after. A file that wants it on every
    test says ``pytestmark = pytest.mark.usefixtures("kernel_path")``."""
    import overlay_support

    path = overlay_support.select_kernel_path(
        request.param, monkeypatch, overlay_support.runtime_dir()
    )
    from torch_npu._fp16 import float_status  # the test file has put torch_npu on sys.path

    float_status.clear()
    yield path
    float_status.clear()


@pytest.fixture
def chip910():
    """A 910 in saturation mode for the test, whatever the environment says; the float status
    clear before and after."""
    from overlay_support.npu_op_checks import emulated_chip, float_status

    with emulated_chip("Ascend910A", inf_nan=False):
        float_status.clear()
        yield
    float_status.clear()


@pytest.fixture
def chip910b():
    """A 910B (bf16, INF/NAN mode) for the test, whatever the environment says."""
    from overlay_support.npu_op_checks import emulated_chip

    with emulated_chip("Ascend910B1", inf_nan=True):
        yield


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A minimal Apex tree for the build tests (build_helpers.write_fixture_tree)."""
    import build_helpers as bh

    return bh.write_fixture_tree(str(tmp_path_factory.mktemp("fixture")))


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory):
    """The environment of a venv holding apex's and the emulator's wheels built from upstream
    (overlay_support.wheels.installed_wheels_env)."""
    from overlay_support import wheels

    return wheels.installed_wheels_env(tmp_path_factory)
