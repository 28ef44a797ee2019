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
