"""NPU operators write their results into new contiguous tensors.

torch's CPU kernels give an elementwise result the strides of its inputs: ``x.t().eq(y)`` is
transposed like ``x.t()``. torch_npu's operators allocate every new output contiguous (in its
base format) whatever their inputs' strides, and Ascend scripts rely on it: the accuracy helper
of the model zoo's image classifiers calls ``correct[:k].view(-1)`` on such a result, which
torch refuses for a transposed tensor. So on the emulated NPU the new outputs of an operation
are made contiguous as well. Views (and other ops that run unchanged), in-place and ``out=``
operations keep their tensors as they are, as they do on the NPU; so does an explicit
``memory_format`` other than ``torch.preserve_format``.
"""

from __future__ import annotations

from typing import Any, Dict

import torch

_Tensor = torch.Tensor
_PRESERVING = (None, torch.preserve_format, torch.contiguous_format)


def _contiguous(x: Any) -> Any:
    if isinstance(x, _Tensor) and x.layout == torch.strided and not x.is_contiguous():
        return x.contiguous()
    return x


def made_contiguous(out: Any, kwargs: Dict[str, Any]) -> Any:
    """``out`` (a new output, or a tuple or list of them) with each strided tensor contiguous;
    the caller has ruled out views and written arguments."""
    if kwargs.get("memory_format") not in _PRESERVING:
        return out
    if isinstance(out, _Tensor):
        return _contiguous(out)
    if type(out) in (tuple, list):
        made = [_contiguous(x) for x in out]
        if any(a is not b for a, b in zip(made, out)):
            return type(out)(made)
    return out
