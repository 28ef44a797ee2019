"""Timing of GPU work with CUDA events, shared by the device benchmarks."""
import statistics

import torch


def time_ms(fn, warmup=5, reps=20):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def alone_and_beside(work, start_noise, head_start_cycles, reps=7):
    """Median times (ms) of `work` alone and while the GPU work `start_noise` enqueues runs on
    another stream, started first (the work's stream sleeps head_start_cycles before it),
    alternated so that clock or temperature drift falls on both alike."""
    s_work, s_noise = torch.cuda.Stream(), torch.cuda.Stream()
    alone, mixed = [], []
    for _ in range(reps):
        for with_noise in (False, True):
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if with_noise:
                with torch.cuda.stream(s_noise):
                    start_noise()
            with torch.cuda.stream(s_work):
                torch.cuda._sleep(head_start_cycles)
                e0.record()
                work()
                e1.record()
            torch.cuda.synchronize()
            (mixed if with_noise else alone).append(e0.elapsed_time(e1))
    return statistics.median(alone), statistics.median(mixed)


def write_csv(path, script, note, head, rows, started):
    """Writes a measurement's CSV whole (a temporary file renamed over path): a comment line
    naming the script, the device, torch, CUDA and the start time (UTC), then head and rows."""
    import csv
    import os
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        f.write(f"# bench/device/{script}: device {torch.cuda.get_device_name(0)}, torch "
                f"{torch.__version__}, CUDA {torch.version.cuda}, {started:%Y-%m-%d %H:%M} UTC; "
                f"{note}\n")
        w = csv.writer(f)
        w.writerow(head)
        w.writerows(rows)
    os.replace(tmp, path)
