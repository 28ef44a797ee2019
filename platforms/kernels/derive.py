"""Derives the A100's and H100's kernel tables from the measured H200 table, where nothing
better is published (../../../shared/CALIBRATION-SOURCES.md section 2: for the A100 only the
best-shape GEMM ceiling and FlashAttention-2's forward+backward throughput). The MI250X's table
comes from the architecture model instead (archmodel.py).

    python3 platforms/kernels/derive.py        (from the repository root; writes the tables)

Every time in a derived table is ASSUMED: the H200's efficiency against shape, carried over.
A measured time t splits into a fixed floor t0 (the table's fastest kernel: launch and the
smallest work, which do not scale with the GPU's rates, an assumption) and the rest, which
scales with the ratio of the datasheet rates: the dense bf16 peak for compute-bound kernels
(GEMMs, flash attention), the HBM bandwidth for memory-bound ones (row-wise and element-wise
kernels, the optimizer). t' = t0 + (t - t0) x rate_H200 / rate_target. The host's CPU costs are
carried over unchanged (ASSUMED: the host CPUs differ). The H100 SXM has the H200's compute
(GH100, 132 SMs, same clocks), so only memory-bound kernels scale there.

One exception, where a publication says better: the A100's flash attention. FlashAttention-2
reaches about 60% of the A100's peak but about a third of the H100's (it does not use Hopper's
warpgroup matrix instructions), so carrying the H200's efficiency over halves the A100's flash
throughput (docs/validation/kernels.md). The A100's flash tables take the H200's dependence on
shape at the level of the published A100 benchmark instead (a100_flash below).
"""
import itertools
import os

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = "h200.yaml"
H200 = {"peak_tf": 989.4, "hbm_TBps": 4.8}  # NVIDIA H200 datasheet (dense bf16, HBM3e)
# FP8 tables (gemm_fp8_*) go only to GPUs with FP8 tensor cores (the H100: the H200's GH100
# compute); the A100 has none.
FP8_TARGETS = ("h100.yaml",)
TARGETS = {
    # name: (device, peak bf16 TFLOPS, HBM TB/s, citation)
    "a100.yaml": ("NVIDIA A100 SXM4 80GB", 312.0, 2.039,
                  "NVIDIA A100 datasheet: 312 TFLOPS dense bf16, 2,039 GB/s (80GB SXM)"),
    "h100.yaml": ("NVIDIA H100 SXM5 80GB", 989.4, 3.35,
                  "NVIDIA H100 datasheet: 989.4 TFLOPS dense bf16 (as the H200), 3.35 TB/s"),
}
COMPUTE = ("gemm_", "bgemm_", "flash_", "sdpa_")

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


def grouped_ratio(point, peak_tf, hbm_TBps):
    """A grouped GEMM point's H200 / target ratio: by the bf16 peak where its FLOPs bound it on
    the H200's roofline, by the HBM bandwidth where its bytes do (few tokens an expert: every
    expert's weights read)."""
    e, m, n, k = point
    flops, nbytes = 2.0 * e * m * n * k, 2.0 * e * (m * k + k * n + m * n)
    compute = flops / H200["peak_tf"] > nbytes / H200["hbm_TBps"]  # both in ps
    return H200["peak_tf"] / peak_tf if compute else H200["hbm_TBps"] / hbm_TBps


def derive(src, name, device, peak_tf, hbm_TBps, cite):
    out = []
    out.append(f"# trainsim kernel table for {device}: DERIVED, every time ASSUMED. Generated by")
    out.append("#   python3 platforms/kernels/derive.py")
    out.append(f"# from platforms/kernels/{SOURCE} (measured on an NVIDIA H200): each time t of the")
    out.append("# H200 becomes t0 + (t - t0) x rate_H200 / rate_here, t0 the table's fastest kernel;")
    out.append(f"# compute-bound tables (GEMMs, flash attention) scale by the bf16 peak "
               f"({H200['peak_tf']} -> {peak_tf} TFLOPS),")
    out.append(f"# the others by the HBM bandwidth ({H200['hbm_TBps']} -> {hbm_TBps} TB/s). Rates: "
               "NVIDIA H200 datasheet;")
    out.append(f"# {cite}.")
    if name == "a100.yaml":
        out.append("# Except flash attention: at the level of FlashAttention-2's published A100 benchmark")
        out.append("# (Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png), see derive.py.")
    out.append("# The host's CPU figures are the H200 machine's (ASSUMED). Nothing here was measured on")
    out.append("# this GPU; docs/validation/frontier.md shows how much the Frontier results depend on it.")
    out.append("format: 1")
    out.append(f"device: {device}")
    out.append("provenance: derived")
    out.append(f"framework: {src['framework']} (carried over from the H200, ASSUMED)")
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
        ratio = (H200["peak_tf"] / peak_tf) if tname.startswith(COMPUTE) else (
            H200["hbm_TBps"] / hbm_TBps)
        times = [None if v is None else float(v) for v in t["time_us"]]
        floor = min(v for v in times if v is not None)
        ratios = [ratio] * len(times)
        what = f"{t['what']} (ASSUMED: the H200's x {ratio:.3g} above {floor:.3g} us)"
        if tname.startswith("grouped_mm_"):
            ratios = [grouped_ratio(p, peak_tf, hbm_TBps)
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
        out.append(f"  {tname}:")
        out.append(f"    what: \"{what}\"")
        out.append("    axes:")
        for a, vals in t["axes"].items():
            out.append(f"      {a}: [{', '.join(str(v) for v in vals)}]")
        out.append("    time_us: [")
        for i in range(0, len(new), 12):
            out.append("      " + ", ".join(new[i:i + 12]) + ("," if i + 12 < len(new) else ""))
        out.append("    ]")
    return "\n".join(out) + "\n"


def main():
    with open(os.path.join(HERE, SOURCE)) as f:
        src = yaml.safe_load(f)
    for name, (device, peak, hbm, cite) in TARGETS.items():
        text = derive(src, name, device, peak, hbm, cite)
        path = os.path.join(HERE, name)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
        print(f"derive.py: wrote platforms/kernels/{name}")


if __name__ == "__main__":
    main()
