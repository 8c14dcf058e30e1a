"""torch_npu's tensor operators against plain torch from their documentation: npu_dtype_cast
(with its gradient), npu_broadcast, npu_transpose, npu_slice, npu_reshape, npu_scatter,
npu_scatter_nd_update(_), npu_min (int32 indices, gradient), npu_sort_v2 and
npu_masked_fill_range. Copies and selections are exact."""

import pytest
import torch

from overlay_support.npu_op_checks import (
    check_no_derivative,
    DTYPES,
    FP16_MAX,
    check_saturation,
    on_npu,
    randn,
    torch_npu,
)


def same(got, want):
    assert got.device.type == "npu" and got.dtype == want.dtype, (got.device, got.dtype)
    assert torch.equal(got.detach().cpu(), want), (got, want)


@pytest.mark.parametrize(
    "src,dst",
    [
        (torch.float32, torch.float16),
        (torch.float16, torch.float32),
        (torch.float32, torch.int32),
        (torch.float32, 5),
    ],
)
def test_dtype_cast(src, dst):
    x = randn(4, 5, seed=1, scale=20).to(src)
    got = torch_npu.npu_dtype_cast(input=on_npu(x), dtype=dst)
    want_dtype = torch.float16 if dst == 5 else dst
    same(got, x.to(want_dtype))


def test_dtype_cast_gradient_comes_back_in_the_input_dtype():
    x = on_npu(randn(3, 4, seed=2), torch.float16, grad=True)
    y = torch_npu.npu_dtype_cast(x, torch.float32)
    g = randn(3, 4, seed=3)
    y.backward(on_npu(g))
    same(x.grad, g.half())
    check_saturation(
        lambda t: torch_npu.npu_dtype_cast(t, torch.float16), [on_npu(torch.tensor([1e6, 1.0]))]
    )
    with pytest.raises(RuntimeError, match="not a dtype"):
        torch_npu.npu_dtype_cast(on_npu(x.detach()), 23)


def test_dtype_cast_complex_keeps_a_graph():
    z = on_npu(randn(2, 3, seed=41).to(torch.complex64), grad=True)
    w = torch_npu.npu_dtype_cast(z, torch.complex128)
    assert w.dtype == torch.complex128 and w.grad_fn is not None
    w.abs().sum().backward()
    assert z.grad.dtype == torch.complex64


def test_dtype_cast_in_place():
    dst = on_npu(torch.zeros(3), torch.float16)
    assert torch_npu.npu_dtype_cast_(dst, on_npu(torch.tensor([1.0, 70000.0, -2.5]))) is dst
    same(dst, torch.tensor([1.0, FP16_MAX, -2.5]).half())


@pytest.mark.parametrize("dtype", DTYPES)
def test_shape_operators(dtype):
    x = randn(3, 1, 4, seed=4).to(dtype)
    same(torch_npu.npu_broadcast(on_npu(x), [2, 3, 5, 4]), x.expand(2, 3, 5, 4).contiguous())
    t = torch_npu.npu_transpose(on_npu(x), (2, 0, 1))
    same(t, x.permute(2, 0, 1).contiguous())
    assert t.is_contiguous()
    y = randn(4, 6, 5, seed=5).to(dtype)
    same(torch_npu.npu_slice(on_npu(y), [1, 2, 0], [2, 3, -1]), y[1:3, 2:5, 0:5])
    same(torch_npu.npu_reshape(on_npu(y), [6, -1]), y.reshape(6, 20))
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        torch_npu.npu_broadcast(on_npu(x), [3, 2, 5])
    with pytest.raises(RuntimeError, match="exceed"):
        torch_npu.npu_slice(on_npu(y), [3, 0, 0], [2, 1, 1])
    check_no_derivative(
        "npu_transpose",
        on_npu(x.float(), grad=True),
        lambda t: torch_npu.npu_transpose(t, [1, 0, 2]),
    )


