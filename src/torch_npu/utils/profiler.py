"""``torch_npu.utils.profiler.Profile``: the step profiler that Ascend's model zoo scripts start
and end around every training step.

``Profile(start_step, profile_type, save_path)``: with ``profile_type`` unset (the scripts read it
from ``PROFILE_TYPE``) it does nothing. Set, the step numbered ``start_step`` is profiled: on a
real NPU with CANN or GE, on the emulated NPU with torch.profiler, whose chrome trace is written
into ``save_path`` (one file per process).
"""

from __future__ import annotations

import os
from typing import Any, Optional

import torch

PROFILE_TYPES = ("TORCH", "CANN", "GE")


class Profile:
    def __init__(
        self,
        start_step: int = 10,
        profile_type: Optional[str] = None,
        save_path: Optional[str] = None,
        **unused: Any,
    ) -> None:
        self.start_step = int(start_step)
        self.profile_type = (profile_type or "").upper() or None
        if self.profile_type is not None and self.profile_type not in PROFILE_TYPES:
            raise ValueError(
                f"Profile: profile_type {profile_type!r} is not one of "
                f"{', '.join(PROFILE_TYPES)} (or unset)"
            )
        self.save_path = save_path or os.path.join(os.getcwd(), "profiling")
        self.step = 0
        self._profiler: Optional[Any] = None

    def start(self) -> None:
        """Called before each step."""
        self.step += 1
        if self.profile_type is not None and self.step == self.start_step:
            self._profiler = torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CPU]
            )
            self._profiler.__enter__()

    def end(self) -> None:
        """Called after each step: the profiled step's trace is written."""
        if self._profiler is None:
            return
        profiler, self._profiler = self._profiler, None
        profiler.__exit__(None, None, None)
        os.makedirs(self.save_path, exist_ok=True)
        rank = os.environ.get("RANK", "0")
        profiler.export_chrome_trace(
            os.path.join(
                self.save_path, f"{self.profile_type.lower()}_step{self.step}_rank{rank}.json"
            )
        )
