"""Derives the A100's kernel table from the measured H200 table, where nothing better is
published (../../../shared/CALIBRATION-SOURCES.md section 2: for the A100 only the best-shape
GEMM ceiling and FlashAttention-2's forward+backward throughput), and the H800's from the
measured H100 table. The MI250X's table comes from the architecture model instead (archmodel.py).

    python3 platforms/kernels/derive.py        (from the repository root; writes the tables)
    python3 platforms/kernels/derive.py check  (ctest kernel_tables_derived: the tables are current)
    python3 platforms/kernels/derive.py h100-from-h200 OUT
        (the H100's table as this transfer would derive it from the H200's, for
        docs/validation/h100.sh: the measured H100 table tells how far the transfer errs)

Every time in a derived table is ASSUMED: the H200's efficiency against shape, carried over.
A measured time t splits into a fixed floor t0 (the table's fastest kernel: launch and the
smallest work, which do not scale with the GPU's rates, an assumption) and the rest, which
scales with the ratio of the datasheet rates: the dense bf16 peak for compute-bound kernels
(GEMMs, flash attention), the HBM bandwidth for memory-bound ones (row-wise and element-wise
kernels, the optimizer). t' = t0 + (t - t0) x rate_H200 / rate_target. The host's CPU costs are
carried over unchanged (ASSUMED: the host CPUs differ). The H100 SXM has the H200's compute
(GH100, 132 SMs, same clocks), so only memory-bound kernels would scale there; its table is
measured now (bench/device/kernel_table.py on an H100 80GB HBM3, 2026-12-05), and the transfer
to it is kept only to be checked against that measurement.

The H800 (DeepSeek-V3's cluster, platforms/h800.yaml) has the measured H100's table (the same
GH100 and HBM3, ASSUMED to run the same kernels alike) and, in place of the H100's measured
torch._scaled_mm block-scaled tables, the
block-scaled FP8 GEMMs DeepSeek trained with (`training.fp8_recipe: blockwise`): the per-tensor
forward table x one factor, the geometric mean over the shapes DeepGEMM's first README published
of (DeepSeek's earlier kernels' time / the per-tensor table's), deepseek_block_factor below.

One exception, where a publication says better: the A100's flash attention. FlashAttention-2
reaches about 60% of the A100's peak but about a third of the H100's (it does not use Hopper's
warpgroup matrix instructions), so carrying the H200's efficiency over halves the A100's flash
throughput (docs/validation/kernels.md). The A100's flash tables take the H200's dependence on
shape at the level of the published A100 benchmark instead (a100_flash below).
"""
import itertools
import math
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = "h200.yaml"
H200 = {"peak_tf": 989.4, "hbm_TBps": 4.8}  # NVIDIA H200 datasheet (dense bf16, HBM3e)
# FP8 tables (gemm_fp8_*) go only to GPUs with FP8 tensor cores (the H100: the H200's GH100
# compute); the A100 has none.
FP8_TARGETS = ("h100.yaml", "h100-hbm2e.yaml")
TARGETS = {
    # name: (device, peak bf16 TFLOPS, HBM TB/s, citation)
    "a100.yaml": ("NVIDIA A100 SXM4 80GB", 312.0, 2.039,
                  "NVIDIA A100 datasheet: 312 TFLOPS dense bf16, 2,039 GB/s (80GB SXM)"),
}
# From the measured H100 table (the same GH100 compute): the H100 with 96 GB of HBM2e at
# 2.4 TB/s that Meta's Grand Teton hosts carry, which torchtitan's 2024 benchmarks ran
# (pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md: "96GB HBM2e with 2.4 TB/sec
# peak memory bandwidth", a 500 W power limit, set by the platform's power model).
H100_SOURCE = ("h100.yaml", {"peak_tf": 989.4, "hbm_TBps": 3.35})  # NVIDIA H100 datasheet (SXM5)
H100_TARGETS = {
    "h100-hbm2e.yaml": ("NVIDIA H100 SXM5 96GB HBM2e", 989.4, 2.4,
                        "torchtitan's benchmark page: 96 GB of HBM2e at 2.4 TB/s, the GH100 "
                        "compute (its peak ASSUMED the SXM5's: the page does not know it)"),
}
# Derived only to be checked against the measured table (h100-from-h200).
TRANSFER_CHECKS = {
    "h100.yaml": ("NVIDIA H100 SXM5 80GB", 989.4, 3.35,
                  "NVIDIA H100 datasheet: 989.4 TFLOPS dense bf16 (as the H200), 3.35 TB/s"),
}
COMPUTE = ("gemm_", "bgemm_", "flash_", "sdpa_")
# The H800: the measured H100's table (same GH100 compute and HBM3) under its own name, with
# DeepSeek's block-scaled FP8 GEMMs (DEEPGEMM_A6D97A1) in place of torch's.
H800 = ("h800.yaml", "NVIDIA H800 SXM5 80GB", "h100.yaml",
        "The H800 is the H100 SXM5's GH100 with its HBM3, NVLink cut to 400 GB/s")

