"""The device a maker uses when the call names none: torch 2.x's device context.

``with torch.device("npu:1"):`` and ``torch.set_default_device("npu")`` push torch's
``DeviceContext``, a torch-function mode that gives its device to torch's tensor constructors
(``torch.empty``, ``zeros``, ``tensor``, ...: torch's own list) called without one, so that
modules built inside (``nn.Linear``) get their parameters there too. The emulated NPU's makers
are Python wrappers around torch's: the mode sees the originals, which its list (made from the
wrappers) lacks, and an NPU device must not reach torch's CPU kernels anyway. So the wrappers of
torch's constructors ask the context themselves and pass its device on as if the call named it:
an NPU runs on the host and is marked, ``meta`` and the other devices go to torch as they are.
torch 1.13 has no device context; ``torch.set_default_tensor_type(torch.npu.FloatTensor)`` is
its way (``tensor_types``).
"""

from __future__ import annotations

from typing import Any, Callable, FrozenSet, Optional

import torch

try:  # torch >= 2.0
    from torch.utils._device import DeviceContext, _device_constructors
except ImportError:  # pragma: no cover - torch 1.13
    DeviceContext = None  # type: ignore[assignment,misc]
    _device_constructors = None  # type: ignore[assignment]

_stack_depth: Optional[Callable[[], int]] = getattr(torch._C, "_len_torch_function_stack", None)
_mode_stack: Optional[Callable[[], Any]] = getattr(
    torch.overrides, "_get_current_function_mode_stack", None
)


def constructors() -> FrozenSet[Any]:
    """torch's functions that take the context's device (call it before they are wrapped: the
    list is read from ``torch`` as it is now)."""
    if _device_constructors is None or _stack_depth is None or _mode_stack is None:
        return frozenset()
    build = getattr(_device_constructors, "__wrapped__", _device_constructors)
    return frozenset(build())


def context_device() -> Optional[Any]:
    """The device of the innermost active device context, or None (no context, or torch 1.13)."""
    if _stack_depth is None or not _stack_depth():
        return None
    for mode in reversed(_mode_stack()):  # type: ignore[misc]
        if isinstance(mode, DeviceContext):
            return mode.device
    return None
