"""Whole training steps of Llama-style models on one GPU, plain PyTorch, for validation only
(nothing here sets a trainsim parameter): issue 31's Llama-style blocks. docs/validation/h200.sh
holds them against `trainsim run`.

    python3 bench/device/llama_steps.py OUT.csv [--smoke] [--hbm 80]

The block is Llama's as a plain PyTorch model writes it: RMSNorm (F.rms_norm), Q, K, V
projections without biases (grouped-query attention: fewer key/value heads), the rotary
embedding applied eagerly (x cos + rotate_half(x) sin), causal F.scaled_dot_product_attention
with PyTorch's own backend choice (keys and values repeated to the query heads first, as
Hugging Face's repeat_kv does), the output projection, then RMSNorm, SwiGLU (F.silu(gate) * up)
and the down projection; untied embedding and output layer, no dropout. The recipe is
gpt.Trainer's (bf16 weights, fp32 main grads by hooks, fp32 masters, fused AdamW), the loss
gpt.cross_entropy's (fp32 logits), full recomputation by torch.utils.checkpoint per block.
Timed by steps.time_training: 3 warm-ups, median of 10, peak of max_memory_allocated.
"""
import argparse
import datetime
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import gpt
import steps

VOCAB = 128256  # Llama 3's


def rotary(dim, seq, base):
    """The rotary embedding's cos and sin tables, (1, 1, seq, dim)."""
    inv = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    ang = torch.outer(torch.arange(seq).float(), inv)
    ang = torch.cat((ang, ang), dim=-1)
    return ang.cos()[None, None], ang.sin()[None, None]


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Block(nn.Module):
    def __init__(self, h, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv_heads, self.d = heads, kv_heads, h // heads
        self.norm1 = nn.Parameter(torch.ones(h))
        self.q = nn.Linear(h, h, bias=False)
        self.k = nn.Linear(h, kv_heads * self.d, bias=False)
        self.v = nn.Linear(h, kv_heads * self.d, bias=False)
        self.o = nn.Linear(h, h, bias=False)
        self.norm2 = nn.Parameter(torch.ones(h))
        self.gate_up = nn.Linear(h, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, h, bias=False)

    def forward(self, x, cos, sin):
        b, s, h = x.shape
        y = F.rms_norm(x, (h,), self.norm1)
        q = self.q(y).view(b, s, self.heads, self.d).transpose(1, 2)
        k = self.k(y).view(b, s, self.kv_heads, self.d).transpose(1, 2)
        v = self.v(y).view(b, s, self.kv_heads, self.d).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv_heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, h))
        gate, up = self.gate_up(F.rms_norm(x, (h,), self.norm2)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


class Llama(nn.Module):
    def __init__(self, layers, h, heads, kv_heads, ffn, seq, recompute):
        super().__init__()
        self.recompute, self.d = recompute, h // heads
        self.embed = nn.Embedding(VOCAB, h)
        self.blocks = nn.ModuleList(Block(h, heads, kv_heads, ffn) for _ in range(layers))
        self.norm = nn.Parameter(torch.ones(h))
        self.out = nn.Linear(h, VOCAB, bias=False)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)
        cos, sin = rotary(self.d, seq, 500000)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, idx, targets):
        x = self.embed(idx)
        cos, sin = self.cos.to(x.dtype), self.sin.to(x.dtype)
        for blk in self.blocks:
            if self.recompute:
                x = torch.utils.checkpoint.checkpoint(blk, x, cos, sin, use_reentrant=False)
            else:
                x = blk(x, cos, sin)
        logits = self.out(F.rms_norm(x, (x.shape[-1],), self.norm))
        return gpt.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))


def n_params(layers, h, heads, kv_heads, ffn):
    d = h // heads
    per = 2 * h * h + 2 * h * kv_heads * d + 3 * h * ffn + 2 * h
    return layers * per + 2 * VOCAB * h + h