# DeepGEMM's README at its first release (deepseek-ai/DeepGEMM a6d97a1, 2025-02-25): FP8 GEMMs
# with DeepSeek-V3's fine-grained scaling (1 x 128 activation tiles, 128 x 128 weight blocks,
# partial sums promoted to fp32 on the CUDA cores: [DSV3] 3.3) on an H800 (NVCC 12.8), TFLOPS,
# and the speedup over "our internally and carefully optimized implementation based on CUTLASS
# 3.6", the kernels DeepSeek had before it, ASSUMED those of V3's training (DeepGEMM came out
# after the report). Forward (NT) shapes at 4,096 tokens and the grouped ones as 4 groups of
# 8,192 tokens: DeepSeek-V3's own (4 experts a GPU at EP 64).
# (m, n, k): (what, DeepGEMM TFLOPS, speedup)
DEEPGEMM_A6D97A1 = {
    (4096, 2112, 7168): ("Q and KV down-projection", 1058, 1.1),
    (4096, 24576, 1536): ("Q up-projection", 990, 1.0),
    (4096, 32768, 512): ("KV up-projection", 590, 1.0),
    (4096, 7168, 16384): ("output projection", 1358, 1.2),
    (4096, 4096, 7168): ("shared expert FC1", 1304, 1.1),
    (4096, 7168, 2048): ("shared expert FC2", 1025, 1.1),
    (8192, 4096, 7168): ("routed experts FC1 (grouped, 4 x 8,192)", 1297, 1.2),
    (8192, 7168, 2048): ("routed experts FC2 (grouped, 4 x 8,192)", 1099, 1.2),
}

# FlashAttention-2 forward + backward TFLOPS on an A100 SXM4 80GB, published by its authors
# (Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png: hidden 2048, head dim 64
# or 128, batch 16,384 / seq, bf16; figures as read in ../shared/CALIBRATION-SOURCES.md 2.b),
# by (causal, head dim), for seq 512 .. 16,384 (None: the label is hidden in the figure).
FA2_SEQS = [512, 1024, 2048, 4096, 8192, 16384]
FA2_A100 = {
    (False, 64): [132, 153, 162, 171, 175, 176],
    (False, 128): [None, None, 187, 196, 201, 203],
    (True, 64): [88, 119, 140, 156, 165, 171],
    (True, 128): [99, 133, 155, 173, 182, 189],
}


def h200_time(src, name, bh, s, d):
    """The H200 table's time at a grid point; beyond the largest batch x heads measured, that
    point's time grown in proportion (the GPU is full there). None where not measured."""
    t = src["tables"][name]
    axes = [list(v) for v in t["axes"].values()]
    scale = 1.0
    if bh > axes[0][-1]:
        scale, bh = bh / axes[0][-1], axes[0][-1]
    if bh not in axes[0] or s not in axes[1] or d not in axes[2]:
        return None
    i = (axes[0].index(bh) * len(axes[1]) + axes[1].index(s)) * len(axes[2]) + axes[2].index(d)
    v = t["time_us"][i]
    return None if v is None else float(v) * scale


def fa2_factor(src, causal, d, s):
    """A100 time / H200 time of flash forward + backward at the published benchmark's shape of
    (causal, d), at the published sequence nearest s."""
    suffix = "_causal" if causal else ""
    pairs = []
    for seq, tflops in zip(FA2_SEQS, FA2_A100[(causal, d)]):
        heads, batch = 2048 // d, 16384 // seq
        tf = h200_time(src, "flash_fwd" + suffix, batch * heads, seq, d)
        tb = h200_time(src, "flash_bwd" + suffix, batch * heads, seq, d)
        if tflops is None or tf is None or tb is None:
            continue
        flops = 3.5 * 4 * batch * seq * seq * heads * d / (2 if causal else 1)
        pairs.append((seq, flops / (tflops * 1e12) / ((tf + tb) * 1e-6)))
    return min(pairs, key=lambda p: abs(p[0] - s))[1]


