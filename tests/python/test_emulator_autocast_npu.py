"""NPU autocast as torch_npu 2.x has it, beside test_emulator_amp.py's policy tests: torch_npu's
own op list (SDPA in the lower precision, upsampling left alone on torch 2.x), the state torch
reports inside ``torch.autocast("npu")`` and ``torch.npu.amp.autocast()``, torch's and
torch_npu's ``custom_fwd``/``custom_bwd``, activation checkpointing (reentrant and not) whose
recomputation runs under the forward's autocast, and the emulator's operators, which stand for
single NPU kernels that autocast never looks inside. References are the same computations
written with explicit casts; the emulation is deterministic, so they agree bit for bit."""

import pytest
import torch
import torch.nn.functional as F

import overlay_support
from overlay_support import use_overlay

use_overlay()
import torch_npu  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402,F401 - after torch_npu, as scripts
from torch_npu._fp16 import float_status  # noqa: E402

TORCH2 = hasattr(torch, "get_autocast_dtype")  # autocast state per device type
needs_torch2 = pytest.mark.skipif(
    not TORCH2,
    reason="torch 1.x has no per-device autocast "
    "state, scaled_dot_product_attention or torch.amp.custom_fwd",
)


def npu(*shape, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to("npu", dtype)


@pytest.fixture(autouse=True)
def clear_status():
    float_status.clear()
    yield
    float_status.clear()


def state():
    """(enabled, dtype) as torch reports NPU autocast: per device on torch 2.x, the GPU slot on
    torch 1.x (torch_npu 1.x's place)."""
    if TORCH2:
        return torch.is_autocast_enabled("npu"), torch.get_autocast_dtype("npu")
    return torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype()


# --- the op list --------------------------------------------------------------------------------


@needs_torch2
def test_sdpa_runs_in_the_lower_precision_whatever_dtypes_it_is_given():
    """RoPE leaves the query and key in fp32 while the value is fp16 (LLaMA under autocast):
    torch_npu's list casts all three to fp16, where torch would refuse the mixed dtypes."""
    q, k, v = npu(1, 2, 5, 8), npu(1, 2, 5, 8, seed=1), npu(1, 2, 5, 8, seed=2).half()
    mask = torch.ones(5, 5, dtype=torch.bool).tril().npu()
    with torch.autocast("npu", dtype=torch.float16):
        got = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    want = F.scaled_dot_product_attention(q.half(), k.half(), v, attn_mask=mask)
    assert got.dtype == torch.float16 and torch.equal(got, want)
    with pytest.raises(RuntimeError, match="same dtype"):  # outside autocast: torch's check
        F.scaled_dot_product_attention(q, k, v)


def test_upsampling_follows_the_torch_version_s_list():
    """torch_npu 2.x has no autocast kernel for upsampling (input dtype); torch 1.13's CUDA list,
    which torch_npu 1.x follows, runs it in fp32."""
    x = npu(1, 2, 3, 3).half()
    with torch.npu.amp.autocast():
        got = F.interpolate(x, scale_factor=2, mode="nearest")
    assert got.dtype == (torch.float16 if TORCH2 else torch.float32)
    assert torch.equal(got.float(), F.interpolate(x.float(), scale_factor=2, mode="nearest"))


# --- the state ----------------------------------------------------------------------------------


def test_torch_reports_the_region_of_either_spelling():
    regions = [lambda: torch.npu.amp.autocast()]
    if TORCH2:
        regions += [
            lambda: torch.autocast("npu", dtype=torch.float16),
            lambda: torch.amp.autocast("npu"),
        ]
    else:
        regions += [lambda: torch.autocast("npu")]  # the emulator's torch.autocast takes it
    assert state()[0] is False
    for make in regions:
        with make():
            assert state() == (True, torch.float16)
            assert (
                torch.npu.is_autocast_enabled() and torch.npu.get_autocast_dtype() is torch.float16
            )
            with torch.npu.amp.autocast(enabled=False):
                assert state()[0] is False
            assert state()[0] is True
        assert state()[0] is False
    # torch 2.x's autocast asks the device module which dtypes it takes (a 910: no bf16).
    assert torch.npu.get_amp_supported_dtype()[0] is torch.float16
    assert (torch.bfloat16 in torch.npu.get_amp_supported_dtype()) == torch.npu.is_bf16_supported()


def test_a_disabled_region_pushes_no_function_mode():
    """A device's autocast is a dispatch key, not a torch-function mode: inside
    ``autocast("npu", enabled=False)`` torch sees no mode, so nn.MultiheadAttention keeps its
    fast path (it refuses it while any function mode is active); a nested enabled region
    applies the policy, and leaving it leaves the outer region as it was."""
    from torch.overrides import has_torch_function

    x = npu(2, 3)
    assert not has_torch_function((x,))
    with torch.npu.amp.autocast(enabled=False):
        assert not has_torch_function((x,))
        with torch.npu.amp.autocast():
            assert has_torch_function((x,))
            assert torch.mm(x, npu(3, 2)).dtype == torch.float16
        assert not has_torch_function((x,))
        assert torch.mm(x, npu(3, 2)).dtype == torch.float32
    with torch.npu.amp.autocast():
        with torch.npu.amp.autocast(enabled=False):
            assert torch.mm(x, npu(3, 2)).dtype == torch.float32
        assert torch.mm(x, npu(3, 2)).dtype == torch.float16
    assert not has_torch_function((x,))


@needs_torch2
def test_multihead_attention_takes_its_fast_path_in_a_disabled_region():
    from unittest import mock

    mha = torch.nn.MultiheadAttention(16, 8, batch_first=True).to("npu").eval()
    q = npu(8, 5, 16)
    with torch.no_grad(), torch.autocast("npu", enabled=False):
        fast = mock.MagicMock(return_value=(torch.Tensor(), torch.Tensor()))
        with mock.patch("torch._native_multi_head_attention", new=fast):
            mha(q, q, q)
    assert fast.called


# --- custom autograd Functions ----------------------------------------------------------------


def functions():
    """A Function per decorator spelling: torch.npu.amp's, and on torch 2.x torch.amp's with
    device_type="npu"."""
    spellings = {"torch.npu.amp": (torch.npu.amp.custom_fwd, torch.npu.amp.custom_bwd)}
    if TORCH2:
        spellings["torch.amp"] = (
            lambda f=None, **kw: torch.amp.custom_fwd(f, device_type="npu", **kw),
            lambda f: torch.amp.custom_bwd(f, device_type="npu"),
        )
    made = {}
    for name, (fwd, bwd) in spellings.items():
        seen = {}

        class MatMul(torch.autograd.Function):
            @staticmethod
            @fwd
            def forward(ctx, x, w, seen=seen):
                seen["forward"] = state()
                ctx.save_for_backward(x, w)
                return x @ w

            @staticmethod
            @bwd
            def backward(ctx, g, seen=seen):
                seen["backward"] = state()
                x, w = ctx.saved_tensors
                return g @ w.t(), x.t() @ g

        class Fp32(torch.autograd.Function):
            @staticmethod
            @fwd(cast_inputs=torch.float32)
            def forward(ctx, x, seen=seen):
                seen["fp32"] = (state()[0], x.dtype)
                return x * 2

            @staticmethod
            @bwd
            def backward(ctx, g):
                return g * 2

        made[name] = (MatMul, Fp32, seen)
    return made


@pytest.mark.filterwarnings("ignore:`torch_npu.npu.amp.custom_:FutureWarning")
@pytest.mark.parametrize("spelling", ["torch.npu.amp", "torch.amp"])
def test_custom_fwd_and_bwd(spelling):
    if spelling == "torch.amp" and not TORCH2:
        pytest.skip("torch 1.x's torch.amp has no custom_fwd")
    MatMul, Fp32, seen = functions()[spelling]
    a, w = npu(2, 3).requires_grad_(), npu(3, 4, seed=1).requires_grad_()
    with torch.npu.amp.autocast():
        out = MatMul.apply(a, w)
        doubled = Fp32.apply(npu(3).half())
    assert out.dtype == torch.float16  # the matmul inside met autocast
    assert seen["forward"] == (True, torch.float16)
    assert seen["fp32"] == (False, torch.float32) and doubled.dtype == torch.float32
    out.float().sum().backward()  # outside the region: backward runs as forward ran
    assert seen["backward"] == (True, torch.float16)
    want_a = (torch.ones(2, 4).half() @ w.detach().half().t().cpu()).npu()
    assert a.grad.dtype == torch.float32 and torch.equal(a.grad, want_a.float())


# --- activation checkpointing -------------------------------------------------------------------


def block_and_weights():
    torch.manual_seed(0)
    block = torch.nn.Sequential(
        torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16), torch.nn.Linear(16, 8)
    ).npu()
    return block, npu(4, 8, seed=3).requires_grad_()


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_recomputes_under_the_forwards_autocast(reentrant):
    """The gradients of a checkpointed block equal those of the block run plainly under the same
    autocast, bit for bit: the recomputation met the same casts."""
    block, x = block_and_weights()
    dtypes = []
    block[0].register_forward_hook(lambda m, i, o: dtypes.append(o.dtype))
    with torch.npu.amp.autocast():
        plain = block(x)
    plain.float().sum().backward()
    want = [p.grad.clone() for p in block.parameters()] + [x.grad.clone()]
    block.zero_grad()
    x.grad = None
    with torch.npu.amp.autocast():
        out = checkpoint(block, x, use_reentrant=reentrant)
    assert out.dtype == torch.float16 and torch.equal(out, plain)
    out.float().sum().backward()
    assert dtypes == [torch.float16] * 3  # plain, checkpointed forward, recomputation
    got = [p.grad for p in block.parameters()] + [x.grad]
    assert all(torch.equal(g, w) for g, w in zip(got, want))
    assert not float_status.get()


