"""``torch_npu.npu_fusion_attention(query, key, value, head_num, input_layout, pse=None,
padding_mask=None, atten_mask=None, scale=1., keep_prob=1., pre_tockens=2147483647,
next_tockens=2147483647, inner_precise=0, prefix=None, actual_seq_qlen=None,
actual_seq_kvlen=None, sparse_mode=0, gen_mask_parallel=True, sync=False, softmax_layout="",
sink=None, dropout_mask=None, seed=0, offset=0)
-> (attention_out, softmax_max, softmax_sum, softmax_out, seed, offset, numels)``

``attention_out = Dropout(Softmax(Mask(scale * (query @ key^T + pse), atten_mask)), keep_prob)
@ value``, computed in fp32 and stored in the query's dtype, in the query's layout:
- layouts ``BSH``, ``SBH``, ``BSND``, ``BNSD``, and ``TND`` (varlen: ``actual_seq_qlen`` /
  ``actual_seq_kvlen`` give cumulative sequence ends per batch);
- grouped-query attention: ``key``/``value`` may have fewer heads than ``head_num`` (a divisor);
- ``atten_mask`` (bool or uint8; 1/True = not attended) of shape SS, 11SS, B1SS or BNSS, with
  ``sparse_mode`` 0 (the mask as given, narrowed further by ``pre_tockens``/``next_tockens``
  from the top left), 1 (the mask as given), 2 (causal from the top left), 3 (causal from the
  bottom right), 4 (band of ``pre_tockens``/``next_tockens`` from the bottom right). Modes 2-4
  build their mask from the sequence lengths (Ascend passes a compressed 2048x2048 one, which is
  only checked for presence). Without ``atten_mask`` the sparse parameters do not apply. A query
  row with every key masked gives zeros (the NPU's invalid-row handling);
- dropout with ``keep_prob`` < 1: a bit mask (see ``torch_npu._dropout_masks``) over B*N*Sq*Skv
  scores, drawn from ``seed``/``offset`` (seed 0: a fresh seed from torch's generator) or given
  as ``dropout_mask`` (as ``npu_dropout_gen_mask`` makes it).

``softmax_max`` and ``softmax_sum`` are the row maxima of the masked scaled scores and the sums
of ``exp(score - max)`` (fp32, shape (B, N, Sq, 8), the value repeated 8 times as the NPU stores
it; TND: (T, N, 8)); ``softmax_out`` is reserved (empty). The ints are the dropout seed, offset
and the number of mask elements (0 without dropout). The backward is the gradient of the formula
for query, key, value (and pse), as ``npu_fusion_attention_grad``.

``sink`` (fp32, one logit per head) joins each row's softmax as a score attending to nothing:
``e^(s - m) / (sum e^(s - m) + e^(sink - m))``, ``m`` the max over the scores and the sink (the
statistics include it); it is differentiable.

Not emulated: ``prefix`` sparse modes 5 and 6, varlen modes 7 and 8, ``padding_mask``
(torch_npu does not support it either); ``inner_precise``, ``gen_mask_parallel``, ``sync`` and
``softmax_layout`` change nothing here. ``fusion_attention`` is the core the v2 and v3 variants
(``fusion_attention_variants``) share.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import torch

from .. import _dropout_masks
from ._precision import store, upcast
from ._registry import operator

MAX_TOKENS = 2147483647
LAYOUTS = ("BSH", "SBH", "BSND", "BNSD", "TND")
_STATS_WIDTH = 8
_seed_offsets = [0]


def _heads_of(t: torch.Tensor, layout: str, head_dim: int) -> int:
    if layout in ("BSH", "SBH"):
        if t.shape[-1] % head_dim:
            raise RuntimeError(
                f"npu_fusion_attention: hidden size {t.shape[-1]} is not a multiple "
                f"of the head dim {head_dim}"
            )
        return t.shape[-1] // head_dim
    return t.shape[2] if layout == "BSND" else t.shape[1]


def _to_bnsd(t: torch.Tensor, layout: str, heads: int) -> torch.Tensor:
    if layout == "BNSD":
        return t
    if layout == "BSND":
        return t.permute(0, 2, 1, 3)
    if layout == "BSH":
        b, s, h = t.shape
        return t.reshape(b, s, heads, h // heads).permute(0, 2, 1, 3)
    s, b, h = t.shape  # SBH
    return t.reshape(s, b, heads, h // heads).permute(1, 2, 0, 3)


def _from_bnsd(t: torch.Tensor, layout: str) -> torch.Tensor:
    b, n, s, d = t.shape
    if layout == "BNSD":
        return t
    if layout == "BSND":
        return t.permute(0, 2, 1, 3)
    if layout == "BSH":
        return t.permute(0, 2, 1, 3).reshape(b, s, n * d)
    return t.permute(2, 0, 1, 3).reshape(s, b, n * d)  # SBH


def _band(sq: int, skv: int, pre: int, nxt: int, from_bottom_right: bool, device) -> torch.Tensor:
    """True where key j lies outside [i - pre, i + next] of query i (i shifted by Skv - Sq when
    aligned to the bottom right)."""
    rows = torch.arange(sq, device=device).reshape(-1, 1)
    cols = torch.arange(skv, device=device).reshape(1, -1)
    if from_bottom_right:
        rows = rows + (skv - sq)
    return (cols - rows > nxt) | (rows - cols > pre)


def _score_mask(
    atten_mask: Optional[torch.Tensor],
    sparse_mode: int,
    pre: int,
    nxt: int,
    sq: int,
    skv: int,
    device,
    name: str = "npu_fusion_attention",
) -> Optional[torch.Tensor]:
    """The boolean mask (True = not attended) broadcastable to (B, N, Sq, Skv), or None."""
    if atten_mask is None:
        return None
    if sparse_mode in (0, 1):
        given = atten_mask.to(torch.bool)
        if given.shape[-2:] != (sq, skv):
            raise RuntimeError(
                f"{name}: atten_mask of shape {tuple(given.shape)} "
                f"does not end in (Sq, Skv) = ({sq}, {skv})"
            )
        if sparse_mode == 0 and (pre < sq + skv or nxt < sq + skv):
            given = given | _band(sq, skv, pre, nxt, False, device)
        return given
    if sparse_mode == 2:
        return _band(sq, skv, MAX_TOKENS, 0, False, device)
    if sparse_mode == 3:
        return _band(sq, skv, MAX_TOKENS, 0, True, device)
    if sparse_mode == 4:
        return _band(sq, skv, pre, nxt, True, device)
    raise NotImplementedError(
        f"{name}: sparse_mode={sparse_mode} (prefix and "
        "varlen-split modes) is not emulated; modes 0-4 are"
    )


def _keep_mask(
    count: int,
    keep_prob: float,
    dropout_mask: Optional[torch.Tensor],
    seed: int,
    offset: int,
    device,
) -> Tuple[torch.Tensor, int, int]:
    """(0/1 floats for ``count`` scores, seed, offset)."""
    if dropout_mask is not None:
        return _dropout_masks.unpack_bits(dropout_mask, count), seed, offset
    if seed == 0:
        seed = int(torch.randint(1, 2**62, (1,)).item())
        offset = _seed_offsets[0]
        _seed_offsets[0] += _dropout_masks.aligned(count)
    generator = torch.Generator().manual_seed((seed * 1000003 + offset) % (2**63))
    keep = _dropout_masks.keep_draws(count, 1.0 - keep_prob, None, generator)
    return keep.to(torch.float32).to(device), seed, offset


def _widened(t: torch.Tensor, groups: int) -> torch.Tensor:
    b, n, s, d = t.shape
    return t.unsqueeze(2).expand(b, n, groups, s, d).reshape(b, n * groups, s, d)


def _attend(
    q,
    k,
    v,
    pse,
    mask,
    scale: float,
    keep: Optional[torch.Tensor],
    keep_prob: float,
    pse_after_scale: bool = False,
    sink: Optional[torch.Tensor] = None,
    stats: bool = True,
):
    """Attention over (B, N, S, D) fp32 tensors; (out, row max, row sum of exps), the
    statistics None without ``stats``.

    ``pse`` is added before the scale (``scale * (q k^T + pse)``) or, with ``pse_after_scale``,
    after it (``scale * q k^T + pse``). ``sink`` (one logit per query head) joins every row's
    softmax as an extra score attending to nothing, so it enters the max and the sum."""
    groups = q.shape[1] // k.shape[1]
    if groups > 1:  # each key/value head serves `groups` consecutive query heads
        k = _widened(k, groups)
        v = _widened(v, groups)
    scores = torch.matmul(q, k.transpose(-1, -2))
    if pse is not None and not pse_after_scale:
        scores = scores + pse
    scores = scores * scale
    if pse is not None and pse_after_scale:
        scores = scores + pse
    invalid = None
    if mask is not None:
        scores = scores.masked_fill(mask, torch.finfo(torch.float32).min)
        invalid = mask.all(dim=-1, keepdim=True)
    if sink is not None:
        column = sink.reshape(1, -1, 1, 1).expand(scores.shape[:-1] + (1,))
        scores = torch.cat([scores, column], dim=-1)
    probs = torch.softmax(scores, dim=-1)
    if sink is not None:
        probs = probs[..., :-1]
    row_max = row_sum = None
    if stats:
        with torch.no_grad():
            row_max = scores.amax(dim=-1, keepdim=True).squeeze(-1)
            row_sum = torch.exp(scores - row_max.unsqueeze(-1)).sum(dim=-1)
    if invalid is not None and bool(invalid.any()):
        probs = probs.masked_fill(invalid, 0.0)
    if keep is not None:
        probs = probs * (keep.reshape(probs.shape) * (1.0 / keep_prob))
    return torch.matmul(probs, v), row_max, row_sum


def _segments(cumulative: Sequence[int]) -> List[Tuple[int, int]]:
    spans, start = [], 0
    for end in cumulative:
        end = int(end)
        if end == 0 and start > 0:  # trailing batches left out
            break
        spans.append((start, end))
        start = end
    return spans


@operator
def npu_fusion_attention(
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
    actual_seq_qlen: Optional[Sequence[int]] = None,
    actual_seq_kvlen: Optional[Sequence[int]] = None,
    sparse_mode: int = 0,
    gen_mask_parallel: bool = True,
    sync: bool = False,
    softmax_layout: str = "",
    sink: Optional[torch.Tensor] = None,
    dropout_mask: Optional[torch.Tensor] = None,
    seed: int = 0,
    offset: int = 0,
):
    return fusion_attention(
        "npu_fusion_attention",
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
        actual_seq_qlen=actual_seq_qlen,
        actual_seq_kvlen=actual_seq_kvlen,
        sparse_mode=sparse_mode,
        sink=sink,
        dropout_mask=dropout_mask,
        seed=seed,
        offset=offset,
    )


def fusion_attention(
    name: str,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    head_num: int,
    input_layout: str,
    *,
    pse=None,
    padding_mask=None,
    atten_mask=None,
    scale: float = 1.0,
    keep_prob: float = 1.0,
    pre_tokens: int = MAX_TOKENS,
    next_tokens: int = MAX_TOKENS,
    prefix=None,
    actual_seq_qlen=None,
    actual_seq_kvlen=None,
    sparse_mode: int = 0,
    sink=None,
    dropout_mask=None,
    seed: int = 0,
    offset: int = 0,
    pse_after_scale: bool = False,
):
    """The training flash attention every ``npu_fusion_attention*`` variant computes (``name``
    is the operator reported in errors); the 7-tuple of ``npu_fusion_attention``."""
    layout, keep_prob, sink32 = _checked_options(
        name, input_layout, head_num, padding_mask, prefix, keep_prob, sink
    )
    n = int(head_num)
    q32, k32, v32 = upcast(query), upcast(key), upcast(value)
    pse32 = upcast(pse)
    if layout == "TND":
        return _tnd(
            name,
            query,
            q32,
            k32,
            v32,
            n,
            pse32,
            atten_mask,
            float(scale),
            keep_prob,
            int(pre_tokens),
            int(next_tokens),
            actual_seq_qlen,
            actual_seq_kvlen,
            int(sparse_mode),
            dropout_mask,
            int(seed),
            int(offset),
            sink32,
        )
    q4, k4, v4 = _dense_inputs(name, query, key, q32, k32, v32, layout, n)
    b, _, sq, _ = q4.shape
    skv = k4.shape[2]
    mask = _score_mask(
        atten_mask, int(sparse_mode), int(pre_tokens), int(next_tokens), sq, skv, query.device, name
    )
    keep, numels = None, 0
    if keep_prob < 1.0:
        numels = b * n * sq * skv
        keep, seed, offset = _keep_mask(
            numels, keep_prob, dropout_mask, int(seed), int(offset), query.device
        )
    out, row_max, row_sum = _attend(
        q4, k4, v4, pse32, mask, float(scale), keep, keep_prob, pse_after_scale, sink32
    )
    stats = (b, n, sq, _STATS_WIDTH)
    softmax_max = row_max.unsqueeze(-1).expand(stats).contiguous()
    softmax_sum = row_sum.unsqueeze(-1).expand(stats).contiguous()
    reserved = torch.empty(0, dtype=query.dtype, device=query.device)
    out = _from_bnsd(out, layout).contiguous()  # a new tensor in the query's layout, as the NPU
    return (
        store(out, query.dtype),
        softmax_max,
        softmax_sum,
        reserved,
        int(seed),
        int(offset),
        int(numels),
    )


def _checked_options(
    name: str, input_layout: str, head_num: int, padding_mask, prefix, keep_prob: float, sink
) -> Tuple[str, float, Optional[torch.Tensor]]:
    """The layout (upper case), keep_prob and fp32 sink, or the operator's error for an option
    the NPU refuses or the emulator does not model."""
    layout = str(input_layout).upper()
    if layout not in LAYOUTS:
        raise RuntimeError(
            f"{name}: input_layout {input_layout!r} is not one of {', '.join(LAYOUTS)}"
        )
    if padding_mask is not None:
        raise RuntimeError(f"{name}: padding_mask is not supported")
    if prefix is not None:
        raise NotImplementedError(f"{name}: prefix (sparse modes 5 and 6) is not emulated")
    keep_prob = float(keep_prob)
    if not 0.0 < keep_prob <= 1.0:
        raise RuntimeError(f"{name}: keep_prob must lie in (0, 1], got {keep_prob}")
    if sink is not None and (sink.dim() != 1 or sink.shape[0] != int(head_num)):
        raise RuntimeError(
            f"{name}: sink must have shape [head_num] = [{int(head_num)}], got {tuple(sink.shape)}"
        )
    return layout, keep_prob, upcast(sink)


def _dense_inputs(name: str, query, key, q32, k32, v32, layout: str, n: int):
    """q, k, v as (B, N, S, D), after checking the head counts (grouped queries allowed)."""
    if layout in ("BSH", "SBH"):
        if query.shape[-1] % n:
            raise RuntimeError(
                f"{name}: hidden size {query.shape[-1]} is not a multiple of head_num {n}"
            )
        head_dim = query.shape[-1] // n
    else:
        head_dim = query.shape[-1]
    kv_heads = _heads_of(key, layout, head_dim)
    if kv_heads == 0 or n % kv_heads:
        raise RuntimeError(
            f"{name}: {n} query heads is not a multiple of {kv_heads} key/value heads"
        )
    q4 = _to_bnsd(q32, layout, n)
    if q4.shape[1] != n:
        raise RuntimeError(f"{name}: query has {q4.shape[1]} heads, head_num is {n}")
    return q4, _to_bnsd(k32, layout, kv_heads), _to_bnsd(v32, layout, kv_heads)


def _tnd(
    name,
    query,
    q32,
    k32,
    v32,
    n,
    pse32,
    atten_mask,
    scale,
    keep_prob,
    pre,
    nxt,
    qlens,
    kvlens,
    sparse_mode,
    dropout_mask,
    seed,
    offset,
    sink32=None,
):
    """Varlen attention: (T, N, D) tensors cut into batches by cumulative sequence ends."""
    if qlens is None or kvlens is None:
        raise RuntimeError(f"{name}: input_layout TND needs actual_seq_qlen and actual_seq_kvlen")
    q_spans, kv_spans = _segments(qlens), _segments(kvlens)
    if len(q_spans) != len(kv_spans):
        raise RuntimeError(
            f"{name}: actual_seq_qlen and actual_seq_kvlen name different numbers of batches"
        )
    if pse32 is not None:
        raise NotImplementedError(f"{name}: pse with TND is not emulated")
    kv_heads = k32.shape[1]
    if n % kv_heads or q32.shape[1] != n:
        raise RuntimeError(
            f"{name}: {q32.shape[1]} query heads (head_num {n}) and {kv_heads} key/value heads"
        )
    pieces, maxes, sums = [], [], []
    numels = sum((e - s) * (ke - ks) for (s, e), (ks, ke) in zip(q_spans, kv_spans)) * n
    keep_all = None
    if keep_prob < 1.0:
        keep_all, seed, offset = _keep_mask(
            numels, keep_prob, dropout_mask, seed, offset, query.device
        )
    used = 0
    for (s, e), (ks, ke) in zip(q_spans, kv_spans):
        sq, skv = e - s, ke - ks
        q4 = q32[s:e].permute(1, 0, 2).unsqueeze(0)
        k4 = k32[ks:ke].permute(1, 0, 2).unsqueeze(0)
        v4 = v32[ks:ke].permute(1, 0, 2).unsqueeze(0)
        given = atten_mask
        if given is not None and sparse_mode in (0, 1):
            given = given[..., :sq, :skv]
        mask = _score_mask(given, sparse_mode, pre, nxt, sq, skv, query.device, name)
        keep = None
        if keep_all is not None:
            keep = keep_all[used : used + n * sq * skv]
            used += n * sq * skv
        out, row_max, row_sum = _attend(q4, k4, v4, None, mask, scale, keep, keep_prob, sink=sink32)
        pieces.append(out.squeeze(0).permute(1, 0, 2))
        maxes.append(row_max.squeeze(0).permute(1, 0))
        sums.append(row_sum.squeeze(0).permute(1, 0))
    out = torch.cat(pieces, dim=0)
    if out.shape[0] < q32.shape[0]:  # rows of left-out batches
        pad = torch.zeros(
            (q32.shape[0] - out.shape[0],) + tuple(out.shape[1:]),
            dtype=out.dtype,
            device=query.device,
        )
        out = torch.cat([out, pad], dim=0)
    row_max = torch.cat(maxes, dim=0)
    row_sum = torch.cat(sums, dim=0)
    stats = tuple(row_max.shape) + (_STATS_WIDTH,)
    reserved = torch.empty(0, dtype=query.dtype, device=query.device)
    return (
        store(out, query.dtype),
        row_max.unsqueeze(-1).expand(stats).contiguous(),
        row_sum.unsqueeze(-1).expand(stats).contiguous(),
        reserved,
        int(seed),
        int(offset),
        int(numels if keep_prob < 1.0 else 0),
    )