def a100_flash(src, tname, axes, times):
    """The A100's flash table: the H200's dependence on shape, set to the published A100 level
    by the factor at the same (causal, head dim, nearest sequence); head dims between 64 and 128
    take the factors' geometric interpolation."""
    causal = tname.endswith("_causal")
    bhs, seqs, ds = (list(v) for v in axes.values())
    out = []
    i = 0
    for _ in bhs:
        for s in seqs:
            for d in ds:
                v = times[i]
                i += 1
                if v is None:
                    out.append(None)
                    continue
                lo, hi = fa2_factor(src, causal, 64, s), fa2_factor(src, causal, 128, s)
                w = min(1.0, max(0.0, (d - 64) / 64))
                out.append(v * lo ** (1 - w) * hi ** w)
    return out


def h200_gemm_boost(times):
    """The H200 table's GEMM times brought to the boost clock: its points were timed back to
    back, into the H200's 700 W limit, by a factor the H200 platform measured by the point's
    time (platforms/hgx-h200.yaml power_limit.gemm_table, interpolated in log time and held
    beyond its ends, as workloads/power.c's ts_power_table_ratio does). A GPU without a power
    model of its own (the A100) takes the datasheet's peak, a boost-clock rate, so it must not
    inherit the H200's limit."""
    with open(os.path.join(os.path.dirname(HERE), "hgx-h200.yaml")) as f:
        anchors = yaml.safe_load(f)["gpu"]["power_limit"]["gemm_table"]
    at = [float(str(t).removesuffix("us")) for t in anchors["time"]]
    ratio = [float(r) for r in anchors["ratio"]]

    def factor(t):
        if t <= at[0]:
            return ratio[0]
        for i in range(1, len(at)):
            if t < at[i]:
                f = math.log(t / at[i - 1]) / math.log(at[i] / at[i - 1])
                return ratio[i - 1] + f * (ratio[i] - ratio[i - 1])
        return ratio[-1]

    return [None if t is None else t / factor(t) for t in times]


def grouped_ratio(point, peak_tf, hbm_TBps, rates):
    """A grouped GEMM point's source / target ratio: by the bf16 peak where its FLOPs bound it
    on the source's roofline, by the HBM bandwidth where its bytes do (few tokens an expert:
    every expert's weights read)."""
    e, m, n, k = point
    flops, nbytes = 2.0 * e * m * n * k, 2.0 * e * (m * k + k * n + m * n)
    compute = flops / rates["peak_tf"] > nbytes / rates["hbm_TBps"]  # both in ps
    return rates["peak_tf"] / peak_tf if compute else rates["hbm_TBps"] / hbm_TBps


def table_lines(name, what, axes, values):
    """A kernel table's YAML lines (platforms/README.md's format): `values` are its times as
    written, null for a point not measured, twelve a line."""
    out = [f"  {name}:", f"    what: \"{what}\"", "    axes:"]
    out += [f"      {a}: [{', '.join(str(v) for v in vals)}]" for a, vals in axes.items()]
    out.append("    time_us: [")
    for i in range(0, len(values), 12):
        out.append("      " + ", ".join(values[i:i + 12]) + ("," if i + 12 < len(values) else ""))
    out.append("    ]")
    return out


def table_us(t, point):
    """A table's time at a point inside its grid: multilinear in the logarithms of the axes and
    the time, as trainsim's lookup (workloads/kernels.c)."""
    axes = [list(v) for v in t["axes"].values()]
    corners = []
    for values, x in zip(axes, point):
        j = max(i for i, v in enumerate(values[:-1]) if v <= x)
        lo, hi = values[j], values[j + 1]
        corners.append((j, (math.log(x) - math.log(lo)) / (math.log(hi) - math.log(lo))))
    log_t = 0.0
    for ups in itertools.product((0, 1), repeat=len(axes)):
        w, index = 1.0, 0
        for (j, frac), up, values in zip(corners, ups, axes):
            w *= frac if up else 1 - frac
            index = index * len(values) + j + up
        if w:
            log_t += w * math.log(float(t["time_us"][index]))
    return math.exp(log_t)


