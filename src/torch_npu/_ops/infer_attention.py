"""torch_npu's inference flash attention: ``npu_prompt_flash_attention`` (prefill),
``npu_incre_flash_attention`` (decode, one query token) and ``npu_fused_infer_attention_score``
(either, by the query's sequence length), all ``softmax(scale * q k^T + pse_shift, masked) @ v``
computed by ``fusion_attention``'s core in fp32 and stored once in the query's dtype.

Common to the three:
- layouts ``BSH``, ``BSND``, ``BNSD``, ``BNSD_BSND`` (BNSD in, BSND out; not for the decode op)
  and ``TND`` (prompt and fused: ``actual_seq_lengths``/``_kv`` are then cumulative ends);
- grouped-query attention: ``num_key_value_heads`` (0: as many as ``num_heads``);
- ``actual_seq_lengths`` (queries) and ``actual_seq_lengths_kv`` (keys; the decode op's
  ``actual_seq_lengths``) per batch, one value for all or the first B: the rows of a query past
  its length are zeros, the keys past a key length are not attended;
- ``atten_mask`` (bool/int8/uint8, 1 = not attended) of shape (Sq, Skv), (B or 1, Sq, Skv),
  (B or 1, 1, Sq, Skv); for one query token also (B, Skv);
- ``sparse_mode`` 0 (the mask, narrowed to ``pre_tokens``/``next_tokens`` from the top left;
  without a mask nothing), 1 (the mask), 2/3 (causal from the top left / bottom right) and 4
  (band from the bottom right), the latter three needing Ascend's compressed 2048x2048 mask
  (only checked for presence); a query whose keys are all masked gives zeros;
- paged key/value (``block_table`` (B, blocks) int32 with ``block_size``; key/value of shape
  (blocks, block_size, H) or (blocks, N, block_size, D)), with the key lengths given.
The fused op also returns ``softmax_lse`` (``softmax_lse_flag``: fp32 ``max + log(sum exp)`` per
query row, (B, N, Sq, 1), TND (T, N, 1); else a one-element zero) and takes MLA's
``query_rope``/``key_rope`` (joined to the head dim) and a shared prefix
(``key_shared_prefix``/``value_shared_prefix``, one batch in the key's layout, its first
``actual_shared_prefix_len`` positions put before every batch's keys; a mask's columns cover
the prefix then the keys). ``npu_fused_infer_attention_score_v2``
is the fused op under its v2 names (``num_query_heads``, ``softmax_scale``, ``actual_seq_qlen``
/``actual_seq_kvlen``, ``return_softmax_lse``) with a ``learnable_sink`` (one logit per query
head in every row's softmax, as ``npu_fusion_attention``'s sink); its ``*_dtype`` hints
change nothing.

Not emulated (they raise, naming the parameter): the int8 quantisation and antiquantisation
tensors (``deq_scale*``/``dequant_scale*``, ``quant_scale*``, ``quant_offset*``,
``antiquant_*``, ``key_/value_antiquant_*``, ``key_rope_antiquant_scale``, v2's ``out_dtype``),
left padding (``query_padding_size``, ``kv_padding_size``), sparse modes 5-9, v2's layouts
with an NBSD or NTD output. ``inner_precise`` changes nothing (rows with every key masked are
always zeros). torch_npu defines no backward for these inference operators: one through them
raises.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import torch

from ._no_derivative import without_derivative
from ._precision import store, upcast
from ._registry import operator
from .fusion_attention import MAX_TOKENS, _attend, _score_mask, _to_bnsd

_LAYOUTS = ("BSH", "BSND", "BNSD", "BNSD_BSND", "TND")


def _refuse(name: str, given: Dict[str, object]) -> None:
    used = sorted(k for k, v in given.items() if v is not None)
    if used:
        raise NotImplementedError(
            f"{name}: {', '.join(used)} (quantisation or left padding) is not emulated"
        )


def _per_batch(name: str, what: str, lengths, batch: int, full: int) -> List[int]:
    if lengths is None:
        return [full] * batch
    values = [
        int(v)
        for v in (lengths.reshape(-1).tolist() if isinstance(lengths, torch.Tensor) else lengths)
    ]
    if len(values) == 1:
        values = values * batch
    if len(values) < batch:
        raise RuntimeError(f"{name}: {what} has {len(values)} values for {batch} batches")
    values = values[:batch]
    if any(v < 0 or v > full for v in values):
        raise RuntimeError(f"{name}: {what} {values} outside [0, {full}]")
    return values


def _mask_4d(name: str, mask: Optional[torch.Tensor], sq: int) -> Optional[torch.Tensor]:
    """The user's mask as (B or 1, 1, Sq, Skv) booleans."""
    if mask is None:
        return None
    mask = mask.to(torch.bool)
    if mask.dim() == 2:
        # (Sq, Skv), or (B, Skv) for one query token
        if sq == 1:
            return mask.unsqueeze(1).unsqueeze(1)
        return mask.reshape((1, 1) + tuple(mask.shape))
    if mask.dim() == 3:
        return mask.unsqueeze(1)
    if mask.dim() == 4:
        return mask
    raise RuntimeError(f"{name}: atten_mask must have 2 to 4 dims, got {tuple(mask.shape)}")