def test_npu_scatter():
    # torch_npu's documented example: out[indices[j], j] = updates[j] along dim 0.
    x = torch.tensor([[1.6279, 0.1226], [0.9041, 1.0980]])
    got = torch_npu.npu_scatter(
        on_npu(x),
        on_npu(torch.tensor([0, 1], dtype=torch.int32)),
        on_npu(torch.tensor([-1.1993, -1.5247])),
        0,
    )
    same(got, torch.tensor([[-1.1993, 0.1226], [0.9041, -1.5247]]))
    idx = torch.tensor([[2, 0], [1, 1], [0, 2]])
    src = randn(3, 2, seed=6)
    same(
        torch_npu.npu_scatter(on_npu(randn(3, 3)), on_npu(idx), on_npu(src), 1),
        randn(3, 3).scatter(1, idx, src),
    )


@pytest.mark.parametrize("in_place", [False, True])
def test_scatter_nd_update(in_place):
    x = randn(4, 5, 6, seed=7)
    indices = torch.tensor([[0, 1], [3, 4], [2, 0]])
    updates = randn(3, 6, seed=8)
    want = x.clone()
    for i, (a, b) in enumerate(indices.tolist()):
        want[a, b] = updates[i]
    npu_x = on_npu(x)
    op = torch_npu.npu_scatter_nd_update_ if in_place else torch_npu.npu_scatter_nd_update
    got = op(npu_x, on_npu(indices), on_npu(updates))
    same(got, want)
    assert (got is npu_x) == in_place
    with pytest.raises(RuntimeError, match="updates must have shape"):
        op(npu_x, on_npu(indices), on_npu(randn(3, 5)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_npu_min(dtype):
    x = randn(4, 5, 3, seed=9, scale=10).to(dtype)
    t = on_npu(x, grad=True)
    values, indices = torch_npu.npu_min(t, 1, keepdim=True)
    want_values, want_indices = torch.min(x, 1, keepdim=True)
    same(values, want_values)
    same(indices, want_indices.int())
    values.sum().backward()
    same(t.grad, torch.zeros_like(x).scatter_(1, want_indices, 1.0))


@pytest.mark.parametrize("descending", [False, True])
def test_sort_v2(descending):
    x = randn(3, 7, seed=10)
    same(
        torch_npu.npu_sort_v2(on_npu(x), descending=descending),
        torch.sort(x, descending=descending)[0],
    )
    out = on_npu(torch.zeros(1))
    assert torch_npu.npu_sort_v2(on_npu(x), out=out) is out
    same(out, torch.sort(x)[0])
    with pytest.raises(RuntimeError, match="last dimension"):
        torch_npu.npu_sort_v2(on_npu(x), dim=0)


def test_masked_fill_range():
    # torch_npu's documented example: a diagonal of ones on the first three rows.
    a = randn(4, 4, seed=11)
    start = torch.tensor([[0, 1, 2]], dtype=torch.int32)
    end = torch.tensor([[1, 2, 3]], dtype=torch.int32)
    got = torch_npu.npu_masked_fill_range(
        on_npu(a), on_npu(start), on_npu(end), on_npu(torch.tensor([1.0])), 1
    )
    want = a.clone()
    for n in range(3):
        want[n, n] = 1.0
    same(got, want)
    two = torch_npu.npu_masked_fill_range(
        on_npu(a),
        on_npu(torch.tensor([[0, 0], [1, 2]], dtype=torch.int32)),
        on_npu(torch.tensor([[3, 4], [2, 4]], dtype=torch.int32)),
        on_npu(torch.tensor([5.0, -5.0])),
    )
    want = a.clone()
    want[0, 0:3], want[1, 0:4] = 5.0, 5.0
    want[0, 1:2], want[1, 2:4] = -5.0, -5.0
    same(two, want)


@pytest.mark.parametrize("in_place", [False, True])
def test_scatter_update_writes_a_run_per_batch_entry(in_place):
    # torch_npu's own test: data[b, :, start_b:start_b + L, :] = updates[b] along axis -2.
    data, updates = randn(3, 2, 8, 4, seed=12), randn(3, 2, 3, 4, seed=13)
    starts = torch.tensor([0, 5, 2])
    want = data.clone()
    for b, s in enumerate(starts.tolist()):
        want[b, :, s : s + 3] = updates[b]
    target = on_npu(data)
    op = torch_npu.scatter_update_ if in_place else torch_npu.scatter_update
    got = op(target, on_npu(starts), on_npu(updates), -2)
    same(got, want)
    same(target, want if in_place else data)
    with pytest.raises(RuntimeError, match="runs past"):
        op(on_npu(data), on_npu(torch.tensor([0, 6, 2])), on_npu(updates), -2)
