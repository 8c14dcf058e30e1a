"""``torch.nn.functional.scaled_dot_product_attention`` on NPU tensors as one fused kernel.

On an NPU, torch_npu 2.x runs SDPA as its flash attention (the kernel of
``npu_fusion_attention``), below torch's autocast: scores, mask, softmax, dropout and the product
with ``value`` are computed in fp32 inside the kernel and the fp16/bf16 output is stored once.
CPU torch instead decomposes SDPA (a CompositeImplicitAutograd operation) into small operations
before the emulation's dispatch mode sees them, each rounded to fp16; its boolean mask becomes
an fp16 tensor of -inf, which a 910 (saturation mode) stores as -65504 and reports as an
overflow. So on NPU tensors the emulator replaces the call with this kernel, built on the core
of ``fusion_attention`` (``_attend``): q, k, v in fp32 with the emulation paused inside (its
steps are not NPU operations of their own), one rounding of the output, and a backward that
recomputes the scores, as flash attention's does, and stores each gradient once in its input's
dtype (fp16 saturating on a 910). Host tensors keep torch's own SDPA.

Semantics are torch's: ``softmax(q @ k^T * scale + mask) @ v``, ``scale`` 1/sqrt(E) by default,
a boolean ``attn_mask`` where True takes part, a float ``attn_mask`` added to the scaled scores
(rows with no key taking part, or only -inf, give zeros, as the NPU's kernel and torch 2.5+'s
math path do),
``is_causal`` the lower triangle from the top left (not together with ``attn_mask``), dropout
with ``dropout_p`` drawn from the NPU's generator, and grouped-query attention: the query may
have a multiple of the key/value heads, as the NPU accepts whether or not ``enable_gqa`` is
given. Inputs are (..., heads, L, E) with equal leading dimensions (the NPU takes BNSD).

Hooked where a Python call reaches torch: ``torch.nn.functional.scaled_dot_product_attention``
(which ``nn.MultiheadAttention`` and transformers call) is replaced by a wrapper that takes
part in torch-function handling, so NPU autocast meets it under its own name and casts its
inputs first, as the AutocastPrivateUse1 kernel does before torch_npu's. A call of
``torch.ops.aten.scaled_dot_product_attention`` keeps torch's decomposition. torch 1.13 has no
public SDPA: nothing is installed there.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Optional

import torch

from .. import _wraps
from .._device import placement, soc
from .._fp16 import mode as emulation
from . import _precision
from .fusion_attention import _attend, _band, MAX_TOKENS

NAME = "scaled_dot_product_attention"
_FLOATS = (torch.float16, torch.bfloat16, torch.float32)


def _four_d(t: torch.Tensor, what: str) -> torch.Tensor:
    """(..., N, S, E) as (B, N, S, E), the leading dimensions flattened into B."""
    if t.dim() < 2:
        raise RuntimeError(
            f"{NAME}: {what} must have at least 2 dimensions (..., L, E), "
            f"got shape {tuple(t.shape)}"
        )
    if t.dim() == 2:
        return t.unsqueeze(0).unsqueeze(0)
    return t.reshape((-1,) + tuple(t.shape[-3:]))


def _mask_4d(mask: torch.Tensor, scores_shape: torch.Size, lead_shape) -> torch.Tensor:
    """``attn_mask`` broadcastable to the (B, N, L, S) scores (torch's broadcasting rules over
    the original (..., N, L, S) shape)."""
    full = tuple(lead_shape) + tuple(scores_shape[-3:])
    try:
        fits = torch.broadcast_shapes(tuple(mask.shape), full) == torch.Size(full)
    except RuntimeError:
        fits = False
    if not fits:
        raise RuntimeError(
            f"{NAME}: attn_mask of shape {tuple(mask.shape)} does not broadcast "
            f"to the attention scores' shape {full}"
        )
    if mask.dim() <= 4 and len(full) == 4:
        return mask  # broadcasts as it is
    return mask.expand(full).reshape(scores_shape)


class _FusedAttention(torch.autograd.Function):
    """One NPU kernel: forward and backward run with the emulation paused (their inner
    operations are the kernel's fp32 arithmetic, not NPU operations each stored and checked),
    and each result is stored once as the NPU stores it. The backward recomputes the scores
    from q and k, as flash attention's does, and takes the gradient of the same fp32 formula."""

    @staticmethod
    def forward(ctx, query, key, value, pse, mask, keep, scale, keep_prob):  # noqa: D102
        npu = placement.npu_of(query)
        ctx.save_for_backward(query, key, value, pse, mask, keep)
        ctx.attend = (scale, keep_prob, npu)
        with emulation.paused(), torch.no_grad():
            out, _, _ = _attend(
                query.float(),
                key.float(),
                value.float(),
                None if pse is None else pse.float(),
                mask,
                scale,
                keep,
                keep_prob,
                pse_after_scale=True,
                stats=False,
            )
            return _precision.store_kernel_result(out, query.dtype, npu, (query, key, value, pse))

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        scale, keep_prob, npu = ctx.attend
        saved = ctx.saved_tensors
        query, key, value, pse = saved[:4]
        mask, keep = saved[4:]
        wanted = [
            i
            for i, t in enumerate((query, key, value, pse))
            if t is not None and ctx.needs_input_grad[i]
        ]
        grads = [None] * 8
        if not wanted:
            return tuple(grads)
        with emulation.paused(), torch.enable_grad():
            fp32 = [
                None if t is None else t.detach().float().requires_grad_(i in wanted)
                for i, t in enumerate((query, key, value, pse))
            ]
            out, _, _ = _attend(
                fp32[0],
                fp32[1],
                fp32[2],
                fp32[3],
                mask,
                scale,
                keep,
                keep_prob,
                pse_after_scale=True,
                stats=False,
            )
            found = torch.autograd.grad(out, [fp32[i] for i in wanted], grad.float())
            for i, g in zip(wanted, found):
                grads[i] = _precision.store_kernel_result(
                    g, saved[i].dtype, npu, (grad, query, key, value, pse)
                )
        return tuple(grads)


def attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: Optional[torch.Tensor] = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: Optional[float] = None,
    enable_gqa: bool = False,
) -> torch.Tensor:
    """The fused kernel: SDPA of NPU tensors computed in fp32, stored in the query's dtype."""
    for what, t in (("query", query), ("key", key), ("value", value)):
        if t.dtype not in _FLOATS:
            raise RuntimeError(
                f"{NAME}: {what} of dtype {t.dtype} is not supported on the NPU "
                "(float16, bfloat16 or float32)"
            )
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(
            f"{NAME}: query, key and value must have the same dtype, got "
            f"{query.dtype}, {key.dtype} and {value.dtype}"
        )
    if query.dtype == torch.bfloat16 and not soc.has_bf16():
        raise RuntimeError(
            f"{NAME}: bfloat16 is not supported on {soc.name()}: the Ascend "
            f"910 family computes no bf16 (a 910B does: {soc.VARIABLE}="
            "Ascend910B1)"
        )
    if (
        query.dim() != key.dim()
        or key.dim() != value.dim()
        or query.shape[:-3] != key.shape[:-3]
        or key.shape[:-3] != value.shape[:-3]
    ):
        raise RuntimeError(
            f"{NAME}: query {tuple(query.shape)}, key {tuple(key.shape)} and "
            f"value {tuple(value.shape)} must share their leading dimensions "
            "(..., heads, L, E)"
        )
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"{NAME}: query {tuple(query.shape)} and key {tuple(key.shape)} "
            f"must share E, key and value {tuple(value.shape)} the length S"
        )
    if is_causal and attn_mask is not None:
        raise RuntimeError(f"{NAME}: an explicit attn_mask should not be set when is_causal=True")
    for what, t in (("key", key), ("value", value), ("attn_mask", attn_mask)):
        if t is not None and t.device != query.device:
            raise RuntimeError(
                f"{NAME}: {what} is on {t.device}, query on {query.device}: "
                "expected all tensors on the same device"
            )
    dropout_p = float(dropout_p)
    if not 0.0 <= dropout_p < 1.0:
        raise RuntimeError(f"{NAME}: dropout_p must lie in [0, 1), got {dropout_p}")
    q4, k4, v4 = (_four_d(t, w) for t, w in ((query, "query"), (key, "key"), (value, "value")))
    if k4.shape[1] == 0 or q4.shape[1] % k4.shape[1] or k4.shape[1] != v4.shape[1]:
        raise RuntimeError(
            f"{NAME}: {q4.shape[1]} query heads is not a multiple of "
            f"{k4.shape[1]} key heads ({v4.shape[1]} value heads)"
        )
    b, n, sq, e = q4.shape
    skv = k4.shape[2]
    scores_shape = torch.Size((b, n, sq, skv))
    lead = query.shape[:-3] if query.dim() > 3 else (1,)
    mask, pse = None, None
    if is_causal:
        mask = _band(sq, skv, MAX_TOKENS, 0, False, query.device)
    elif attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            mask = ~_mask_4d(attn_mask, scores_shape, lead)  # True: not attended, as the NPU's
        elif attn_mask.is_floating_point():
            pse = _mask_4d(attn_mask, scores_shape, lead)
            with torch.no_grad():  # -inf entries masked as a bool mask's: rows of none give 0
                mask = torch.isneginf(pse)
            if not bool(mask.any()):
                mask = None
        else:
            raise RuntimeError(
                f"{NAME}: attn_mask of dtype {attn_mask.dtype}: expected bool or a floating dtype"
            )
    keep = None
    if dropout_p > 0.0:  # from the NPU's generator: a random operation on an NPU tensor
        keep = torch.empty(scores_shape, dtype=torch.float32, device=query.device).bernoulli_(
            1.0 - dropout_p
        )
    scale = 1.0 / math.sqrt(e) if scale is None else float(scale)
    out = _FusedAttention.apply(q4, k4, v4, pse, mask, keep, scale, 1.0 - dropout_p)
    return out.reshape(tuple(query.shape[:-1]) + (v4.shape[-1],))


