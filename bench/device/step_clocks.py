"""Which kernel of a training step runs at which clock, for validation (issue 31,
docs/validation/power.md): the steps run at the 700 W limit with a mean SM clock well below the
boost clock, yet their GEMMs run near their boost-clock rate while their attention runs well
below it, so the clock must move within the step. This times one profiled step per case
(step_kernels.py's cases and model) while a thread reads NVML's SM clock and power every
millisecond (gpu_sampler.Nvml), and gives each kernel the clock read during it.

    python3 bench/device/step_clocks.py OUT_DIR [--cases NAME,...] [--smoke]

Alignment: the profiled step starts with a one-element kernel launched right after a
synchronisation whose host time is taken; every kernel's host time is that time plus its start
after the marker's (off by the launch latency, tens of microseconds, against samples a
millisecond apart). Writes OUT_DIR/step_clocks.csv: per case and kernel in order, its start
after the marker (us), its duration (us), the mean SM clock of the samples inside it (the
nearest sample's where none falls inside) and how many samples that was.
"""
import argparse
import bisect
import datetime
import gc
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import step_kernels
from cuda_timing import write_csv
from gpu_sampler import Nvml

DEFAULT = ["gpt-1.3b-s16k", "gpt-1.3b-s16k-flash", "gpt-2.7b-mb16-full"]


def trace(case, nvml):
    """[(kernel, start_us, dur_us, mhz, samples)] of one profiled step after 3 warm-ups."""
    trainer, data = step_kernels.build(case)
    for _ in range(3):
        trainer.step(data)
    marker = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.cuda.synchronize()
        t_host = time.perf_counter()
        marker.add_(1)
        trainer.step(data)
        torch.cuda.synchronize()
    ivs = sorted(step_kernels.kernel_intervals(prof), key=lambda x: x[1])
    t0 = ivs[0][1]
    samples = [s for s in nvml.samples if s[0] >= t_host - 0.01]
    times = [s[0] for s in samples]
    rows = []
    for name, s, e in ivs:
        a, b = t_host + (s - t0) * 1e-6, t_host + (e - t0) * 1e-6
        inside = samples[bisect.bisect_left(times, a):bisect.bisect_right(times, b)]
        if inside:
            mhz = sum(x[1] for x in inside) / len(inside)
        else:
            i = min(bisect.bisect_left(times, (a + b) / 2), len(samples) - 1)
            mhz = samples[i][1] if samples else float("nan")
        rows.append((name, s - t0, e - s, mhz, len(inside)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--cases", help="comma-separated step_kernels.py case names (default: "
                    + ", ".join(DEFAULT) + ")")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    torch.backends.cuda.matmul.allow_tf32 = False
    started = datetime.datetime.now(datetime.timezone.utc)
    pool = step_kernels.SMOKE if args.smoke else step_kernels.CASES
    names = [c[0] for c in pool] if args.smoke else (
        args.cases.split(",") if args.cases else DEFAULT)
    cases = [c for c in pool if c[0] in names]
    nvml = Nvml(period_s=0.001)
    out = []
    for case in cases:
        try:
            rows = trace(case, nvml)
        except torch.cuda.OutOfMemoryError:
            print(f"step_clocks: {case[0]}: out of memory", file=sys.stderr, flush=True)
            rows = []
        out += [[case[0], n, f"{s:.1f}", f"{d:.1f}", f"{m:.0f}", k] for n, s, d, m, k in rows]
        if rows:
            busy = sum(r[2] for r in rows)
            mean = sum(r[2] * r[3] for r in rows) / busy
            print(f"step_clocks: {case[0]}: {len(rows)} kernels, {busy / 1e3:.1f} ms, "
                  f"time-weighted clock {mean:.0f} MHz", file=sys.stderr, flush=True)
        gc.collect()
        torch.cuda.empty_cache()
    nvml.close()
    write_csv(os.path.join(args.out_dir, "step_clocks.csv"), "step_clocks.py",
              "NVML SM clock read every 1 ms; validation data, sets no parameter",
              ["case", "kernel", "start_us", "dur_us", "sm_mhz", "samples"], out, started)

if __name__ == "__main__":
    main()
