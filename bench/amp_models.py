"""The models whose amp training step bench/amp_steps.py times: a small CNN and a transformer
block, each with one fixed batch (made from a seeded generator, so every process sees the same).
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
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 8 * 8, 10))


class TransformerBlock(nn.Module):
    """Token and position embeddings, one pre-norm block (causal multi-head self-attention,
    then a GELU MLP, each with a residual) and a classifier on the mean over positions."""

    def __init__(self, vocab: int = 256, seq: int = 128, width: int = 64, heads: int = 4,
                 classes: int = 10) -> None:
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
        q, k, v = (z.reshape(b, t, self.heads, width // self.heads).transpose(1, 2)
                   for z in self.qkv(x).chunk(3, dim=-1))
        scores = q @ k.transpose(-2, -1) / math.sqrt(width // self.heads)
        scores = scores.masked_fill(self.future[:t, :t], -1e4)
        out = F.softmax(scores, dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, t, width))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.tokens(tokens) + self.positions[:tokens.shape[1]]
        x = x + self.attention(self.norm1(x))
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return self.head(self.norm_out(x).mean(1))


def image_batch(g: torch.Generator) -> Tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(32, 3, 32, 32, generator=g), torch.randint(0, 10, (32,), generator=g)


def token_batch(g: torch.Generator) -> Tuple[torch.Tensor, torch.Tensor]:
    return torch.randint(0, 256, (8, 128), generator=g), torch.randint(0, 10, (8,), generator=g)


# name -> (description, model maker, batch maker)
MODELS: Dict[str, Tuple[str, Callable[[], nn.Module], Callable[[torch.Generator], Tuple]]] = {
    "cnn": ("small CNN: 3 conv + BN, batch 32 of 3x32x32", cnn, image_batch),
    "transformer": ("transformer block: width 64, 4 heads, MLP 256, batch 8 x 128 tokens",
                    TransformerBlock, token_batch),
}
