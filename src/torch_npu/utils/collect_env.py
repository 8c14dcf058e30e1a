"""``python -m torch_npu.utils.collect_env``: the environment report torch_npu asks for in bug
reports (torch's own report, with torch_npu's version and the CANN version), and on the emulated
NPU what it emulates: how many NPUs, which chip, its overflow mode and the fp16 path.

The emulator has no CANN: the CANN version is "not known" (torch_npu's answer when it finds no
CANN install information under ``ASCEND_HOME_PATH``) unless such a file is there.
"""

from __future__ import annotations

import os
import re
import sys
from collections import namedtuple
from typing import Any, Dict, Optional

import torch
from torch.utils import collect_env as torch_collect_env

SystemEnv = namedtuple(
    "SystemEnv",
    [
        "torch_version",
        "torch_npu_version",
        "is_debug_build",
        "gcc_version",
        "clang_version",
        "cmake_version",
        "os",
        "libc_version",
        "python_version",
        "python_platform",
        "pip_version",
        "pip_packages",
        "conda_packages",
        "is_xnnpack_available",
        "cpu_info",
        "cann_version",
        "emulated_npu",
    ],
)

_FORMAT = """
PyTorch version: {torch_version}
Torch-npu version: {torch_npu_version}
Is debug build: {is_debug_build}
OS: {os}
GCC version: {gcc_version}
Clang version: {clang_version}
CMake version: {cmake_version}
Libc version: {libc_version}

Python version: {python_version}
Python platform: {python_platform}
Is XNNPACK available: {is_xnnpack_available}

CPU:
{cpu_info}

CANN:
{cann_version}

NPU:
{emulated_npu}

Versions of relevant libraries:
{pip_packages}
{conda_packages}
""".strip()


def get_cann_version() -> str:
    """The CANN version its install information under ``ASCEND_HOME_PATH`` gives, else "not
    known"."""
    home = os.environ.get("ASCEND_HOME_PATH", "")
    if not home or not os.path.isdir(home):
        return "not known"
    for directory, _, files in os.walk(os.path.realpath(home)):
        for name in sorted(files):
            if re.match(r"ascend_.*_install\.info", name):
                with open(os.path.join(directory, name)) as f:
                    for line in f:
                        if "version" in line:
                            return line.strip().split("=")[-1]
    return "not known"


def get_torch_npu_version() -> str:
    import torch_npu

    version = getattr(torch_npu, "__version__", None)
    if version is None:
        try:
            from importlib import metadata

            version = metadata.version("torch_npu_emulator")
        except Exception:  # noqa: BLE001 - run from a source tree: no distribution
            version = "N/A"
    return f"{version} (apexnpu's emulator)"


def _emulated_npu() -> str:
    import torch_npu  # noqa: F401 - the emulated NPU
    from .._device import devices, soc
    from .._fp16 import overflow_mode
    from .._fp16 import path as emulation_path

    mode = "INF/NAN" if overflow_mode.inf_nan() else "saturation (float status)"
    fp16 = "fast" if emulation_path.is_fast() else "general"
    return (
        f"{devices.device_count()} x {soc.name()} (SocVersion {soc.version()}), emulated "
        f"on the CPU; overflow mode: {mode}; fp16 emulation path: {fp16}"
    )


def _optional(name: str, *args: Any) -> Optional[Any]:
    function = getattr(torch_collect_env, name, None)
    return function(*args) if function is not None else "not known"


def get_env_info() -> SystemEnv:
    run = torch_collect_env.run
    pip_version, pip_packages = torch_collect_env.get_pip_packages(run)
    return SystemEnv(
        torch_version=torch.__version__,
        torch_npu_version=get_torch_npu_version(),
        is_debug_build=str(torch.version.debug),
        python_version="{} ({}-bit runtime)".format(
            sys.version.replace("\n", " "), sys.maxsize.bit_length() + 1
        ),
        python_platform=torch_collect_env.get_python_platform(),
        pip_version=pip_version,
        pip_packages=pip_packages,
        conda_packages=torch_collect_env.get_conda_packages(run),
        os=torch_collect_env.get_os(run),
        libc_version=torch_collect_env.get_libc_version(),
        gcc_version=torch_collect_env.get_gcc_version(run),
        clang_version=torch_collect_env.get_clang_version(run),
        cmake_version=torch_collect_env.get_cmake_version(run),
        is_xnnpack_available=_optional("is_xnnpack_available"),
        cpu_info=_optional("get_cpu_info", run),
        cann_version=get_cann_version(),
        emulated_npu=_emulated_npu(),
    )


def pretty_str(info: SystemEnv) -> str:
    values: Dict[str, Any] = info._asdict()
    for key, value in values.items():
        if value is None:
            values[key] = "Could not collect"
        elif value is True:
            values[key] = "Yes"
        elif value is False:
            values[key] = "No"
    prefix = f"[{info.pip_version}] " if info.pip_version else ""
    packages = values["pip_packages"]
    values["pip_packages"] = (
        "\n".join(prefix + line for line in packages.splitlines())
        if packages and packages != "Could not collect"
        else "No relevant packages"
    )
    conda = values["conda_packages"]
    values["conda_packages"] = (
        "\n".join("[conda] " + line for line in conda.splitlines())
        if conda and conda != "Could not collect"
        else ""
    )
    return _FORMAT.format(**values)


def get_pretty_env_info() -> str:
    return pretty_str(get_env_info())


def main() -> None:
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
