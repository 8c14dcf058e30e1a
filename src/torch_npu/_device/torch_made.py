"""Host tensors that torch's own C++ makes for an NPU computation.

torch's backward formulas and composite operators make tensors with the options of the tensor
they work for (``at::zeros(sizes, grad.options())``, then ``scatter`` into it): on an NPU those
are NPU tensors. On the emulated NPU the options say "cpu" (its tensors are host tensors with a
mark), so such a tensor would reach the device check as a host tensor beside NPU ones, and
torch 1.13's backward of ``max``/``min``/``topk``/``sort``/``kthvalue``/``median`` over a
dimension (2.x: ``cummax``) failed with "Expected all tensors to be on the same device".

A maker operator (no tensor argument, a ``device`` argument) that reaches the dispatch mode
without going through the Python makers of ``factories`` comes from torch itself: its result is
noted here, the device check lets it beside NPU tensors, and the first NPU operation that reads
or writes it puts it on that NPU. Tensors a script makes (``torch.zeros(3)`` on the host) go
through the Python makers and keep the check: mixing them with NPU tensors is refused
(TorchScript code calls the makers without them: what it makes is let through).
"""

from __future__ import annotations

import threading
from typing import Any, Dict

import torch

MARK = "_apexnpu_torch_made"
_makers: Dict[Any, bool] = {}
_calls = threading.local()  # depth of the script's maker calls in this thread


def _is_maker(func: Any) -> bool:
    known = _makers.get(func)
    if known is None:
        schema = getattr(func, "_schema", None)
        arguments = schema.arguments if schema is not None else []
        known = _makers[func] = any(a.name == "device" for a in arguments) and not any(
            "Tensor" in str(a.type) for a in arguments
        )
    return known


class script_call:  # noqa: N801 - used like a function: ``with torch_made.script_call():``
    """Around a maker the script called: what it makes is the script's, not torch's."""

    def __enter__(self) -> None:
        _calls.depth = getattr(_calls, "depth", 0) + 1

    def __exit__(self, *exc: object) -> None:
        _calls.depth -= 1


def note(func: Any, out: Any) -> None:
    """Mark ``out`` when ``func`` is a maker torch called for itself (outside a script's call)."""
    if isinstance(out, torch.Tensor) and _is_maker(func) and not getattr(_calls, "depth", 0):
        setattr(out, MARK, True)
