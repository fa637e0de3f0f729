#!/usr/bin/env python3
"""The host time of an eager GPT block, without the GPU (docs/validation.md).

A block written as Megatron-LM writes it (layer norms, the QKV, unfused
attention with its mask, softmax and dropout, the projection, the MLP with
GELU, biases and residual dropouts) runs forward and backward on tensors so
small that the arithmetic costs next to nothing: what is left is the time
Python, PyTorch's dispatcher and autograd take to issue the operations, which
a GPU run pays on its host whatever its kernels take. Prints the median time
per layer and micro-batch, with and without recomputation (checkpointing),
and of one small op with autograd.

    /usr/bin/python3 bench/eager_host_time.py      # python3-torch (Debian)
"""
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

LAYERS, HIDDEN, HEADS, TOKENS = 12, 16, 4, 4
ROUNDS, STEPS = 7, 20


class Block(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.qkv, self.proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
        self.fc1, self.fc2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        s, b, h = x.shape
        a, d = self.heads, h // self.heads
        q, k, v = torch.split(self.qkv(self.ln1(x)).view(s, b, a, 3 * d), d, dim=-1)
        q, k, v = (t.reshape(s, b * a, d).transpose(0, 1) for t in (q, k, v))
        scores = torch.baddbmm(torch.empty(b * a, s, s), q, k.transpose(1, 2), beta=0.0,
                               alpha=d ** -0.5)
        mask = torch.ones(s, s, dtype=torch.bool).triu(1)
        probs = F.dropout(F.softmax(scores.masked_fill(mask, -10000.0), dim=-1), 0.1, True)
        context = torch.bmm(probs, v).transpose(0, 1).reshape(s, b, h)
        x = x + F.dropout(self.proj(context), 0.1, True)
        return x + F.dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)))), 0.1, True)


def main():
    torch.set_num_threads(1)
    blocks = nn.ModuleList([Block(HIDDEN, HEADS) for _ in range(LAYERS)])
    x0 = torch.randn(TOKENS, 1, HIDDEN, requires_grad=True)

    def step(recompute):
        x = x0
        for block in blocks:
            x = checkpoint(block, x, use_reentrant=True) if recompute else block(x)
        x.sum().backward()

    print(f"PyTorch {torch.__version__}, one thread, {LAYERS} blocks of hidden {HIDDEN}")
    for recompute in (False, True):
        for _ in range(STEPS):
            step(recompute)
        per_layer = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            for _ in range(STEPS):
                step(recompute)
            per_layer.append((time.perf_counter() - start) / STEPS / LAYERS)
        label = "with recomputation" if recompute else "without recomputation"
        print(f"forward and backward, {label}: {statistics.median(per_layer) * 1e6:.0f} µs "
              f"a layer (median of {ROUNDS} rounds)")
    w = torch.randn(4, 4, requires_grad=True)
    for _ in range(1000):
        w + 1
    start = time.perf_counter()
    for _ in range(100000):
        w + 1
    print(f"one small op with autograd: {(time.perf_counter() - start) / 100000 * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
