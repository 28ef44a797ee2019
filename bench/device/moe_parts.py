"""The parts of a mixture-of-experts layer measured one by one on one GPU (moe.py's layer, as
torchtitan writes it): the microbenchmarks behind trainsim's MoE kernel model and the per-part
errors of docs/validation/moe.md.

    python3 bench/device/moe_parts.py OUTDIR [--smoke]

Writes two CSVs into OUTDIR (the layer's host time is kernel_table.py's, section moe):
  * grouped_mm.csv: torch._grouped_mm over E experts of m tokens each (E 8-128, m 16-16k), for
    the expert shapes of the validation models: the forward y = x W (x [E m, k], W [E, k, n]),
    the input gradient dx = dy W^T and the weight gradient dW = x^T dy (ragged in the
    reduction); and, beside them, the loop of E GEMMs that runs without grouped GEMM. GPU time
    per call: r calls captured in a CUDA graph, median of 5 replays (kernel_table.py's method);
  * parts.csv: for each MoE layer shape of moe_steps.py, the GPU time of each part's forward and
    backward kernels (router, permutation, experts, unpermutation, shared experts) as the
    profiler sums them, their kernel counts, and the bytes each part keeps for the backward
    pass (memory_allocated after its forward, inputs held apart);
"""
import argparse
import os
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import kernel_table
import moe

dev = torch.device("cuda")
bf16 = torch.bfloat16
# (label, hidden, expert FFN): the validation models' expert shapes (moe_steps.CONFIGS).
EXPERT_SHAPES = [("h2048_f768", 2048, 768), ("h2048_f1408", 2048, 1408),
                 ("h2048_f1024", 2048, 1024), ("h4096_f14336", 4096, 14336)]
EXPERTS = [8, 32, 128]
TOKENS = [16, 64, 256, 1024, 4096, 16384]
MAX_ROWS = 1 << 19  # E x m: 512k routed tokens at most


def graph_us(fn):
    try:
        with torch.cuda.stream(kernel_table.STREAM):
            return 1e6 * kernel_table.median_graph_s(fn, target_s=0.003)
    except RuntimeError as e:  # not capturable: eager, CUDA events
        print(f"moe_parts: eager timing ({e.__class__.__name__}: {str(e)[:80]})", file=sys.stderr)
        return 1e3 * kernel_table.time_ms(fn, warmup=3, reps=10)


GROUPED_HEADER = ("shape,hidden,ffn,proj,experts,tokens_per_expert,k,n,fwd_us,dgrad_us,"
                  "wgrad_us,loop_fwd_us")


def grouped_mm_rows(smoke, only=None):
    rows = []
    shapes = EXPERT_SHAPES[:1] if smoke else [s for s in EXPERT_SHAPES if only in (None, s[0])]
    for label, h, f in shapes:
        for proj, k, n in (("fc1", h, f), ("fc2", f, h)):
            for e in EXPERTS[:1] if smoke else EXPERTS:
                for m in TOKENS[:2] if smoke else TOKENS:
                    if e * m > MAX_ROWS or e * k * n > (1 << 31):
                        continue
                    t = e * m
                    x = torch.randn(t, k, device=dev, dtype=bf16)
                    w = torch.randn(e, n, k, device=dev, dtype=bf16).transpose(-2, -1)
                    dy = torch.randn(t, n, device=dev, dtype=bf16)
                    offs = torch.arange(m, t + 1, m, device=dev, dtype=torch.int32)
                    fwd = graph_us(lambda: torch._grouped_mm(x, w, offs=offs))
                    dgrad = graph_us(lambda: torch._grouped_mm(dy, w.transpose(-2, -1),
                                                               offs=offs))
                    xt = x.t()
                    wgrad = graph_us(lambda: torch._grouped_mm(xt, dy, offs=offs))
                    loop = ""
                    if e <= 32:
                        parts = x.split(m)
                        loop = f"{graph_us(lambda: [p @ w[i] for i, p in enumerate(parts)]):.3f}"
                    rows.append(f"{label},{h},{f},{proj},{e},{m},{k},{n},{fwd:.3f},{dgrad:.3f},"
                                f"{wgrad:.3f},{loop}")
                    print(f"moe_parts: grouped_mm {rows[-1]}", file=sys.stderr, flush=True)
                    del x, w, dy, xt
    return rows


def kernel_us(fn, reps=3):
    """The summed GPU time (us) and count of the kernels one call of fn runs (profiler)."""
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    ks = [e for e in prof.events() if e.device_type.name == "CUDA"]
    return sum(e.time_range.elapsed_us() for e in ks) / reps, len(ks) / reps


