"""Whole training steps with the software-stack choices of issue 30 (validation only: nothing
here sets a trainsim parameter): attention without flash, as GPT-NeoX and Megatron run it
without FlashAttention (Q K^T by torch.baddbmm with the softmax scale, the causal mask by
masked_fill, softmax, P V by torch.bmm), and no dropout, as FORGE trained. One GPU.

    python3 bench/device/stack_steps.py OUT.csv [--smoke]

The model and recipe are gpt.py's (bf16, fp32 main grads by hooks, fused AdamW, full
recomputation per block where asked); only the attention core and the dropout rate change.
trainsim describes these runs with `stack: {framework: pytorch, attention: unfused}` (no
fusions: plain PyTorch) and `model: {attention_dropout: 0, hidden_dropout: 0}`. Head dimension
86 is FORGE-S's (hidden 2,064, 24 heads), beside a 128 control.
"""
import argparse
import datetime
import sys

import torch

import gpt
import steps

# name, layers, hidden, heads, seq, micro-batch, microbatches per step, full recompute, flash
CONFIGS = [
    ("forge-s", 24, 2064, 24, 2048, 8, 1, True, False),
    ("forge-s", 24, 2064, 24, 2048, 4, 1, False, False),
    ("gpt-1.3b", 24, 2048, 16, 2048, 8, 1, True, False),
    ("gpt-1.3b", 24, 2048, 16, 2048, 8, 1, True, True),
    ("gpt-2.7b", 32, 2560, 32, 2048, 4, 1, True, False),
]
SMOKE = [("gpt-tiny", 2, 256, 4, 512, 2, 1, True, False)]


def unfused_attention(q, k, v):
    """Causal attention without flash, as Megatron's CoreAttention runs it: q, k, v are
    (batch, heads, seq, head_dim); scores in bf16, softmax over the last dimension."""
    b, n, s, d = q.shape
    q2, k2, v2 = (t.reshape(b * n, s, d) for t in (q, k, v))
    scores = torch.empty(b * n, s, s, dtype=q.dtype, device=q.device)
    scores = torch.baddbmm(scores, q2, k2.transpose(1, 2), beta=0.0, alpha=d ** -0.5)
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu_(1)
    probs = torch.softmax(scores.view(b, n, s, s).masked_fill(mask, float("-inf")), dim=-1)
    return torch.bmm(probs.view(b * n, s, s), v2).view(b, n, s, d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    gpt.HIDDEN_DROPOUT = 0.0  # F.dropout at 0 returns its input: no kernel, no mask
    flash = gpt.attention
    rows = []
    for cfg in SMOKE if a.smoke else CONFIGS:
        *base, use_flash = cfg
        gpt.attention = flash if use_flash else unfused_attention
        (status, med, lo, hi), peak = steps.run(tuple(base), 2 if a.smoke else 3,
                                                2 if a.smoke else 10)
        name, layers, h, heads, seq, mbs, n_micro, recompute = base
        rows.append([name, layers, h, heads, seq, mbs, n_micro, "full" if recompute else "none",
                     "flash" if use_flash else "unfused", status,
                     *steps.timing_fields(med, lo, hi), peak])
        print("stack_steps:", cfg, status, med, "peak %.2f GiB" % (peak / 2**30), flush=True)
    with open(a.out, "w") as f:
        f.write("# %s, torch %s, CUDA %s, %s; stack_steps.py: dropout 0\n"
                % (torch.cuda.get_device_name(), torch.__version__, torch.version.cuda,
                   datetime.date.today()))
        f.write("name,layers,hidden,heads,seq,micro_batch,microbatches,recompute,attention,"
                "status,step_s,min_s,max_s,peak_bytes\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
