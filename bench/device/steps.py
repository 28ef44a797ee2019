"""Whole training steps of GPT models on one GPU, for validation only (nothing here sets a
trainsim parameter): docs/validation/h200.sh holds them against `trainsim run`.

    python3 bench/device/steps.py OUT.csv [--smoke]

Each configuration trains gpt.py's model with gpt.Trainer (bf16, fp32 main grads and master
weights, fused AdamW, flash attention, hidden dropout 0.1): 3 warm-up iterations, then 10
timed ones (host clock, the GPU synchronised before and after each); the median is reported
with the peak of torch.cuda.max_memory_allocated. A configuration that runs out of memory is
reported as such. The CSV's header names the device, versions and date.
"""
import argparse
import datetime
import gc
import os
import statistics
import sys
import time

import torch

import gpt

# name, layers, hidden, heads, seq, micro-batch, microbatches per step, full recompute
CONFIGS = [
    ("gpt-125m", 12, 768, 12, 1024, 16, 2, False),
    ("gpt-125m", 12, 768, 12, 2048, 8, 2, False),
    ("gpt-350m", 24, 1024, 16, 1024, 1, 4, False),
    ("gpt-350m", 24, 1024, 16, 2048, 8, 2, False),
    ("gpt-760m", 24, 1536, 16, 2048, 4, 2, False),
    ("gpt-1.3b", 24, 2048, 16, 2048, 4, 2, False),
    ("gpt-1.3b", 24, 2048, 16, 4096, 2, 2, True),
    ("gpt-1.3b", 24, 2048, 16, 8192, 1, 2, False),
    ("gpt-2.7b", 32, 2560, 32, 2048, 2, 2, False),
    ("gpt-2.7b", 32, 2560, 32, 2048, 8, 2, True),
    ("gpt-2.7b", 32, 2560, 32, 2048, 16, 1, False),
    ("gpt-6.7b", 32, 4096, 32, 2048, 1, 2, True),
    ("gpt-6.7b", 32, 4096, 32, 2048, 2, 1, False),
]
SMOKE = [("gpt-tiny", 2, 256, 4, 512, 2, 2, False), ("gpt-tiny", 2, 256, 4, 512, 2, 2, True)]


def run(cfg, warmup, reps):
    name, layers, h, heads, seq, mbs, n_micro, recompute = cfg
    return time_training(lambda: (gpt.Trainer(gpt.make_model(layers, h, heads, seq, recompute)),
                                  gpt.batches(n_micro, mbs, seq)), warmup, reps)


def write_lines(path, lines):
    """Writes the lines whole: a temporary file renamed over path (after each configuration,
    so that a run cut short keeps what it measured)."""
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)


def credit(path, measurer, instead):
    """Names the script that ran another's main as what measured path's CSV (rewritten whole)."""
    with open(path) as f:
        text = f.read().replace(f"measured by {measurer}", f"measured by {instead}", 1)
    write_lines(path, text.rstrip("\n").split("\n"))


def timing_fields(med, lo, hi):
    """A timed configuration's median, min and max as CSV fields (empty where it did not run)."""
    return ["" if v is None else f"{v:.6f}" for v in (med, lo, hi)]


def time_training(build, warmup, reps):
    """Steps of the (trainer, data) that build() makes: ("ok", median, min, max) or ("oom", ...),
    and the peak of torch.cuda.max_memory_allocated."""
    torch.cuda.reset_peak_memory_stats()
    times = []
    trainer = data = None
    try:
        trainer, data = build()
        for i in range(warmup + reps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            loss = trainer.step(data)
            torch.cuda.synchronize()
            if i >= warmup:
                times.append(time.perf_counter() - t0)
        assert torch.isfinite(loss).item(), "the loss is not finite"
        result = ("ok", statistics.median(times), min(times), max(times))
    except torch.OutOfMemoryError:
        result = ("oom", None, None, None)
    peak = torch.cuda.max_memory_allocated()
    trainer = data = None
    gc.collect()
    torch.cuda.empty_cache()
    return result, peak


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    torch.backends.cuda.matmul.allow_tf32 = False
    started = datetime.datetime.now(datetime.timezone.utc)
    configs = SMOKE if args.smoke else CONFIGS
    props = torch.cuda.get_device_properties(0)
    header = [
        "# Whole training steps measured by bench/device/steps.py (validation data: sets no",
        f"# parameter). device {torch.cuda.get_device_name(0)} ({props.total_memory / 2**30:.1f}"
        f" GiB), torch {torch.__version__}, CUDA {torch.version.cuda}, "
        f"{started:%Y-%m-%d %H:%M} UTC",
        "# step times in seconds (median, min, max of 10 after 3 warm-ups); peak bytes from "
        "torch.cuda.max_memory_allocated",
        "name,layers,hidden,heads,seq,micro_batch,microbatches,recompute,params,status,"
        "step_s,min_s,max_s,peak_bytes",
    ]
    rows = []
    for cfg in configs:
        (status, med, lo, hi), peak = run(cfg, 2 if args.smoke else 3, 3 if args.smoke else 10)
        name, layers, h, heads, seq, mbs, n_micro, recompute = cfg
        params = gpt.n_params(layers, h, seq)
        rows.append([name, layers, h, heads, seq, mbs, n_micro, "full" if recompute else "none",
                     params, status, *timing_fields(med, lo, hi),
                     peak])
        print(f"steps: {name} s{seq} mbs{mbs} x{n_micro} {'full' if recompute else 'none'}: "
              f"{status} {'' if med is None else f'{med * 1e3:.1f} ms'} peak "
              f"{peak / 2**30:.2f} GiB", file=sys.stderr, flush=True)
        tmp = args.out + ".tmp"  # rewritten whole after each configuration
        with open(tmp, "w") as f:
            f.write("\n".join(header) + "\n")
            for r in rows:
                f.write(",".join(str(v) for v in r) + "\n")
        os.replace(tmp, args.out)

if __name__ == "__main__":
    main()
