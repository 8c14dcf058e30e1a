"""The environment variables that switch gradient communication for slow networks, read when a
data-parallel wrapper is made (torch DDP, or amp's combine_ddp at its first backward).

| variable | default | effect |
| --- | --- | --- |
| APEXNPU_FP16_COMPRESSION | 0 | 1: gradients travel as fp16 (torch's fp16 compression) |
| APEXNPU_POWERSGD_COMPRESSION | 0 | 1: PowerSGD low-rank compression (torch's hook) |
| APEXNPU_MATRIX_APPROXIMATION_RANK | 1 | PowerSGD's rank |
| APEXNPU_START_COMPRESS_ITER | 1000 | PowerSGD's first compressed iteration (>= 2) |
| APEXNPU_HIERARCHICAL_ALLREDUCE | 0 | 1: reduce in the node, all-reduce among node leaders, broadcast |

Each also read as AIAK_<X> (AIAK-Training's name; ours wins when both are set).
With none set, nothing changes: the all-reduce stays the wrapper's own.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import aiak_names

FP16 = "APEXNPU_FP16_COMPRESSION"
POWERSGD = "APEXNPU_POWERSGD_COMPRESSION"
RANK = "APEXNPU_MATRIX_APPROXIMATION_RANK"
START_ITER = "APEXNPU_START_COMPRESS_ITER"
HIERARCHICAL = "APEXNPU_HIERARCHICAL_ALLREDUCE"


@dataclass(frozen=True)
class CommSettings:
    fp16: bool = False
    powersgd: bool = False
    rank: int = 1
    start_iter: int = 1000
    hierarchical: bool = False

    @property
    def changes_anything(self) -> bool:
        return self.fp16 or self.powersgd or self.hierarchical


def _switch(name: str) -> bool:
    name, value = aiak_names.getenv(name)
    value = (value or "0").strip() or "0"
    if value not in ("0", "1"):
        raise ValueError(f"{name}={value!r}: expected 0 (off, the default) or 1 (on)")
    return value == "1"


def _int(name: str, default: int, least: int) -> int:
    name, text = aiak_names.getenv(name)
    text = (text or "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name}={text!r}: expected an integer >= {least}") from None
    if value < least:
        raise ValueError(f"{name}={value}: expected an integer >= {least}")
    return value


def from_environment() -> CommSettings:
    powersgd = _switch(POWERSGD)
    # PowerSGD's error feedback and warm start need two plain iterations first (torch's rule).
    return CommSettings(
        fp16=_switch(FP16),
        powersgd=powersgd,
        rank=_int(RANK, 1, 1),
        start_iter=_int(START_ITER, 1000, 2 if powersgd else 0),
        hierarchical=_switch(HIERARCHICAL),
    )
