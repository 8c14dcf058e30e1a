"""torch_npu's scatter operators, each writing ``updates`` into a copy of ``input`` (the ``_``
form into ``input`` itself):

- ``npu_scatter(input, indices, updates, dim)``: ``torch.scatter`` along ``dim``; ``indices``
  may also lack the ``dim`` axis (one index per line along ``dim``, as torch_npu's example:
  ``out[indices[j], j] = updates[j]`` for ``dim=0``); empty ``indices`` leave ``input`` as it is;
- ``npu_scatter_nd_update(input, indices, updates)`` (and ``_``): TensorFlow's ScatterNdUpdate,
  ``out[tuple(indices[i])] = updates[i]`` with the last axis of ``indices`` indexing the first
  ``indices.shape[-1]`` dimensions of ``input``;

The values are copied as they are (no arithmetic, so no rounding); torch_npu registers no
backward: a backward through them raises."""
from __future__ import annotations

import torch

from ._no_derivative import without_derivative


def _same_dtype(name: str, input: torch.Tensor, updates: torch.Tensor) -> None:
    if input.dtype != updates.dtype:
        raise RuntimeError(f"{name}: updates ({updates.dtype}) must have the input's dtype "
                           f"({input.dtype})")


def npu_scatter(input: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor,
                dim: int) -> torch.Tensor:
    name = "npu_scatter"
    _same_dtype(name, input, updates)
    if indices.numel() == 0:
        return without_derivative(name, lambda x: x.clone(), input)
    idx, upd = indices.long(), updates
    if idx.dim() == input.dim() - 1:
        idx, upd = idx.unsqueeze(dim), upd.unsqueeze(dim)
    if idx.dim() != input.dim() or idx.shape != upd.shape:
        raise RuntimeError(f"{name}: indices {tuple(indices.shape)} and updates "
                           f"{tuple(updates.shape)} must match, with input's dimensions "
                           f"{tuple(input.shape)} or all but dim {dim}")
    if int(idx.min()) < 0 or int(idx.max()) >= input.shape[dim]:
        raise RuntimeError(f"{name}: indices must lie in [0, {input.shape[dim]})")
    return without_derivative(name, lambda x, u: x.scatter(dim, idx, u), input, upd)


def _nd_check(name, input, indices, updates):
    _same_dtype(name, input, updates)
    if indices.dim() < 2 or indices.shape[-1] > input.dim():
        raise RuntimeError(f"{name}: indices must have 2 or more dimensions, the last at most "
                           f"input's {input.dim()}, got {tuple(indices.shape)}")
    depth = indices.shape[-1]
    want = tuple(indices.shape[:-1]) + tuple(input.shape[depth:])
    if tuple(updates.shape) != want:
        raise RuntimeError(f"{name}: updates must have shape {want}, got "
                           f"{tuple(updates.shape)}")
    bound = torch.tensor(input.shape[:depth])
    flat = indices.reshape(-1, depth).long().cpu()
    if flat.numel() and (bool((flat < 0).any()) or bool((flat >= bound).any())):
        raise RuntimeError(f"{name}: an index lies outside input's shape {tuple(input.shape)}")
    return tuple(indices.reshape(-1, depth).long().t()), updates.reshape(
        (-1,) + tuple(input.shape[depth:]))


def npu_scatter_nd_update(input: torch.Tensor, indices: torch.Tensor,
                          updates: torch.Tensor) -> torch.Tensor:
    where, values = _nd_check("npu_scatter_nd_update", input, indices, updates)

    def compute(x, u):
        out = x.clone()
        out[where] = u
        return out
    return without_derivative("npu_scatter_nd_update", compute, input, values)


def npu_scatter_nd_update_(input: torch.Tensor, indices: torch.Tensor,
                           updates: torch.Tensor) -> torch.Tensor:
    where, values = _nd_check("npu_scatter_nd_update_", input, indices, updates)
    with torch.no_grad():
        input[where] = values
    return input

