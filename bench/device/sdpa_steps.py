"""Whole training steps as a plain PyTorch model runs them, attention by
F.scaled_dot_product_attention with PyTorch's own choice of backend (cuDNN on an H200:
bench/device/h200_sdpa_backends.csv) instead of gpt.py's forced flash backend; for validation
only (nothing here sets a trainsim parameter). Issue 31's second set: long sequences (8k-32k),
micro-batches of 16-32, 2.7B-6.7B with and without recomputation.

    python3 bench/device/sdpa_steps.py OUT.csv [--smoke]

The model and recipe are gpt.py's (bf16, fp32 main grads by hooks, fused AdamW, hidden dropout
0.1); steps.py times them (3 warm-ups, median of 10). trainsim describes these runs with
`stack: {framework: pytorch}` (its default attention there: sdpa).
"""
import sys

import torch.nn.functional as F

import gpt
import steps


def default_attention(q, k, v):
    """Causal SDPA, no backend forced."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


# name, layers, hidden, heads, seq, micro-batch, microbatches per step, full recompute
steps.CONFIGS = [
    ("gpt-125m", 12, 768, 12, 1024, 32, 2, False),
    ("gpt-350m", 24, 1024, 16, 2048, 32, 1, False),
    ("gpt-760m", 24, 1536, 16, 16384, 2, 1, False),
    ("gpt-1.3b", 24, 2048, 16, 8192, 1, 2, False),
    ("gpt-1.3b", 24, 2048, 16, 16384, 1, 2, False),
    ("gpt-1.3b", 24, 2048, 16, 32768, 1, 1, True),
    ("gpt-2.7b", 32, 2560, 32, 8192, 1, 2, True),
    ("gpt-2.7b", 32, 2560, 32, 2048, 16, 1, True),
    ("gpt-6.7b", 32, 4096, 32, 4096, 1, 2, True),
    ("gpt-6.7b", 32, 4096, 32, 2048, 4, 1, True),
]

if __name__ == "__main__":
    gpt.attention = default_attention
    rc = steps.main()
    steps.credit(sys.argv[1], "bench/device/steps.py",
                 "bench/device/sdpa_steps.py (SDPA's default backend)")
    sys.exit(rc)
