"""A whole GPT layer on one NVIDIA H200, against trainsim's sum of modelled kernels.

trainsim times a layer as the sum of its kernels (GEMMs by the tile-and-wave model, the rest by
HBM traffic, 2 us apart: workloads/cost.c). This measures what a real framework layer costs on
the same shapes, so the docs can say how much of a prediction's optimism is the layer model's:
a Megatron-style pre-LN GPT layer (layer norm, QKV, flash attention through PyTorch's
scaled_dot_product_attention, projection, dropout + residual, layer norm, FC1, GeLU, FC2,
dropout + residual), bf16, eager PyTorch, one tensor-parallel shard (heads/t, ffn/t; the
all-reduces are left out), micro-batch 1, sequence 2048. Forward, and forward + backward.
Prints CSV; writes h200_layer.csv into $OUT when set. CUDA-event medians of 20 runs after 5
warm-ups.
"""
import csv
import os
import sys

import torch
import torch.nn.functional as F

from cuda_timing import time_ms

assert torch.cuda.is_available(), "needs a CUDA GPU"
dev = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = False


class Layer(torch.nn.Module):
    def __init__(self, h, heads, t):
        super().__init__()
        self.heads, self.d = heads // t, h // heads
        self.ln1 = torch.nn.LayerNorm(h)
        self.qkv = torch.nn.Linear(h, 3 * h // t)
        self.proj = torch.nn.Linear(h // t, h)
        self.ln2 = torch.nn.LayerNorm(h)
        self.fc1 = torch.nn.Linear(h, 4 * h // t)
        self.fc2 = torch.nn.Linear(4 * h // t, h)

    def forward(self, x):  # x: [s, b, h], Megatron's layout
        s, b, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(s, b, self.heads, 3 * self.d).chunk(3, dim=-1)
        q, k, v = (y.permute(1, 2, 0, 3) for y in (q, k, v))  # [b, heads, s, d]
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.1)
        o = o.permute(2, 0, 1, 3).reshape(s, b, self.heads * self.d)
        x = x + F.dropout(self.proj(o), 0.1)
        return x + F.dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)))), 0.1)


rows = []
for name, h, heads, t in (("22b", 6144, 48, 2), ("175b", 12288, 96, 8), ("1t", 25600, 200, 8)):
    layer = Layer(h, heads, t).to(dev, torch.bfloat16)
    x = torch.randn(2048, 1, h, device=dev, dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn_like(x)
    with torch.no_grad():
        fwd = time_ms(lambda: layer(x))

    def step():
        layer(x).backward(dy)

    both = time_ms(step)
    rows.append((name, h, heads, t, fwd, both, both - fwd))
    del layer, x, dy
    torch.cuda.empty_cache()

header = ("model", "hidden", "heads", "tp", "forward_ms", "forward_backward_ms", "backward_ms")
out = csv.writer(sys.stdout)
out.writerow(header)
out.writerows(rows)
if os.environ.get("OUT"):
    with open(os.path.join(os.environ["OUT"], "h200_layer.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}", file=sys.stderr)
