#!/usr/bin/env python3
"""Writes the TorchScript files the import tests read (tests/backend/
torchscript_import_test.cpp). Run by the build where Debian's python3-torch
is installed; torchvision's ResNet-18 is written too where
python3-torchvision is.

    make_fixtures.py OUTPUT_FOLDER
"""
import os
import sys
import zipfile

import torch
from torch import nn


class SmallCnn(nn.Module):
    """Children in sequence, with torch.flatten between two of them."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        x = self.avgpool(self.conv2(x))
        x = torch.flatten(x, 1)
        return self.fc(x)


class TokenAndPosition(nn.Module):
    def __init__(self, vocabulary, context, width):
        super().__init__()
        self.tokens = nn.Embedding(vocabulary, width)
        self.positions = nn.Parameter(torch.randn(context, width) * 0.02)

    def forward(self, ids):
        return self.tokens(ids) + self.positions[: ids.size(1)]


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / float(c // self.heads) ** 0.5
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class SmallGpt(nn.Module):
    """A GPT laid out to split: embedding, blocks, final norm, head."""

    def __init__(self, vocabulary=64, context=16, width=32, heads=4, layers=4):
        super().__init__()
        self.embed = TokenAndPosition(vocabulary, context, width)
        self.blocks = nn.Sequential(*[Block(width, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocabulary, bias=False)

    def forward(self, ids):
        return self.head(self.ln_f(self.blocks(self.embed(ids))))


class SkipAcrossChildren(nn.Module):
    """A residual around two children: its forward is not a chain."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        h = self.a(x)
        return self.b(h) + x


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)

    def forward(self, x, scale: torch.Tensor):
        return self.a(x) * scale


def mlp():
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
                         nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))


class Raises(nn.Module):
    """A layer whose forward raises: the import must show its own words."""

    def forward(self, x):
        if bool(x.numel() > 0):
            raise Exception("boom from forward")
        return x


class Hangs(nn.Module):
    """A layer whose forward never returns: the import must end, naming it."""

    def forward(self, x):
        while bool(x.numel() > 0):
            x = x * 1.0
        return x


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.jit.script(mlp()).save(os.path.join(out, "mlp.pt"))
    torch.jit.trace(mlp(), torch.randn(2, 8)).save(os.path.join(out, "mlp-traced.pt"))
    torch.jit.script(SmallCnn()).save(os.path.join(out, "cnn.pt"))
    torch.jit.script(SmallGpt()).save(os.path.join(out, "gpt.pt"))
    torch.jit.script(SkipAcrossChildren()).save(os.path.join(out, "skip.pt"))
    torch.jit.script(TwoInputs()).save(os.path.join(out, "two-inputs.pt"))
    torch.save({"weight": torch.randn(2, 2)}, os.path.join(out, "state-dict.pt"))
    torch.jit.script(nn.Sequential(nn.Linear(8, 8), Raises())).save(
        os.path.join(out, "raises.pt"))
    torch.jit.script(nn.Sequential(nn.Linear(8, 8), Hangs())).save(os.path.join(out, "hangs.pt"))
    # A zip bomb in the shape of a torch file: 64 MiB of zeros deflated to
    # about 64 KiB (a real one unpacks to gigabytes; the test lowers the
    # bound instead of the machine).
    with zipfile.ZipFile(os.path.join(out, "bomb.pt"), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bomb/data.pkl", b"\x80\x02}q\x00.")
        z.writestr("bomb/data/0", bytes(64 << 20))
    # Samples for `run --data`: 20 images for the CNN (5 classes), so that a
    # batch of 8 wraps around after two and a half steps.
    data = os.path.join(out, "cnn-data")
    os.makedirs(data, exist_ok=True)
    torch.save(torch.randn(20, 3, 16, 16), os.path.join(data, "inputs.pt"))
    torch.save(torch.randint(0, 5, (20,)), os.path.join(data, "targets.pt"))
    torch.save(torch.randint(0, 5, (20,)), os.path.join(data, "wrong-inputs.pt"))
    try:
        import torchvision
    except ImportError:
        print("make_fixtures: torchvision is missing; resnet18.pt is not written")
        return
    resnet = torchvision.models.resnet18(num_classes=10)
    torch.jit.script(resnet).save(os.path.join(out, "resnet18.pt"))


if __name__ == "__main__":
    main()
