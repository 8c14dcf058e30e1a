"""torch.utils.checkpoint keeps an NPU's random stream: torch saves the RNG state of the devices
its inputs are on (``Tensor.get_device()``, asked once ``torch.npu._initialized`` is set) and
restores it for the recompute, so dropout inside a checkpointed block draws the same mask twice
and the gradients are the plain run's."""

import pytest

import overlay_support

SCRIPT = """
    import torch, torch_npu
    from torch.utils.checkpoint import checkpoint

    def block(x, w):
        return torch.nn.functional.dropout(x @ w, p=0.5, training=True).sum(dim=1)

    def grads(checkpointed, reentrant):
        torch.npu.manual_seed_all(7)
        x = torch.randn(16, 32, generator=torch.Generator().manual_seed(1)).npu(1)
        w = torch.randn(32, 32, generator=torch.Generator().manual_seed(2)).npu(1)
        w.requires_grad_(True)
        if checkpointed:
            kwargs = {} if reentrant is None else {"use_reentrant": reentrant}
            out = checkpoint(block, x, w, **kwargs)
        else:
            out = block(x, w)
        torch.npu.manual_seed_all(99)  # between forward and backward: the recompute must not see it
        out.sum().backward()
        return w.grad.cpu()

    x = torch.ones(3, device="npu:1")
    print(x.get_device(), torch.ones(3).get_device(), torch.npu._initialized)
    plain = grads(False, None)
    modes = [True, False] if int(torch.__version__.split(".")[0]) >= 2 else [None]
    print(all(torch.equal(plain, grads(True, r)) for r in modes), float(plain.abs().sum()) > 0)
"""


@pytest.fixture(scope="module")
def words():
    return overlay_support.run_with_emulator(SCRIPT)


def test_the_npu_index_and_the_initialised_flag_are_torch_npus(words):
    assert words[:3] == ["1", "-1", "True"]


def test_dropout_in_a_checkpointed_block_recomputes_the_same_mask(words):
    assert words[3:] == ["True", "True"]
