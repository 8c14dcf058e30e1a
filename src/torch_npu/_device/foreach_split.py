"""torch's foreach operations over tensor lists that span several NPUs.

A foreach operation (``torch._foreach_add_(xs, ys)``) pairs the i-th tensors of its lists. torch
runs lists that span devices a position at a time (its slow path; torch 1.13's foreach
optimizers hand it every parameter of a model spread over devices), as torch_npu does. The
placement check would refuse the mix as one operation, so such a call runs once per NPU over
that NPU's positions, and the results come back in position order. A position whose own tensors
are on different devices is left whole, for the placement check to refuse as torch does.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import torch

from . import placement

_is_foreach: Dict[Any, bool] = {}  # aten op -> whether it is a foreach op


def _tensor_lists(values: List[Any]) -> List[List[torch.Tensor]]:
    return [
        v for v in values if isinstance(v, (list, tuple)) and v and isinstance(v[0], torch.Tensor)
    ]


def positions_by_npu(
    func: Any, args: Any, kwargs: Dict[str, Any]
) -> Optional[Dict[Optional[int], List[int]]]:
    """{NPU index (None: host): positions} when ``func`` is a foreach operation whose lists
    span devices; None otherwise."""
    foreach = _is_foreach.get(func)
    if foreach is None:
        foreach = _is_foreach[func] = func._schema.name.startswith("aten::_foreach_")
    if not foreach:
        return None
    lists = _tensor_lists(list(args) + list(kwargs.values()))
    if not lists:
        return None
    lead = placement.npu_of(lists[0][0])
    if all(placement.npu_of(x) == lead for x in lists[0]):
        return None  # the usual case; a position mixing devices is the placement check's
    groups: Dict[Optional[int], List[int]] = {}
    for i in range(len(lists[0])):
        at = {
            placement.npu_of(lst[i])
            for lst in lists
            if i < len(lst) and isinstance(lst[i], torch.Tensor)
        }
        if len(at) != 1:
            return None
        groups.setdefault(at.pop(), []).append(i)
    return groups if len(groups) > 1 else None


def run_per_npu(
    dispatch: Callable[[Any, Dict[str, Any]], Any],
    args: Any,
    kwargs: Dict[str, Any],
    groups: Dict[Optional[int], List[int]],
) -> Any:
    """``dispatch(args, kwargs)`` once per group over its positions of every list argument; the
    results (a list for out-of-place operations) in position order."""
    n = sum(len(positions) for positions in groups.values())  # the groups cover every position

    def part(value: Any, positions: List[int]) -> Any:
        if isinstance(value, (list, tuple)) and len(value) == n:
            return [value[i] for i in positions]
        return value

    results: List[Any] = [None] * n
    returned = False
    for positions in groups.values():
        out = dispatch(
            [part(a, positions) for a in args], {k: part(v, positions) for k, v in kwargs.items()}
        )
        if out is not None:
            returned = True
            for i, x in zip(positions, out):
                results[i] = x
    return results if returned else None
