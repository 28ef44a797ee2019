"""The GPU kernels of torchtitan's Llama block (op_sac.py's copy of its 9dec370 code), forward and
backward apart, by kernel name from the PyTorch profiler: what `trainsim profile` prices kernel by
kernel, measured (issue 31; docs/validation/torchtitan.md). Microbenchmark data; sets no
parameter.

    python3 bench/device/block_kernels.py OUT.csv [--smoke]

One block at Llama 3 8B's shape, micro-batch 2 x 8,192, bf16 parameters, no recomputation, eager;
3 warm-ups, then 5 forwards profiled (each graph freed unused), then 5 backwards profiled (each
after an unprofiled forward). Writes OUT.csv: pass, kernel name (cut to 120
characters), calls a step, device us a step (the profiler's sum over the 5 steps / 5).
"""
import argparse
import datetime
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import op_sac
from cuda_timing import write_csv


def kernels(prof, steps):
    rows = {}
    for e in prof.key_averages():
        if e.device_type.name != "CUDA" or e.self_device_time_total <= 0:
            continue
        name = e.key[:120].replace(",", ";")
        calls, us = rows.get(name, (0, 0.0))
        rows[name] = (calls + e.count, us + e.self_device_time_total)
    return {k: (c / steps, us / steps) for k, (c, us) in rows.items()}


def profile_passes(fn, x, freqs, g, steps):
    """fn(x, freqs)'s kernels after 3 warm-ups, each pass apart and followed by a
    synchronisation: {"fwd" | "bwd": {kernel: (calls, device us) a step}}, means of `steps`
    profiled steps (a forward freed unused; a backward after an unprofiled forward)."""
    for _ in range(3):
        fn(x, freqs).backward(g)
    torch.cuda.synchronize()
    out = {}
    for pass_ in ("fwd", "bwd"):
        total = {}
        for _ in range(steps):
            if pass_ == "fwd":
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    y = fn(x, freqs)
                    torch.cuda.synchronize()
                del y  # frees the graph: no backward
            else:
                y = fn(x, freqs)
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    y.backward(g)
                    torch.cuda.synchronize()
            for name, (calls, us) in kernels(prof, steps).items():
                c0, u0 = total.get(name, (0.0, 0.0))
                total[name] = (c0 + calls, u0 + us)
        out[pass_] = total
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    h, heads, kv, ffn, seq, mbs = (256, 4, 2, 512, 512, 2) if args.smoke else (4096, 32, 8, 14336, 8192, 2)
    torch.manual_seed(0)
    blk = op_sac.Block(h, heads, kv, ffn).to("cuda", torch.bfloat16)
    freqs = op_sac.rope_table(h // heads, seq).cuda()
    x = torch.randn(mbs, seq, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn_like(x)
    steps, rows = 5, []
    for pass_, total in profile_passes(blk, x, freqs, g, steps).items():
        for name, (calls, us) in sorted(total.items(), key=lambda kv: -kv[1][1]):
            rows.append([pass_, name, f"{calls:g}", f"{us:.1f}"])
            print("block_kernels:", pass_, f"{us:9.1f}", f"{calls:g}", name, file=sys.stderr)
    write_csv(args.out, "block_kernels.py",
              f"torchtitan Llama 3 block (9dec370) h {h} heads {heads} kv {kv} ffn {ffn}, micro-batch "
              f"{mbs} x {seq}, flash SDPA, bf16, eager; device us a step (mean of 5)",
              ["pass", "kernel", "calls", "device_us"], rows, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