def deepseek_block_factor(fwd_table):
    """DeepSeek's block-scaled FP8 GEMMs over the per-tensor forward table: the geometric mean,
    over DeepGEMM's published shapes, of the earlier kernels' time (DeepGEMM's TFLOPS / its
    speedup) over the table's time at the same shape; with the smallest and largest ratio."""
    ratios = []
    for (m, n, k), (_, tflops, speedup) in DEEPGEMM_A6D97A1.items():
        earlier_us = 2.0 * m * n * k / (tflops / speedup * 1e12) * 1e6
        ratios.append(earlier_us / table_us(fwd_table, (m, n, k)))
    mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    return mean, min(ratios), max(ratios)


def block_tables(fwd_table):
    """The H800's gemm_fp8_block tables: the per-tensor forward table's times above its floor x
    deepseek_block_factor, for the forward and input gradient and, ASSUMED alike (only forward
    shapes were published), the weight gradient."""
    factor, lo, hi = deepseek_block_factor(fwd_table)
    times = [None if v is None else float(v) for v in fwd_table["time_us"]]
    floor = min(v for v in times if v is not None)
    new = ["null" if v is None else f"{floor + (v - floor) * factor:.4g}" for v in times]
    out = []
    for name, operands in (("gemm_fp8_block_fwd", "1 x 128 tiles x 128 x 128 weight blocks"),
                           ("gemm_fp8_block_wgrad", "1 x 128 tiles x 1 x 128 tiles")):
        what = (f"FP8 GEMM with DeepSeek-V3's block scales, {operands}, fp32 promotion every 128 "
                f"(DeepSeek's kernels: the per-tensor forward table above {floor:.3g} us x "
                f"{factor:.3f}, the geometric mean of their published time over the table's at "
                f"DeepGEMM's 8 shapes, {lo:.2f}-{hi:.2f}; derive.py)")
        out += table_lines(name, what, fwd_table["axes"], new)
    return out


def derive(src, name, device, peak_tf, hbm_TBps, cite, source=SOURCE, rates=None):
    rates = rates or H200
    gpu = src["device"]
    out = []
    out.append(f"# trainsim kernel table for {device}: DERIVED, every time ASSUMED. Generated by")
    out.append("#   python3 platforms/kernels/derive.py")
    out.append(f"# from platforms/kernels/{source} (measured on an {gpu}): each time t there")
    out.append("# becomes t0 + (t - t0) x rate_there / rate_here, t0 the table's fastest kernel;")
    out.append(f"# compute-bound tables (GEMMs, flash attention) scale by the bf16 peak "
               f"({rates['peak_tf']} -> {peak_tf} TFLOPS),")
    out.append(f"# the others by the HBM bandwidth ({rates['hbm_TBps']} -> {hbm_TBps} TB/s). Rates: "
               "its datasheet;")
    out.append(f"# {cite}.")
    if name == "a100.yaml":
        out.append("# Except flash attention: at the level of FlashAttention-2's published A100 benchmark")
        out.append("# (Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png), see derive.py.")
        out.append("# The GEMMs from the H200's times at its boost clock (its table was timed into its")
        out.append("# 700 W limit: platforms/hgx-h200.yaml gemm_table); the A100 has no power model, so")
        out.append("# it runs them at its datasheet (boost-clock) rate, ASSUMED.")
    out.append(f"# The host's CPU figures are the {gpu} machine's (ASSUMED). Nothing here was measured")
    out.append("# on this GPU.")
    out.append("format: 1")
    out.append(f"device: {device}")
    out.append("provenance: derived")
    out.append(f"framework: {src['framework']} (carried over from the {gpu}, ASSUMED)")
    out.append("software:")
    for k, v in src["software"].items():
        out.append(f"  {k}: {v}")
    out.append("tables:")
    for tname, t in src["tables"].items():
        if tname.startswith("gemm_fp8_") and name not in FP8_TARGETS:
            continue
        # PyTorch's SDPA runs cuDNN's attention by default only on sm90 and sm100 (sdp_utils.cpp,
        # check_prefer_cudnn_attention): an A100 runs the flash backend, priced by flash_*.
        if tname.startswith("sdpa_") and name == "a100.yaml":
            continue
        ratio = (rates["peak_tf"] / peak_tf) if tname.startswith(COMPUTE) else (
            rates["hbm_TBps"] / hbm_TBps)
        times = [None if v is None else float(v) for v in t["time_us"]]
        boost = name == "a100.yaml" and tname in ("gemm_fwd", "gemm_dgrad", "gemm_wgrad")
        if boost:
            times = h200_gemm_boost(times)
        floor = min(v for v in times if v is not None)
        ratios = [ratio] * len(times)
        what = (f"{t['what']} (ASSUMED: the H200's{' at its boost clock' if boost else ''} x "
                f"{ratio:.3g} above {floor:.3g} us)")
        if tname.startswith("grouped_mm_"):
            ratios = [grouped_ratio(p, peak_tf, hbm_TBps, rates)
                      for p in itertools.product(*t["axes"].values())]
            what = (f"{t['what']} (ASSUMED: the H200's above {floor:.3g} us, x the peak ratio "
                    "where the H200's roofline is compute-bound, x the HBM ratio where reading "
                    "every expert's weights bounds it)")
        new = ["null" if v is None else f"{floor + (v - floor) * r:.4g}"
               for v, r in zip(times, ratios)]
        if name == "a100.yaml" and tname.startswith("flash_"):
            new = ["null" if v is None else f"{v:.4g}" for v in a100_flash(src, tname, t["axes"], times)]
            what = (f"{t['what']} (the H200's shape dependence at the level of FlashAttention-2's "
                    "published A100 forward + backward benchmark; the split between forward and "
                    "backward ASSUMED the H200's)")
        out += table_lines(tname, what, t["axes"], new)
    return "\n".join(out) + "\n"


