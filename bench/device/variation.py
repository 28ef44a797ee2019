"""Run-to-run variation of kernels and whole training steps on one GPU: the data a straggler
model needs (issue 30, part 4: a synchronous step waits for the slowest of N ranks). Nothing
here sets a trainsim parameter yet.

    python3 bench/device/variation.py OUT_DIR [--smoke]

Writes OUT_DIR/h200_variation.csv (one row per item: its samples' mean, standard deviation,
coefficient of variation, percentiles, and the expected maximum of n samples drawn from them,
as a ratio to the mean, for n = 8 to 4,096: what a step synchronised over n ranks would wait
for if the ranks' times were independent draws of this one GPU's) and OUT_DIR/h200_steps_raw.csv
(every timed step). Kernels are timed one by one with CUDA events after a warm-up (1,000
samples each, queued back to back); steps with the host clock around a synchronised trainer
step of gpt.py's model (200 samples after 5 warm-ups). The expected maximum is a bootstrap: it
cannot exceed the largest sample, so for n near or beyond the sample count it is a lower bound.
One GPU measures variation in time only, not from chip to chip.
"""
import argparse
import datetime
import os
import random
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import gpt

# GEMMs of GPT-175B's layer under TP 8 at micro-batch 1 (m = 2,048 tokens): QKV, the
# projection, the MLP's two; and a large square one.
GEMMS = [("qkv", 2048, 4608, 12288), ("proj", 2048, 12288, 1536), ("fc1", 2048, 6144, 12288),
         ("fc2", 2048, 12288, 6144), ("square", 8192, 8192, 8192)]
EXPECTED_MAX_OF = [8, 64, 512, 4096]


def kernel_samples(fn, n, warmup=50):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(n)]
    for a, b in events:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) * 1e-3 for a, b in events]


def step_samples(n, warmup, layers, hidden, heads, seq, mbs, n_micro):
    model = gpt.make_model(layers, hidden, heads, seq, False)
    trainer = gpt.Trainer(model)
    data = gpt.batches(n_micro, mbs, seq)
    times = []
    for i in range(warmup + n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        trainer.step(data)
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return times


def expected_max_ratio(samples, n, draws=2000, seed=1):
    rng = random.Random(seed)
    mean = statistics.fmean(samples)
    return statistics.fmean(max(rng.choices(samples, k=n)) for _ in range(draws)) / mean


def summary(kind, name, shape, samples):
    s = sorted(samples)
    mean = statistics.fmean(s)
    std = statistics.pstdev(s)
    pct = lambda p: s[min(len(s) - 1, int(p * len(s)))]
    return [kind, name, shape, len(s), f"{mean:.9f}", f"{std:.9f}", f"{std / mean:.6f}",
            f"{pct(0.5):.9f}", f"{pct(0.9):.9f}", f"{pct(0.99):.9f}", f"{s[-1]:.9f}"] + \
        [f"{expected_max_ratio(s, n):.6f}" for n in EXPECTED_MAX_OF]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    torch.backends.cuda.matmul.allow_tf32 = False
    started = datetime.datetime.now(datetime.timezone.utc)
    n_kernel = 50 if args.smoke else 1000
    dev = torch.device("cuda")
    rows = []
    for name, m, n, k in GEMMS[:2] if args.smoke else GEMMS:
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        rows.append(summary("gemm_fwd", name, f"{m}x{n}x{k}",
                            kernel_samples(lambda: F.linear(x, w), n_kernel)))
        print(f"variation: gemm {name} done", file=sys.stderr, flush=True)
    # flash attention (causal), GPT-175B's 96 heads / TP 8 = 12 of dim 128, sequence 2,048
    q, kk, v = (torch.randn(1, 12, 2048, 128, device=dev, dtype=torch.bfloat16) for _ in range(3))
    rows.append(summary("flash_fwd_causal", "attn", "1x12x2048x128", kernel_samples(
        lambda: F.scaled_dot_product_attention(q, kk, v, is_causal=True), n_kernel)))
    # a memory-bound kernel: LayerNorm over 2,048 x 12,288
    y = torch.randn(2048, 12288, device=dev, dtype=torch.bfloat16)
    ln = torch.nn.LayerNorm(12288, device=dev, dtype=torch.bfloat16)
    rows.append(summary("layer_norm_fwd", "ln", "2048x12288", kernel_samples(lambda: ln(y),
                                                                            n_kernel)))
    print("variation: kernels done", file=sys.stderr, flush=True)
    # whole steps: gpt-760m, sequence 2,048, micro-batch 4 x 2 (as in h200_steps.csv)
    cfg = (2, 256, 4, 512, 2, 2) if args.smoke else (24, 1536, 16, 2048, 4, 2)
    steps = step_samples(20 if args.smoke else 200, 5, *cfg)
    rows.append(summary("step", "gpt-760m" if not args.smoke else "gpt-tiny",
                        "L%d h%d a%d s%d mbs%d x%d" % cfg, steps))
    props = torch.cuda.get_device_properties(0)
    header = [
        "# Run-to-run variation measured by bench/device/variation.py (data for a straggler",
        f"# model; sets no parameter yet). device {torch.cuda.get_device_name(0)} "
        f"({props.total_memory / 2**30:.1f} GiB), torch {torch.__version__}, CUDA "
        f"{torch.version.cuda}, {started:%Y-%m-%d %H:%M} UTC",
        "# times in seconds; max_of_N: the expected maximum of N samples drawn from this item's "
        "samples, over their mean (a bootstrap: a lower bound where N nears the sample count)",
        "kind,name,shape,samples,mean_s,std_s,cv,p50_s,p90_s,p99_s,max_s," +
        ",".join(f"max_of_{n}" for n in EXPECTED_MAX_OF),
    ]
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "h200_variation.csv"), "w") as f:
        f.write("\n".join(header) + "\n")
        for r in rows:
            f.write(",".join(str(v) for v in r) + "\n")
    with open(os.path.join(args.out_dir, "h200_steps_raw.csv"), "w") as f:
        f.write(header[0] + "\n" + header[1] + "\n# every timed step, in order\nstep_s\n")
        for t in steps:
            f.write(f"{t:.9f}\n")
    for r in rows:
        print("variation: %s %s cv %s max_of_4096 %s" % (r[0], r[1], r[6], r[-1]),
              file=sys.stderr)


if __name__ == "__main__":
    main()
