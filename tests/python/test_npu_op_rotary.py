"""torch_npu.npu_apply_rotary_pos_emb and npu_mrope against rotary embedding written in plain
torch from their documentation (tolerances: overlay_support.npu_op_checks)."""

import pytest
import torch

from overlay_support.npu_op_checks import (
    check_no_derivative,
    DTYPES,
    assert_close,
    on_npu,
    randn,
    torch_npu,
)


def rotate_half(x):
    d = x.shape[-1] // 2
    return torch.cat((-x[..., d:], x[..., :d]), dim=-1)


def rotate_interleave(x):
    out = torch.empty_like(x)
    out[..., 0::2] = -x[..., 1::2]
    out[..., 1::2] = x[..., 0::2]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,rotate", [("half", rotate_half), ("interleave", rotate_interleave)])
@pytest.mark.parametrize("layout", ["BSND", "TND"])
def test_apply_rotary_pos_emb(dtype, mode, rotate, layout):
    lead = (2, 5) if layout == "BSND" else (7,)
    q, k = randn(*lead, 4, 8, seed=1).to(dtype), randn(*lead, 2, 8, seed=2).to(dtype)
    angles = randn(*lead, 1, 8, seed=3, scale=3)
    cos, sin = torch.cos(angles).to(dtype), torch.sin(angles).to(dtype)
    nq, nk = on_npu(q), on_npu(k)
    q_out, k_out = torch_npu.npu_apply_rotary_pos_emb(
        nq, nk, on_npu(cos), on_npu(sin), layout=layout, rotary_mode=mode
    )
    for got, x in ((q_out, q), (k_out, k)):
        want = x.float() * cos.float() + rotate(x.float()) * sin.float()
        assert_close(got, want, dtype, "rotated")
    assert q_out is nq and k_out is nk, "written into query and key, as documented"


def test_apply_rotary_pos_emb_with_grad_is_out_of_place_without_backward():
    q = on_npu(randn(1, 2, 2, 8, seed=4), grad=True)
    k, cs = on_npu(randn(1, 2, 2, 8, seed=5)), on_npu(randn(1, 2, 1, 8, seed=6))
    q_out, _ = torch_npu.npu_apply_rotary_pos_emb(q, k, cs, cs)
    assert q_out is not q
    check_no_derivative(
        "npu_apply_rotary_pos_emb",
        q.detach().clone().requires_grad_(True),
        lambda t: torch_npu.npu_apply_rotary_pos_emb(t, k, cs, cs)[0],
    )
    with pytest.raises(RuntimeError, match="layout"):
        torch_npu.npu_apply_rotary_pos_emb(q.detach(), k, cs, cs, layout="BHSD")


def mrope_reference(positions, x, cache, head_size, sections, mode):
    rd = cache.shape[1]
    rows = cache[positions]
    cos, sin = rows[..., : rd // 2], rows[..., rd // 2 :]
    if sections:
        cos = torch.cat([c[i] for i, c in enumerate(cos.split(sections, -1))], -1)
        sin = torch.cat([s[i] for i, s in enumerate(sin.split(sections, -1))], -1)
    # Full-width cos/sin for the rotate formula: x * cos + rotate(x) * sin.
    if mode == "half":
        cos, sin, rotate = torch.cat((cos, cos), -1), torch.cat((sin, sin), -1), rotate_half
    else:
        cos, sin = cos.repeat_interleave(2, -1), sin.repeat_interleave(2, -1)
        rotate = rotate_interleave
    v = x.reshape(x.shape[0], -1, head_size)
    rot = v[..., :rd] * cos[:, None] + rotate(v[..., :rd]) * sin[:, None]
    return torch.cat((rot, v[..., rd:]), -1).reshape(x.shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["half", "interleave"])
@pytest.mark.parametrize("sections", [None, [2, 3, 3]])
def test_mrope(dtype, mode, sections):
    tokens, head_size, rd = 6, 24, 16
    positions = torch.randint(
        0, 10, (3, tokens) if sections else (tokens,), generator=torch.Generator().manual_seed(7)
    )
    q, k = (
        randn(tokens, 2 * head_size, seed=8).to(dtype),
        randn(tokens, head_size, seed=9).to(dtype),
    )
    cache = randn(10, rd, seed=10).to(dtype)
    q_out, k_out = torch_npu.npu_mrope(
        on_npu(positions),
        on_npu(q),
        on_npu(k),
        on_npu(cache),
        head_size,
        mrope_section=sections,
        rotary_mode=mode,
    )
    for got, x in ((q_out, q), (k_out, k)):
        assert_close(
            got,
            mrope_reference(positions, x.float(), cache.float(), head_size, sections, mode),
            dtype,
            "mrope",
        )


def test_mrope_refuses_bad_sections():
    with pytest.raises(RuntimeError, match="sum to rotary_dim"):
        torch_npu.npu_mrope(
            on_npu(torch.zeros(3, 2, dtype=torch.long)),
            on_npu(randn(2, 8)),
            on_npu(randn(2, 8)),
            on_npu(randn(4, 8)),
            8,
            mrope_section=[1, 1, 1],
        )
