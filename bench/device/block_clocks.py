"""Why torchtitan's compiled Llama block, timed step after step, runs longer than the sum of its
kernels profiled pass by pass (issue 31; docs/validation/torchtitan.md: 0.9-2.1 ms a layer, bf16
and float8 alike): the clock, or time between kernels. Microbenchmark data; sets no parameter.

    python3 bench/device/block_clocks.py OUT.csv --torchao DIR [--smoke]

For four compiled blocks at Llama 3 8B's shape (micro-batch 2 x 8,192, no recomputation), bf16
and with torchao's float8 linears (float8_block.py; DIR as there), three ways: steps timed back
to back by CUDA events (op_sac.timed_steps, 10 after 3 warm-ups); the same steps back to back
under the profiler (5, no synchronisation between forward and backward), whose kernels' device
time is summed a step; and one block's passes profiled apart, each ended by a synchronisation
(block_kernels.profile_passes, what float8_block.py records). Each phase's SM clock and power
are sampled by nvidia-smi every 50 ms (gpu_sampler.Sampler). If the back-to-back kernels sum to
the timed steps, nothing idles between them and the difference from the passes apart is the
kernels' own speed when run alone. The timed window includes the warm-ups (the first compiles
the blocks, the GPU idle) and the back-to-back one the profiler's start, so their clock and
power columns are not the steps' alone (h100_block_clocks.csv: read its kernel sums).
"""
import argparse
import datetime
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import block_kernels
import compile_block
import float8_block
import op_sac
from cuda_timing import write_csv
from gpu_sampler import Sampler, window_fields


def case(shape, float8, smi):
    """The three timings; the sampler's windows (stamps) are read after it closes."""
    name, layers, h, heads, kv, ffn, seq, mbs = shape
    torch._dynamo.reset()
    blocks = float8_block.blocks_for(layers, h, heads, kv, ffn, float8)
    fns = [compile_block.wrap(b, "none", True) for b in blocks]
    freqs = op_sac.rope_table(h // heads, seq).cuda()
    x = torch.randn(mbs, seq, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(mbs, seq, h, device="cuda", dtype=torch.bfloat16)
    t0 = smi.now()
    fwd, bwd, _, _, _ = op_sac.timed_steps(blocks.parameters(), x, g, 3, 10,
                                           compile_block.run_fns, fns, x, freqs)
    timed = (t0, smi.now())
    step = lambda: compile_block.run_fns(fns, x, freqs).backward(g)
    t0, steps = smi.now(), 5
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    back_to_back = (t0, smi.now())
    summed = sum(us for _, us in block_kernels.kernels(prof, steps).values())
    t0 = smi.now()
    apart = block_kernels.profile_passes(fns[0], x, freqs, g, 5)
    apart_w = (t0, smi.now())
    apart_us = sum(us for total in apart.values() for _, us in total.values())
    del blocks, fns, x, g
    torch.cuda.empty_cache()
    per = lambda ms: f"{ms / layers:.3f}"
    return [name, mbs, seq, "float8" if float8 else "bf16",
            per(statistics.median(fwd) + statistics.median(bwd)), per(summed / 1e3),
            f"{apart_us / 1e3:.3f}"], (timed, back_to_back, apart_w)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--torchao", required=True, help="directory holding the torchao package")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, args.torchao)
    started = datetime.datetime.now(datetime.timezone.utc)
    shape = op_sac.SMOKE[0] if args.smoke else op_sac.CASES[0]
    cases = []
    with Sampler() as smi:
        for float8 in (False, True):
            cases.append(case(shape, float8, smi))
    rows = []
    for row, stamps in cases:
        timed, back_to_back, apart = (window_fields(smi.window(*w)) for w in stamps)
        rows.append(row + [timed[1], back_to_back[1], apart[1], timed[3], apart[3]])
        print("block_clocks:", ",".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    write_csv(args.out, "block_clocks.py",
              "compiled torchtitan Llama 3 blocks (9dec370), no recomputation; a layer's ms timed "
              "step after step, its kernels summed over back-to-back steps under the profiler, "
              "and one block's passes profiled apart; each phase's mean SM clock (MHz) and power "
              "(W) from nvidia-smi every 50 ms",
              ["name", "micro_batch", "seq", "precision", "timed_ms", "back_to_back_kernels_ms",
               "apart_kernels_ms", "timed_sm_mhz", "back_to_back_sm_mhz", "apart_sm_mhz",
               "timed_power_w", "apart_power_w"], rows, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