def _on_npu(*tensors: Any) -> bool:
    """Plain tensors (no subclass with a dispatch of its own) on an emulated NPU."""
    for t in tensors:
        if type(t) not in (torch.Tensor, torch.nn.Parameter):
            return False
    return placement.npu_of(tensors[0]) is not None


def _wrap(original: Any) -> Any:
    @functools.wraps(original)
    def scaled_dot_product_attention(
        query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kwargs
    ):
        tensors = (query, key, value) if attn_mask is None else (query, key, value, attn_mask)
        if torch.overrides.has_torch_function(tensors):  # autocast's mode, tensor subclasses
            return torch.overrides.handle_torch_function(
                scaled_dot_product_attention,
                tensors,
                query,
                key,
                value,
                attn_mask=attn_mask,
                dropout_p=dropout_p,
                is_causal=is_causal,
                scale=scale,
                **kwargs,
            )
        if not _on_npu(query, key, value):
            return original(
                query,
                key,
                value,
                attn_mask=attn_mask,
                dropout_p=dropout_p,
                is_causal=is_causal,
                scale=scale,
                **kwargs,
            )
        unknown = set(kwargs) - {"enable_gqa"}
        if unknown:
            raise TypeError(f"{NAME}() got unexpected keyword arguments {sorted(unknown)}")
        return attention(
            query,
            key,
            value,
            attn_mask,
            dropout_p,
            is_causal,
            scale,
            bool(kwargs.get("enable_gqa", False)),
        )

    return _wraps.mark(scaled_dot_product_attention, original)


def install() -> None:
    """Put the wrapper in ``torch.nn.functional`` (idempotent; nothing where torch has no
    public SDPA, as torch 1.13)."""
    functional = torch.nn.functional
    original = getattr(functional, NAME, None)
    if original is None or _wraps.is_wrapper(original):
        return
    wrapper = _wrap(original)
    from ..npu.amp import autocast_mode

    autocast_mode.stands_for_torch(wrapper)
    setattr(functional, NAME, wrapper)
    _wraps.stand_for_in_torchscript(wrapper, original)
