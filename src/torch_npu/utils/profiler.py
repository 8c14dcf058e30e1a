"""``torch_npu.utils.profiler.Profile``: the step profiler that Ascend's model zoo scripts start
and end around every training step, as torch_npu has it:

- one per process: ``Profile(...)`` builds it the first time and returns that one after (its step
  count goes on across the epochs of a script that makes one per epoch);
- ``profile_type`` ``"TORCH"`` profiles the step numbered ``start_step`` with
  ``torch.autograd.profiler.profile`` and writes its chrome trace ``torch_prof_<time>.json`` into
  ``save_path``; ``"ASCEND_PROFILER"`` with ``torch_npu.profiler.profile``, whose tensorboard
  trace handler writes into ``save_path``; any other value, unset included (the scripts read it
  from ``PROFILE_TYPE``), profiles nothing: torch_npu dropped the older ``"CANN"`` and ``"GE"``;
- when the profiled step ends, the process exits (``sys.exit()``): profiling is a run of its own;
- ``start`` twice without ``end``, or ``end`` without ``start``, raises RuntimeError; keyword
  arguments beyond the named ones go to the profiler, and ones it does not take raise ValueError.

On the emulated NPU both profilers record the CPU, which runs the NPU's work.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Optional

import torch

ENABLED_TYPES = ("TORCH", "ASCEND_PROFILER")
_EXTRA_ARGS = {
    "TORCH": frozenset(
        {
            "enabled",
            "use_cuda",
            "record_shapes",
            "with_flops",
            "profile_memory",
            "with_stack",
            "use_kineto",
            "use_cpu",
            "use_npu_simple",
        }
    ),
    "ASCEND_PROFILER": frozenset(
        {"activities", "schedule", "record_shapes", "profile_memory", "with_stack"}
    ),
}


class Profile:
    _instance: Optional["Profile"] = None

    def __new__(cls, *args: Any, **kwargs: Any) -> "Profile":
        if Profile._instance is None:
            Profile._instance = super().__new__(cls)
        return Profile._instance

    def __init__(
        self,
        start_step: int = 10,
        save_path: str = "./npu_profiling",
        profile_type: Optional[str] = None,
        use_npu: bool = True,
        record_shape: bool = True,
        experimental_config: Any = None,
        **kwargs: Any,
    ) -> None:
        if getattr(self, "_built", False):
            return  # the process's one Profile, built by the first call
        self.start_step = start_step
        self.save_path = save_path
        self.profile_type = profile_type
        self.enable = profile_type in ENABLED_TYPES
        self.step_count = 0
        self._running = False
        self.prof: Any = None
        if self.enable:
            unknown = set(kwargs) - _EXTRA_ARGS[profile_type]
            if unknown:
                raise ValueError(
                    f"Profile: {sorted(unknown)} are not arguments of the {profile_type} "
                    f"profiler; it takes {sorted(_EXTRA_ARGS[profile_type])}"
                )
            if profile_type == "TORCH":
                self.prof = torch.autograd.profiler.profile(use_npu=use_npu, **kwargs)
            else:
                import torch_npu.profiler

                if experimental_config is None:
                    experimental_config = torch_npu.profiler._ExperimentalConfig(
                        profiler_level=torch_npu.profiler.ProfilerLevel.Level2
                    )
                self.prof = torch_npu.profiler.profile(
                    on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(save_path),
                    experimental_config=experimental_config,
                    record_shapes=record_shape,
                    **kwargs,
                )
            try:
                os.makedirs(save_path, exist_ok=True)
            except OSError as e:
                raise ValueError(f"Profile: cannot make save_path {save_path!r}: {e}") from e
        self._built = True

    def start(self) -> None:
        """Called before each step; the step numbered ``start_step`` is profiled."""
        if self._running:
            raise RuntimeError("Profile.start() called twice: end() must close each step")
        self._running = True
        if self.enable:
            self.step_count += 1
            if self.step_count == self.start_step:
                self.prof.__enter__()

    def end(self) -> None:
        """Called after each step: after the profiled one, writes its trace and exits."""
        if not self._running:
            raise RuntimeError("Profile.end() called without start()")
        self._running = False
        if self.enable and self.step_count == self.start_step:
            self.prof.__exit__(None, None, None)
            if self.profile_type == "TORCH":
                name = "torch_prof_" + time.strftime("%Y%m%d%H%M%S") + ".json"
                self.prof.export_chrome_trace(os.path.join(self.save_path, name))
            sys.exit()
