"""torch_npu's scatter operators, each writing ``updates`` into a copy of ``input`` (the ``_``
form into ``input`` itself):

- ``npu_scatter(input, indices, updates, dim)``: ``torch.scatter`` along ``dim``; ``indices``
  may also lack the ``dim`` axis (one index per line along ``dim``, as torch_npu's example:
  ``out[indices[j], j] = updates[j]`` for ``dim=0``); empty ``indices`` leave ``input`` as it is;
- ``npu_scatter_nd_update(input, indices, updates)`` (and ``_``): TensorFlow's ScatterNdUpdate,
  ``out[tuple(indices[i])] = updates[i]`` with the last axis of ``indices`` indexing the first
  ``indices.shape[-1]`` dimensions of ``input``;
- ``scatter_update(input, indices, updates, axis)`` (and ``_``): the KV-cache update torch_npu's
  own test defines: ``input[b, ..., indices[b]:indices[b] + L, ...] = updates[b]`` along
  ``axis`` (the sequence axis), ``L`` being ``updates``' size there; one start per batch entry.

The values are copied as they are (no arithmetic, so no rounding); torch_npu registers no
backward: a backward through them raises."""

from __future__ import annotations

import torch

from ._no_derivative import without_derivative
from ._registry import operator


def _same_dtype(name: str, input: torch.Tensor, updates: torch.Tensor) -> None:
    if input.dtype != updates.dtype:
        raise RuntimeError(
            f"{name}: updates ({updates.dtype}) must have the input's dtype ({input.dtype})"
        )


@operator
def npu_scatter(
    input: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, dim: int
) -> torch.Tensor:
    name = "npu_scatter"
    _same_dtype(name, input, updates)
    if indices.numel() == 0:
        return without_derivative(name, lambda x: x.clone(), input)
    idx, upd = indices.long(), updates
    if idx.dim() == input.dim() - 1:
        idx, upd = idx.unsqueeze(dim), upd.unsqueeze(dim)
    if idx.dim() != input.dim() or idx.shape != upd.shape:
        raise RuntimeError(
            f"{name}: indices {tuple(indices.shape)} and updates "
            f"{tuple(updates.shape)} must match, with input's dimensions "
            f"{tuple(input.shape)} or all but dim {dim}"
        )
    if int(idx.min()) < 0 or int(idx.max()) >= input.shape[dim]:
        raise RuntimeError(f"{name}: indices must lie in [0, {input.shape[dim]})")
    return without_derivative(name, lambda x, u: x.scatter(dim, idx, u), input, upd)


def _nd_check(name, input, indices, updates):
    _same_dtype(name, input, updates)
    if indices.dim() < 2 or indices.shape[-1] > input.dim():
        raise RuntimeError(
            f"{name}: indices must have 2 or more dimensions, the last at most "
            f"input's {input.dim()}, got {tuple(indices.shape)}"
        )
    depth = indices.shape[-1]
    want = tuple(indices.shape[:-1]) + tuple(input.shape[depth:])
    if tuple(updates.shape) != want:
        raise RuntimeError(f"{name}: updates must have shape {want}, got {tuple(updates.shape)}")
    bound = torch.tensor(input.shape[:depth])
    flat = indices.reshape(-1, depth).long().cpu()
    if flat.numel() and (bool((flat < 0).any()) or bool((flat >= bound).any())):
        raise RuntimeError(f"{name}: an index lies outside input's shape {tuple(input.shape)}")
    return tuple(indices.reshape(-1, depth).long().t()), updates.reshape(
        (-1,) + tuple(input.shape[depth:])
    )


@operator
def npu_scatter_nd_update(
    input: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor
) -> torch.Tensor:
    where, values = _nd_check("npu_scatter_nd_update", input, indices, updates)

    def compute(x, u):
        out = x.clone()
        out[where] = u
        return out

    return without_derivative("npu_scatter_nd_update", compute, input, values)


@operator
def npu_scatter_nd_update_(
    input: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor
) -> torch.Tensor:
    where, values = _nd_check("npu_scatter_nd_update_", input, indices, updates)
    with torch.no_grad():
        input[where] = values
    return input


def _update_check(
    name: str, data: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, axis: int
):
    """(axis, starts) of scatter_update: a start per batch entry along ``axis``."""
    _same_dtype(name, data, updates)
    if not 2 <= data.dim() <= 8 or updates.dim() != data.dim():
        raise RuntimeError(
            f"{name}: data and updates need one rank of 2 to 8, got "
            f"{tuple(data.shape)} and {tuple(updates.shape)}"
        )
    axis = axis % data.dim()
    if axis == 0:
        raise RuntimeError(f"{name}: axis must be a sequence axis after the batch, got 0")
    if indices.dim() != 1 or indices.shape[0] != data.shape[0] or updates.shape[0] != data.shape[0]:
        raise RuntimeError(
            f"{name}: indices must be 1-D with one start per batch entry "
            f"({data.shape[0]}), got {tuple(indices.shape)} (2-D indices are "
            "not emulated)"
        )
    if [s for d, s in enumerate(updates.shape) if d != axis] != [
        s for d, s in enumerate(data.shape) if d != axis
    ]:
        raise RuntimeError(
            f"{name}: updates {tuple(updates.shape)} must match data "
            f"{tuple(data.shape)} outside axis {axis}"
        )
    starts = [int(i) for i in indices.cpu()]
    if any(s < 0 or s + updates.shape[axis] > data.shape[axis] for s in starts):
        raise RuntimeError(
            f"{name}: an update runs past data's {data.shape[axis]} positions along axis {axis}"
        )
    return axis, starts


def _write(out: torch.Tensor, updates: torch.Tensor, axis: int, starts) -> torch.Tensor:
    for b, start in enumerate(starts):
        out[b].narrow(axis - 1, start, updates.shape[axis]).copy_(updates[b])
    return out


@operator
def scatter_update(
    input: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, axis: int
) -> torch.Tensor:
    data = input
    axis, starts = _update_check("scatter_update", data, indices, updates, axis)
    return without_derivative(
        "scatter_update", lambda d, u: _write(d.clone(), u, axis, starts), data, updates
    )


@operator
def scatter_update_(
    input: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, axis: int
) -> torch.Tensor:
    data = input
    axis, starts = _update_check("scatter_update_", data, indices, updates, axis)
    with torch.no_grad():
        _write(data, updates, axis, starts)
    return data