def _paged(
    name: str,
    t: torch.Tensor,
    table: torch.Tensor,
    block_size: int,
    heads: int,
    kv_lens: Optional[Sequence[int]],
) -> torch.Tensor:
    """(B, N, S, D) key or value gathered from the blocks of ``block_table``."""
    if kv_lens is None:
        raise RuntimeError(f"{name}: block_table needs the key lengths (actual_seq_lengths_kv)")
    if t.dim() == 3:
        blocks, size, hidden = t.shape
        t = t.reshape(blocks, size, heads, hidden // heads).permute(0, 2, 1, 3)
    elif t.dim() != 4:
        raise RuntimeError(
            f"{name}: paged key/value must be (blocks, block_size, H) or (blocks, "
            f"N, block_size, D), got {tuple(t.shape)}"
        )
    if block_size and t.shape[2] != block_size:
        raise RuntimeError(f"{name}: blocks hold {t.shape[2]} tokens, block_size is {block_size}")
    table = table.to(torch.long).cpu()
    size = t.shape[2]
    per_batch = []
    width = table.shape[1] * size
    for b in range(table.shape[0]):
        used = -(-int(kv_lens[b]) // size)
        rows = [t[int(i)] for i in table[b, :used]]
        seq = torch.cat(rows, dim=1) if rows else t.new_zeros(t.shape[1], 0, t.shape[3])
        pad = t.new_zeros(t.shape[1], width - seq.shape[1], t.shape[3])
        per_batch.append(torch.cat([seq, pad], dim=1))
    return torch.stack(per_batch)


def _split_heads(name: str, t: torch.Tensor, layout: str, heads: int) -> torch.Tensor:
    """A BSH/BSND/BNSD tensor as (B, N, S, D)."""
    if layout == "BSH":
        if t.dim() != 3 or t.shape[-1] % heads:
            raise RuntimeError(
                f"{name}: a BSH tensor of shape {tuple(t.shape)} does not split into {heads} heads"
            )
        return _to_bnsd(t, "BSH", heads)
    if t.dim() != 4:
        raise RuntimeError(f"{name}: a {layout} tensor needs 4 dims, got {tuple(t.shape)}")
    return _to_bnsd(t, "BSND" if layout == "BSND" else "BNSD", heads)


def _attention(
    name: str,
    query,
    key,
    value,
    *,
    num_heads: int,
    num_kv_heads: int,
    layout: str,
    scale: float,
    atten_mask,
    pse_shift,
    q_lens,
    kv_lens,
    pre: int,
    nxt: int,
    sparse_mode: int,
    block_table=None,
    block_size: int = 0,
    query_rope=None,
    key_rope=None,
    decode: bool = False,
    sink=None,
    prefix_k=None,
    prefix_v=None,
    prefix_len=None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(out in the query's layout and dtype, fp32 lse (B, N, Sq) or (T, N))."""
    layout = str(layout).upper()
    if layout not in _LAYOUTS:
        raise RuntimeError(f"{name}: input_layout {layout!r} is not one of {', '.join(_LAYOUTS)}")
    if not query.is_floating_point():
        raise NotImplementedError(f"{name}: {query.dtype} queries (quantised) are not emulated")
    n = int(num_heads)
    kv_n = int(num_kv_heads) or n
    if n <= 0 or n % kv_n:
        raise RuntimeError(f"{name}: num_heads {n} is not a multiple of num_key_value_heads {kv_n}")
    if int(sparse_mode) not in (0, 1, 2, 3, 4):
        raise NotImplementedError(f"{name}: sparse_mode={sparse_mode} is not emulated; 0-4 are")
    if int(sparse_mode) in (2, 3, 4) and atten_mask is None:
        raise RuntimeError(f"{name}: sparse_mode {sparse_mode} needs the compressed atten_mask")
    if (prefix_k is None) != (prefix_v is None):
        raise RuntimeError(f"{name}: key_shared_prefix and value_shared_prefix are given together")
    if prefix_k is not None and (layout == "TND" or block_table is not None):
        raise RuntimeError(f"{name}: the shared prefix takes neither TND nor block_table")
    if layout == "TND":
        return _tnd(
            name,
            query,
            key,
            value,
            n,
            kv_n,
            float(scale),
            atten_mask,
            pse_shift,
            q_lens,
            kv_lens,
            pre,
            nxt,
            int(sparse_mode),
            query_rope,
            key_rope,
            sink,
        )
    in_layout = "BNSD" if layout == "BNSD_BSND" else layout
    q = _split_heads(name, upcast(query), in_layout, n)
    if block_table is not None:
        b = q.shape[0]
        kv_full = block_table.shape[1] * (key.shape[1] if key.dim() == 3 else key.shape[2])
        kv_list = (
            _per_batch(name, "actual_seq_lengths_kv", kv_lens, b, kv_full)
            if kv_lens is not None
            else None
        )
        k = _paged(name, upcast(key), block_table, int(block_size), kv_n, kv_list)
        v = _paged(name, upcast(value), block_table, int(block_size), kv_n, kv_list)
    else:
        k = _split_heads(name, upcast(key), in_layout, kv_n)
        v = _split_heads(name, upcast(value), in_layout, kv_n)
    if query_rope is not None or key_rope is not None:
        if query_rope is None or key_rope is None:
            raise RuntimeError(f"{name}: query_rope and key_rope are given together")
        q = torch.cat([q, _split_heads(name, upcast(query_rope), in_layout, n)], dim=-1)
        k = torch.cat([k, _split_heads(name, upcast(key_rope), in_layout, kv_n)], dim=-1)
    b, _, sq, _ = q.shape
    if k.shape[0] != b or k.shape[1] != kv_n or v.shape[:3] != k.shape[:3]:
        raise RuntimeError(
            f"{name}: key {tuple(k.shape)} / value {tuple(v.shape)} (as BNSD) do "
            f"not match {b} batches of {kv_n} key/value heads"
        )
    skv = k.shape[2]
    prefix = _prefix(
        name, prefix_k, prefix_v, prefix_len, in_layout, kv_n, k.shape[-1], v.shape[-1]
    )
    q_list = [sq] * b if decode else _per_batch(name, "actual_seq_lengths", q_lens, b, sq)
    kv_list = _per_batch(name, "actual_seq_lengths_kv", kv_lens, b, skv)
    mask = _mask_4d(name, atten_mask, sq)
    pse = upcast(pse_shift)
    sink = _sink(name, sink, n)
    out = q.new_zeros(b, n, sq, v.shape[-1])
    lse = q.new_full((b, n, sq), float("inf"))
    for i in range(b):
        s1, s2 = q_list[i], kv_list[i]
        kb, vb = k[i : i + 1, :, :s2], v[i : i + 1, :, :s2]
        if prefix is not None:  # the shared prefix comes before every batch's keys
            kb, vb = torch.cat([prefix[0], kb], dim=2), torch.cat([prefix[1], vb], dim=2)
            s2 = kb.shape[2]
        if s1 == 0 or s2 == 0:
            continue
        given = None
        if mask is not None:
            given = mask[i if mask.shape[0] > 1 else 0].unsqueeze(0)
            if int(sparse_mode) in (0, 1):
                given = given[..., :s1, :s2]
        if decode:
            scores_mask = None if given is None else given[..., :s2]
        else:
            scores_mask = _score_mask(
                given, int(sparse_mode), int(pre), int(nxt), s1, s2, query.device, name
            )
        shift = None
        if pse is not None:
            shift = pse[i if pse.shape[0] > 1 else 0].unsqueeze(0)[..., :s1, :s2]
        o, row_max, row_sum = _attend(
            q[i : i + 1, :, :s1], kb, vb, shift, scores_mask, float(scale), None, 1.0, True, sink
        )
        out[i, :, :s1] = o[0]
        lse[i, :, :s1] = (row_max + torch.log(row_sum))[0]
    if layout in ("BSND", "BNSD_BSND"):
        out = out.permute(0, 2, 1, 3)
    elif layout == "BSH":
        out = out.permute(0, 2, 1, 3).reshape(b, sq, -1)
    return store(out.contiguous(), query.dtype), lse


def _prefix(name, prefix_k, prefix_v, prefix_len, layout, kv_heads, k_dim, v_dim):
    """The shared prefix's (keys, values) as (1, N, P, D) fp32, or None."""
    if prefix_k is None:
        return None
    pk = _split_heads(name, upcast(prefix_k), layout, kv_heads)
    pv = _split_heads(name, upcast(prefix_v), layout, kv_heads)
    if (
        pk.shape[0] != 1
        or pk.shape[:3] != pv.shape[:3]
        or pk.shape[-1] != k_dim
        or pv.shape[-1] != v_dim
    ):
        raise RuntimeError(
            f"{name}: key_shared_prefix {tuple(prefix_k.shape)} and "
            f"value_shared_prefix {tuple(prefix_v.shape)} must be one batch with "
            "the key's and value's heads"
        )
    length = pk.shape[2]
    if prefix_len is not None:
        values = (
            prefix_len.reshape(-1).tolist()
            if isinstance(prefix_len, torch.Tensor)
            else list(prefix_len)
        )
        if len(values) != 1 or not 0 <= int(values[0]) <= length:
            raise RuntimeError(
                f"{name}: actual_shared_prefix_len {values} is not one length in [0, {length}]"
            )
        length = int(values[0])
    return pk[:, :, :length], pv[:, :, :length]


def _sink(name: str, sink: Optional[torch.Tensor], heads: int) -> Optional[torch.Tensor]:
    if sink is None:
        return None
    if sink.dim() != 1 or sink.shape[0] != heads:
        raise RuntimeError(
            f"{name}: learnable_sink must have shape ({heads},), got {tuple(sink.shape)}"
        )
    return sink.float()


def _tnd(
    name,
    query,
    key,
    value,
    n,
    kv_n,
    scale,
    atten_mask,
    pse_shift,
    q_lens,
    kv_lens,
    pre,
    nxt,
    sparse_mode,
    query_rope,
    key_rope,
    sink=None,
):
    if q_lens is None or kv_lens is None:
        raise RuntimeError(
            f"{name}: input_layout TND needs actual_seq_lengths and "
            "actual_seq_lengths_kv (cumulative ends)"
        )
    if pse_shift is not None:
        raise NotImplementedError(f"{name}: pse_shift with TND is not supported")
    q, k, v = upcast(query), upcast(key), upcast(value)
    if query_rope is not None and key_rope is not None:
        q = torch.cat([q, upcast(query_rope)], dim=-1)
        k = torch.cat([k, upcast(key_rope)], dim=-1)
    q_ends = [int(e) for e in (q_lens.tolist() if isinstance(q_lens, torch.Tensor) else q_lens)]
    kv_ends = [int(e) for e in (kv_lens.tolist() if isinstance(kv_lens, torch.Tensor) else kv_lens)]
    if len(q_ends) != len(kv_ends):
        raise RuntimeError(
            f"{name}: actual_seq_lengths and actual_seq_lengths_kv name different "
            "numbers of batches"
        )
    out = q.new_zeros(q.shape[0], n, v.shape[-1])
    lse = q.new_full((q.shape[0], n), float("inf"))
    sink32 = _sink(name, sink, n)
    mask = None if atten_mask is None else atten_mask.to(torch.bool)
    qs = ks = 0
    for qe, ke in zip(q_ends, kv_ends):
        s1, s2 = qe - qs, ke - ks
        if s1 > 0 and s2 > 0:
            given = mask
            if given is not None and sparse_mode in (0, 1):
                given = given.reshape(given.shape[-2:])[:s1, :s2]
            scores_mask = _score_mask(given, sparse_mode, pre, nxt, s1, s2, query.device, name)
            o, row_max, row_sum = _attend(
                q[qs:qe].transpose(0, 1).unsqueeze(0),
                k[ks:ke].transpose(0, 1).unsqueeze(0),
                v[ks:ke].transpose(0, 1).unsqueeze(0),
                None,
                scores_mask,
                scale,
                None,
                1.0,
                sink=sink32,
            )
            out[qs:qe] = o[0].transpose(0, 1)
            lse[qs:qe] = (row_max + torch.log(row_sum))[0].transpose(0, 1)
        qs, ks = qe, ke
    return store(out, query.dtype), lse


@operator
def npu_prompt_flash_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    *,
    padding_mask: Optional[torch.Tensor] = None,
    atten_mask: Optional[torch.Tensor] = None,
    pse_shift: Optional[torch.Tensor] = None,
    actual_seq_lengths: Optional[Sequence[int]] = None,
    deq_scale1: Optional[torch.Tensor] = None,
    quant_scale1: Optional[torch.Tensor] = None,
    deq_scale2: Optional[torch.Tensor] = None,
    quant_scale2: Optional[torch.Tensor] = None,
    quant_offset2: Optional[torch.Tensor] = None,
    num_heads: int = 1,
    scale_value: float = 1.0,
    pre_tokens: int = MAX_TOKENS,
    next_tokens: int = 0,
    input_layout: str = "BSH",
    num_key_value_heads: int = 0,
    actual_seq_lengths_kv: Optional[Sequence[int]] = None,
    sparse_mode: int = 0,
) -> torch.Tensor:
    name = "npu_prompt_flash_attention"
    _refuse(
        name,
        {
            "deq_scale1": deq_scale1,
            "quant_scale1": quant_scale1,
            "deq_scale2": deq_scale2,
            "quant_scale2": quant_scale2,
            "quant_offset2": quant_offset2,
        },
    )

    def compute(q, k, v, mask, pse):
        return _attention(
            name,
            q,
            k,
            v,
            num_heads=num_heads,
            num_kv_heads=num_key_value_heads,
            layout=input_layout,
            scale=scale_value,
            atten_mask=mask,
            pse_shift=pse,
            q_lens=actual_seq_lengths,
            kv_lens=actual_seq_lengths_kv,
            pre=pre_tokens,
            nxt=next_tokens,
            sparse_mode=sparse_mode,
        )[0]

    return without_derivative(name, compute, query, key, value, atten_mask, pse_shift)


@operator
def npu_incre_flash_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    *,
    padding_mask: Optional[torch.Tensor] = None,
    atten_mask: Optional[torch.Tensor] = None,
    pse_shift: Optional[torch.Tensor] = None,
    actual_seq_lengths: Optional[Sequence[int]] = None,
    antiquant_scale: Optional[torch.Tensor] = None,
    antiquant_offset: Optional[torch.Tensor] = None,
    block_table: Optional[torch.Tensor] = None,
    dequant_scale1: Optional[torch.Tensor] = None,
    quant_scale1: Optional[torch.Tensor] = None,
    dequant_scale2: Optional[torch.Tensor] = None,
    quant_scale2: Optional[torch.Tensor] = None,
    quant_offset2: Optional[torch.Tensor] = None,
    kv_padding_size: Optional[torch.Tensor] = None,
    num_heads: int = 1,
    scale_value: float = 1.0,
    input_layout: str = "BSH",
    num_key_value_heads: int = 0,
    block_size: int = 0,
    inner_precise: int = 1,
) -> torch.Tensor:
    name = "npu_incre_flash_attention"
    _refuse(
        name,
        {
            "antiquant_scale": antiquant_scale,
            "antiquant_offset": antiquant_offset,
            "dequant_scale1": dequant_scale1,
            "quant_scale1": quant_scale1,
            "dequant_scale2": dequant_scale2,
            "quant_scale2": quant_scale2,
            "quant_offset2": quant_offset2,
            "kv_padding_size": kv_padding_size,
        },
    )
    if str(input_layout).upper() not in ("BSH", "BSND", "BNSD"):
        raise RuntimeError(f"{name}: input_layout {input_layout!r} is not one of BSH, BSND, BNSD")

    def compute(q, k, v, mask, pse, table):
        return _attention(
            name,
            q,
            k,
            v,
            num_heads=num_heads,
            num_kv_heads=num_key_value_heads,
            layout=input_layout,
            scale=scale_value,
            atten_mask=mask,
            pse_shift=pse,
            q_lens=None,
            kv_lens=actual_seq_lengths,
            pre=MAX_TOKENS,
            nxt=MAX_TOKENS,
            sparse_mode=0,
            block_table=table,
            block_size=block_size,
            decode=True,
        )[0]

    return without_derivative(name, compute, query, key, value, atten_mask, pse_shift, block_table)


@operator
def npu_fused_infer_attention_score(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    *,
    pse_shift: Optional[torch.Tensor] = None,
    atten_mask: Optional[torch.Tensor] = None,
    actual_seq_lengths: Optional[Sequence[int]] = None,
    actual_seq_lengths_kv: Optional[Sequence[int]] = None,
    dequant_scale1: Optional[torch.Tensor] = None,
    quant_scale1: Optional[torch.Tensor] = None,
    dequant_scale2: Optional[torch.Tensor] = None,
    quant_scale2: Optional[torch.Tensor] = None,
    quant_offset2: Optional[torch.Tensor] = None,
    antiquant_scale: Optional[torch.Tensor] = None,
    antiquant_offset: Optional[torch.Tensor] = None,
    key_antiquant_scale: Optional[torch.Tensor] = None,
    key_antiquant_offset: Optional[torch.Tensor] = None,
    value_antiquant_scale: Optional[torch.Tensor] = None,
    value_antiquant_offset: Optional[torch.Tensor] = None,
    block_table: Optional[torch.Tensor] = None,
    query_padding_size: Optional[torch.Tensor] = None,
    kv_padding_size: Optional[torch.Tensor] = None,
    key_shared_prefix: Optional[torch.Tensor] = None,
    value_shared_prefix: Optional[torch.Tensor] = None,
    actual_shared_prefix_len: Optional[Sequence[int]] = None,
    query_rope: Optional[torch.Tensor] = None,
    key_rope: Optional[torch.Tensor] = None,
    key_rope_antiquant_scale: Optional[torch.Tensor] = None,
    num_heads: int = 1,
    scale: float = 1.0,
    pre_tokens: int = MAX_TOKENS,
    next_tokens: int = MAX_TOKENS,
    input_layout: str = "BSH",
    num_key_value_heads: int = 0,
    sparse_mode: int = 0,
    inner_precise: int = 0,
    block_size: int = 0,
    antiquant_mode: int = 0,
    key_antiquant_mode: int = 0,
    value_antiquant_mode: int = 0,
    softmax_lse_flag: bool = False,
) -> Tuple[torch.Tensor, torch.Tensor]:
    name = "npu_fused_infer_attention_score"
    _refuse(
        name,
        {
            "dequant_scale1": dequant_scale1,
            "quant_scale1": quant_scale1,
            "dequant_scale2": dequant_scale2,
            "quant_scale2": quant_scale2,
            "quant_offset2": quant_offset2,
            "antiquant_scale": antiquant_scale,
            "antiquant_offset": antiquant_offset,
            "key_antiquant_scale": key_antiquant_scale,
            "key_antiquant_offset": key_antiquant_offset,
            "value_antiquant_scale": value_antiquant_scale,
            "value_antiquant_offset": value_antiquant_offset,
            "query_padding_size": query_padding_size,
            "kv_padding_size": kv_padding_size,
            "key_rope_antiquant_scale": key_rope_antiquant_scale,
        },
    )
    return _fused(
        name,
        query,
        key,
        value,
        pse_shift,
        atten_mask,
        actual_seq_lengths,
        actual_seq_lengths_kv,
        block_table,
        query_rope,
        key_rope,
        None,
        num_heads,
        num_key_value_heads,
        scale,
        pre_tokens,
        next_tokens,
        input_layout,
        sparse_mode,
        block_size,
        softmax_lse_flag,
        key_shared_prefix,
        value_shared_prefix,
        actual_shared_prefix_len,
    )


def _fused(
    name,
    query,
    key,
    value,
    pse_shift,
    atten_mask,
    q_lens,
    kv_lens,
    block_table,
    query_rope,
    key_rope,
    sink,
    num_heads,
    num_kv_heads,
    scale,
    pre_tokens,
    next_tokens,
    input_layout,
    sparse_mode,
    block_size,
    with_lse,
    prefix_k=None,
    prefix_v=None,
    prefix_len=None,
):
    """The fused inference attention of both argument sets: (out, lse)."""
    layout = str(input_layout).upper()
    seq_axis = {"BSH": 1, "BSND": 1, "BNSD": 2, "BNSD_BSND": 2}.get(layout)
    # One query token takes the decode branch: the sparse parameters and query lengths do not
    # apply there.
    decode = seq_axis is not None and query.shape[seq_axis] == 1

    def compute(q, k, v, mask, pse, table, q_rope, k_rope, sink, pk, pv):
        out, lse = _attention(
            name,
            q,
            k,
            v,
            num_heads=num_heads,
            num_kv_heads=num_kv_heads,
            layout=layout,
            scale=scale,
            atten_mask=mask,
            pse_shift=pse,
            q_lens=q_lens,
            kv_lens=kv_lens,
            pre=pre_tokens,
            nxt=next_tokens,
            sparse_mode=0 if decode else sparse_mode,
            block_table=table,
            block_size=block_size,
            query_rope=q_rope,
            key_rope=k_rope,
            decode=decode,
            sink=sink,
            prefix_k=pk,
            prefix_v=pv,
            prefix_len=prefix_len,
        )
        if with_lse:
            lse = lse.unsqueeze(-1).contiguous()
        else:
            lse = torch.zeros(1, dtype=torch.float32, device=q.device)
        return out, lse

    return without_derivative(
        name,
        compute,
        query,
        key,
        value,
        atten_mask,
        pse_shift,
        block_table,
        query_rope,
        key_rope,
        sink,
        prefix_k,
        prefix_v,
    )


@operator
def npu_fused_infer_attention_score_v2(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    *,
    query_rope: Optional[torch.Tensor] = None,
    key_rope: Optional[torch.Tensor] = None,
    pse_shift: Optional[torch.Tensor] = None,
    atten_mask: Optional[torch.Tensor] = None,
    actual_seq_qlen: Optional[Sequence[int]] = None,
    actual_seq_kvlen: Optional[Sequence[int]] = None,
    block_table: Optional[torch.Tensor] = None,
    dequant_scale_query: Optional[torch.Tensor] = None,
    dequant_scale_key: Optional[torch.Tensor] = None,
    dequant_offset_key: Optional[torch.Tensor] = None,
    dequant_scale_value: Optional[torch.Tensor] = None,
    dequant_offset_value: Optional[torch.Tensor] = None,
    dequant_scale_key_rope: Optional[torch.Tensor] = None,
    quant_scale_out: Optional[torch.Tensor] = None,
    quant_offset_out: Optional[torch.Tensor] = None,
    quant_scale_p: Optional[torch.Tensor] = None,
    learnable_sink: Optional[torch.Tensor] = None,
    num_query_heads: int = 1,
    num_key_value_heads: int = 0,
    softmax_scale: float = 1.0,
    pre_tokens: int = MAX_TOKENS,
    next_tokens: int = MAX_TOKENS,
    input_layout: str = "BSH",
    sparse_mode: int = 0,
    block_size: int = 0,
    query_quant_mode: int = 0,
    key_quant_mode: int = 0,
    value_quant_mode: int = 0,
    inner_precise: int = 0,
    return_softmax_lse: bool = False,
    query_dtype: Optional[int] = None,
    key_dtype: Optional[int] = None,
    value_dtype: Optional[int] = None,
    query_rope_dtype: Optional[int] = None,
    key_rope_dtype: Optional[int] = None,
    key_shared_prefix_dtype: Optional[int] = None,
    value_shared_prefix_dtype: Optional[int] = None,
    dequant_scale_query_dtype: Optional[int] = None,
    dequant_scale_key_dtype: Optional[int] = None,
    dequant_scale_value_dtype: Optional[int] = None,
    dequant_scale_key_rope_dtype: Optional[int] = None,
    out_dtype: Optional[int] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    name = "npu_fused_infer_attention_score_v2"
    _refuse(
        name,
        {
            "dequant_scale_query": dequant_scale_query,
            "dequant_scale_key": dequant_scale_key,
            "dequant_offset_key": dequant_offset_key,
            "dequant_scale_value": dequant_scale_value,
            "dequant_offset_value": dequant_offset_value,
            "dequant_scale_key_rope": dequant_scale_key_rope,
            "quant_scale_out": quant_scale_out,
            "quant_offset_out": quant_offset_out,
            "quant_scale_p": quant_scale_p,
            "out_dtype": out_dtype,
        },
    )
    return _fused(
        name,
        query,
        key,
        value,
        pse_shift,
        atten_mask,
        actual_seq_qlen,
        actual_seq_kvlen,
        block_table,
        query_rope,
        key_rope,
        learnable_sink,
        num_query_heads,
        num_key_value_heads,
        softmax_scale,
        pre_tokens,
        next_tokens,
        input_layout,
        sparse_mode,
        block_size,
        return_softmax_lse,
    )
