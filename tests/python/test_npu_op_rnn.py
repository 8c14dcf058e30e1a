"""torch_npu's recurrent kernels against torch's own LSTM and GRU in fp32 on the host:
_lstm_npu (torch's parameter list, layers, directions, the gates it returns) and
_lstm_npu_backward, npu_lstm (torch_npu's packed ``cat(W_ih.T, W_hh.T)`` weight, as its own
test builds it), npu_lstm_cell (torch's lstm_cell of ``W.T`` weights) and npu_gru (``W.T`` weights); outputs and gradients (tolerances:
overlay_support.npu_op_checks)."""

import pytest
import torch

from overlay_support.npu_op_checks import DTYPES, assert_close, on_npu, randn, torch_npu

T, B, IN, H = 4, 2, 5, 3


def lstm_params(layers, bidirectional, seed=1):
    torch.manual_seed(seed)
    ref = torch.nn.LSTM(IN, H, num_layers=layers, bidirectional=bidirectional)
    return ref, [p.detach().clone() for p in ref._flat_weights]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "layers,bidirectional,batch_first", [(1, False, False), (2, True, False), (1, False, True)]
)
def test_lstm_npu_is_torchs_lstm(dtype, layers, bidirectional, batch_first):
    ref, params = lstm_params(layers, bidirectional)
    ref.batch_first = batch_first
    d = 2 if bidirectional else 1
    x = randn(B, T, IN, seed=2) if batch_first else randn(T, B, IN, seed=2)
    h0, c0 = randn(d * layers, B, H, seed=3), randn(d * layers, B, H, seed=4)
    x, h0, c0 = (t.to(dtype) for t in (x, h0, c0))
    params = [p.to(dtype) for p in params]
    leaf = on_npu(x, grad=True)
    out = torch_npu._lstm_npu(
        leaf,
        [on_npu(h0), on_npu(c0)],
        [on_npu(p) for p in params],
        True,
        layers,
        0.0,
        True,
        bidirectional,
        batch_first=batch_first,
    )
    assert len(out) == 10
    with torch.no_grad():
        for p, q in zip(ref._flat_weights, params):
            p.copy_(q.float())
    xr = x.float().requires_grad_()
    want, (hy, cy) = ref(xr, (h0.float(), c0.float()))
    assert_close(out[0], want, dtype, "output")
    assert_close(out[1], hy, dtype, "hy")
    assert_close(out[2], cy, dtype, "cy")
    assert out[3].shape == (d * layers, T, B, H)
    # The first layer's forward gates, from their definitions.
    w_ih, w_hh, b_ih, b_hh = (p.float() for p in params[:4])
    steps = x.float().transpose(0, 1) if batch_first else x.float()
    gates = steps[0] @ w_ih.t() + h0.float()[0] @ w_hh.t() + b_ih + b_hh
    i, f, g, o = gates.chunk(4, -1)
    assert_close(out[3][0, 0], torch.sigmoid(i), dtype, "i")
    assert_close(out[4][0, 0], torch.tanh(g), dtype, "j")
    assert_close(out[5][0, 0], torch.sigmoid(f), dtype, "f")
    assert_close(out[6][0, 0], torch.sigmoid(o), dtype, "o")
    grad = randn(*want.shape, seed=5).to(dtype)
    out[0].backward(on_npu(grad))
    want.backward(grad.float())
    assert_close(leaf.grad, xr.grad, dtype, "input gradient")


