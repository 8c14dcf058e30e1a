"""The emulated NPU as a chip: ``APEXNPU_SOC_VERSION`` names the SoC, and with it what
torch_npu reports and how fp16 overflows. Each case runs in a fresh interpreter, as the chip is
read once per process."""

import subprocess
import sys
import textwrap

import pytest

import overlay_support

REPORT = """
    import warnings, torch, torch_npu
    from torch_npu.npu import utils
    warnings.simplefilter("ignore")
    x = torch.tensor([60000.0], device="npu").half()
    y = x + x
    print(torch.npu.get_device_name(), torch.npu.get_device_properties(0).name,
          utils.get_soc_version(), torch.npu.is_bf16_supported(),
          torch.npu.get_device_capability(), utils.is_support_inf_nan(),
          float(y.float()), utils.npu_check_overflow(y))
"""


def run(code, **env):
    environ = overlay_support.overlay_env()
    for name in (
        "APEXNPU_SOC_VERSION",
        "APEXNPU_INF_NAN_MODE",
        "INF_NAN_MODE_ENABLE",
        "INF_NAN_MODE_FORCE_DISABLE",
        "TORCH_NPU_DEVICE_CAPABILITY",
    ):
        environ.pop(name, None)
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "chip, expected",
    [
        # name, name, SocVersion, bf16, capability, INF/NAN mode, 60000 + 60000 in fp16, overflow
        (None, "Ascend910A Ascend910A 102 False None False 65504.0 True"),
        ("Ascend910A", "Ascend910A Ascend910A 102 False None False 65504.0 True"),
        ("Ascend910ProB", "Ascend910ProB Ascend910ProB 103 False None False 65504.0 True"),
        ("Ascend910B1", "Ascend910B1 Ascend910B1 220 True None True inf True"),
        ("Ascend910B4", "Ascend910B4 Ascend910B4 224 True None True inf True"),
        ("Ascend910_9391", "Ascend910_9391 Ascend910_9391 250 True None True inf True"),
    ],
)
def test_each_chip_reports_and_overflows_as_torch_npu_says(chip, expected):
    proc = run(REPORT, **({} if chip is None else {"APEXNPU_SOC_VERSION": chip}))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == expected.split()


def test_a_910b_saturates_when_inf_nan_mode_is_forced_off():
    proc = run(REPORT, APEXNPU_SOC_VERSION="Ascend910B2", INF_NAN_MODE_FORCE_DISABLE="1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == "Ascend910B2 Ascend910B2 221 True None False 65504.0 True".split()


def test_a_910b_refuses_inf_nan_mode_switched_off_without_force():
    proc = run(REPORT, APEXNPU_SOC_VERSION="Ascend910B1", INF_NAN_MODE_ENABLE="0")
    assert proc.returncode != 0
    assert "INF_NAN_MODE_ENABLE shouldn't be set to 0 on the current device" in proc.stderr
    assert "INF_NAN_MODE_FORCE_DISABLE=1" in proc.stderr


def test_apexnpu_inf_nan_mode_overrides_the_chip():
    proc = run(REPORT, APEXNPU_SOC_VERSION="Ascend910B1", APEXNPU_INF_NAN_MODE="0")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[5:] == ["False", "65504.0", "True"]


def test_device_capability_is_what_the_variable_says():
    proc = run(
        """
        import warnings, torch, torch_npu
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            print(torch.npu.get_device_capability(0), len(caught))
    """,
        TORCH_NPU_DEVICE_CAPABILITY="8.0",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["(8,", "0)", "1"]


def test_an_unknown_chip_is_a_clear_error():
    proc = run(
        "import torch, torch_npu; torch.npu.get_device_name()", APEXNPU_SOC_VERSION="Ascend310P3"
    )
    assert proc.returncode != 0
    assert (
        "APEXNPU_SOC_VERSION='Ascend310P3': not an Ascend chip the emulator can be" in proc.stderr
    )
    assert "Ascend910B1" in proc.stderr


def test_soc_numbers_keep_torch_npus_order():
    """torch_npu compares SocVersion numbers (``>= Ascend910B1``): ours are its numbers."""
    proc = run("""
        from torch_npu._device import soc
        print(soc.VERSIONS["Ascend910PremiumA"], soc.VERSIONS["Ascend910A"],
              soc.VERSIONS["Ascend910B"], soc.VERSIONS["Ascend910B1"],
              soc.VERSIONS["Ascend910B4-1"], soc.VERSIONS["Ascend910_9363"])
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["100", "102", "104", "220", "225", "256"]


def test_the_overflow_mode_is_fixed_when_the_npu_is_first_used():
    """As torch_npu reads INF_NAN_MODE_* when the NPUs are first used, a script may set them
    after ``import torch_npu`` (Huawei's tests do, for A2/A3 chips)."""
    proc = run(
        """
        import os, torch, torch_npu
        from torch_npu.npu import utils
        os.environ["INF_NAN_MODE_FORCE_DISABLE"] = "1"
        x = torch.tensor([60000.0], device="npu").half()
        os.environ["INF_NAN_MODE_FORCE_DISABLE"] = "0"  # too late: the NPU is in use
        print(utils.is_support_inf_nan(), float((x + x).float()))
    """,
        APEXNPU_SOC_VERSION="Ascend910B1",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "65504.0"]


def test_a_910b_in_inf_nan_mode_refuses_to_read_the_float_status():
    code = """
        import warnings, torch, torch_npu
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.npu.clear_npu_overflow_flag()
        print(bool(caught) and str(caught[0].message).startswith("When soc_version >= Ascend910B1"))
        torch.npu.get_npu_overflow_flag()
    """
    proc = run(code, APEXNPU_SOC_VERSION="Ascend910B1")
    assert proc.returncode != 0 and proc.stdout.split() == ["True"]
    assert (
        "Unsupported api when soc_version >= Ascend910B1, please use npu_check_overflow"
        in proc.stderr
        and "ERR00007 PTA feature not supported" in proc.stderr
    )
    saturating = run(
        code.replace(
            "torch.npu.get_npu_overflow_flag()", "print(torch.npu.get_npu_overflow_flag())"
        ),
        APEXNPU_SOC_VERSION="Ascend910B1",
        INF_NAN_MODE_FORCE_DISABLE="1",
    )
    assert saturating.returncode == 0, saturating.stderr
    assert saturating.stdout.split() == ["False", "False"]  # no warning; the status is clear
