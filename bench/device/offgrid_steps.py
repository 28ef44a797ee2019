"""Whole training steps at shapes off the kernel tables' grids, as a plain PyTorch model runs
them, for validation only (nothing here sets a trainsim parameter): issue 31's held-out
question asked of our own runs. Hidden sizes, head dimensions, sequences and micro-batches none
of the H200's tables measures (hidden 1,344-5,120, heads of 96-128, sequences 1,536-12,288,
micro-batches 1-16), GPT blocks with SDPA's own backend choice (sdpa_steps.py's recipe) and
Llama-style blocks (llama_steps.py's).

    python3 bench/device/offgrid_steps.py OUT_GPT.csv OUT_LLAMA.csv [--smoke] [--only NAME,...]

(--only: those configurations alone, e.g. again under PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.)

Timed by steps.py: 3 warm-ups, median of 10, peak of max_memory_allocated; sized for an H200.
"""
import sys

import gpt
import llama_steps
import sdpa_steps
import steps

# name, layers, hidden, heads, seq, micro-batch, microbatches per step, full recompute
GPT_CONFIGS = [
    ("gpt-0.9b-h1792", 24, 1792, 14, 3072, 6, 1, False),
    ("gpt-1.8b-h2304", 28, 2304, 18, 1536, 12, 1, False),
    ("gpt-2.7b-h3072", 24, 3072, 24, 6144, 2, 1, True),
    ("gpt-0.6b-d96", 20, 1536, 16, 12288, 1, 2, False),
    ("gpt-5b-h5120", 16, 5120, 40, 2048, 6, 1, True),
    ("gpt-0.5b-d112", 24, 1344, 12, 2560, 16, 1, False),
]
# name, layers, hidden, heads, kv heads, ffn, seq, micro-batch, microbatches, full recompute
LLAMA_CONFIGS = [
    ("llama-2b-off", 20, 2560, 20, 4, 6912, 6144, 2, 1, False),
    ("llama-4b-off", 24, 3584, 28, 4, 9728, 3072, 3, 1, True),
]

if __name__ == "__main__":
    args = sys.argv[1:]
    smoke = "--smoke" in args
    only = args[args.index("--only") + 1].split(",") if "--only" in args else None
    gpt_out, llama_out = [a for i, a in enumerate(args)
                          if a != "--smoke" and a != "--only" and (i == 0 or args[i - 1] != "--only")]
    gpt.attention = sdpa_steps.default_attention
    steps.CONFIGS = [c for c in GPT_CONFIGS if only is None or c[0] in only]
    sys.argv = [sys.argv[0], gpt_out] + (["--smoke"] if smoke else [])
    rc = steps.main() or 0
    steps.credit(gpt_out, "bench/device/steps.py",
                 "bench/device/offgrid_steps.py (SDPA's default backend)")
    llama_steps.CONFIGS = [c for c in LLAMA_CONFIGS if only is None or c[0] in only]
    sys.argv = [sys.argv[0], llama_out] + (["--smoke"] if smoke else [])
    rc = llama_steps.main() or rc
    steps.credit(llama_out, "bench/device/llama_steps.py", "bench/device/offgrid_steps.py")
    sys.exit(rc)
