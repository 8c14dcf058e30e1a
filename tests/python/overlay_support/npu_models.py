"""Small models built on the emulated NPU's torch_npu operators, as Ascend's ModelZoo and LLM
training code write them, with the same networks in plain torch (``bert_reference``,
``llama_reference``) and fixed inputs. Shared by test_npu_op_models.py and the apex.amp training
runs of npu_model_worker.py; needs only an importable ``torch_npu`` (the emulator's)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_npu  # noqa: F401 - the operators, and torch.nn.DropoutWithByteMask


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# --- BERT ---------------------------------------------------------------------------------
class NpuLinear(nn.Linear):
    def forward(self, x):
        return torch_npu.npu_linear(x, self.weight, self.bias)


class BertLayer(nn.Module):
    def __init__(self, hidden=32, heads=4, ffn=64, p=0.1):
        super().__init__()
        self.heads, self.head_dim, self.p = heads, hidden // heads, p
        self.query, self.key, self.value = (NpuLinear(hidden, hidden) for _ in range(3))
        self.attn_out = NpuLinear(hidden, hidden)
        self.norm1, self.norm2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.inter, self.out = NpuLinear(hidden, ffn), NpuLinear(ffn, hidden)
        self.dropout = nn.DropoutWithByteMask(p)

    def split(self, x, batch):  # (B*S, H) -> (B, N, S, D), as BERT's transpose_for_qkv
        return torch_npu.npu_confusion_transpose(
            x, (0, 2, 1, 3), (batch, x.shape[0] // batch, self.heads, self.head_dim), False
        )

    def forward(self, x, add_mask):  # x (B*S, H); add_mask (B, 1, 1, S) of 0 / -10000
        batch = add_mask.shape[0]
        q, k, v = (self.split(f(x), batch) for f in (self.query, self.key, self.value))
        scores = torch_npu.npu_bmmV2(q, k.transpose(-1, -2), [])
        mask = add_mask.expand_as(scores).contiguous()
        _, _, probs = torch_npu.npu_dropout_with_add_softmax(
            scores, mask, 1 / math.sqrt(self.head_dim), self.p if self.training else 0.0, -1
        )
        context = torch_npu.npu_bmmV2(probs, v, [])
        context = torch_npu.npu_confusion_transpose(
            context, (0, 2, 1, 3), (context.shape[0] * context.shape[2], -1), True
        )
        x = self.norm1(x + self.dropout(self.attn_out(context)))
        ffn = self.out(torch_npu.fast_gelu(self.inter(x)))
        return self.norm2(x + self.dropout(ffn))


class BertClassifier(nn.Module):
    def __init__(self, vocab=50, hidden=32, layers=2, classes=3, p=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(BertLayer(hidden, p=p) for _ in range(layers))
        self.head = NpuLinear(hidden, classes)
        self.dropout = nn.DropoutWithByteMask(p)

    def forward(self, ids, attention):  # ids (B, S); attention (B, S) of 1 / 0
        b, s = ids.shape
        x = self.dropout(self.embed(ids)).reshape(b * s, -1)
        add_mask = ((1.0 - attention.to(x.dtype)) * -10000.0).reshape(b, 1, 1, s)
        for layer in self.layers:
            x = layer(x, add_mask)
        return self.head(x.reshape(b, s, -1)[:, 0])


def bert_reference(model, ids, attention):
    """The same network in plain torch (dropout off), reading ``model``'s parameters."""
    b, s = ids.shape
    x = model.embed.weight[ids].reshape(b * s, -1)
    add = ((1.0 - attention.float()) * -10000.0).reshape(b, 1, 1, s)
    for layer in model.layers:
        n, d = layer.heads, layer.head_dim

        def heads(t):
            return t.reshape(b, s, n, d).permute(0, 2, 1, 3)

        q, k, v = (
            heads(F.linear(x, f.weight, f.bias)) for f in (layer.query, layer.key, layer.value)
        )
        probs = torch.softmax(add + (q @ k.transpose(-1, -2)) / math.sqrt(d), dim=-1)
        context = (probs @ v).permute(0, 2, 1, 3).reshape(b * s, n * d)
        x = layer.norm1(x + F.linear(context, layer.attn_out.weight, layer.attn_out.bias))
        h = F.linear(x, layer.inter.weight, layer.inter.bias)
        h = h * torch.sigmoid(1.702 * h)
        x = layer.norm2(x + F.linear(h, layer.out.weight, layer.out.bias))
    return F.linear(x.reshape(b, s, -1)[:, 0], model.head.weight, model.head.bias)


def bert_batch():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 50, (4, 8), generator=g)
    attention = torch.ones(4, 8, dtype=torch.long)
    attention[1, 6:] = 0
    attention[3, 5:] = 0
    labels = torch.tensor([0, 1, 2, 1])
    return ids, attention, labels


# --- LLaMA --------------------------------------------------------------------------------
class LlamaBlock(nn.Module):
    def __init__(self, hidden=32, heads=4, kv_heads=2, ffn=48):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.norm1, self.norm2 = nn.Parameter(torch.ones(hidden)), nn.Parameter(torch.ones(hidden))
        self.q = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o = nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.gate_up = nn.Linear(hidden, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x, cos, sin, causal):  # x (B, S, H); cos/sin (1, S, 1, D)
        b, s, _ = x.shape
        h = torch_npu.npu_rms_norm(x, self.norm1, epsilon=1e-6)[0]
        q = self.q(h).view(b, s, self.heads, self.head_dim)
        k = self.k(h).view(b, s, self.kv_heads, self.head_dim)
        v = self.v(h).view(b, s, self.kv_heads, self.head_dim)
        q, k = torch_npu.npu_rotary_mul(q, cos, sin), torch_npu.npu_rotary_mul(k, cos, sin)
        attn = torch_npu.npu_fusion_attention(
            q,
            k,
            v,
            self.heads,
            "BSND",
            atten_mask=causal,
            scale=1 / math.sqrt(self.head_dim),
            pre_tockens=s,
            next_tockens=0,
        )[0]
        x = x + self.o(attn.reshape(b, s, -1))
        h = torch_npu.npu_rms_norm(x, self.norm2, epsilon=1e-6)[0]
        return x + self.down(torch_npu.npu_swiglu(self.gate_up(h), dim=-1))


def llama_reference(block, x, cos, sin):
    b, s, _ = x.shape
    n, kv, d = block.heads, block.kv_heads, block.head_dim

    def rms(t, w):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    def rope(t):
        half = t.shape[-1] // 2
        return t * cos + torch.cat((-t[..., half:], t[..., :half]), -1) * sin

    h = rms(x, block.norm1)
    q = rope(block.q(h).view(b, s, n, d)).transpose(1, 2)
    k = rope(block.k(h).view(b, s, kv, d)).transpose(1, 2).repeat_interleave(n // kv, dim=1)
    v = block.v(h).view(b, s, kv, d).transpose(1, 2).repeat_interleave(n // kv, dim=1)
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
    scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
    attn = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(b, s, -1)
    x = x + block.o(attn)
    gate, up = block.gate_up(rms(x, block.norm2)).chunk(2, -1)
    return x + block.down(F.silu(gate) * up)


def rope_tables(s, d):
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
    angles = torch.outer(torch.arange(s).float(), inv)
    angles = torch.cat((angles, angles), -1).reshape(1, s, 1, d)
    return torch.cos(angles), torch.sin(angles)


def llama_inputs(s=8, d=8):
    cos, sin = rope_tables(s, d)
    causal = torch.ones(s, s, dtype=torch.bool).triu(1)
    return randn(2, s, 32, seed=3), cos, sin, causal
