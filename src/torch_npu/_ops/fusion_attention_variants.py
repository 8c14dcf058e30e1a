"""``torch_npu.npu_fusion_attention_v2`` and ``npu_fusion_attention_v3``: the training flash
attention of ``npu_fusion_attention`` (``fusion_attention.fusion_attention`` computes all three)
under their own signatures.

``npu_fusion_attention_v2(query, key, value, head_num, input_layout, *, pse=None,
padding_mask=None, atten_mask=None, query_rope=None, key_rope=None, scale=1., keep_prob=1.,
pre_tokens=2147483647, next_tokens=2147483647, inner_precise=0, prefix=None,
actual_seq_qlen=None, actual_seq_kvlen=None, sparse_mode=0, gen_mask_parallel=True, sync=False,
pse_type=1, q_start_idx=None, kv_start_idx=None, softmax_layout="", sink=None,
dropout_mask=None, seed=0, offset=0) -> (out, softmax_max, softmax_sum, softmax_out, seed,
offset, numels)`` adds to v1:
- ``pse_type`` 1 (v1's ``scale * (q k^T + pse)``) or 0 (``scale * q k^T + pse``); the internally
  generated ALiBi of types 2 and 3 is not emulated (raises);
- ``query_rope``/``key_rope``: ``scale * (q k^T + q_rope k_rope^T)``, the rope parts joined to
  the heads' last axis (layouts whose last axis is D: TND, BSND, BNSD);
- ``sink`` (v1 takes it too): one fp32 logit per head joining each row's softmax
  (``e^(s - m) / (sum e^(s - m) + e^(sink - m))``, ``m`` the max over the scores and the sink),
  differentiable.
``q_start_idx``/``kv_start_idx`` (split long sequences, sparse modes 7 and 8) raise.

``npu_fusion_attention_v3(query, key, value, head_num, input_layout, pse=None,
padding_mask=None, atten_mask=None, scale=1., keep_prob=1., pre_tockens=2147483647,
next_tockens=2147483647, inner_precise=0, prefix=None, actual_seq_qlen=None,
actual_seq_kvlen=None, sparse_mode=0, gen_mask_parallel=True, sync=False, softmax_layout="")
-> (out, softmax_max, softmax_sum, softmax_out, seed, offset)``: v1 for graph capture, the
varlen lengths given as int64 tensors, the seed and offset returned as one-element int64 host
tensors (as torch_npu outside graph mode).

Both have v1's backward (query, key, value, pse, and the rope parts and sink).
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch

from ._registry import operator
from .fusion_attention import MAX_TOKENS, fusion_attention


def _rope_joined(
    name: str, t: torch.Tensor, rope: Optional[torch.Tensor], layout: str, what: str
) -> torch.Tensor:
    if rope is None:
        return t
    if layout not in ("TND", "BSND", "BNSD"):
        raise RuntimeError(
            f"{name}: {what} needs a layout whose last axis is the head dim "
            f"(TND, BSND, BNSD), got {layout}"
        )
    if rope.shape[:-1] != t.shape[:-1]:
        raise RuntimeError(
            f"{name}: {what} of shape {tuple(rope.shape)} does not match "
            f"{tuple(t.shape)} but for the head dim"
        )
    return torch.cat([t, rope.to(t.dtype)], dim=-1)


@operator
def npu_fusion_attention_v2(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    head_num: int,
    input_layout: str,
    *,
    pse: Optional[torch.Tensor] = None,
    padding_mask: Optional[torch.Tensor] = None,
    atten_mask: Optional[torch.Tensor] = None,
    query_rope: Optional[torch.Tensor] = None,
    key_rope: Optional[torch.Tensor] = None,
    scale: float = 1.0,
    keep_prob: float = 1.0,
    pre_tokens: int = MAX_TOKENS,
    next_tokens: int = MAX_TOKENS,
    inner_precise: int = 0,
    prefix: Optional[Sequence[int]] = None,
    actual_seq_qlen: Optional[Sequence[int]] = None,
    actual_seq_kvlen: Optional[Sequence[int]] = None,
    sparse_mode: int = 0,
    gen_mask_parallel: bool = True,
    sync: bool = False,
    pse_type: int = 1,
    q_start_idx: Optional[Sequence[int]] = None,
    kv_start_idx: Optional[Sequence[int]] = None,
    softmax_layout: str = "",
    sink: Optional[torch.Tensor] = None,
    dropout_mask: Optional[torch.Tensor] = None,
    seed: int = 0,
    offset: int = 0,
):
    name = "npu_fusion_attention_v2"
    if int(pse_type) not in (0, 1):
        raise NotImplementedError(
            f"{name}: pse_type={pse_type} (ALiBi generated inside the "
            "kernel) is not emulated; 0 and 1 are"
        )
    if q_start_idx is not None or kv_start_idx is not None:
        raise NotImplementedError(
            f"{name}: q_start_idx/kv_start_idx (split sequences) are not emulated"
        )
    if (query_rope is None) != (key_rope is None):
        raise RuntimeError(f"{name}: query_rope and key_rope are given together")
    layout = str(input_layout).upper()
    query = _rope_joined(name, query, query_rope, layout, "query_rope")
    key = _rope_joined(name, key, key_rope, layout, "key_rope")
    return fusion_attention(
        name,
        query,
        key,
        value,
        head_num,
        input_layout,
        pse=pse,
        padding_mask=padding_mask,
        atten_mask=atten_mask,
        scale=scale,
        keep_prob=keep_prob,
        pre_tokens=pre_tokens,
        next_tokens=next_tokens,
        prefix=prefix,
        actual_seq_qlen=actual_seq_qlen,
        actual_seq_kvlen=actual_seq_kvlen,
        sparse_mode=sparse_mode,
        sink=sink,
        dropout_mask=dropout_mask,
        seed=seed,
        offset=offset,
        pse_after_scale=int(pse_type) == 0,
    )


def _lengths(t) -> Optional[Sequence[int]]:
    if t is None or not isinstance(t, torch.Tensor):
        return t
    return [int(v) for v in t.reshape(-1).tolist()]


@operator
def npu_fusion_attention_v3(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    head_num: int,
    input_layout: str,
    pse: Optional[torch.Tensor] = None,
    padding_mask: Optional[torch.Tensor] = None,
    atten_mask: Optional[torch.Tensor] = None,
    scale: float = 1.0,
    keep_prob: float = 1.0,
    pre_tockens: int = MAX_TOKENS,
    next_tockens: int = MAX_TOKENS,
    inner_precise: int = 0,
    prefix: Optional[Sequence[int]] = None,
    actual_seq_qlen: Optional[torch.Tensor] = None,
    actual_seq_kvlen: Optional[torch.Tensor] = None,
    sparse_mode: int = 0,
    gen_mask_parallel: bool = True,
    sync: bool = False,
    softmax_layout: str = "",
):
    out, softmax_max, softmax_sum, softmax_out, seed, offset, _ = fusion_attention(
        "npu_fusion_attention_v3",
        query,
        key,
        value,
        head_num,
        input_layout,
        pse=pse,
        padding_mask=padding_mask,
        atten_mask=atten_mask,
        scale=scale,
        keep_prob=keep_prob,
        pre_tokens=pre_tockens,
        next_tokens=next_tockens,
        prefix=prefix,
        actual_seq_qlen=_lengths(actual_seq_qlen),
        actual_seq_kvlen=_lengths(actual_seq_kvlen),
        sparse_mode=sparse_mode,
    )
    return (
        out,
        softmax_max,
        softmax_sum,
        softmax_out,
        torch.tensor([seed], dtype=torch.int64),
        torch.tensor([offset], dtype=torch.int64),
    )
