"""``torch_npu.npu_grouped_matmul(x, weight, *, bias=None, ..., group_list=None, split_item=0,
group_type=None, group_list_type=0, act_type=0, output_dtype=None, ...) -> List[Tensor]``:
many matmuls in one call, ``y_i = x_i @ weight_i + bias_i`` (fp32, stored once), as MoE
experts and LoRA adapters use it.

- ``group_type`` None or -1: one product per (x_i, weight_i) pair (x_i of 2-6 dims);
- ``group_type`` 0 (split M; also one x, several weights and a ``group_list`` without a
  ``group_type``, as the int-list overload takes them): the rows of x (its tensors joined) cut
  into groups by ``group_list`` (a list of cumulative ends; a tensor of cumulative ends with
  ``group_list_type`` 0 or of group sizes with 1), group g times ``weight[g]``; rows past the
  last group give zeros in a joined output;
- ``weight`` a list of (K, N) matrices, or one (g, K, N) tensor;
- ``split_item`` 0/1: one output per product or group; 2/3: them joined along M, in a list of one.
``output_dtype`` (a float dtype) chooses the result's dtype, else x's.

Raise, naming them: the quantisation inputs (``scale``, ``offset``, ``antiquant_*``,
``per_token_scale``, ``activation_*``, int8 x or weight), ``group_type`` 1 and 2, ``act_type``
other than 0. torch_npu defines no backward for this operator (MindSpeed wraps it in its own
autograd function): torch's autograd fallback
decides (see _no_derivative).
"""

from __future__ import annotations

from typing import List, Optional, Sequence

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator


def _as_list(t) -> List[torch.Tensor]:
    if t is None:
        return []
    return [t] if isinstance(t, torch.Tensor) else list(t)


def _group_ends(name: str, group_list, group_list_type: int, rows: int) -> List[int]:
    if isinstance(group_list, torch.Tensor):
        values = [int(v) for v in group_list.reshape(-1).tolist()]
        if int(group_list_type) == 1:
            ends, total = [], 0
            for v in values:
                total += v
                ends.append(total)
            values = ends
        elif int(group_list_type) != 0:
            raise RuntimeError(f"{name}: group_list_type must be 0 or 1, got {group_list_type}")
    else:
        values = [int(v) for v in group_list]
    if any(v < 0 for v in values) or any(b < a for a, b in zip(values, values[1:])):
        raise RuntimeError(f"{name}: group_list {values} is not non-decreasing and non-negative")
    if values and values[-1] > rows:
        raise RuntimeError(f"{name}: group_list ends at {values[-1]}, x has {rows} rows")
    return values


