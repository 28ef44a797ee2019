"""The copies PyTorch's list collectives make of N pieces, on one NVIDIA GPU.

    python3 bench/device/list_collective_copies.py OUT.csv

Before PyTorch 1.9's _all_gather_base, torch.distributed.all_gather with a list of N output
tensors ran NCCL into a flat tensor of N rows (ProcessGroupNCCL's flatten_for_scatter_gather),
then, in the collective's post hook, copied row j into output j with one copy_ per row on the
collective's own stream (outputTensors[i][j].copy_(outputFlattened[i][j], true)); the list
reduce_scatter copies its N inputs into a flat tensor the same way before NCCL runs. DeepSpeed's
ZeRO-3 before 0.5.5 gathered every parameter so (partition_parameters.py, _allgather_param: N
narrow views of one flat tensor). The N copies queue behind the collective; this times them
as the GPU runs them once it reaches them: a long torch.cuda._sleep first, so that the host has
issued every copy before the GPU starts the first (checked: the host's issue time is kept under
a third of the sleep), then the N copies between two CUDA events. It also times the host's
copy_ calls (Python, this PyTorch: informative, not PyTorch 1.8's). Piece sizes of 4 KiB to
8 MiB cover a GPT-175B or 530B weight matrix split over 256-2,240 ranks; 256 copies a round
(a stream queues about a thousand operations before the host blocks), 128 and 512 to check that
a copy's time does not depend on their number.
"""
import datetime
import statistics
import sys
import time

import torch

from cuda_timing import write_csv

KIB = 1024
PIECES = [4 * KIB * 2 ** i for i in range(12)]  # 4 KiB .. 8 MiB
# N copies a round: a stream holds about a thousand queued operations before the host blocks
# (the copies of a list collective over more ranks are the same copies, more of them)
RANKS = 256
CHECKS = [(128, 1024 * KIB), (512, 1024 * KIB), (512, 64 * KIB)]  # other N, same piece
REPS = 5
CLOCK_HZ = 1.98e9  # H100 SXM's boost clock (datasheet); only sizes the sleep, not a result


def copies(ranks, piece):
    """(GPU us a copy, host us a copy) for N = ranks copies of piece bytes: medians."""
    elems = piece // 2
    flat = torch.empty(ranks, elems, device="cuda", dtype=torch.bfloat16)
    outputs = torch.empty(ranks * elems, device="cuda", dtype=torch.bfloat16)
    views = [outputs.narrow(0, j * elems, elems) for j in range(ranks)]
    rows = [flat[j] for j in range(ranks)]
    gpu, host, sleep_s, warm = [], [], 0.02, False
    for _ in range(4 * REPS):
        if len(gpu) == REPS:
            break
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        torch.cuda._sleep(int(sleep_s * CLOCK_HZ))
        a.record()
        t0 = time.perf_counter()
        for j in range(ranks):
            views[j].copy_(rows[j], non_blocking=True)
        issued = time.perf_counter() - t0
        b.record()
        torch.cuda.synchronize()
        if issued > sleep_s / 3:  # the host may have gated the GPU: sleep longer, again
            if sleep_s > 1:
                break
            sleep_s = 10 * issued
        elif warm:  # the first ungated round is a warm-up
            gpu.append(a.elapsed_time(b) * 1e3 / ranks)
            host.append(issued * 1e6 / ranks)
        warm = True
    del flat, outputs, views, rows
    torch.cuda.empty_cache()
    if len(gpu) < REPS:
        sys.exit(f"list_collective_copies.py: the host kept gating the copies at N = {ranks}")
    return statistics.median(gpu), statistics.median(host)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "list_collective_copies.csv"
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for ranks, piece in [(RANKS, p) for p in PIECES] + CHECKS:
        g, h = copies(ranks, piece)
        rows.append((ranks, piece, "%.4g" % g, "%.4g" % (2.0 * piece / g / 1e3), "%.4g" % h))
        print(",".join(map(str, rows[-1])), flush=True)
    write_csv(out, "list_collective_copies.py",
              "N copy_ calls of a piece each, queued behind a sleep; GPU time a copy from CUDA "
              "events around them, rate = read + written bytes / GPU time; host time a copy_ "
              "call (Python)", ["ranks", "piece_bytes", "gpu_us_per_copy", "rate_GBps",
                                "host_us_per_copy"], rows, started)


if __name__ == "__main__":
    main()
