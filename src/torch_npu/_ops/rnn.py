"""torch_npu's recurrent kernels, computed on the host in fp32 (the whole recurrence, each
result stored once in the input's dtype) with their gradients by autograd:

- ``_lstm_npu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, *,
  batch_first=False, batch_sizes=None)``: torch's multi-layer (bi)LSTM with torch's parameter
  list (``weight_ih (4H, in)``, ``weight_hh``, ``bias_ih``, ``bias_hh`` per layer and direction,
  gates ``i, f, g, o``), returning ``(output, hy, cy, i, j, f, o, h, c, tanhc)``: the gates
  (``j`` the candidate ``tanh(g)``), states and ``tanh(c)`` of every step, stacked
  ``(D * num_layers, T, B, H)``; with ``train=False`` the gates are empty and ``h``/``c`` the
  final states. ``hx`` empty: zero initial states. ``dropout`` is not applied (torch_npu
  documents it as unsupported); packed input (``batch_sizes``) is refused;
- ``_lstm_npu_backward(grad_y, grad_hy, grad_cy, input, hx, params, i, j, f, o, h, c, tanhc,
  ...)``: ``(grad_input, grad_hx, grad_params)``, recomputed from the forward's inputs (the
  kernel's saved gates are not needed on the host);
- ``npu_lstm(input, weight, bias, seq_mask, h, c, has_biases, num_layers, dropout, train,
  bidirectional, batch_first, flag_seq, direction)``: one unidirectional layer (all torch_npu
  supports), ``weight = cat(weight_ih.T, weight_hh.T)`` ``(in + H, 4H)`` and ``bias = bias_ih +
  bias_hh`` (as torch_npu's own test builds them), ``h``/``c`` ``(1, B, H)``; returns
  ``(y, h, c, i, j, f, o, tanhc)``, each ``(T, B, H)``;
- ``npu_lstm_cell(input, w_ih, w_hh, h, c, b_ih=None, b_hh=None)``: one step of that layer, with
  ``w_ih = weight_ih.T`` ``(in, 4H)`` and ``w_hh = weight_hh.T`` ``(H, 4H)`` (gates ``i, f, g,
  o``, as torch_npu's own test takes torch's ``lstm_cell`` of the transposes for reference), each
  bias optional; returns ``(y, h, c, i, j, f, o, tanhc)``, ``h``/``c`` ``(B, H)``, the others
  ``(1, B, H)``;
- ``npu_gru(input, hx, weight_input, weight_hidden, bias_input, bias_hidden, seq_length,
  has_biases, num_layers, dropout, train, bidirectional, batch_first)``: one unidirectional GRU
  layer with ``weight_input = weight_ih.T`` ``(in, 3H)``, ``weight_hidden = weight_hh.T``
  (gates ``r, z, n``), returning ``(y, output_h, update, reset, new, hidden_new)`` for every
  step, ``hidden_new = W_hn h + b_hn``.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import torch

from ._precision import store, upcast
from ._registry import operator


def _lstm_direction(x, h, c, w_ih, w_hh, b, reverse):
    """x (T, B, in) fp32 -> per-step (h, c, i, g, f, o, tanh c), each (T, B, H)."""
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    rows = {k: [None] * x.shape[0] for k in ("h", "c", "i", "j", "f", "o", "tanhc")}
    projected = x @ w_ih.t()
    for t in steps:
        gates = projected[t] + h @ w_hh.t()
        if b is not None:
            gates = gates + b
        i, f, g, o = gates.chunk(4, dim=-1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        tanh_c = torch.tanh(c)
        h = o * tanh_c
        for key, value in (
            ("h", h),
            ("c", c),
            ("i", i),
            ("j", g),
            ("f", f),
            ("o", o),
            ("tanhc", tanh_c),
        ):
            rows[key][t] = value
    return {k: torch.stack(v) for k, v in rows.items()}


def _lstm(input, hx, params, has_biases, num_layers, bidirectional, batch_first):
    """The fp32 (bi)LSTM: (output, [per layer-direction step dicts])."""
    name = "_lstm_npu"
    d = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    if len(params) != per * d * num_layers:
        raise RuntimeError(
            f"{name}: params needs {per * d * num_layers} tensors for "
            f"{num_layers} layers, {d} directions, has_biases={has_biases}, "
            f"got {len(params)}"
        )
    x = upcast(input).float()
    if x.dim() != 3:
        raise RuntimeError(f"{name}: input must be 3-D, got {tuple(input.shape)}")
    if batch_first:
        x = x.transpose(0, 1)
    hidden = params[1].shape[1]
    batch = x.shape[1]
    if hx:
        h0, c0 = (upcast(t).float() for t in hx)
    else:
        h0 = c0 = x.new_zeros(d * num_layers, batch, hidden)
    if h0.shape != (d * num_layers, batch, hidden) or c0.shape != h0.shape:
        raise RuntimeError(
            f"{name}: hx must be two ({d * num_layers}, {batch}, {hidden}) "
            f"tensors, got {[tuple(t.shape) for t in hx]}"
        )
    results = []
    for layer in range(num_layers):
        outs = []
        for direction in range(d):
            k = layer * d + direction
            group = [upcast(p).float() for p in params[k * per : (k + 1) * per]]
            bias = group[2] + group[3] if has_biases else None
            res = _lstm_direction(x, h0[k], c0[k], group[0], group[1], bias, direction == 1)
            results.append(res)
            outs.append(res["h"])
        x = torch.cat(outs, dim=-1)
    return (x.transpose(0, 1) if batch_first else x), results


@operator
def _lstm_npu(
    input: torch.Tensor,
    hx: Sequence[torch.Tensor],
    params: Sequence[torch.Tensor],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    *,
    batch_first: Optional[bool] = False,
    batch_sizes: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, ...]:
    if batch_sizes is not None:
        raise RuntimeError("_lstm_npu: packed sequences (batch_sizes) are not emulated")
    output, results = _lstm(
        input, list(hx), list(params), has_biases, num_layers, bidirectional, bool(batch_first)
    )
    dtype = input.dtype
    hy = torch.stack(
        [
            r["h"][-1] if i % 2 == 0 or not bidirectional else r["h"][0]
            for i, r in enumerate(results)
        ]
    )
    cy = torch.stack(
        [
            r["c"][-1] if i % 2 == 0 or not bidirectional else r["c"][0]
            for i, r in enumerate(results)
        ]
    )
    out = [store(output, dtype), store(hy, dtype), store(cy, dtype)]
    empty = input.new_empty(0)
    for key in ("i", "j", "f", "o"):
        out.append(
            store(torch.stack([r[key] for r in results]).detach(), dtype) if train else empty
        )
    if train:
        out += [
            store(torch.stack([r[key] for r in results]).detach(), dtype)
            for key in ("h", "c", "tanhc")
        ]
    else:
        out += [store(hy.detach(), dtype), store(cy.detach(), dtype), empty]
    return tuple(out)


@operator
def _lstm_npu_backward(
    grad_y: Optional[torch.Tensor],
    grad_hy: Optional[torch.Tensor],
    grad_cy: Optional[torch.Tensor],
    input: torch.Tensor,
    hx: Sequence[torch.Tensor],
    params: Sequence[torch.Tensor],
    i: torch.Tensor,
    j: torch.Tensor,
    f: torch.Tensor,
    o: torch.Tensor,
    h: torch.Tensor,
    c: torch.Tensor,
    tanhc: torch.Tensor,
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    *,
    batch_first: Optional[bool] = False,
    batch_sizes: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, List[torch.Tensor], List[torch.Tensor]]:
    leaves = [input.detach().requires_grad_()]
    hx_leaves = [t.detach().requires_grad_() for t in hx]
    p_leaves = [t.detach().requires_grad_() for t in params]
    with torch.enable_grad():
        out = _lstm_npu(
            leaves[0],
            hx_leaves,
            p_leaves,
            has_biases,
            num_layers,
            dropout,
            True,
            bidirectional,
            batch_first=batch_first,
            batch_sizes=batch_sizes,
        )
        pairs = [(o_, g) for o_, g in zip(out[:3], (grad_y, grad_hy, grad_cy)) if g is not None]
        inputs = leaves + hx_leaves + p_leaves
        grads = torch.autograd.grad(
            [p[0] for p in pairs], inputs, [p[1] for p in pairs], allow_unused=True
        )
    grads = [torch.zeros_like(t) if g is None else g for g, t in zip(grads, inputs)]
    return grads[0], grads[1 : 1 + len(hx_leaves)], grads[1 + len(hx_leaves) :]


def _single_layer(name, num_layers, bidirectional):
    if num_layers != 1 or bidirectional:
        raise RuntimeError(
            f"{name}: only one unidirectional layer is supported (torch_npu's "
            f"kernel), got num_layers={num_layers}, bidirectional={bidirectional}"
        )


@operator
def npu_lstm(
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    seq_mask: torch.Tensor,
    h: torch.Tensor,
    c: torch.Tensor,
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
    flag_seq: bool,
    direction: bool,
) -> Tuple[torch.Tensor, ...]:
    name = "npu_lstm"
    _single_layer(name, num_layers, bidirectional)
    if batch_first or flag_seq or direction:
        raise RuntimeError(
            f"{name}: batch_first, flag_seq and direction are not supported "
            "(torch_npu documents them as unsupported)"
        )
    if input.dim() != 3 or weight.dim() != 2 or weight.shape[1] % 4:
        raise RuntimeError(
            f"{name}: input must be (T, B, in) and weight (in + H, 4H), got "
            f"{tuple(input.shape)} and {tuple(weight.shape)}"
        )
    hidden = weight.shape[1] // 4
    if weight.shape[0] != input.shape[2] + hidden:
        raise RuntimeError(
            f"{name}: weight has {weight.shape[0]} rows, expected input size "
            f"{input.shape[2]} + hidden size {hidden}"
        )
    w = upcast(weight).float()
    b = upcast(bias).float() if has_biases else None
    h0, c0 = (upcast(t).float().reshape(input.shape[1], hidden) for t in (h, c))
    res = _lstm_direction(
        upcast(input).float(), h0, c0, w[: input.shape[2]].t(), w[input.shape[2] :].t(), b, False
    )
    dtype = input.dtype
    return (
        store(res["h"], dtype),
        store(res["h"], dtype),
        store(res["c"], dtype),
        *(store(res[k].detach(), dtype) for k in ("i", "j", "f", "o", "tanhc")),
    )


@operator
def npu_lstm_cell(
    input: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    h: torch.Tensor,
    c: torch.Tensor,
    b_ih: Optional[torch.Tensor] = None,
    b_hh: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, ...]:
    name = "npu_lstm_cell"
    if input.dim() != 2 or w_ih.dim() != 2 or w_hh.dim() != 2 or w_hh.shape[1] % 4:
        raise RuntimeError(
            f"{name}: input must be (B, in), w_ih (in, 4H) and w_hh (H, 4H), got "
            f"{tuple(input.shape)}, {tuple(w_ih.shape)} and {tuple(w_hh.shape)}"
        )
    hidden = w_hh.shape[1] // 4
    batch = input.shape[0]
    if w_ih.shape != (input.shape[1], 4 * hidden) or w_hh.shape[0] != hidden:
        raise RuntimeError(
            f"{name}: w_ih must be ({input.shape[1]}, {4 * hidden}) and w_hh "
            f"({hidden}, {4 * hidden}), got {tuple(w_ih.shape)} and {tuple(w_hh.shape)}"
        )
    for what, state in (("h", h), ("c", c)):
        if state.numel() != batch * hidden:
            raise RuntimeError(
                f"{name}: {what} must hold ({batch}, {hidden}), got {tuple(state.shape)}"
            )
    biases = [upcast(b).float() for b in (b_ih, b_hh) if b is not None]
    bias = sum(biases[1:], biases[0]) if biases else None
    h0, c0 = (upcast(t).float().reshape(batch, hidden) for t in (h, c))
    res = _lstm_direction(
        upcast(input).float().unsqueeze(0),
        h0,
        c0,
        upcast(w_ih).float().t(),
        upcast(w_hh).float().t(),
        bias,
        False,
    )
    dtype = input.dtype
    return (
        store(res["h"], dtype),
        store(res["h"][0], dtype),
        store(res["c"][0], dtype),
        *(store(res[k].detach(), dtype) for k in ("i", "j", "f", "o", "tanhc")),
    )


@operator
def npu_gru(
    input: torch.Tensor,
    hx: torch.Tensor,
    weight_input: torch.Tensor,
    weight_hidden: torch.Tensor,
    bias_input: torch.Tensor,
    bias_hidden: torch.Tensor,
    seq_length: torch.Tensor,
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> Tuple[torch.Tensor, ...]:
    name = "npu_gru"
    _single_layer(name, num_layers, bidirectional)
    if input.dim() != 3 or weight_input.dim() != 2 or weight_input.shape[1] % 3:
        raise RuntimeError(
            f"{name}: input must be 3-D and weight_input (in, 3H), got "
            f"{tuple(input.shape)} and {tuple(weight_input.shape)}"
        )
    x = upcast(input).float()
    if batch_first:
        x = x.transpose(0, 1)
    hidden = weight_input.shape[1] // 3
    if weight_hidden.shape != (hidden, 3 * hidden) or weight_input.shape[0] != x.shape[2]:
        raise RuntimeError(
            f"{name}: weight_input must be ({x.shape[2]}, {3 * hidden}) and "
            f"weight_hidden ({hidden}, {3 * hidden}), got "
            f"{tuple(weight_input.shape)}, {tuple(weight_hidden.shape)}"
        )
    w_i, w_h = upcast(weight_input).float(), upcast(weight_hidden).float()
    b_i = upcast(bias_input).float() if has_biases else x.new_zeros(3 * hidden)
    b_h = upcast(bias_hidden).float() if has_biases else x.new_zeros(3 * hidden)
    h = upcast(hx).float().reshape(x.shape[1], hidden)
    rows = {k: [] for k in ("h", "z", "r", "n", "hn")}
    projected = x @ w_i + b_i
    for t in range(x.shape[0]):
        xr, xz, xn = projected[t].chunk(3, dim=-1)
        hr, hz, hn = (h @ w_h + b_h).chunk(3, dim=-1)
        r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        h = (1 - z) * n + z * h
        for key, value in (("h", h), ("z", z), ("r", r), ("n", n), ("hn", hn)):
            rows[key].append(value)
    out = {k: torch.stack(v) for k, v in rows.items()}
    if batch_first:
        out = {k: v.transpose(0, 1) for k, v in out.items()}
    dtype = input.dtype
    return (
        store(out["h"], dtype),
        store(out["h"], dtype),
        *(store(out[k].detach(), dtype) for k in ("z", "r", "n", "hn")),
    )
