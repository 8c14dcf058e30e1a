"""``torch_npu.profiler`` on the emulated NPU: torch.profiler under torch_npu's names.

The emulated NPU's work is CPU work, so profiling the CPU profiles it: the ``NPU`` activity adds
nothing beyond ``CPU``, and the options of the real NPU's profiler (``experimental_config``,
``profiler_level``, AI Core metrics) are accepted and have no effect. ``tensorboard_trace_handler``
writes torch's traces, which TensorBoard reads.
"""

from __future__ import annotations

import enum
from typing import Any, Iterable, Optional

import torch
import torch.profiler as _torch_profiler

record_function = _torch_profiler.record_function
schedule = _torch_profiler.schedule
ProfilerAction = _torch_profiler.ProfilerAction


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    NPU = "NPU"


class ProfilerLevel:
    Level_none = "Level_none"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class AiCMetrics:
    PipeUtilization = "PipeUtilization"
    ArithmeticUtilization = "ArithmeticUtilization"
    Memory = "Memory"
    MemoryL0 = "MemoryL0"
    MemoryUB = "MemoryUB"
    ResourceConflictRatio = "ResourceConflictRatio"
    L2Cache = "L2Cache"
    AiCoreNone = "AiCoreNone"


class ExportType:
    Text = "text"
    Db = "db"


class _ExperimentalConfig:
    """The real NPU profiler's extra settings; accepted, without effect on the CPU."""

    def __init__(self, *args: Any, **settings: Any) -> None:
        self.args = args  # torch_npu's order: profiler_level, aic_metrics, l2_cache, ...
        self.settings = dict(settings)


def supported_activities() -> list:
    return [ProfilerActivity.CPU, ProfilerActivity.NPU]


def tensorboard_trace_handler(
    dir_name: Optional[str] = None,
    worker_name: Optional[str] = None,
    analyse_flag: bool = True,
    async_mode: bool = False,
):
    return _torch_profiler.tensorboard_trace_handler(dir_name or "./", worker_name)


class profile(_torch_profiler.profile):  # noqa: N801 - torch_npu.profiler.profile
    """``torch_npu.profiler.profile``: torch.profiler.profile of the CPU, which runs the
    emulated NPU."""

    def __init__(
        self,
        activities: Optional[Iterable[Any]] = None,
        schedule: Any = None,
        on_trace_ready: Any = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: Any = None,
        **unused: Any,
    ) -> None:
        super().__init__(
            activities=[_torch_profiler.ProfilerActivity.CPU],
            schedule=schedule,
            on_trace_ready=on_trace_ready,
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_flops=with_flops,
            with_modules=with_modules,
        )


def _accept_use_npu(original: type) -> type:
    """``torch.autograd.profiler.profile`` that also takes ``use_npu`` (the CPU profile covers
    the emulated NPU's work)."""

    class profile(original):  # type: ignore[misc,valid-type]  # noqa: N801
        def __init__(self, *args: Any, use_npu: bool = False, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.use_npu = use_npu

    profile.__doc__ = original.__doc__
    profile.__module__ = original.__module__
    profile._apexnpu_use_npu = True  # type: ignore[attr-defined]
    return profile


def install() -> None:
    autograd_profiler = torch.autograd.profiler
    if not getattr(autograd_profiler.profile, "_apexnpu_use_npu", False):
        autograd_profiler.profile = _accept_use_npu(autograd_profiler.profile)
