"""The models whose amp training step bench/amp_steps.py times, each with one fixed batch (made
from a seeded generator, so every process sees the same): a small CNN, a hand-written transformer
block, torch's own nn.TransformerEncoder, a LLaMA-style block (RMSNorm, rotary embeddings, SwiGLU),
and recurrent classifiers over token sequences with nn.GRU, nn.LSTM, nn.GRUCell and nn.LSTMCell
(the model families of Ascend's model zoo: speech, OCR and seq2seq models are recurrent).
"""

from __future__ import annotations

import math
from typing import Callable, Dict, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


def cnn() -> nn.Module:
    """3 conv + BN + ReLU layers, two max-pools and a linear classifier, on 3x32x32 images."""
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(64, 64, 3, padding=1),
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 8 * 8, 10),
    )


class TransformerBlock(nn.Module):
    """Token and position embeddings, one pre-norm block (causal multi-head self-attention,
    then a GELU MLP, each with a residual) and a classifier on the mean over positions."""

    def __init__(
        self, vocab: int = 256, seq: int = 128, width: int = 64, heads: int = 4, classes: int = 10
    ) -> None:
        super().__init__()
        self.heads = heads
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Parameter(torch.randn(seq, width) * 0.02)
        self.norm1, self.norm2, self.norm_out = (nn.LayerNorm(width) for _ in range(3))
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
        self.head = nn.Linear(width, classes)
        self.register_buffer("future", torch.ones(seq, seq, dtype=torch.bool).triu(1))

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, t, width = x.shape
        q, k, v = (
            z.reshape(b, t, self.heads, width // self.heads).transpose(1, 2)
            for z in self.qkv(x).chunk(3, dim=-1)
        )
        scores = q @ k.transpose(-2, -1) / math.sqrt(width // self.heads)
        scores = scores.masked_fill(self.future[:t, :t], -1e4)
        out = F.softmax(scores, dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, t, width))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.tokens(tokens) + self.positions[: tokens.shape[1]]
        x = x + self.attention(self.norm1(x))
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return self.head(self.norm_out(x).mean(1))


class TorchEncoder(nn.Module):
    """torch's nn.TransformerEncoder (2 post-norm layers of nn.MultiheadAttention, which torch 2.x
    runs through scaled_dot_product_attention, and a ReLU MLP) over token embeddings."""

    def __init__(
        self, vocab: int = 256, seq: int = 128, width: int = 64, heads: int = 4, classes: int = 10
    ) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Parameter(torch.randn(seq, width) * 0.02)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(width, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.tokens(tokens) + self.positions[: tokens.shape[1]]
        return self.head(self.encoder(x).mean(1))


class RMSNorm(nn.Module):
    """LLaMA's RMSNorm: x / sqrt(mean(x^2) + eps) * weight, the mean taken in fp32."""

    def __init__(self, width: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


class LlamaBlock(nn.Module):
    """A LLaMA-style decoder block: pre-RMSNorm causal attention with rotary position embeddings
    on q and k, then a SwiGLU MLP, each with a residual; a final RMSNorm and a classifier on the
    mean over positions."""

    def __init__(
        self, vocab: int = 256, seq: int = 128, width: int = 64, heads: int = 4, classes: int = 10
    ) -> None:
        super().__init__()
        self.heads = heads
        self.tokens = nn.Embedding(vocab, width)
        self.norm1, self.norm2, self.norm_out = (RMSNorm(width) for _ in range(3))
        self.q, self.k, self.v, self.o = (nn.Linear(width, width, bias=False) for _ in range(4))
        hidden = width * 8 // 3
        self.gate, self.up = (nn.Linear(width, hidden, bias=False) for _ in range(2))
        self.down = nn.Linear(hidden, width, bias=False)
        self.head = nn.Linear(width, classes)
        dim = width // heads
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        angles = torch.outer(torch.arange(seq).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())
        self.register_buffer("future", torch.ones(seq, seq, dtype=torch.bool).triu(1))

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, t, width = x.shape
        q, k, v = (
            proj(x).reshape(b, t, self.heads, width // self.heads).transpose(1, 2)
            for proj in (self.q, self.k, self.v)
        )
        cos, sin = self.cos[:t].to(x.dtype), self.sin[:t].to(x.dtype)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        scores = q @ k.transpose(-2, -1) / math.sqrt(width // self.heads)
        scores = scores.masked_fill(self.future[:t, :t], -1e4)
        out = F.softmax(scores.float(), dim=-1).to(q.dtype) @ v
        return self.o(out.transpose(1, 2).reshape(b, t, width))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.tokens(tokens)
        x = x + self.attention(self.norm1(x))
        h = self.norm2(x)
        x = x + self.down(F.silu(self.gate(h)) * self.up(h))
        return self.head(self.norm_out(x).mean(1))


class Recurrent(nn.Module):
    """A recurrent classifier over token sequences: embeddings, a 2-layer nn.GRU or nn.LSTM
    (``cell``: one nn.GRUCell or nn.LSTMCell stepped over time by this module, as seq2seq
    decoders do), and a classifier on the last hidden state."""

    def __init__(
        self,
        kind: str,
        cell: bool = False,
        vocab: int = 256,
        width: int = 64,
        hidden: int = 128,
        classes: int = 10,
    ) -> None:
        super().__init__()
        self.kind, self.cell = kind, cell
        self.tokens = nn.Embedding(vocab, width)
        if cell:
            self.rnn = (nn.GRUCell if kind == "gru" else nn.LSTMCell)(width, hidden)
        else:
            self.rnn = (nn.GRU if kind == "gru" else nn.LSTM)(
                width, hidden, num_layers=2, batch_first=True
            )
        self.head = nn.Linear(hidden, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.tokens(tokens)
        if not self.cell:
            out, _ = self.rnn(x)
            return self.head(out[:, -1])
        h = x.new_zeros(x.shape[0], self.rnn.hidden_size)
        c = h
        for t in range(x.shape[1]):
            if self.kind == "gru":
                h = self.rnn(x[:, t], h)
            else:
                h, c = self.rnn(x[:, t], (h, c))
        return self.head(h)


def image_batch(g: torch.Generator) -> Tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(32, 3, 32, 32, generator=g), torch.randint(0, 10, (32,), generator=g)


def token_batch(g: torch.Generator) -> Tuple[torch.Tensor, torch.Tensor]:
    return torch.randint(0, 256, (8, 128), generator=g), torch.randint(0, 10, (8,), generator=g)


def sequence_batch(g: torch.Generator) -> Tuple[torch.Tensor, torch.Tensor]:
    return torch.randint(0, 256, (16, 32), generator=g), torch.randint(0, 10, (16,), generator=g)


def _recurrent(kind: str, cell: bool) -> Callable[[], nn.Module]:
    return lambda: Recurrent(kind, cell)


_SEQ = "embeddings 64, hidden 128, batch 16 x 32 tokens"
# name -> (description, model maker, batch maker)
MODELS: Dict[str, Tuple[str, Callable[[], nn.Module], Callable[[torch.Generator], Tuple]]] = {
    "cnn": ("small CNN: 3 conv + BN, batch 32 of 3x32x32", cnn, image_batch),
    "transformer": (
        "transformer block: width 64, 4 heads, MLP 256, batch 8 x 128 tokens",
        TransformerBlock,
        token_batch,
    ),
    "torch_encoder": (
        "nn.TransformerEncoder: 2 layers, width 64, 4 heads, MLP 256, batch 8 x 128 tokens",
        TorchEncoder,
        token_batch,
    ),
    "llama": (
        "LLaMA-style block: RMSNorm, rotary, SwiGLU 170, width 64, 4 heads, batch 8 x 128 tokens",
        LlamaBlock,
        token_batch,
    ),
    "gru": (f"nn.GRU: 2 layers, {_SEQ}", _recurrent("gru", False), sequence_batch),
    "lstm": (f"nn.LSTM: 2 layers, {_SEQ}", _recurrent("lstm", False), sequence_batch),
    "gru_cell": (f"nn.GRUCell stepped over time, {_SEQ}", _recurrent("gru", True), sequence_batch),
    "lstm_cell": (
        f"nn.LSTMCell stepped over time, {_SEQ}",
        _recurrent("lstm", True),
        sequence_batch,
    ),
}
