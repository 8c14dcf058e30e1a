"""torch functions whose composite implementation the device layer does not see whole.

``repeat_interleave(x, 2, dim)`` with an int count builds its index with a host tensor maker
and calls ``index_select`` with it on torch 1.13; the device layer sees only the inner operations,
so on an NPU tensor it refused that index as a host tensor beside NPU data. On the NPU (and on
torch 2.x, where the operation reaches the device layer whole) the call works: the wrapper hands
the count over as a tensor on the input's device, which takes torch's own tensor-count path.

``take_along_dim(x, indices)`` checks that both tensors are on one device before it calls its
inner operations, with a message of its own; every emulated NPU tensor is a host tensor to
torch, so the wrapper makes that check between NPUs and the host.

``torch._C._nn.unflatten_dense_tensors(flat, tensors)`` (behind
``torch._utils._unflatten_dense_tensors``, which DDP, apex and bucketing code use) is C++ outside
the dispatcher: it views ``flat`` for each tensor but makes a new empty one, with ``flat``'s
options, for an empty tensor. On an NPU that is an NPU tensor; here the options say "cpu", so
the empty result was a host tensor (``torch_made``). The wrapper puts what torch made for itself
there on ``flat``'s NPU, with the views.
"""

from __future__ import annotations

import functools
from typing import Any, Optional

import torch

from .. import _wraps
from . import placement, torch_device, torch_made


def _counts_on_npu(x: Any, repeats: Any, dim: Optional[int]) -> Any:
    """``repeats`` as a tensor on ``x``'s NPU when ``x`` is an NPU tensor and ``repeats`` an
    int; otherwise ``repeats`` as given."""
    if (
        not isinstance(x, torch.Tensor)
        or isinstance(repeats, torch.Tensor)
        or isinstance(repeats, bool)
        or not isinstance(repeats, int)
    ):
        return repeats
    npu = placement.npu_of(x)
    if npu is None:
        return repeats
    length = x.numel() if dim is None else x.size(dim)
    counts = torch.full((length,), repeats, dtype=torch.long)
    return placement.put(counts, npu)


def _wrap_repeat_interleave(original: Any) -> Any:
    @functools.wraps(original)
    def repeat_interleave(
        x: Any, repeats: Any = None, dim: Optional[int] = None, **kwargs: Any
    ) -> Any:
        if repeats is None:  # the one-argument form: x holds the counts
            return original(x, dim=dim, **kwargs) if dim is not None else original(x, **kwargs)
        return original(x, _counts_on_npu(x, repeats, dim), dim, **kwargs)

    return _wraps.mark(repeat_interleave, original)


def _wrap_unflatten(original: Any) -> Any:
    @functools.wraps(original)
    def unflatten_dense_tensors(flat: Any, tensors: Any) -> Any:
        outputs = original(flat, tensors)
        npu = placement.npu_of(flat)
        if npu is not None:
            for out in outputs:
                if placement.npu_of(out) is None and getattr(out, torch_made.MARK, False):
                    delattr(out, torch_made.MARK)
                    placement.put(out, npu)
        return outputs

    return _wraps.mark(unflatten_dense_tensors, original)


def _wrap_take_along_dim(original: Any) -> Any:
    @functools.wraps(original)
    def take_along_dim(input: Any, indices: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(input, torch.Tensor) and isinstance(indices, torch.Tensor):
            if placement.npu_of(indices) != placement.npu_of(input):
                raise RuntimeError(
                    f"Expected tensor to have {input.device} Device, but got tensor with "
                    f"{indices.device} Device (while checking arguments for "
                    "torch.take_along_dim():)"
                )
        return original(input, indices, *args, **kwargs)

    return _wraps.mark(take_along_dim, original)


def install() -> None:
    nn = torch._C._nn
    if not _wraps.is_wrapper(nn.unflatten_dense_tensors):
        nn.unflatten_dense_tensors = _wrap_unflatten(nn.unflatten_dense_tensors)
    for owner in (torch, torch.Tensor):
        original = owner.take_along_dim
        if not _wraps.is_wrapper(original):
            setattr(owner, "take_along_dim", _wrap_take_along_dim(original))
            if owner is torch:
                _wraps.stand_for_in_torchscript(owner.take_along_dim, original)
    if torch_device.NATIVE:  # torch 2.x dispatches repeat_interleave to the device layer whole
        return
    for owner in (torch, torch.Tensor):
        original = owner.repeat_interleave
        if _wraps.is_wrapper(original):
            continue
        wrapper = _wrap_repeat_interleave(original)
        setattr(owner, "repeat_interleave", wrapper)
        if owner is torch:  # scripted code keeps compiling the call to the aten operator
            _wraps.stand_for_in_torchscript(wrapper, original)
