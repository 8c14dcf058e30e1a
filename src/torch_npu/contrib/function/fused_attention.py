"""``torch_npu.contrib.function.fused_attention``: BERT's self-attention block as one function,
``npu_fused_attention`` and ``npu_fused_attention_with_layernorm`` (Ascend's BERT-Large port;
the NPU runs them as the fused ``npu_fused_attention_*`` kernels of the Ascend 910).

``npu_fused_attention(hidden_states, attention_mask, query_kernel, key_kernel, value_kernel,
query_bias, key_bias, value_bias, scale=1, keep_prob=0)``: ``hidden_states`` is (B * S, H) with
H = 64 * heads, ``attention_mask`` (B, 1, S, S), the kernels (H, H) in (in, out) order. Each of
q, k, v is ``hidden_states @ kernel + bias`` split into (B, heads, S, 64);
``probs = softmax(q @ k^T * scale + attention_mask)``, dropped with a byte mask with
probability ``1 - keep_prob`` (the torch_npu default ``keep_prob=0`` drops everything), and the
context ``probs @ v`` comes back as (B * S, H). The ``_with_layernorm`` form first normalises
``hidden_states`` over H (``gamma``, ``beta``, eps 1e-5), projects the normalised values and
returns ``(context, norm)``; it warns that it is deprecated. The emulator computes in fp32
and rounds each result once to the inputs' dtype; gradients reach every input but the mask, as
the NPU's backward kernels give.

Before the first call of the process, ``_check_compatibility_once`` checks what the fused
kernels need and raises RuntimeError otherwise: the eight inputs in the NPU formats of
``VALID_FORMAT`` (FRACTAL_NZ = 29 for the activations, mask and kernels, ND = 2 for the
biases; ``gamma`` and ``beta`` ND), (B * S) a multiple of 32 and H 768 or 1024, a square (B, 1,
S, S) mask, kernels of 768 or 1024 rows. As torch_npu's, it runs once whatever its outcome:
later calls are not checked.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, List, Optional, Tuple

import torch
import torch.nn.functional as F

from ..._device.formats import get_npu_format
from ..._ops._precision import store, upcast
from ..._ops.dropout_with_byte_mask import dropout_with_byte_mask
from ...utils._error_code import ErrCode, ops_error

__all__ = ["npu_fused_attention", "npu_fused_attention_with_layernorm"]

_FRACTAL_NZ, _ND = 29, 2
# The NPU formats the fused kernels take: hidden states, mask, three kernels, then three biases.
VALID_FORMAT = [_FRACTAL_NZ] * 5 + [_ND] * 3
_HEAD_SIZE = 64
_HIDDEN_SIZES = (1024, 768)
_ROWS_MULTIPLE = 32
_LAYER_NORM_EPS = 1e-5


def _exec_once(func: Callable[..., Any]) -> Callable[..., None]:
    """``func`` run on the first call only (marked as called before it runs, so an exception
    does not make the next call run it again)."""

    @functools.wraps(func)
    def once(*args: Any, **kwargs: Any) -> None:
        if not once.called:
            once.called = True
            func(*args, **kwargs)

    once.called = False
    return once


def _is_format_matched(input_list: List[torch.Tensor]) -> bool:
    """Whether the tensors' NPU formats are ``VALID_FORMAT``, in order."""
    return [get_npu_format(t) for t in input_list] == VALID_FORMAT


def _refuse(what: str) -> RuntimeError:
    return RuntimeError(
        f"fused attention check compatibility failed, {what}" + ops_error(ErrCode.VALUE)
    )


@_exec_once
def _check_compatibility_once(
    hidden_states: torch.Tensor,
    attention_mask: torch.Tensor,
    query_kernel: torch.Tensor,
    key_kernel: torch.Tensor,
    value_kernel: torch.Tensor,
    query_bias: torch.Tensor,
    key_bias: torch.Tensor,
    value_bias: torch.Tensor,
    gamma: Optional[torch.Tensor] = None,
    beta: Optional[torch.Tensor] = None,
) -> None:
    if not _is_format_matched(
        [
            hidden_states,
            attention_mask,
            query_kernel,
            key_kernel,
            value_kernel,
            query_bias,
            key_bias,
            value_bias,
        ]
    ):
        raise _refuse("format not matches")
    if gamma is not None and beta is not None:
        if get_npu_format(gamma) != _ND or get_npu_format(beta) != _ND:
            raise _refuse("gamma or beta format not matches")
    if (
        hidden_states.dim() != 2
        or hidden_states.shape[0] % _ROWS_MULTIPLE != 0
        or hidden_states.shape[1] not in _HIDDEN_SIZES
    ):
        raise _refuse("shape of hidden_states not matches")
    if (
        attention_mask.dim() != 4
        or attention_mask.shape[1] != 1
        or attention_mask.shape[2] != attention_mask.shape[3]
    ):
        raise _refuse("shape of attention_mask not matches")
    if any(k.shape[0] not in _HIDDEN_SIZES for k in (query_kernel, key_kernel, value_kernel)):
        raise _refuse("shape of kernel not matches")