@operator
def npu_grouped_matmul(
    x: Sequence[torch.Tensor],
    weight: Sequence[torch.Tensor],
    *,
    bias: Optional[Sequence[torch.Tensor]] = None,
    scale: Optional[Sequence[torch.Tensor]] = None,
    offset: Optional[Sequence[torch.Tensor]] = None,
    antiquant_scale: Optional[Sequence[torch.Tensor]] = None,
    antiquant_offset: Optional[Sequence[torch.Tensor]] = None,
    per_token_scale: Optional[Sequence[torch.Tensor]] = None,
    group_list=None,
    activation_input: Optional[Sequence[torch.Tensor]] = None,
    activation_quant_scale: Optional[Sequence[torch.Tensor]] = None,
    activation_quant_offset: Optional[Sequence[torch.Tensor]] = None,
    split_item: Optional[int] = 0,
    group_type: Optional[int] = None,
    group_list_type: Optional[int] = 0,
    act_type: Optional[int] = 0,
    tuning_config: Optional[Sequence[int]] = None,
    output_dtype=None,
    x_dtype: Optional[int] = None,
    weight_dtype: Optional[int] = None,
    scale_dtype: Optional[int] = None,
    per_token_scale_dtype: Optional[int] = None,
) -> List[torch.Tensor]:
    name = "npu_grouped_matmul"
    quant = {
        "scale": scale,
        "offset": offset,
        "antiquant_scale": antiquant_scale,
        "antiquant_offset": antiquant_offset,
        "per_token_scale": per_token_scale,
        "activation_input": activation_input,
        "activation_quant_scale": activation_quant_scale,
        "activation_quant_offset": activation_quant_offset,
    }
    used = sorted(k for k, v in quant.items() if v is not None and len(_as_list(v)))
    if used:
        raise NotImplementedError(f"{name}: {', '.join(used)} (quantisation) is not emulated")
    if int(act_type or 0) != 0:
        raise NotImplementedError(f"{name}: act_type={act_type} is not emulated; 0 is")
    gtype = -1 if group_type is None else int(group_type)
    if gtype not in (-1, 0):
        raise NotImplementedError(f"{name}: group_type={group_type} is not emulated; -1 and 0 are")
    split = int(split_item or 0)
    if split not in (0, 1, 2, 3):
        raise RuntimeError(f"{name}: split_item must be 0-3, got {split_item}")
    xs, ws, bs = _as_list(x), _as_list(weight), _as_list(bias)
    if len(ws) == 1 and ws[0].dim() == 3:
        ws = list(ws[0].unbind(0))
    if gtype == -1 and group_list is not None and len(xs) == 1 and len(ws) > 1:
        # the int-list overload (group_type None): one x cut along M by group_list
        gtype = 0
    for t in xs + ws:
        if not t.is_floating_point():
            raise NotImplementedError(f"{name}: {t.dtype} inputs (quantised) are not emulated")
    if bs and len(bs) == 1 and bs[0].dim() == 2:
        bs = list(bs[0].unbind(0))
    if bs and len(bs) != len(ws):
        raise RuntimeError(f"{name}: {len(bs)} biases for {len(ws)} weights")
    if isinstance(output_dtype, torch.dtype):
        out_dtype = output_dtype
    elif output_dtype is None:
        out_dtype = xs[0].dtype
    else:
        raise NotImplementedError(
            f"{name}: output_dtype {output_dtype!r} (quantised) is not "
            "emulated; a float torch.dtype is"
        )
    if gtype == 0 and group_list is None:
        if len(xs) != len(ws) or len(xs) < 2:
            raise RuntimeError(f"{name}: group_type 0 needs group_list (or one x per weight)")
        # several x, one per weight: each is its own group
        group_list = [sum(t.shape[0] for t in xs[: i + 1]) for i in range(len(xs))]
        group_list_type = 0
    nx, nw = len(xs), len(ws)

    def compute(*tensors):
        xs_, ws_, bs_ = tensors[:nx], tensors[nx : nx + nw], tensors[nx + nw :]
        outs = []
        if gtype == -1:
            if len(xs_) != len(ws_):
                raise RuntimeError(
                    f"{name}: {len(xs_)} inputs for {len(ws_)} weights without grouping"
                )
            for i, (a, w) in enumerate(zip(xs_, ws_)):
                y = torch.matmul(upcast(a), upcast(w))
                if bs_:
                    y = y + upcast(bs_[i])
                outs.append(y)
            rows = None
        else:
            a = torch.cat([upcast(t) for t in xs_], dim=0) if len(xs_) > 1 else upcast(xs_[0])
            if a.dim() != 2:
                raise RuntimeError(f"{name}: grouped x must be 2-D, got {tuple(a.shape)}")
            ends = _group_ends(name, group_list, int(group_list_type or 0), a.shape[0])
            if len(ends) != len(ws_):
                raise RuntimeError(
                    f"{name}: group_list has {len(ends)} groups for {len(ws_)} weights"
                )
            start = 0
            for g, end in enumerate(ends):
                y = torch.matmul(a[start:end], upcast(ws_[g]))
                if bs_:
                    y = y + upcast(bs_[g])
                outs.append(y)
                start = end
            rows = a.shape[0]
        if split in (2, 3):
            joined = torch.cat([o.reshape(-1, o.shape[-1]) for o in outs], dim=0)
            if rows is not None and joined.shape[0] < rows:
                pad = joined.new_zeros(rows - joined.shape[0], joined.shape[1])
                joined = torch.cat([joined, pad], dim=0)
            outs = [joined]
        return tuple(store(o.contiguous(), out_dtype) for o in outs)

    return list(without_derivative(name, compute, *xs, *ws, *bs))