def part_rows(configs):
    """Per part of one MoE layer at each configuration's tokens: forward and backward kernel
    time and count, and the bytes the part's forward keeps for the backward."""
    rows = ["config,tokens,part,fwd_us,bwd_us,fwd_kernels,bwd_kernels,saved_bytes"]
    seen = set()
    for c in configs:
        key = tuple(sorted((k, v) for k, v in c.items() if k not in ("name", "layers", "micro",
                                                                     "recompute", "vocab")))
        if key in seen:
            continue
        seen.add(key)
        torch.manual_seed(0)
        layer = moe.MoE(c).to(dev, bf16)
        for p in layer.parameters():
            torch.nn.init.normal_(p, std=0.02)
        tokens = c["mbs"] * c["seq"]
        x = torch.randn(tokens, c["hidden"], device=dev, dtype=bf16, requires_grad=True)
        with torch.no_grad():
            scores, top, idx, counts = layer.router(x)
            routed, top_sorted, token = moe.permute(x, top, idx, layer.topk)
            out = layer.experts(routed, counts)
        parts = {
            "router": (lambda: layer.router(x), lambda o: o[1]),
            "permute": (lambda: moe.permute(x, top.detach().requires_grad_(), idx, layer.topk),
                        lambda o: o[0]),
            "experts": (lambda: layer.experts(routed.detach().requires_grad_(), counts),
                        lambda o: o),
            "unpermute": (lambda: moe.unpermute(out.detach().requires_grad_(),
                                                top_sorted.detach().requires_grad_(), token,
                                                torch.zeros_like(x)), lambda o: o),
        }
        if layer.shared is not None:
            parts["shared"] = (lambda: layer.shared(x), lambda o: o)
        for name, (fwd, grad_of) in parts.items():
            f_us, f_n = kernel_us(fwd)
            o = grad_of(fwd())
            dy = torch.randn_like(o)
            # the backward alone: a fresh forward (not timed) before each, then backward
            times, counts_b = [], []
            for _ in range(3):
                x.grad = None  # no accumulation into .grad from the runs before
                layer.zero_grad(set_to_none=True)
                o = grad_of(fwd())
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    o.backward(dy)
                    torch.cuda.synchronize()
                ks = [e for e in prof.events() if e.device_type.name == "CUDA"]
                times.append(sum(e.time_range.elapsed_us() for e in ks))
                counts_b.append(len(ks))
            x.grad = None
            layer.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            kept = fwd()
            torch.cuda.synchronize()
            saved = torch.cuda.memory_allocated() - before
            del kept, o
            rows.append(f"{c['name']},{tokens},{name},{f_us:.2f},{statistics.median(times):.2f},"
                        f"{f_n:.0f},{statistics.median(counts_b):.0f},{saved}")
            print(f"moe_parts: part {rows[-1]}", file=sys.stderr, flush=True)
        del layer, x, routed, out
        torch.cuda.empty_cache()
    return rows


def write(path, header, rows):
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(header + rows) + "\n")
    os.replace(path + ".tmp", path)


def main():
    import moe_steps  # the validation configurations, for the layer shapes

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--grouped-shape", help="only the grouped GEMMs of this shape, appended to "
                    "OUTDIR/grouped_mm.csv (a crash loses one shape, not the sweep)")
    ap.add_argument("--no-grouped", action="store_true", help="the parts only")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    kernel_table.STREAM = torch.cuda.Stream()
    os.makedirs(args.outdir, exist_ok=True)
    header = [f"# bench/device/moe_parts.py on {torch.cuda.get_device_name(0)}, torch "
              f"{torch.__version__}, CUDA {torch.version.cuda}, "
              f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC"]
    grouped = os.path.join(args.outdir, "grouped_mm.csv")
    if args.grouped_shape:
        rows = grouped_mm_rows(False, args.grouped_shape)
        if not os.path.exists(grouped):
            write(grouped, header, [GROUPED_HEADER])
        with open(grouped, "a") as f:
            f.write("".join(r + "\n" for r in rows))
        return 0
    configs = moe_steps.SMOKE if args.smoke else moe_steps.CONFIGS
    write(os.path.join(args.outdir, "parts.csv"), header,
          part_rows([c for c in configs if c.get("first_dense", 0) < c["layers"]]))
    if not args.no_grouped:
        write(grouped, header, [GROUPED_HEADER] + grouped_mm_rows(args.smoke))
    return 0


if __name__ == "__main__":
    sys.exit(main())