def _split_heads(x: torch.Tensor, batch: int) -> torch.Tensor:
    """(B * S, H) -> (B, H / 64, S, 64)."""
    rows, hidden = x.shape
    return x.reshape(batch, rows // batch, hidden // _HEAD_SIZE, _HEAD_SIZE).permute(0, 2, 1, 3)


def _attention(
    source: torch.Tensor,
    attention_mask: torch.Tensor,
    kernels: Tuple[torch.Tensor, ...],
    biases: Tuple[torch.Tensor, ...],
    scale: float,
    keep_prob: float,
) -> torch.Tensor:
    """The fp32 context (B * S, H) of the fp32 ``source`` rows."""
    batch = attention_mask.shape[0]
    q, k, v = (
        _split_heads(torch.addmm(upcast(b), source, upcast(w)), batch)
        for w, b in zip(kernels, biases)
    )
    scores = torch.matmul(q, k.transpose(-1, -2)) * float(scale)
    probs = torch.softmax(scores + upcast(attention_mask.detach()), dim=-1)
    probs = dropout_with_byte_mask(probs, 1.0 - float(keep_prob), True)
    context = torch.matmul(probs, v).permute(0, 2, 1, 3)
    return context.reshape(source.shape[0], -1)


def npu_fused_attention(
    hidden_states: torch.Tensor,
    attention_mask: torch.Tensor,
    query_kernel: torch.Tensor,
    key_kernel: torch.Tensor,
    value_kernel: torch.Tensor,
    query_bias: torch.Tensor,
    key_bias: torch.Tensor,
    value_bias: torch.Tensor,
    scale: float = 1,
    keep_prob: float = 0,
) -> torch.Tensor:
    _check_compatibility_once(
        hidden_states,
        attention_mask,
        query_kernel,
        key_kernel,
        value_kernel,
        query_bias,
        key_bias,
        value_bias,
        None,
        None,
    )
    context = _attention(
        upcast(hidden_states),
        attention_mask,
        (query_kernel, key_kernel, value_kernel),
        (query_bias, key_bias, value_bias),
        scale,
        keep_prob,
    )
    return store(context, hidden_states.dtype)


def npu_fused_attention_with_layernorm(
    hidden_states: torch.Tensor,
    attention_mask: torch.Tensor,
    query_kernel: torch.Tensor,
    key_kernel: torch.Tensor,
    value_kernel: torch.Tensor,
    query_bias: torch.Tensor,
    key_bias: torch.Tensor,
    value_bias: torch.Tensor,
    gamma: torch.Tensor,
    beta: torch.Tensor,
    scale: float = 1,
    keep_prob: float = 0,
) -> Tuple[torch.Tensor, torch.Tensor]:
    warnings.warn(
        "torch_npu.contrib.npu_fused_attention_with_layernorm is deprecated and will "
        "be removed in a future version. Use torch_npu.npu_fusion_attention and "
        "torch.nn.LayerNorm instead.",
        FutureWarning,
        stacklevel=2,
    )
    _check_compatibility_once(
        hidden_states,
        attention_mask,
        query_kernel,
        key_kernel,
        value_kernel,
        query_bias,
        key_bias,
        value_bias,
        gamma,
        beta,
    )
    source = upcast(hidden_states)
    norm = F.layer_norm(source, (source.shape[1],), upcast(gamma), upcast(beta), _LAYER_NORM_EPS)
    context = _attention(
        norm,
        attention_mask,
        (query_kernel, key_kernel, value_kernel),
        (query_bias, key_bias, value_bias),
        scale,
        keep_prob,
    )
    return store(context, hidden_states.dtype), store(norm, hidden_states.dtype)
