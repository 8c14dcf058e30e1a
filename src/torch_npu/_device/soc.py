"""Which Ascend chip (SoC) the emulated NPU is: ``APEXNPU_SOC_VERSION``, read once per process.

The names and numbers are torch_npu's own (its ``SocVersion``): the Ascend 910 family
(``Ascend910A`` and its variants, 100-104), the Ascend 910B family (``Ascend910B1`` ...,
220-225) and the Atlas A3 chips (``Ascend910_9391`` ..., 250-256). What a chip changes is
what torch_npu derives from that number: bfloat16 from ``Ascend910B1`` on, and INF/NAN overflow
mode by default on the 910B family and the A3 chips; the 910 family saturates fp16 and raises
the float status. The default is ``Ascend910A``, the chip Ascend's apex was written for.
"""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

VARIABLE = "APEXNPU_SOC_VERSION"
DEFAULT = "Ascend910A"

# torch_npu's SocVersion numbers (csrc/core/npu/NpuVariables.h).
VERSIONS: Dict[str, int] = {
    "Ascend910PremiumA": 100,
    "Ascend910ProA": 101,
    "Ascend910A": 102,
    "Ascend910ProB": 103,
    "Ascend910B": 104,
    "Ascend910B1": 220,
    "Ascend910B2": 221,
    "Ascend910B2C": 222,
    "Ascend910B3": 223,
    "Ascend910B4": 224,
    "Ascend910B4-1": 225,
    "Ascend910_9391": 250,
    "Ascend910_9392": 251,
    "Ascend910_9381": 252,
    "Ascend910_9382": 253,
    "Ascend910_9372": 254,
    "Ascend910_9362": 255,
    "Ascend910_9363": 256,
}
ASCEND910B1 = VERSIONS["Ascend910B1"]
_ASCEND310B1 = 240  # the first number past the 910B family
_ASCEND910_9391 = VERSIONS["Ascend910_9391"]

_chosen: List[Optional[str]] = [None]


def name() -> str:
    """The SoC name the emulated NPU reports (``torch.npu.get_device_name()``)."""
    chosen = _chosen[0]
    if chosen is None:
        text = os.environ.get(VARIABLE, "").strip() or DEFAULT
        if text not in VERSIONS:
            raise ValueError(
                f"{VARIABLE}={text!r}: not an Ascend chip the emulator can be; "
                f"expected one of {', '.join(VERSIONS)}"
            )
        chosen = _chosen[0] = text
    return chosen


def version() -> int:
    """torch_npu's SocVersion number of the chip (``torch_npu.npu.utils.get_soc_version()``)."""
    return VERSIONS[name()]


def has_bf16() -> bool:
    """bfloat16 compute: the 910B family and later (torch_npu's ``IsBF16Supported``)."""
    return version() >= ASCEND910B1


def inf_nan_by_default() -> bool:
    """INF/NAN overflow mode is the chip's default: the 910B family and the A3 chips."""
    v = version()
    return ASCEND910B1 <= v < _ASCEND310B1 or v >= _ASCEND910_9391


# (cube cores, vector cores, L2 cache bytes) as CANN's platform configuration gives them per chip
# (``<soc>.ini``: cube_core_cnt, vector_core_cnt, l2_size); the 910 family's AI cores are cube
# and vector unit in one, so it reports no separate vector cores.
_MIB = 1 << 20
_CORES: Dict[str, Tuple[int, int, int]] = {
    "Ascend910B3": (20, 40, 192 * _MIB),
    "Ascend910B4": (20, 40, 96 * _MIB),
    "Ascend910B4-1": (20, 40, 96 * _MIB),
}
_FAMILY_CORES = (
    (ASCEND910B1, (32, 0, 32 * _MIB)),  # the 910 family
    (_ASCEND910_9391, (24, 48, 192 * _MIB)),  # the 910B family
    (1 << 30, (24, 48, 192 * _MIB)),
)  # the A3 chips, per die


def cores() -> Tuple[int, int, int]:
    """(cube cores, vector cores, L2 cache bytes) of the chip
    (``torch.npu.get_device_properties``)."""
    chip = name()
    if chip in _CORES:
        return _CORES[chip]
    v = version()
    return next(figures for bound, figures in _FAMILY_CORES if v < bound)


def select(chip: Optional[str]) -> Optional[str]:
    """Be ``chip`` from now on (None: read the variable again); for tests. Returns the previous
    choice."""
    previous = _chosen[0]
    if chip is not None and chip not in VERSIONS:
        raise ValueError(f"not an Ascend chip the emulator can be: {chip!r}")
    _chosen[0] = chip
    return previous
