"""torch_npu.npu_indexing (StridedSlice) against Python slicing, the sizes op-plugin computes,
and a same-padding layer of the kind Ascend's wav2vec2 port builds from it and npu_pad."""

import pytest
import torch

from overlay_support.npu_op_checks import check_no_derivative, DTYPES, on_npu, randn, torch_npu


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "begin, end, strides",
    [
        ([0, 0, 0], [2, 7, 8], [1, 1, 1]),
        ([1, 2, 0], [2, 7, 7], [1, 2, 3]),
        ([0, 6, 3], [2, 7, 3], [2, 1, 1]),  # an empty last dimension
    ],
)
def test_values_are_the_slice_as_a_new_tensor(dtype, begin, end, strides):
    x = randn(2, 7, 8).to(dtype)
    t = on_npu(x)
    got = torch_npu.npu_indexing(t, begin, end, strides)
    want = x[tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides))]
    # op-plugin's size: (end - begin + stride - 1) // stride per dimension.
    assert list(got.shape) == [(e - b + s - 1) // s for b, e, s in zip(begin, end, strides)]
    assert got.dtype == dtype and got.device == torch.device("npu:0")
    assert torch.equal(got.cpu(), want)
    if got.numel():
        assert got.is_contiguous() and got.data_ptr() != t.data_ptr()
        got.fill_(0)
        assert torch.equal(t.cpu(), x)  # a copy: the input is untouched


class _DropLast(torch.autograd.Function):
    """Same padding's trim of the last time step, with npu_pad putting the gradient back."""

    @staticmethod
    def forward(ctx, x):
        ctx.length = x.shape[2]
        return torch_npu.npu_indexing(
            x, [0, 0, 0], [x.shape[0], x.shape[1], x.shape[2] - 1], [1, 1, 1]
        )

    @staticmethod
    def backward(ctx, grad):
        return torch_npu.npu_pad(grad, (0, 0, 0, 0, 0, ctx.length - grad.shape[2]))


def test_a_same_padding_layer_trains_through_it():
    conv = torch.nn.Conv1d(4, 4, 3, padding=2).npu()
    x = on_npu(randn(2, 4, 10), grad=True)
    y = _DropLast.apply(conv(x))
    assert y.shape == (2, 4, 11)
    y.square().sum().backward()
    ref_conv = torch.nn.Conv1d(4, 4, 3, padding=2)
    ref_conv.load_state_dict({k: v.cpu() for k, v in conv.state_dict().items()})
    ref_x = x.detach().cpu().requires_grad_()
    ref_conv(ref_x)[:, :, :-1].square().sum().backward()
    torch.testing.assert_close(x.grad.cpu(), ref_x.grad)
    torch.testing.assert_close(conv.weight.grad.cpu(), ref_conv.weight.grad)


def test_refusals_and_no_gradient():
    t = on_npu(randn(3, 4))
    with pytest.raises(RuntimeError, match="stride should not be 0"):
        torch_npu.npu_indexing(t, [0, 0], [3, 4], [1, 0])
    with pytest.raises(NotImplementedError, match="one entry per dimension"):
        torch_npu.npu_indexing(t, [0], [3], [1])
    with pytest.raises(NotImplementedError, match="masks are not emulated"):
        torch_npu.npu_indexing(t, [0, 0], [3, 4], [1, 1], end_mask=1)
    with pytest.raises(NotImplementedError, match="dimension 1 of size 4"):
        torch_npu.npu_indexing(t, [0, 0], [3, 5], [1, 1])
    check_no_derivative(
        "npu_indexing",
        on_npu(randn(3, 4), grad=True),
        lambda t: torch_npu.npu_indexing(t, [0, 0], [3, 2], [1, 1]),
    )