# name, layers, hidden, heads, kv heads, ffn, seq, micro-batch, microbatches, full recompute
CONFIGS = [
    ("llama-1b", 16, 2048, 32, 8, 8192, 4096, 2, 2, False),
    ("llama-1b", 16, 2048, 32, 8, 8192, 8192, 1, 2, False),
    ("llama-3b", 28, 3072, 24, 8, 8192, 4096, 1, 2, False),
    ("llama-3b", 28, 3072, 24, 8, 8192, 4096, 4, 1, True),
    ("llama-8b-half", 16, 4096, 32, 8, 14336, 4096, 1, 2, True),
    ("llama-8b-half", 16, 4096, 32, 8, 14336, 2048, 4, 1, False),
]
# For a GPU of 80 GB (H100): the same blocks where they fit there. "llama-8b-quarter" is Llama 3
# 8B's layer with 8 of its 32 layers.
CONFIGS_80GB = [
    ("llama-1b", 16, 2048, 32, 8, 8192, 4096, 2, 2, False),
    ("llama-1b", 16, 2048, 32, 8, 8192, 8192, 1, 2, False),
    ("llama-1b", 16, 2048, 32, 8, 8192, 16384, 1, 1, True),
    ("llama-3b", 28, 3072, 24, 8, 8192, 2048, 1, 2, False),
    ("llama-3b", 28, 3072, 24, 8, 8192, 4096, 2, 1, True),
    ("llama-8b-quarter", 8, 4096, 32, 8, 14336, 4096, 1, 2, True),
    ("llama-8b-quarter", 8, 4096, 32, 8, 14336, 4096, 2, 1, False),
    ("llama-8b-quarter", 8, 4096, 32, 8, 14336, 8192, 1, 1, True),
]
SMOKE = [("llama-tiny", 2, 256, 4, 2, 512, 512, 2, 2, False),
         ("llama-tiny", 2, 256, 4, 2, 512, 512, 2, 2, True)]


def run(cfg, warmup, reps):
    name, layers, h, heads, kv, ffn, seq, mbs, n_micro, recompute = cfg

    def build():
        torch.manual_seed(0)
        model = Llama(layers, h, heads, kv, ffn, seq, recompute).to("cuda", torch.bfloat16)
        g = torch.Generator(device="cuda").manual_seed(1)
        data = [(torch.randint(0, VOCAB, (mbs, seq), device="cuda", generator=g),
                 torch.randint(0, VOCAB, (mbs, seq), device="cuda", generator=g))
                for _ in range(n_micro)]
        return gpt.Trainer(model), data

    return steps.time_training(build, warmup, reps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--hbm", type=int, choices=(141, 80), default=141,
                    help="the set sized for a GPU of this many GB: 141 (H200) or 80 (H100)")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    started = datetime.datetime.now(datetime.timezone.utc)
    props = torch.cuda.get_device_properties(0)
    lines = [
        "# Llama-style training steps measured by bench/device/llama_steps.py (validation data:",
        f"# sets no parameter). device {torch.cuda.get_device_name(0)} ({props.total_memory / 2**30:.1f}"
        f" GiB), torch {torch.__version__}, CUDA {torch.version.cuda}, {started:%Y-%m-%d %H:%M} UTC",
        "# step times in seconds (median, min, max of 10 after 3 warm-ups); peak bytes from "
        "torch.cuda.max_memory_allocated",
        "name,layers,hidden,heads,kv_heads,ffn,seq,micro_batch,microbatches,recompute,params,"
        "status,step_s,min_s,max_s,peak_bytes",
    ]
    for cfg in SMOKE if args.smoke else CONFIGS if args.hbm == 141 else CONFIGS_80GB:
        (status, med, lo, hi), peak = run(cfg, 2 if args.smoke else 3, 3 if args.smoke else 10)
        name, layers, h, heads, kv, ffn, seq, mbs, n_micro, recompute = cfg
        lines.append(",".join(str(v) for v in [
            name, layers, h, heads, kv, ffn, seq, mbs, n_micro, "full" if recompute else "none",
            n_params(layers, h, heads, kv, ffn), status,
            *steps.timing_fields(med, lo, hi), peak]))
        print(f"llama_steps: {lines[-1]}", file=sys.stderr, flush=True)
        steps.write_lines(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