def test_checkpoint_sequential_and_checkpoint_outside_autocast():
    block, x = block_and_weights()
    reentrant = {"use_reentrant": False} if TORCH2 else {}  # torch 1.x's: reentrant only
    with torch.npu.amp.autocast():
        out = torch.utils.checkpoint.checkpoint_sequential(block, 2, x, **reentrant)
        plain = block(x)
    assert out.dtype == torch.float16 and torch.equal(out, plain)
    out = checkpoint(block, x, use_reentrant=False)  # no autocast: fp32 throughout
    assert out.dtype == torch.float32 and torch.equal(out, block(x))


# --- the emulator's operators are kernels -------------------------------------------------------


def test_an_emulated_kernel_is_not_cast_inside():
    """npu_fusion_attention computes in fp32 inside, as the NPU kernel does; under autocast its
    torch calls must not be cast to fp16 (masked scores at fp32's minimum would saturate fp16
    and raise the float status): the same bits inside and outside a region, status clear."""
    q, k, v = (npu(1, 2, 6, 8, seed=s).half() for s in range(3))
    mask = torch.ones(6, 6, dtype=torch.bool).triu(1).npu()  # True: masked out
    want = torch_npu.npu_fusion_attention(q, k, v, 2, "BNSD", atten_mask=mask, scale=0.35)[0]
    assert not float_status.get()
    with torch.npu.amp.autocast():
        got = torch_npu.npu_fusion_attention(q, k, v, 2, "BNSD", atten_mask=mask, scale=0.35)[0]
    assert torch.equal(got, want) and not float_status.get()


