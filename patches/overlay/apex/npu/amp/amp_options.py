"""Validation of the amp.initialize options that the NPU build adds (dynamic_init_scale,
scale_growth_factor, scale_backoff_factor, scale_window, combine_grad, combine_ddp,
ddp_replica_count, user_cast_preferred, check_combined_tensors)."""

from __future__ import annotations

import math
from typing import Optional

from ..ddp import combined_ddp


# The levels with loss scaling and gradients amp can combine: O1 and O2, and their bfloat16
# twins O4 and O5; the levels that cast around functions rather than the model (O1, O4), which
# user_cast_preferred concerns.
COMBINING_LEVELS = ("O1", "O2", "O4", "O5")
CASTING_LEVELS = ("O1", "O4")


class AmpOptionError(RuntimeError, ValueError):
    """An amp.initialize option that cannot be used: a RuntimeError, as Ascend's (and NVIDIA's)
    amp raises for its option checks, and a ValueError, as this module raised before."""


class NpuAmpOptions:
    """The NPU options of one amp.initialize call, validated."""

    def __init__(
        self,
        opt_level: str,
        combine_grad: Optional[bool] = None,
        combine_ddp: Optional[bool] = None,
        ddp_replica_count: int = 4,
        user_cast_preferred: Optional[bool] = None,
        check_combined_tensors: Optional[bool] = None,
        dynamic_init_scale: float = 2.0**16,
        scale_growth_factor: float = 2.0,
        scale_backoff_factor: float = 0.5,
        scale_window: int = 2000,
        min_loss_scale: Optional[float] = None,
        max_loss_scale: float = 2.0**24,
    ):
        for name, value in (
            ("combine_grad", combine_grad),
            ("combine_ddp", combine_ddp),
            ("user_cast_preferred", user_cast_preferred),
            ("check_combined_tensors", check_combined_tensors),
        ):
            _check_optional_bool(name, value)
        self.opt_level = opt_level
        # As given (None when not passed): Ascend's amp leaves these on every optimizer it
        # processes, which scripts read (see optimizer_getters.attach).
        self.given = dict(
            combine_grad=combine_grad,
            combine_ddp=combine_ddp,
            check_combined_tensors=check_combined_tensors,
        )
        self.combine_grad = bool(combine_grad)
        self.combine_ddp = bool(combine_ddp)
        self.ddp_replica_count = ddp_replica_count
        self.user_cast_preferred = bool(user_cast_preferred)
        self.check_combined_tensors = bool(check_combined_tensors)
        self.dynamic_init_scale = dynamic_init_scale
        self.scale_growth_factor = scale_growth_factor
        self.scale_backoff_factor = scale_backoff_factor
        self.scale_window = scale_window
        self.min_loss_scale = min_loss_scale
        self.max_loss_scale = max_loss_scale
        self._validate()

    def _validate(self) -> None:
        if self.combine_grad and self.opt_level not in COMBINING_LEVELS:
            raise AmpOptionError(
                f"amp.initialize: combine_grad=True needs opt_level 'O1' or 'O2' (or their "
                f"bfloat16 twins 'O4', 'O5'), got '{self.opt_level}'; use O1/O2 or leave "
                f"combine_grad unset"
            )
        if self.check_combined_tensors and not self.combine_grad:
            raise AmpOptionError(
                "amp.initialize: check_combined_tensors=True needs combine_grad=True "
                f"(with opt_level 'O1' or 'O2'; got '{self.opt_level}')"
            )
        if self.user_cast_preferred and self.opt_level not in CASTING_LEVELS:
            raise AmpOptionError(
                "amp.initialize: user_cast_preferred=True only applies to opt_level "
                f"'O1' or 'O4' (the cast lists), got '{self.opt_level}'"
            )
        if (
            isinstance(self.ddp_replica_count, bool)
            or not isinstance(self.ddp_replica_count, int)
            or self.ddp_replica_count < 1
        ):
            raise AmpOptionError(
                "amp.initialize: ddp_replica_count must be a positive int, got "
                f"{self.ddp_replica_count!r}"
            )
        if self.combine_ddp:
            if not self.combine_grad:
                raise AmpOptionError("amp.initialize: combine_ddp=True needs combine_grad=True")
            combined_ddp.require_process_group()
        _check_positive_finite("dynamic_init_scale", self.dynamic_init_scale)
        _check_positive_finite("max_loss_scale", self.max_loss_scale)
        if self.min_loss_scale is not None:
            _check_positive_finite("min_loss_scale", self.min_loss_scale)
            if self.min_loss_scale > self.max_loss_scale:
                raise AmpOptionError(
                    f"amp.initialize: min_loss_scale ({self.min_loss_scale}) is above "
                    f"max_loss_scale ({self.max_loss_scale})"
                )
        _check_positive_finite("scale_growth_factor", self.scale_growth_factor)
        if self.scale_growth_factor < 1.0:
            raise AmpOptionError(
                f"amp.initialize: scale_growth_factor must be >= 1, got {self.scale_growth_factor}"
            )
        if not 0.0 < self.scale_backoff_factor < 1.0:
            raise AmpOptionError(
                "amp.initialize: scale_backoff_factor must be in (0, 1), got "
                f"{self.scale_backoff_factor}"
            )
        if (
            isinstance(self.scale_window, bool)
            or not isinstance(self.scale_window, int)
            or self.scale_window < 1
        ):
            raise AmpOptionError(
                f"amp.initialize: scale_window must be a positive int, got {self.scale_window!r}"
            )


def _check_optional_bool(name: str, value) -> None:
    if value is not None and not isinstance(value, bool):
        raise AmpOptionError(f"amp.initialize: {name} must be True, False or None, got {value!r}")


def _check_positive_finite(name: str, value) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise AmpOptionError(
            f"amp.initialize: {name} must be a positive finite number, got {value!r}"
        )
