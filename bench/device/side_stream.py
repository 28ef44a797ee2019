"""Memory-bound kernels on a side stream beside GEMMs, on one NVIDIA GPU.

    python3 bench/device/side_stream.py OUT.csv

FSDP1 (FullyShardedDataParallel) runs its gradients' preparation on its post-backward stream
while the compute stream goes on with the next unit's backward: the flat gradient assembled
from the parameters' gradients (torch.cat, bf16: reads and writes 2 bytes an element), cast to
the fp32 reduce dtype (reads 2, writes 4) and divided by the pre-divide factor in place (reads
and writes 4), then the reduce-scatter. Those kernels stream HBM over every SM, so beside GEMMs
they share the GPU rather than hide. For a unit of Llama 3 8B's (218M parameters) and of
MPT-1B's (50M), this times back-to-back bf16 GEMMs (8192^3) alone, the three kernels alone, and
both at once (the kernels on a side stream), and reports the time the kernels
add to the GEMMs as a fraction of their own time alone (1: none of it hidden), with either
enqueued first, three times each. CUDA events, medians of repetitions after warm-ups.
"""
import datetime
import statistics
import sys

import torch

from cuda_timing import time_ms, write_csv

# a unit's weight shapes: Llama 3 8B's layer (wq, wk, wv, wo, w1, w3, w2) and MPT-1B's
UNITS = {
    "llama3-8b": [(4096, 4096), (1024, 4096), (1024, 4096), (4096, 4096), (14336, 4096),
                  (14336, 4096), (4096, 14336)],
    "mpt-1b": [(6144, 2048), (2048, 2048), (8192, 2048), (2048, 8192)],
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "side_stream.csv"
    started = datetime.datetime.now(datetime.timezone.utc)
    torch.manual_seed(0)
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    rows = []
    for name, shapes in UNITS.items():
        grads = [torch.randn(s, device="cuda", dtype=torch.bfloat16) for s in shapes]
        n = sum(g.numel() for g in grads)
        flat = torch.empty(n, device="cuda", dtype=torch.bfloat16)
        reps = max(1, round(4.0 * n / 218e6))  # GEMMs long enough to cover the kernels

        def gemms():
            for _ in range(2 + reps):
                a @ a

        def prepare():
            torch.cat([g.view(-1) for g in grads], out=flat)
            wide = flat.to(torch.float32)
            wide.div_(4.0)

        def both(side_first):
            def run():
                side.wait_stream(torch.cuda.current_stream())
                if not side_first:
                    gemms()
                with torch.cuda.stream(side):
                    prepare()
                if side_first:
                    gemms()
                torch.cuda.current_stream().wait_stream(side)
            return run

        t_prep = time_ms(prepare, warmup=3, reps=15)
        moved = 18.0 * n  # cat 4, cast 6, divide 8 bytes an element
        first = len(rows)
        rows.append((name, "cat, cast, divide alone", "%.4g" % (t_prep * 1e3), "us",
                     "%d elements; %.3g TB/s over 18 bytes an element" % (n, moved / t_prep / 1e9)))
        for side_first in (True, False):
            order = "side kernels enqueued first" if side_first else "GEMMs enqueued first"
            # alternating pairs: the GEMMs' clock drifts under the power limit by more than the
            # kernels take, so each pair's difference is taken, then their median
            added, alone = [], []
            for _ in range(25):
                g = time_ms(gemms, warmup=1, reps=1)
                b = time_ms(both(side_first), warmup=1, reps=1)
                added.append(b - g)
                alone.append(g)
            rows.append((name, "GEMMs alone, " + order, "%.4g" % (statistics.median(alone) * 1e3),
                         "us", "%d x 8192^3 bf16, median of 25" % (2 + reps)))
            rows.append((name, "exposed fraction, " + order,
                         "%.4g" % (statistics.median(added) / t_prep), "fraction",
                         "median of 25 alternating pairs (both - GEMMs alone) over the kernels "
                         "alone; quartiles %.3g, %.3g" % tuple(
                             q / t_prep for q in statistics.quantiles(added, n=4)[::2])))
        for r in rows[first:]:
            print(",".join(map(str, r)), flush=True)
    write_csv(out, "side_stream.py", "memory-bound kernels on a side stream beside GEMMs",
              ["unit", "what", "value", "unit_of_value", "note"], rows, started)


if __name__ == "__main__":
    main()
