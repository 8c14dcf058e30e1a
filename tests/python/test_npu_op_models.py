"""Small models built on the emulated NPU's torch_npu operators, as Ascend's ModelZoo writes them,
on ``npu:0`` (the models are in overlay_support/npu_models.py):
- a BERT-style encoder (NpuLinear = npu_linear, npu_confusion_transpose, npu_bmmV2,
  npu_dropout_with_add_softmax, fast_gelu, torch.nn.DropoutWithByteMask, two layers) with a
  classifier, trained with npu_bert_apply_adam as BERT's NpuFusedBertAdamV2 calls it;
- a LLaMA-style block (npu_rms_norm, npu_rotary_mul, npu_fusion_attention with a causal mask and
  grouped-query heads, npu_swiglu), trained with torch.optim.AdamW.

Each model's forward and gradients equal the same model written in plain torch on the host (fp32,
dropout off: rtol 1e-4, atol 1e-5 - many operations reassociate), its fp16 copy runs forward and
backward with finite fp16 gradients close to fp32's (rtol/atol 5e-2: fp16 storage between
operators), and a few training steps with dropout on lower the loss.
"""

import copy
import math

import torch
import torch.nn.functional as F

from overlay_support.npu_op_checks import on_npu, randn, torch_npu
from overlay_support.npu_models import (
    BertClassifier,
    LlamaBlock,
    bert_batch,
    bert_reference,
    llama_inputs,
    llama_reference,
)

CLOSE = dict(rtol=1e-4, atol=1e-5)
FP16_CLOSE = dict(rtol=5e-2, atol=5e-2)


def test_bert_matches_plain_torch_forward_and_backward():
    torch.manual_seed(0)
    host = BertClassifier(p=0.1).eval()
    model = copy.deepcopy(host).npu()
    ids, attention, labels = bert_batch()
    loss = F.cross_entropy(model(ids.npu(), attention.npu()), labels.npu())
    loss.backward()
    want = F.cross_entropy(bert_reference(host, ids, attention), labels)
    want.backward()
    assert loss.device.type == "npu"
    torch.testing.assert_close(loss.detach().cpu(), want.detach(), **CLOSE)
    for (name, p), (_, ref) in zip(model.named_parameters(), host.named_parameters()):
        assert p.grad is not None and p.grad.device.type == "npu", name
        torch.testing.assert_close(p.grad.cpu(), ref.grad, msg=name, **CLOSE)


def test_bert_fp16_forward_backward():
    torch.manual_seed(0)
    host = BertClassifier(p=0.0).eval()
    half = copy.deepcopy(host).npu().half()
    ids, attention, labels = bert_batch()
    logits = half(ids.npu(), attention.npu())
    assert logits.dtype == torch.float16 and logits.device.type == "npu"
    F.cross_entropy(logits.float(), labels.npu()).backward()
    want = bert_reference(host, ids, attention)
    torch.testing.assert_close(logits.detach().cpu().float(), want.detach(), **FP16_CLOSE)
    for name, p in half.named_parameters():
        assert p.grad.dtype == torch.float16 and torch.isfinite(p.grad.cpu().float()).all(), name


def bert_apply_adam_step(model, lr):
    """BERT's NpuFusedBertAdamV2 step on each parameter (state kept on the module)."""
    for p in model.parameters():
        if p.grad is None:
            continue
        state = getattr(p, "_adam", None)
        if state is None:
            state = p._adam = (torch.zeros_like(p.data), torch.zeros_like(p.data))
        torch_npu.npu_bert_apply_adam(
            lr, 0.9, 0.999, 1e-6, p.grad.data, -1.0, 0, 0.01, out=(p.data, state[0], state[1])
        )


def test_bert_trains_with_dropout_and_npu_bert_apply_adam():
    torch.manual_seed(1)
    model = BertClassifier(p=0.1).npu().train()
    ids, attention, labels = (t.npu() for t in bert_batch())
    losses = []
    for _ in range(25):
        model.zero_grad()
        loss = F.cross_entropy(model(ids, attention), labels)
        loss.backward()
        bert_apply_adam_step(model, 3e-3)  # 1e-2 diverges after a few steps
        losses.append(loss.item())
    assert all(math.isfinite(x) for x in losses)
    assert losses[-1] < 0.5 * losses[0], losses


def test_llama_block_matches_plain_torch_forward_and_backward():
    torch.manual_seed(0)
    host = LlamaBlock()
    block = copy.deepcopy(host).npu()
    x, cos, sin, causal = llama_inputs()
    xn = on_npu(x, grad=True)
    out = block(xn, on_npu(cos), on_npu(sin), on_npu(causal))
    xh = x.clone().requires_grad_()
    want = llama_reference(host, xh, cos, sin)
    torch.testing.assert_close(out.detach().cpu(), want.detach(), **CLOSE)
    grad = randn(*want.shape, seed=4)
    out.backward(on_npu(grad))
    want.backward(grad)
    torch.testing.assert_close(xn.grad.cpu(), xh.grad, **CLOSE)
    for (name, p), (_, ref) in zip(block.named_parameters(), host.named_parameters()):
        assert p.grad.device.type == "npu", name
        torch.testing.assert_close(p.grad.cpu(), ref.grad, msg=name, **CLOSE)


def test_llama_block_fp16_forward_backward():
    torch.manual_seed(0)
    host = LlamaBlock()
    half = copy.deepcopy(host).npu().half()
    x, cos, sin, causal = llama_inputs()
    out = half(
        on_npu(x, torch.float16),
        on_npu(cos, torch.float16),
        on_npu(sin, torch.float16),
        on_npu(causal),
    )
    assert out.dtype == torch.float16 and out.device.type == "npu"
    out.float().pow(2).mean().backward()
    torch.testing.assert_close(
        out.detach().cpu().float(),
        llama_reference(host, x.half().float(), cos, sin).detach(),
        **FP16_CLOSE,
    )
    for name, p in half.named_parameters():
        assert p.grad.dtype == torch.float16 and torch.isfinite(p.grad.cpu().float()).all(), name


def test_llama_block_trains(steps=30):
    torch.manual_seed(2)
    block = LlamaBlock().npu()
    x, cos, sin, causal = (on_npu(t) for t in llama_inputs())
    target = on_npu(randn(2, 8, 32, seed=9))
    opt = torch.optim.AdamW(block.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(block(x, cos, sin, causal), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses
