"""amp's master-to-model copy after each step, with fewer operations than one per parameter.

Upstream amp (and Ascend's) writes ``model.data.copy_(master.data)`` for every fp16 parameter:
two ``.data`` aliases and a copy each, every step. ``.data`` keeps the write out of autograd's
sight (the parameters' version counters do not move), which this copy keeps too: the aliases
are made once and reused while every parameter and master still has the memory and shape it had
then (checked each step; anything else makes new ones). Where torch has ``_foreach_copy_``
(2.1 and later) the copies are one operation, unless the device's backend lacks it (an older
torch_npu): the first refusal switches to a copy per parameter. The values are the same either
way.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import torch

_Layout = List[Tuple[int, torch.Size]]
_foreach_copy_works = [True]  # until a device's backend refuses it


def _layout(tensors: Sequence[torch.Tensor]) -> _Layout:
    return [(t.data_ptr(), t.shape) for t in tensors]


class MasterToModelCopy:
    """Copies fp32 masters into their fp16 model parameters (see the module docstring)."""

    def __init__(self) -> None:
        self._layout: Optional[_Layout] = None
        self._models: List[torch.Tensor] = []
        self._masters: List[torch.Tensor] = []

    def __call__(self, models: Sequence[torch.Tensor], masters: Sequence[torch.Tensor]) -> None:
        if not models:
            return
        layout = _layout(models) + _layout(masters)
        if layout != self._layout:
            self._models = [p.data for p in models]
            self._masters = [p.data for p in masters]
            self._layout = layout
        foreach_copy = getattr(torch, "_foreach_copy_", None)
        if foreach_copy is not None and _foreach_copy_works[0]:
            try:
                foreach_copy(self._models, self._masters)
                return
            except NotImplementedError:  # no kernel for this device: copy pair by pair
                _foreach_copy_works[0] = False
        for model, master in zip(self._models, self._masters):
            model.copy_(master)
