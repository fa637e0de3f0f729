"""A decoder block written the way Hugging Face's Llama and GPT-2 code
write it, with Debian's python3-torch: the reference that the backend's
transformer_block is checked against (decoder_reference_test.cpp).

Reads a JSON file (the block's dimensions, its parameters by name, an
input) and writes the block's output as JSON to the second argument.
"""
import json
import math
import sys

import torch
import torch.nn.functional as F


def main(in_path, out_path):
    with open(in_path) as f:
        case = json.load(f)
    c = case["config"]
    params = {
        name: torch.tensor(p["data"], dtype=torch.float64).reshape(p["shape"])
        for name, p in case["params"].items()
    }
    x = torch.tensor(case["input"]["data"], dtype=torch.float64).reshape(case["input"]["shape"])
    hidden, heads, kv_heads, head_dim = (int(c[k]) for k in ("hidden", "heads", "kv_heads",
                                                              "head_dim"))

    def linear(t, name):
        return F.linear(t, params[name + ".weight"], params.get(name + ".bias"))

    def norm(t, name):
        if c["norm"] == "rmsnorm":
            variance = t.pow(2).mean(-1, keepdim=True)
            return t * torch.rsqrt(variance + 1e-6) * params[name + ".weight"]
        return F.layer_norm(t, (hidden,), params[name + ".weight"], params[name + ".bias"], 1e-5)

    def rotate_half(t):
        half = t.shape[-1] // 2
        return torch.cat((-t[..., half:], t[..., :half]), dim=-1)

    batch, length, _ = x.shape
    qkv = linear(norm(x, "ln1"), "qkv")
    q, k, v = torch.split(qkv, [heads * head_dim, kv_heads * head_dim, kv_heads * head_dim], -1)
    q = q.view(batch, length, heads, head_dim).transpose(1, 2)
    k = k.view(batch, length, kv_heads, head_dim).transpose(1, 2)
    v = v.view(batch, length, kv_heads, head_dim).transpose(1, 2)
    if c["rotary"]:
        inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
        freqs = torch.outer(torch.arange(length, dtype=torch.float64), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        q = q * emb.cos() + rotate_half(q) * emb.sin()
        k = k * emb.cos() + rotate_half(k) * emb.sin()
    # Hugging Face's repeat_kv: each key/value head serves a run of query heads.
    groups = heads // kv_heads
    k = k[:, :, None].expand(batch, kv_heads, groups, length, head_dim).reshape(
        batch, heads, length, head_dim)
    v = v[:, :, None].expand(batch, kv_heads, groups, length, head_dim).reshape(
        batch, heads, length, head_dim)
    scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim)
    mask = torch.full((length, length), float("-inf"), dtype=torch.float64).triu(1)
    attended = (torch.softmax(scores + mask, dim=-1) @ v).transpose(1, 2)
    x = x + linear(attended.reshape(batch, length, heads * head_dim), "proj")

    up = linear(norm(x, "ln2"), "fc1")
    act = c["activation"]
    if act in ("swiglu", "geglu"):
        gate, up = up.chunk(2, dim=-1)
        up = (F.silu(gate) if act == "swiglu" else F.gelu(gate)) * up
    else:
        up = F.relu(up) if act == "relu" else F.gelu(up)
    x = x + linear(up, "fc2")

    with open(out_path, "w") as f:
        json.dump({"shape": list(x.shape), "data": x.flatten().tolist()}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
