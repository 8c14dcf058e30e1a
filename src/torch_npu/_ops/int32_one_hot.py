"""``torch.nn.functional.one_hot`` of int32 classes on the NPU.

torch's ``one_hot`` takes int64 classes only, and checks that before any kernel runs (it is a
CompositeImplicitAutograd function, so the emulation's dispatch mode never sees the call).
torch_npu's kernel (aclnnOneHot) takes int32 classes as well and returns the one-hot in the
classes' dtype, so scripts that keep labels as ``IntTensor`` call it on the NPU. On an NPU
tensor of int32 classes the wrapper gives torch's one-hot of the same classes (its checks and
``num_classes=-1`` rule included) as int32; every other call is torch's own.
"""

from __future__ import annotations

import functools
from typing import Callable

import torch

from .. import _wraps
from .._device import placement

NAME = "one_hot"


def _wrap(original: Callable) -> Callable:
    @functools.wraps(original)
    def one_hot(tensor: torch.Tensor, num_classes: int = -1) -> torch.Tensor:
        if torch.overrides.has_torch_function((tensor,)):
            return torch.overrides.handle_torch_function(
                one_hot, (tensor,), tensor, num_classes=num_classes
            )
        if (
            isinstance(tensor, torch.Tensor)
            and tensor.dtype == torch.int32
            and placement.npu_of(tensor) is not None
        ):
            return original(tensor.long(), num_classes).to(torch.int32)
        return original(tensor, num_classes)

    return _wraps.mark(one_hot, original)


def install() -> None:
    """Put the wrapper in ``torch.nn.functional`` (idempotent)."""
    functional = torch.nn.functional
    original = getattr(functional, NAME)
    if _wraps.is_wrapper(original):
        return
    wrapper = _wrap(original)
    setattr(functional, NAME, wrapper)
    _wraps.stand_for_in_torchscript(wrapper, original)