def test_lstm_npu_backward_and_eval_outputs():
    ref, params = lstm_params(1, False, seed=6)
    x, h0, c0 = randn(T, B, IN, seed=7), randn(1, B, H, seed=8), randn(1, B, H, seed=9)
    npu_params = [on_npu(p) for p in params]
    out = torch_npu._lstm_npu(
        on_npu(x), [on_npu(h0), on_npu(c0)], npu_params, True, 1, 0.0, True, False
    )
    g = randn(T, B, H, seed=10)
    gx, ghx, gparams = torch_npu._lstm_npu_backward(
        on_npu(g),
        None,
        None,
        on_npu(x),
        [on_npu(h0), on_npu(c0)],
        npu_params,
        *out[3:],
        True,
        1,
        0.0,
        True,
        False,
    )
    xr, hr, cr = (t.clone().requires_grad_() for t in (x, h0, c0))
    want, _ = ref(xr, (hr, cr))
    want.backward(g)
    torch.testing.assert_close(gx.cpu(), xr.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ghx[0].cpu(), hr.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(gparams[0].cpu(), ref.weight_ih_l0.grad, rtol=1e-5, atol=1e-5)
    evaluated = torch_npu._lstm_npu(on_npu(x), [], npu_params, True, 1, 0.0, False, False)
    assert evaluated[3].numel() == 0 and evaluated[7].shape == (1, B, H)


@pytest.mark.parametrize("dtype", DTYPES)
def test_npu_lstm_packed_weight(dtype):
    ref, params = lstm_params(1, False, seed=11)
    w_ih, w_hh, b_ih, b_hh = (p.to(dtype) for p in params)
    weight = torch.cat([w_ih.t(), w_hh.t()], 0)
    bias = (b_ih.float() + b_hh.float()).to(dtype)
    x, h0, c0 = (
        randn(*s, seed=k).to(dtype) for s, k in (((T, B, IN), 12), ((1, B, H), 13), ((1, B, H), 14))
    )
    leaf = on_npu(x, grad=True)
    y, h, c, *_ = torch_npu.npu_lstm(
        leaf,
        on_npu(weight),
        on_npu(bias),
        on_npu(torch.tensor([T], dtype=torch.int32)),
        on_npu(h0),
        on_npu(c0),
        True,
        1,
        0.0,
        True,
        False,
        False,
        False,
        False,
    )
    with torch.no_grad():
        ref.weight_ih_l0.copy_(w_ih.float())
        ref.weight_hh_l0.copy_(w_hh.float())
        ref.bias_ih_l0.copy_(bias.float())
        ref.bias_hh_l0.zero_()
    xr = x.float().requires_grad_()
    want, (hy, cy) = ref(xr, (h0.float(), c0.float()))
    assert_close(y, want, dtype, "y")
    assert_close(h[-1], hy[0], dtype, "h")
    assert_close(c[-1], cy[0], dtype, "c")
    y.sum().backward()
    want.sum().backward()
    assert_close(leaf.grad, xr.grad, dtype, "input gradient")
    with pytest.raises(RuntimeError, match="one unidirectional layer"):
        torch_npu.npu_lstm(
            leaf,
            on_npu(weight),
            on_npu(bias),
            None,
            on_npu(h0),
            on_npu(c0),
            True,
            2,
            0.0,
            True,
            False,
            False,
            False,
            False,
        )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("biases", [2, 1, 0])
def test_npu_lstm_cell_is_torchs_lstm_cell(dtype, biases):
    torch.manual_seed(21)
    ref = torch.nn.LSTMCell(IN, H)
    w_ih, w_hh, b_ih, b_hh = (p.detach().to(dtype) for p in ref.parameters())
    b_ih = b_ih if biases >= 1 else None
    b_hh = b_hh if biases == 2 else None
    x, h0, c0 = (randn(B, n, seed=k).to(dtype) for n, k in ((IN, 22), (H, 23), (H, 24)))
    leaf, wl = on_npu(x, grad=True), on_npu(w_ih.t(), grad=True)
    y, h, c, i, j, f, o, tanhc = torch_npu.npu_lstm_cell(
        leaf,
        wl,
        on_npu(w_hh.t()),
        on_npu(h0),
        on_npu(c0),
        None if b_ih is None else on_npu(b_ih),
        None if b_hh is None else on_npu(b_hh),
    )
    assert h.shape == c.shape == (B, H) and y.shape == i.shape == tanhc.shape == (1, B, H)
    assert h.dtype == dtype and h.device.type == "npu"
    xr, wr = x.float().requires_grad_(), w_ih.float().requires_grad_()
    want_h, want_c = torch._VF.lstm_cell(
        xr,
        (h0.float(), c0.float()),
        wr,
        w_hh.float(),
        None if b_ih is None else b_ih.float(),
        None if b_hh is None else b_hh.float(),
    )
    assert_close(h, want_h, dtype, "h")
    assert_close(c, want_c, dtype, "c")
    assert_close(y[0], want_h, dtype, "y")
    assert_close(tanhc[0], torch.tanh(want_c), dtype, "tanhc")
    assert_close(o[0] * tanhc[0], want_h, dtype, "o")
    (h.float().sum() + c.float().sum()).backward()
    (want_h.sum() + want_c.sum()).backward()
    assert_close(leaf.grad, xr.grad, dtype, "input gradient")
    assert_close(wl.grad, wr.grad.t(), dtype, "w_ih gradient")
    with pytest.raises(RuntimeError, match=r"w_ih must be \(5, 12\)"):
        torch_npu.npu_lstm_cell(leaf, on_npu(w_hh.t()), on_npu(w_hh.t()), on_npu(h0), on_npu(c0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_npu_gru(dtype):
    torch.manual_seed(15)
    ref = torch.nn.GRU(IN, H)
    w_ih, w_hh, b_ih, b_hh = (p.detach().to(dtype) for p in ref._flat_weights)
    x, h0 = randn(T, B, IN, seed=16).to(dtype), randn(1, B, H, seed=17).to(dtype)
    leaf = on_npu(x, grad=True)
    y, h, z, r, n, hn = torch_npu.npu_gru(
        leaf,
        on_npu(h0),
        on_npu(w_ih.t().contiguous()),
        on_npu(w_hh.t().contiguous()),
        on_npu(b_ih),
        on_npu(b_hh),
        on_npu(torch.tensor([T], dtype=torch.int32)),
        True,
        1,
        0.0,
        True,
        False,
        False,
    )
    with torch.no_grad():
        for p, q in zip(ref._flat_weights, (w_ih, w_hh, b_ih, b_hh)):
            p.copy_(q.float())
    xr = x.float().requires_grad_()
    want, hy = ref(xr, h0.float())
    assert_close(y, want, dtype, "y")
    assert_close(h[-1], hy[0], dtype, "h")
    gh = h0.float()[0] @ w_hh.float().t() + b_hh.float()
    gx = x.float()[0] @ w_ih.float().t() + b_ih.float()
    assert_close(r[0], torch.sigmoid(gx[:, :H] + gh[:, :H]), dtype, "reset")
    assert_close(z[0], torch.sigmoid(gx[:, H : 2 * H] + gh[:, H : 2 * H]), dtype, "update")
    assert_close(hn[0], gh[:, 2 * H :], dtype, "hidden_new")
    y.sum().backward()
    want.sum().backward()
    assert_close(leaf.grad, xr.grad, dtype, "input gradient")