def derived_texts():
    """Every derived table's text, by file name."""
    with open(os.path.join(HERE, SOURCE)) as f:
        src = yaml.safe_load(f)
    texts = {}
    for name, (device, peak, hbm, cite) in TARGETS.items():
        texts[name] = derive(src, name, device, peak, hbm, cite)
    source, rates = H100_SOURCE
    with open(os.path.join(HERE, source)) as f:
        h100 = yaml.safe_load(f)
    for name, (device, peak, hbm, cite) in H100_TARGETS.items():
        texts[name] = derive(h100, name, device, peak, hbm, cite, source, rates)
    name, device, base, cite = H800
    with open(os.path.join(HERE, base)) as f:
        base_text = f.read()
    fwd_table = yaml.safe_load(base_text)["tables"]["gemm_fp8_fwd"]
    factor, lo, hi = deepseek_block_factor(fwd_table)
    header = [f"# trainsim kernel table for {device}: DERIVED. Generated by",
              "#   python3 platforms/kernels/derive.py",
              f"# {cite}:",
              f"# platforms/kernels/{base}'s measured tables (its header below) under this name,",
              "# ASSUMED alike, and the block-scaled FP8 GEMMs DeepSeek-V3 trained with in place",
              f"# of torch's: the per-tensor forward table x {factor:.3f} above its floor (DeepGEMM's",
              "# first README, a6d97a1: its H800 TFLOPS over its speedup on DeepSeek's earlier",
              "# kernels, against this table at the same 8 forward shapes: "
              f"{lo:.2f}-{hi:.2f} times its time).",
              "#"]
    body, skipping = [], False
    for line in base_text.rstrip("\n").split("\n"):
        if line.startswith("  ") and not line.startswith("   "):  # a table's (or figure's) key
            skipping = line.startswith("  gemm_fp8_block_")
        if skipping:
            continue
        if line.startswith("device:"):
            body += [f"device: {device}", "provenance: derived"]
        else:
            body.append(line)
    texts[name] = "\n".join(header + body + block_tables(fwd_table)) + "\n"
    return texts


def main():
    texts = derived_texts()
    if sys.argv[1:] == ["check"]:
        for name, text in texts.items():
            with open(os.path.join(HERE, name)) as f:
                if f.read() != text:
                    sys.exit(f"derive.py: platforms/kernels/{name} is not derive.py's output: run "
                             "python3 platforms/kernels/derive.py")
        print(f"derive.py: {', '.join(texts)} are current")
        return
    if len(sys.argv) == 3 and sys.argv[1] == "h100-from-h200":
        with open(os.path.join(HERE, SOURCE)) as f:
            src = yaml.safe_load(f)
        with open(sys.argv[2], "w") as f:
            f.write(derive(src, "h100.yaml", *TRANSFER_CHECKS["h100.yaml"]))
        return
    if sys.argv[1:]:
        sys.exit(__doc__)
    for name, text in texts.items():
        path = os.path.join(HERE, name)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
        print(f"derive.py: wrote platforms/kernels/{name}")


if __name__ == "__main__":
    main()
