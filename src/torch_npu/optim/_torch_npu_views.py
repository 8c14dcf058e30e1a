"""torch_npu's per-group view of a fused optimizer's combined buffers, and its state hooks.

torch_npu's NpuFused optimizers keep, per parameter group, lists indexed by dtype (fp32, fp16):
``params_lists_indexed_by_group`` (the parameters with gradients), ``combined_params_`` and
``combined_grads_indexed_by_group`` (the group's part of the combined buffers) and
``combined_param_states_indexed_by_group`` (a dict per dtype: ``step`` and each state buffer
combined), with the flags ``is_params_grads_combined`` and ``is_states_combined``. Code written
for them (Huawei's tests among it) reads these and calls ``_init_param_state(p, ...)`` (the
group options it depends on as positional arguments, per optimizer: ``INIT_STATE_ARGS``) and
``_maybe_init_combined_states()``.

Here the buckets (``_param_buckets``) are the truth: ``publish`` writes these attributes from them
after every combining, and the hooks, called on their own, do what torch_npu's do with
``npu_combine_tensors`` (the next step copies what they made into the buckets). A group whose
parameters of one dtype have taken different numbers of steps spans several buckets; its state
dict then holds ``step`` None and no buffers (torch_npu would step them as one).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from ..utils import npu_combine_tensors
from ._param_buckets import DTYPES, Bucket


class TorchNpuViews:
    """Mixin of NpuFusedOptimizerBase: torch_npu's attributes and state hooks (see above)."""

    # The group options torch_npu's ``_init_param_state(p, ...)`` takes after ``p``, in order.
    INIT_STATE_ARGS: Tuple[str, ...] = ()

    def _reset_torch_npu_view(self) -> None:
        self.params_lists_indexed_by_group: List[List[List[torch.Tensor]]] = []
        self.combined_params_indexed_by_group: Optional[List] = None
        self.combined_grads_indexed_by_group: Optional[List] = None
        self.combined_param_states_indexed_by_group: Optional[List] = None
        self.params_all_group_combined: List[Optional[torch.Tensor]] = [None, None]
        self.grads_all_group_combined: List[Optional[torch.Tensor]] = [None, None]
        self.is_params_grads_combined = False
        self.is_states_combined = False

    # --- torch_npu's hooks ------------------------------------------------------------------

    def _options_of(self, p: torch.Tensor, args: Sequence[Any], kwargs: Dict) -> Dict:
        """The options of ``p``'s group (the defaults for a tensor of no group), overridden
        by ``args`` (``INIT_STATE_ARGS`` in order) and ``kwargs``."""
        options = dict(self.defaults)
        for group in self.param_groups:
            if any(q is p for q in group["params"]):
                options.update(group)
                break
        if len(args) > len(self.INIT_STATE_ARGS):
            names = ", ".join(self.INIT_STATE_ARGS)
            raise TypeError(
                f"{type(self).__name__}._init_param_state() takes the parameter and "
                f"{len(self.INIT_STATE_ARGS)} options ({names})"
            )
        options.update(zip(self.INIT_STATE_ARGS, args))
        options.update(kwargs)
        return options

    def _init_param_state(self, p: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        """As torch_npu's: ``p``'s state made (``step`` 0, each buffer at its starting value,
        of ``p``'s dtype and shape) when it has none, else its buffers copied into new tensors
        (so that combining them leaves the old ones alone)."""
        options = self._options_of(p, args, kwargs)
        state = self.state[p]
        spec = self._state_spec(options)
        if len(state) == 0:
            if self.STEP_IN_STATE:
                state["step"] = 0
            for name, fill in spec:
                if fill is not None:
                    state[name] = torch.full_like(p, fill, memory_format=torch.preserve_format)
            return
        for name, _ in spec:
            if isinstance(state.get(name), torch.Tensor):
                fresh = torch.zeros_like(p, memory_format=torch.preserve_format)
                fresh.copy_(state[name])
                state[name] = fresh

    def _combine_group_param_states(self, group_index: int) -> None:
        group = self.param_groups[group_index]
        names = [name for name, _ in self._state_spec(group)]
        states = []
        for params in self.params_lists_indexed_by_group[group_index]:
            with_grad = [p for p in params if p.grad is not None]
            for p in with_grad if names else ():  # no state (SGD without momentum): none made
                self._init_param_state(p, *(group[k] for k in self.INIT_STATE_ARGS))
            combined: Dict[str, Any] = defaultdict(dict)
            combined["step"] = self.state[with_grad[0]].get("step", 0) if with_grad else 0
            for name in names:
                tensors = [self.state[p][name] for p in with_grad if name in self.state[p]]
                combined[name] = npu_combine_tensors(tensors) if tensors else None
            states.append(combined)
        self.combined_param_states_indexed_by_group[group_index] = states

    def _maybe_init_combined_states(self) -> None:
        """As torch_npu's: combine each group's state (of the parameters in
        ``params_lists_indexed_by_group``) once."""
        if self.is_states_combined:
            return
        self.combined_param_states_indexed_by_group = [None] * len(self.param_groups)
        for index in range(len(self.param_groups)):
            self._combine_group_param_states(index)
        if not all(v is None for v in self.combined_param_states_indexed_by_group):
            self.is_states_combined = True

    # --- the view of the buckets ------------------------------------------------------------

    def _publish_torch_npu_view(self, buckets: Sequence[Bucket]) -> None:
        """Write torch_npu's attributes from freshly combined ``buckets``."""
        count = len(self.param_groups)
        lists: List[List[List[torch.Tensor]]] = [[[] for _ in DTYPES] for _ in range(count)]
        params: List[List[Optional[torch.Tensor]]] = [[None] * len(DTYPES) for _ in range(count)]
        grads: List[List[Optional[torch.Tensor]]] = [[None] * len(DTYPES) for _ in range(count)]
        states: List[List[Dict]] = [[defaultdict(dict) for _ in DTYPES] for _ in range(count)]
        spans: Dict[Tuple[int, int], List[Bucket]] = {}
        for b in buckets:
            spans.setdefault((b.group_index, DTYPES.index(b.dtype)), []).append(b)
        for (g, d), mine in spans.items():
            lists[g][d] = [p for b in mine for p in b.params]
            whole_p, whole_g = self._combined_params[d], self._combined_grads[d]
            start, end = mine[0].start, mine[-1].start + mine[-1].numel
            params[g][d], grads[g][d] = whole_p[start:end], whole_g[start:end]
            one = len(mine) == 1
            states[g][d]["step"] = mine[0].steps if one else None
            for name in mine[0].state:
                states[g][d][name] = mine[0].state[name] if one else None
        self.params_lists_indexed_by_group = lists
        self.combined_params_indexed_by_group = params
        self.combined_grads_indexed_by_group = grads
        self.combined_param_states_indexed_by_group = states
        self.params_all_group_combined = list(self._combined_params)
        self.grads_all_group_combined = list(self._combined_grads)
        self.is_params_grads_combined = any(t is not None for t in self._combined_params)
        self.is_states_combined = self.is_params_grads_combined
