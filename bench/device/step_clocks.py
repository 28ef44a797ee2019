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
after the marker (us), its duration (us), the mean SM clock and instantaneous power of the
samples inside it (the nearest sample's where none falls inside) and how many samples that was;
and OUT_DIR/step_clocks_samples.csv, the step's samples themselves.
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
    """[(kernel, start_us, dur_us, mhz, watts, samples)] of one profiled step after 3 warm-ups,
    and the step's NVML samples [(us after the marker, mhz, watts, 1 s average watts)]."""
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
            watts = sum(x[2] for x in inside) / len(inside)
        elif samples:
            i = min(bisect.bisect_left(times, (a + b) / 2), len(samples) - 1)
            mhz, watts = samples[i][1], samples[i][2]
        else:
            mhz = watts = float("nan")
        rows.append((name, s - t0, e - s, mhz, watts, len(inside)))
    end = t_host + (ivs[-1][2] - t0) * 1e-6 + 0.01
    trace_rows = [((x[0] - t_host) * 1e6,) + x[1:] for x in samples if x[0] <= end]
    return rows, trace_rows


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
    out, out_samples = [], []
    for case in cases:
        try:
            rows, trace_rows = trace(case, nvml)
        except torch.cuda.OutOfMemoryError:
            print(f"step_clocks: {case[0]}: out of memory", file=sys.stderr, flush=True)
            rows, trace_rows = [], []
        out += [[case[0], n, f"{s:.1f}", f"{d:.1f}", f"{m:.0f}", f"{w:.0f}", k]
                for n, s, d, m, w, k in rows]
        out_samples += [[case[0], f"{t:.0f}", m, f"{w:.1f}", f"{a:.1f}"]
                        for t, m, w, a in trace_rows]
        if rows:
            busy = sum(r[2] for r in rows)
            mean = sum(r[2] * r[3] for r in rows) / busy
            print(f"step_clocks: {case[0]}: {len(rows)} kernels, {busy / 1e3:.1f} ms, "
                  f"time-weighted clock {mean:.0f} MHz", file=sys.stderr, flush=True)
        gc.collect()
        torch.cuda.empty_cache()
    nvml.close()
    note = "NVML SM clock and instantaneous power read every 1 ms; validation data"
    write_csv(os.path.join(args.out_dir, "step_clocks.csv"), "step_clocks.py", note,
              ["case", "kernel", "start_us", "dur_us", "sm_mhz", "power_w", "samples"], out,
              started)
    write_csv(os.path.join(args.out_dir, "step_clocks_samples.csv"), "step_clocks.py", note,
              ["case", "us_after_marker", "sm_mhz", "power_w", "power_1s_avg_w"], out_samples,
              started)

if __name__ == "__main__":
    main()