# --- bfloat16 on a 910B ------------------------------------------------------------------------


@needs_torch2
def test_bfloat16_on_a_910b(monkeypatch):
    """As a 910B: both spellings report bf16, SDPA runs in bf16, and a checkpointed block's
    gradients equal the plain block's."""
    monkeypatch.setenv("APEXNPU_SOC_VERSION", "Ascend910B1")
    out = overlay_support.run_with_emulator("""
        import torch, torch_npu
        import torch.nn.functional as F
        from torch.utils.checkpoint import checkpoint
        bf16 = torch.bfloat16
        g = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(1, 2, 5, 8, generator=g).npu() for _ in range(3))
        for region in (lambda: torch.autocast("npu", dtype=bf16),
                       lambda: torch.npu.amp.autocast(dtype=bf16)):
            with region():
                print(torch.is_autocast_enabled("npu"), torch.get_autocast_dtype("npu"))
                got = F.scaled_dot_product_attention(q, k, v.to(bf16), is_causal=True)
            want = F.scaled_dot_product_attention(q.to(bf16), k.to(bf16), v.to(bf16),
                                                  is_causal=True)
            print(got.dtype, torch.equal(got, want))
        torch.manual_seed(0)
        block = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(),
                                    torch.nn.Linear(8, 8)).npu()
        x = torch.randn(4, 8, generator=g).npu()
        grads = []
        for ckpt in (False, True):
            block.zero_grad()
            with torch.npu.amp.autocast(dtype=bf16):
                out = checkpoint(block, x, use_reentrant=False) if ckpt else block(x)
            out.float().sum().backward()
            grads.append([p.grad.clone() for p in block.parameters()])
        print(out.dtype, all(torch.equal(a, b) for a, b in zip(*grads)))
    """)
    assert out == ["True", "torch.bfloat16", "torch.bfloat16", "True"] * 2 + [
        "torch.bfloat16",
        "True",
    ]
