#!/usr/bin/env python3
"""Regenerates docs/validation/selene.md: trainsim against Megatron-LM's weak-scaling table on
NVIDIA's Selene (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters
Using Megatron-LM", SC'21, arXiv:2104.04473, Table 1: GPT models of 1.7B to 1T parameters on 32
to 3,072 A100 80GB GPUs).

    python3 docs/validation/selene.py      (after a build; a few minutes)

VALIDATION ONLY: the published throughputs set no parameter. The paper gives each run's model,
tensor and pipeline sizes, GPUs and batch, but not its micro-batch nor whether the pipeline runs
were interleaved, which it tuned per run (its Figures 12 and 16). trainsim therefore predicts
every micro-batch of 1, 2, 4 and 8 that fits (and, with a pipeline, the interleaved schedule
where Megatron-LM allows it) and reports the fastest, as the authors chose theirs by measuring,
with the range of all those predictions."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAINSIM = os.path.join(ROOT, "build", "trainsim")
PLATFORM = os.path.join(ROOT, "platforms", "dgx-a100.yaml")
PAGE = os.path.join(ROOT, "docs", "validation", "selene.md")
PLATFORM_NODES = 140  # platforms/dgx-a100.yaml's SuperPOD; Selene had more (--set nodes)
SEQ, VOCAB = 2048, 51200  # [MLM21] section 5: every model of Table 1
# [MLM21] Table 1: parameters (B), heads, hidden, layers, tensor, pipeline, GPUs, batch,
# achieved teraFLOP/s per GPU (the paper's equation 3 over the measured iteration time).
TABLE1 = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 138),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 142),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163),
]
MICRO_BATCHES = (1, 2, 4, 8)


def paper_flops(batch, layers, h):
    """[MLM21] equation 3: 96 B s l h^2 (1 + s / 6h + V / 16 l h), recomputation counted."""
    return 96 * batch * SEQ * layers * h * h * (1 + SEQ / (6 * h) + VOCAB / (16 * layers * h))


def schedules(layers, pp, microbatches):
    """1F1B, and with a pipeline the interleaved schedule of the fewest virtual stages that
    Megatron-LM accepts (layers divisible by pp x v, microbatches by pp)."""
    out = [("1F1B", [])]
    if pp > 1 and microbatches % pp == 0:
        for v in (2, 3, 4, 5, 6):
            if layers % (pp * v) == 0:
                out.append((f"interleaved x{v}",
                            ["--schedule", "interleaved", "--virtual-stages", str(v)]))
                break
    return out


def predict(row, mb, extra, work):
    """teraFLOP/s per GPU by the paper's equation, or None where the run does not fit."""
    params, heads, h, layers, tp, pp, gpus, batch, _ = row
    wl = os.path.join(work, "wl.yaml")
    with open(wl, "w") as f:
        json.dump({"name": f"gpt-{params}b",
                   "model": {"num_layers": layers, "hidden_size": h, "num_attention_heads": heads,
                             "seq_length": SEQ, "vocab_size": VOCAB},
                   "training": {"global_batch_size": batch, "micro_batch_size": mb,
                                "precision": "fp16", "optimizer": "adam"},
                   "parallelism": {"tensor": tp, "pipeline": pp, "recompute": "full",
                                   "flash_attention": False}}, f)
    out = os.path.join(work, "out")
    cmd = [TRAINSIM, "run", wl, "--platform", PLATFORM, "--gpus", str(gpus), "--quiet",
           "--out", out, "--set", f"nodes={max(PLATFORM_NODES, gpus // 8)}"] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        if "out of memory" in r.stderr or "does not fit" in r.stderr:
            return None
        sys.exit(f"selene.py: trainsim failed on {params}B mb {mb}: {r.stderr}")
    with open(os.path.join(out, "result.json")) as f:
        it = json.load(f)["metrics"]["iteration_s"]
    return paper_flops(batch, layers, h) / it / gpus / 1e12


def main():
    if not os.access(TRAINSIM, os.X_OK):
        sys.exit("selene.py: build trainsim first (build/trainsim)")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for row in TABLE1:
            params, _, _, layers, tp, pp, gpus, batch, published = row
            dp = gpus // (tp * pp)
            tried = []
            for mb in MICRO_BATCHES:
                if (batch // dp) % mb:
                    continue
                for name, extra in schedules(layers, pp, batch // dp // mb):
                    tf = predict(row, mb, extra, work)
                    if tf is not None:
                        tried.append((tf, mb, name))
            print(f"selene.py: {params}B on {gpus} GPUs: {len(tried)} configurations",
                  file=sys.stderr)
            rows.append((row, max(tried), min(t[0] for t in tried), len(tried)))

    lines = []
    w = lines.append
    w("# trainsim against Megatron-LM's weak scaling on Selene (A100)")
    w("")
    w("Generated by `docs/validation/selene.py`; do not edit. Published: Narayanan et al., SC'21")
    w("(arXiv:2104.04473), Table 1: GPT models (sequence 2,048, vocabulary 51,200) trained with")
    w("Megatron-LM's tensor, pipeline and data parallelism on Selene's DGX A100 80GB nodes (8 HDR")
    w("InfiniBand NICs a node, fat tree), mixed precision, activation recomputation, its fused")
    w("kernels (no flash attention), throughput by the paper's equation 3 (recomputation counted).")
    w("Predicted: `trainsim run` on `platforms/dgx-a100.yaml` (`--set nodes` to the run's size),")
    w("fp16, full recomputation, the same equation over the predicted iteration. The paper does not")
    w("give the micro-batch nor which pipeline runs were interleaved (it tuned both: Figures 12 and")
    w("16), so each row is trainsim's fastest prediction over the micro-batches 1, 2, 4 and 8 that")
    w("fit, with and without the interleaved schedule, and the range of all of them. Nothing here")
    w("set a parameter.")
    w("")
    w("| parameters | TP x PP | GPUs | batch | published TFLOPS a GPU | trainsim (fastest) | "
      "micro-batch, schedule | difference | trainsim's range |")
    w("|---|---|---|---|---|---|---|---|---|")
    errors = []
    for row, (tf, mb, name), low, n in rows:
        params, _, _, _, tp, pp, gpus, batch, published = row
        err = 100 * (tf / published - 1)
        errors.append((gpus, err))
        w(f"| {params}B | {tp} x {pp} | {gpus:,} | {batch:,} | {published} | {tf:.1f} | {mb}, "
          f"{name} | {err:+.1f}% | {low:.1f}-{tf:.1f} ({n}) |")
    w("")
    small = [abs(e) for g, e in errors if g <= 1024]
    w(f"Mean absolute difference {sum(abs(e) for _, e in errors) / len(errors):.1f}% "
      f"(largest {max(abs(e) for _, e in errors):.1f}%); up to 1,024 GPUs "
      f"{sum(small) / len(small):.1f}%.")
    w("")
    tmp = PAGE + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, PAGE)
    print(f"selene.py: wrote {os.path.relpath(PAGE, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
