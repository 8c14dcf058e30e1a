"""Base class of the NpuFused optimizers: every parameter group fused, torch-compatible state.

A subclass names its kind's description (``KIND``, from ``optimizer_kinds``, shared with
torch_npu's fronts): its runtime kind, state buffers (``_state_spec``), argument checks, runtime
options (``_runtime_options``) and update rule over flat tensors (``_torch_update``); it
overrides a hook only where apex computes otherwise. The per-parameter step count is an int in
the state, as Ascend's apex keeps it (none for a kind without one, as SGD). This class combines, at each parameter group's first
step, the group's parameters of each dtype, their gradients and state into combined buffers (see
``param_buckets``), checks before every step that they still point there (re-combining when
the user replaced a tensor or the set of parameters with gradients changed), and keeps
``state_dict()`` in torch's per-parameter layout. Parameters are fp32 or fp16, and bfloat16 on
a chip that computes it (``param_dtypes``: fp32 state, each step in fp32 rounded once).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch.optim.optimizer import Optimizer

from apex.npu.fused_support import fused_clip, grad_memory

from . import param_dtypes, step_path
from .param_buckets import ParamBucket, slot_offsets
from .optimizer_kinds import KindFront, step_count


class NpuFusedOptimizerBase(KindFront, Optimizer):
    """Common machinery; see the module docstring."""

    is_npu_fused_optimizer = True  # as Ascend's apex marks its fused optimizers (amp reads it)
    PACKAGE = "apex"  # the fronts take the signatures and defaults of Ascend's apex

    def __init__(self, params, defaults: Dict):
        self._check_options(defaults)
        self._combined: Dict[Tuple[int, torch.dtype, bool], ParamBucket] = {}
        self._kind_buffers: Dict[Tuple[torch.dtype, bool], Tuple[torch.Tensor, torch.Tensor]] = {}
        self._buckets: List[List[ParamBucket]] = []
        self._fp16_model_masters = frozenset()  # ids of amp's masters of fp16 model parameters
        self.fusions = 0  # how many times a bucket's buffers were (re)combined
        super().__init__(params, defaults)

    # --- torch.optim.Optimizer interface --------------------------------------------------------

    def add_param_group(self, param_group: Dict) -> None:
        params = param_group["params"]
        if isinstance(params, torch.Tensor):
            params = [params]
        params = list(params)
        for i, p in enumerate(params):
            if not isinstance(p, torch.Tensor):
                raise TypeError(
                    f"{type(self).__name__}: parameter {i} of group "
                    f"{len(self.param_groups)} is a {type(p).__name__}, not a tensor"
                )
            param_dtypes.check(type(self).__name__, len(self.param_groups), i, p)
        param_group = dict(param_group)
        param_group["params"] = params
        super().add_param_group(param_group)

    def __setstate__(self, state: Dict) -> None:
        super().__setstate__(state)
        self.__dict__.setdefault("_combined", {})
        self.__dict__.setdefault("_kind_buffers", {})
        self.__dict__.setdefault("_buckets", [])
        self.__dict__.setdefault("_fp16_model_masters", frozenset())
        self.__dict__.setdefault("fusions", 0)

    def load_state_dict(self, state_dict: Dict) -> None:
        # The loaded per-parameter tensors are copied into fresh combined buffers at the next step.
        self._combined = {}
        self._kind_buffers = {}
        super().load_state_dict(state_dict)
        self._keep_fp32_state_of_bf16(state_dict)

    def _keep_fp32_state_of_bf16(self, state_dict: Dict) -> None:
        """torch's load_state_dict casts the state to its parameter's dtype; a bfloat16
        parameter's state is fp32 here, so its saved fp32 values are taken as they are."""
        saved = state_dict.get("state", {})
        for group, saved_group in zip(self.param_groups, state_dict.get("param_groups", ())):
            for p, key in zip(group["params"], saved_group["params"]):
                if p.dtype != torch.bfloat16 or key not in saved:
                    continue
                for name, value in saved[key].items():
                    if (
                        isinstance(value, torch.Tensor)
                        and value.dtype == torch.float32
                        and name != "step"
                    ):
                        self.state[p][name] = value.to(p.device, copy=True)

    def zero_grad(self, set_to_none: bool = False) -> None:
        """Zero the gradients, keeping their memory (``set_to_none`` is ignored while fused)."""
        fused = set()
        for combined in self._combined.values():
            if combined.matches(combined.params):
                combined.grad.zero_()
                fused.update(id(p) for p in combined.params)
        self._zero_grads_outside(fused, set_to_none and not self._combined)

    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], torch.Tensor]] = None):
        loss = self._loss_of(closure)
        self._before_group_steps()
        self._buckets = self._combine_all()
        own_group_step = type(self)._group_step is not NpuFusedOptimizerBase._group_step
        if own_group_step:
            self._publish_to_amp_stash()
        for index in range(len(self.param_groups)):
            # One call per group, as Ascend's apex makes them: a subclass that overrides
            # _group_step (published BERT code does) changes the update.
            self._group_step(index)
        if own_group_step:
            self._take_published_steps()
            for buckets in self._buckets:
                for combined in buckets:
                    combined.reread_steps(self.state)
        return loss

    def _group_step(self, group_index: int) -> None:
        """Update parameter group ``group_index`` from its combined buffers (``step`` calls it
        once per group; a subclass may override it as on Ascend, see ``_publish_to_amp_stash``)."""
        group = self.param_groups[group_index]
        for combined in self._buckets[group_index]:
            self._step_combined(group, combined)

    # --- fusion ---------------------------------------------------------------------------------

    def _bucket_key(self, index: int, p: torch.Tensor) -> Tuple[int, torch.dtype, bool]:
        """(group, dtype, whether ``p`` is amp's fp32 master of an fp16 model parameter): the
        masters of fp16 and of fp32 model parameters go into separate buffers, as in Ascend's
        apex."""
        return index, p.dtype, id(p) in self._fp16_model_masters

    def _wanted_buckets(self) -> List[Dict[Tuple[int, torch.dtype, bool], List[torch.Tensor]]]:
        """Per group: bucket key -> the parameters with gradients that belong in it (the
        model's own parameters first, then masters of fp16 ones; dtypes in order of appearance)."""
        wanted = []
        for index, group in enumerate(self.param_groups):
            # Runs before every step: comprehensions rather than a per-parameter loop of branches.
            with_grad = [p for p in group["params"] if p.grad is not None]
            if any(p.grad.is_sparse for p in with_grad):
                raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")
            keys = [self._bucket_key(index, p) for p in with_grad]
            order = sorted(dict.fromkeys(keys), key=lambda key: key[2])
            if len(order) == 1:
                wanted.append({order[0]: with_grad})
            else:
                wanted.append(
                    {key: [p for p, k in zip(with_grad, keys) if k == key] for key in order}
                )
        return wanted

    def _combine_all(self) -> List[List[ParamBucket]]:
        """Every group's buckets, up to date: when any went stale (a parameter replaced, or the
        set with gradients changed), all are combined again. The parameters, and the gradients,
        of one kind (dtype; master of an fp16 parameter or not) share one buffer over all
        groups, each group's bucket a part of it, as Ascend's apex keeps them."""
        wanted = self._wanted_buckets()
        current = [[self._combined.get(key) for key in buckets] for buckets in wanted]
        if all(
            c is not None and c.matches(params)
            for buckets, combined in zip(wanted, current)
            for c, params in zip(combined, buckets.values())
        ):
            return current
        kinds: Dict[Tuple[torch.dtype, bool], List[Tuple[int, List[torch.Tensor]]]] = {}
        for buckets in wanted:
            for (index, dtype, from_fp16), params in buckets.items():
                kinds.setdefault((dtype, from_fp16), []).append((index, params))
        self._combined, self._kind_buffers = {}, {}
        for (dtype, from_fp16), parts in kinds.items():
            sizes = [slot_offsets(params)[-1] for _, params in parts]
            device = parts[0][1][0].device
            param_buf = torch.zeros(sum(sizes), dtype=dtype, device=device)
            grad_buf = torch.zeros(sum(sizes), dtype=dtype, device=device)
            self._kind_buffers[(dtype, from_fp16)] = (param_buf, grad_buf)
            start = 0
            for (index, params), size in zip(parts, sizes):
                combined = ParamBucket(
                    params,
                    self.state,
                    self._state_spec(self.param_groups[index]),
                    "int" if self.STEP_IN_STATE else None,
                    param_out=param_buf[start : start + size],
                    grad_out=grad_buf[start : start + size],
                )
                combined.from_fp16 = from_fp16
                self._combined[(index, dtype, from_fp16)] = combined
                start += size
                self.fusions += 1
        grad_memory.keep_grad_memory()
        return [[self._combined[key] for key in buckets] for buckets in wanted]

    def combined_kinds(self) -> List[Tuple[torch.dtype, bool, torch.Tensor, torch.Tensor]]:
        """(dtype, masters of fp16 parameters?, parameter buffer, gradient buffer) per kind:
        every group's buckets of that kind in one pair of buffers (once combined)."""
        return [
            (dtype, from_fp16, param_buf, grad_buf)
            for (dtype, from_fp16), (param_buf, grad_buf) in self._kind_buffers.items()
        ]

    def _publish_to_amp_stash(self) -> None:
        """What Ascend's apex gives a subclass's ``_group_step`` in ``self._amp_stash``, per
        group: ``combined_params_indexed_by_group``, ``combined_grads_indexed_by_group``,
        ``params_lists_indexed_by_group`` and ``combined_param_states_indexed_by_group`` (each
        state a dict of the combined state buffers and the bucket's ``step``). With amp's
        master weights each group holds [fp32 model parameters, masters of fp16 ones], None
        where it has none, as Ascend's; else the group's buckets."""
        stash = getattr(self, "_amp_stash", None)
        if stash is None:
            raise RuntimeError(
                f"{type(self).__name__} overrides _group_step, which reads "
                f"self._amp_stash: pass the optimizer through amp.initialize "
                f"(opt_level O1 or O2) first, as Ascend's apex requires"
            )
        params, grads, lists, states = [], [], [], []
        # (bucket, the state handed out, the step it held then), for _take_published_steps.
        self._published: List[Tuple[ParamBucket, Dict, int]] = []
        for buckets in self._buckets:
            if getattr(stash, "master_weights", False):
                by_origin = {c.from_fp16: c for c in buckets if c.dtype == torch.float32}
                ordered = [by_origin.get(False), by_origin.get(True)]
            else:
                ordered = list(buckets)
            params.append([c.param if c is not None else None for c in ordered])
            grads.append([c.grad if c is not None else None for c in ordered])
            lists.append([list(c.params) if c is not None else [] for c in ordered])
            states.append([self._combined_state(c) for c in ordered])
            self._published.extend(
                (c, st, st["step"]) for c, st in zip(ordered, states[-1]) if c is not None
            )
        stash.combined_params_indexed_by_group = params
        stash.combined_grads_indexed_by_group = grads
        stash.params_lists_indexed_by_group = lists
        stash.combined_param_states_indexed_by_group = states

    def _take_published_steps(self) -> None:
        """Ascend keeps a combined state's ``step`` in that state, where published BERT code
        advances it (``combined_param_state["step"] += 1``) and reads it for its warmup: what a
        subclass's ``_group_step`` added there is added to each parameter's count."""
        for combined, published, before in self._published:
            advanced = step_count(published.get("step")) - before
            if advanced and combined.step_kind is not None:
                for p in combined.params:
                    self.state[p]["step"] += advanced

    @staticmethod
    def _combined_state(combined: Optional[ParamBucket]) -> Dict:
        state: Dict = defaultdict(dict)
        if combined is not None:
            state["step"] = combined.step if combined.step is not None else 0
            state.update(combined.state)
        return state

    def _step_combined(self, group: Dict, combined: ParamBucket) -> None:
        if combined.dtype == torch.bfloat16:
            self._step_in_fp32(group, combined)
            return
        if combined.step is not None and self._try_runtime_step(group, combined):
            combined.record_step(self.state)
            return
        if combined.step is not None:
            self._torch_update(group, combined.flat())
            combined.record_step(self.state)
            return
        for i, flat in combined.per_param():
            self._torch_update(group, flat)
            combined.record_step(self.state, [i])

    def _step_in_fp32(self, group: Dict, combined: ParamBucket) -> None:
        """A bfloat16 bucket: the update on fp32 copies of its parameters and gradients with its
        fp32 state, the parameters then rounded once back to bfloat16."""
        param, grad = combined.param.float(), combined.grad.float()
        if combined.step is not None:
            self._torch_update(group, combined.flat(param, grad))
            combined.record_step(self.state)
        else:
            for i, flat in combined.per_param(param, grad):
                self._torch_update(group, flat)
                combined.record_step(self.state, [i])
        combined.param.copy_(param)

    def _try_runtime_step(self, group: Dict, combined: ParamBucket) -> bool:
        """One pass of the runtime's fused kernel over the bucket; False when it does not apply
        (no runtime, forced torch path, fp16 parameters, or options the kernel lacks)."""
        if self.RUNTIME_KIND is None or combined.dtype != torch.float32:
            return False
        rt = step_path.runtime_kernels()
        if rt is None:
            return False
        options = self._runtime_options(group)
        if options is None:
            return False
        kernel = combined.runtime_kernel
        if kernel is None or kernel.kind != self.RUNTIME_KIND:
            segments = [(offset, shape.numel()) for offset, shape in combined.segments]
            rows = [shape[0] if len(shape) >= 2 else 0 for _, shape in combined.segments]
            kernel = rt.Optimizer(self.RUNTIME_KIND, options=options, segments=segments, rows=rows)
            combined.runtime_kernel = kernel
        else:
            kernel.set_options(options)
        kernel.step_count = combined.step
        state = {name: buf.data_ptr() for name, buf in combined.state.items()}
        kernel.step(
            combined.param.data_ptr(), combined.grad.data_ptr(), combined.numel, state=state
        )
        return True

    def combine_grads_now(self) -> List[ParamBucket]:
        """Fuse every group now (parameters with gradients) and return the buckets; amp's
        ``combine_grad`` unscales their gradient buffers in place."""
        return [combined for buckets in self._combine_all() for combined in buckets]

    def combined_buffers(self) -> List[ParamBucket]:
        """The live combined buckets (for amp's fused unscale and gradient checks)."""
        return list(self._combined.values())

    # --- gradient norm ----------------------------------------------------------------------------

    def _grads_for_norm(self, group_indices: Optional[Sequence[int]] = None) -> List[torch.Tensor]:
        """Each gradient once, of the groups at ``group_indices`` (all by default): whole
        combined gradient buffers plus any unfused gradients."""
        wanted = set(range(len(self.param_groups)) if group_indices is None else group_indices)
        grads, covered = [], set()
        for (index, _, _), combined in self._combined.items():
            if index in wanted and combined.matches(combined.params):
                grads.append(combined.grad)
                covered.update(id(p) for p in combined.params)
        for index, group in enumerate(self.param_groups):
            if index not in wanted:
                continue
            for p in group["params"]:
                if p.grad is not None and id(p) not in covered:
                    grads.append(p.grad)
        return grads

    def _grad_parts(self) -> List[fused_clip.Part]:
        """Each gradient once, as parts for fused_clip: the gradients' segments of each combined
        buffer, and every unfused gradient whole."""
        parts, covered = [], set()
        for combined in self._combined.values():
            if combined.matches(combined.params):
                parts.append(
                    (combined.grad, [(o, shape.numel()) for o, shape in combined.segments])
                )
                covered.update(id(p) for p in combined.params)
        unfused = [
            p.grad
            for group in self.param_groups
            for p in group["params"]
            if p.grad is not None and id(p) not in covered
        ]
        return parts + fused_clip.whole(unfused)

    def clip_optimizer_grad_norm_fused(
        self, max_norm: float, norm_type: float = 2.0
    ) -> torch.Tensor:
        """Clip all gradients of this optimizer; equal to ``torch.nn.utils.clip_grad_norm_``."""
        return fused_clip.clip_parts(self._grad_parts(), max_norm, norm_type)
