"""FSDP2's two copy kernels at the shapes N ranks give them, on one NVIDIA GPU.

    python3 bench/device/fsdp_copy_kernels.py OUT.csv

fsdp_copies.py profiles FSDP2 on one rank, where the all-gather's output holds each parameter
whole. On N ranks foreach_all_gather_copy_out calls torch.ops.fsdp.split_with_sizes_copy on
the output viewed as N rows (each rank's shard of every parameter) into each parameter viewed
as N rows, and foreach_reduce_scatter_copy_in calls torch._chunk_cat on the gradients into the
reduce-scatter's input viewed as N rows, cast to fp32 (torch/distributed/fsdp/_fully_shard/
_fsdp_collectives.py). This times both kernels alone for Llama 3 8B's layer at N = 1, 8, 64
and 512 (CUDA events, medians), with their rates over the bytes they move. At N = 1
torch._chunk_cat takes a slow path (0.38 TB/s on an H100) that FSDP2's own one-rank step did not
(1.82 TB/s in fsdp_copies.py's profile): that row is not FSDP's.
"""
import datetime
import math
import sys

import torch
import torch.distributed.fsdp  # noqa: F401  (registers torch.ops.fsdp)

from cuda_timing import time_ms, write_csv

# Llama 3 8B's layer: wq, wk, wv, wo, w1, w3, w2 and the two norms' weights
SHAPES = [(4096, 4096), (1024, 4096), (1024, 4096), (4096, 4096), (14336, 4096), (14336, 4096),
          (4096, 14336), (4096,), (4096,)]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "fsdp_copy_kernels.csv"
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    numels = [math.prod(s) for s in SHAPES]
    n = sum(numels)
    for ranks in (1, 8, 64, 512):
        # each parameter padded to a multiple of the ranks along dim 0, as FSDP2 shards it
        padded = [math.ceil(s[0] / ranks) * ranks * (math.prod(s[1:]) if len(s) > 1 else 1)
                  for s in SHAPES]
        shard = [p // ranks for p in padded]
        gathered = torch.randn(ranks, sum(shard), device="cuda", dtype=torch.bfloat16)
        params = [torch.empty(ranks, s, device="cuda", dtype=torch.bfloat16) for s in shard]

        def copy_out():
            torch.ops.fsdp.split_with_sizes_copy(gathered, shard, dim=1, out=params)

        grads = [torch.randn(s, device="cuda", dtype=torch.bfloat16) for s in SHAPES]
        rs_input = torch.empty(sum(padded), device="cuda", dtype=torch.float32)

        def copy_in():
            torch._chunk_cat(grads, 0, ranks, out=rs_input.view(ranks, -1))

        t_out, t_in = time_ms(copy_out), time_ms(copy_in)
        rows.append(("copy-out", ranks, "%.4g" % (t_out * 1e3), "%.3g" % (4.0 * n / t_out / 1e9),
                     "split_with_sizes_copy, bf16: 2 + 2 bytes an element"))
        rows.append(("chunk_cat", ranks, "%.4g" % (t_in * 1e3), "%.3g" % (6.0 * n / t_in / 1e9),
                     "bf16 gradients into fp32: 2 + 4 bytes an element"))
        for r in rows[-2:]:
            print(",".join(map(str, r)), flush=True)
        del gathered, params, grads, rs_input
        torch.cuda.empty_cache()
    write_csv(out, "fsdp_copy_kernels.py", "Llama 3 8B's layer, %d parameters" % n,
              ["kernel", "ranks", "us", "TB/s", "note"], rows, started)


if __name__ == "__main__":
    main()
