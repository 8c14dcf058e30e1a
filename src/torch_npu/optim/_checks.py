"""Argument checks shared by the fused optimizers (ValueError, as torch_npu raises)."""

from __future__ import annotations

import math
from typing import Sequence


def non_negative(name: str, **values: float) -> None:
    for key, value in values.items():
        if value < 0.0 or math.isnan(value):
            raise ValueError(f"{name}: invalid {key} value: {value}")


def betas(name: str, values: Sequence[float]) -> None:
    for i, beta in enumerate(values):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"{name}: invalid beta parameter at index {i}: {beta}")
