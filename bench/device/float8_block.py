"""torchtitan's Llama block with torchao's float8 linears (issue 31; docs/validation/torchtitan.md:
the published rows that ran `--float8.enable_float8_linear`), against the same block in bf16:
what torchao's Float8Linear (dynamic tensorwise scaling of the input, the weight and the output
gradient, torch._scaled_mm) takes of a layer's forward, backward and recomputation, eager and
compiled, and what each recomputation mode keeps for the backward. Microbenchmark data for a
model of torchao's float8 that trainsim does not have yet; sets no parameter.

    python3 bench/device/float8_block.py OUT.csv --torchao DIR [--shape I] [--compiled-only]
                                         [--smoke]

DIR holds an importable `torchao` package with its `float8` subpackage: torchao is not on the
device's image, so its pure-Python float8 code is carried there (never committed here; measured
with pytorch/ao's torchao/float8 at 52b6f4d9f, unchanged since eab345c, the torchao of
torchtitan's published H100 runs, beside a one-line torchao/utils.py defining
TORCH_VERSION_AT_LEAST_2_5). The
torchtitan commit the H100 benchmarks ran (9dec370, 2024-12-26) converts every nn.Linear but the
output layer with torchao.float8.convert_to_float8_training and Float8LinearConfig's defaults
(dynamic scaling; enable_fsdp_float8_all_gather only under FSDP, which one rank does not run:
torchtitan/float8.py). The block, the policies and the timing are op_sac.py's and
compile_block.py's (torchtitan's op-level policy saves aten.mm's outputs, and abs and max for
float8's amax, but not _scaled_mm's). The shape is op_sac.CASES[I] (default 0: Llama 3 8B,
micro-batch 2 x 8,192). Writes OUT.csv (the cases) and, unless --compiled-only, OUT with
`_kernels` before `.csv` (one block, no recomputation, bf16 and float8, eager and compiled,
forward and backward apart: each kernel's device time a step from the PyTorch profiler, mean of
5; the first measurement, h100_float8_block_kernels.csv, profiled float8 alone and has no
precision column).
"""
import argparse
import datetime
import statistics
import sys

import torch
import torch.nn as nn

import block_kernels
import compile_block
import op_sac
from cuda_timing import write_csv


def blocks_for(layers, h, heads, kv, ffn, float8):
    torch.manual_seed(0)
    blocks = nn.ModuleList(op_sac.Block(h, heads, kv, ffn) for _ in range(layers)).to(
        "cuda", torch.bfloat16)
    for p in blocks.parameters():
        if p.dim() > 1:
            nn.init.normal_(p, std=0.02)
    if float8:
        from torchao.float8 import Float8LinearConfig, convert_to_float8_training
        convert_to_float8_training(blocks, config=Float8LinearConfig())
    return blocks


def case(name, layers, h, heads, kv, ffn, seq, mbs, precision, mode, compiled, warmup, reps):
    torch._dynamo.reset()
    blocks = blocks_for(layers, h, heads, kv, ffn, precision == "float8")
    fns = [compile_block.wrap(b, mode, compiled) for b in blocks]
    freqs = op_sac.rope_table(h // heads, seq).cuda()
    x = torch.randn(mbs, seq, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(mbs, seq, h, device="cuda", dtype=torch.bfloat16)
    fwd, bwd, held, peak, _ = op_sac.timed_steps(blocks.parameters(), x, g, warmup, reps,
                                                 compile_block.run_fns, fns, x, freqs)
    del blocks, fns, x, g
    torch.cuda.empty_cache()
    return [name, layers, h, heads, kv, ffn, seq, mbs, precision, mode,
            "compiled" if compiled else "eager", f"{statistics.median(fwd):.3f}",
            f"{statistics.median(bwd):.3f}", max(held), max(peak)]


def kernel_rows(shape, compiled, float8, steps=5):
    """One block without recomputation: its kernels by pass, device us a step."""
    _, _, h, heads, kv, ffn, seq, mbs = shape
    torch._dynamo.reset()
    blk = blocks_for(1, h, heads, kv, ffn, float8)[0]
    fn = compile_block.wrap(blk, "none", compiled)
    freqs = op_sac.rope_table(h // heads, seq).cuda()
    x = torch.randn(mbs, seq, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn_like(x)
    build, rows = "compiled" if compiled else "eager", []
    precision = "float8" if float8 else "bf16"
    for pass_, total in block_kernels.profile_passes(fn, x, freqs, g, steps).items():
        for name, (calls, us) in sorted(total.items(), key=lambda kv: -kv[1][1]):
            rows.append([precision, build, pass_, name, f"{calls:g}", f"{us:.1f}"])
    del blk, fn, x, g
    torch.cuda.empty_cache()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--torchao", required=True, help="directory holding the torchao package")
    ap.add_argument("--shape", type=int, default=0, help="index into op_sac.CASES")
    ap.add_argument("--compiled-only", action="store_true")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, args.torchao)
    started = datetime.datetime.now(datetime.timezone.utc)
    warmup, reps = (2, 2) if args.smoke else (3, 10)
    shape = op_sac.SMOKE[0] if args.smoke else op_sac.CASES[args.shape]
    builds = (True,) if args.compiled_only else (False, True)
    rows = []
    for precision in ("bf16", "float8"):
        for mode in ("none", "op", "full"):
            for compiled in builds:
                rows.append(case(*shape, precision, mode, compiled, warmup, reps))
                print("float8_block:", ",".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    note = ("blocks of torchtitan's Llama 3 (9dec370), flash SDPA, bf16 or torchao float8 linears "
            "(dynamic tensorwise), eager and torch.compile (fullgraph, per block, after the "
            "checkpoint wrapper); times median of %d after %d warm-ups; bytes held after the "
            "forward and the step's peak, over the base" % (reps, warmup))
    write_csv(args.out, "float8_block.py", note,
              ["name", "layers", "hidden", "heads", "kv_heads", "ffn", "seq", "micro_batch",
               "precision", "mode", "build", "fwd_ms", "bwd_ms", "held_bytes", "peak_bytes"],
              rows, started)
    if args.compiled_only:
        return 0
    krows = [r for float8 in (False, True) for compiled in (False, True)
             for r in kernel_rows(shape, compiled, float8)]
    write_csv(args.out.replace(".csv", "_kernels.csv"), "float8_block.py",
              "one block of %s (micro-batch %d x %d), bf16 or float8, no recomputation; device us "
              "a step (profiler, mean of 5)" % (shape[0], shape[7], shape[6]),
              ["precision", "build", "pass", "kernel", "calls", "device_us"], krows, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
