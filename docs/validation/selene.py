#!/usr/bin/env python3
"""Regenerates docs/validation/selene.md: trainsim against Megatron-LM's weak-scaling table on
NVIDIA's Selene (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters
Using Megatron-LM", SC'21, arXiv:2104.04473, Table 1: GPT models of 1.7B to 1T parameters on 32
to 3,072 A100 80GB GPUs).

    python3 docs/validation/selene.py      (after a build; about ten minutes on one core)

VALIDATION ONLY: the published throughputs set no parameter. Each run's micro-batch and
interleaving are those of the paper's own script for Table 1 (NVIDIA/Megatron-LM
examples/sc21/run_table_1.sh: MBS, --num-layers-per-virtual-pipeline-stage; uniform full
recomputation everywhere). trainsim's range over the other micro-batches and schedules shows
how much those choices weigh."""
import json
import os
import subprocess
import sys
import tempfile

from pages import write_whole
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAINSIM = os.path.join(ROOT, "build", "trainsim")
PLATFORM = os.path.join(ROOT, "platforms", "dgx-a100.yaml")
PAGE = os.path.join(ROOT, "docs", "validation", "selene.md")
PLATFORM_NODES = 140  # platforms/dgx-a100.yaml's SuperPOD; Selene had more (--set nodes)
SEQ, VOCAB = 2048, 51200  # [MLM21] section 5: every model of Table 1
# [MLM21] Table 1: parameters (B), heads, hidden, layers, tensor, pipeline, GPUs, batch,
# achieved teraFLOP/s per GPU (the paper's equation 3 over the measured iteration time); then
# [SC21-T1] (NVIDIA/Megatron-LM examples/sc21/run_table_1.sh): micro-batch, and layers per
# virtual pipeline stage (0: not interleaved).
TABLE1 = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137, 16, 0),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 138, 16, 0),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 142, 16, 0),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135, 8, 0),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138, 4, 0),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140, 2, 5),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148, 2, 5),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155, 1, 3),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163, 1, 1),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163, 1, 0),
]
MICRO_BATCHES = (1, 2, 4, 8, 16)


def paper_flops(batch, layers, h):
    """[MLM21] equation 3: 96 B s l h^2 (1 + s / 6h + V / 16 l h), recomputation counted."""
    return 96 * batch * SEQ * layers * h * h * (1 + SEQ / (6 * h) + VOCAB / (16 * layers * h))


def schedules(layers, pp, microbatches):
    """1F1B, and with a pipeline every interleaved schedule Megatron-LM accepts (layers
    divisible by pp x v, microbatches by pp), by virtual stages."""
    out = [(0, [])]
    if pp > 1 and microbatches % pp == 0:
        out += [(v, ["--schedule", "interleaved", "--virtual-stages", str(v)])
                for v in range(2, layers // pp + 1) if layers % (pp * v) == 0]
    return out


def schedule_name(v):
    return f"interleaved x{v}" if v else "1F1B"


def predict(row, mb, extra, work):
    """teraFLOP/s per GPU by the paper's equation, or None where the run does not fit."""
    params, heads, h, layers, tp, pp, gpus, batch = row[:8]
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
            params, _, _, layers, tp, pp, gpus, batch, _, mb_paper, per_vstage = row
            dp = gpus // (tp * pp)
            v_paper = layers // pp // per_vstage if per_vstage else 0
            paper, tried = None, []
            for mb in MICRO_BATCHES:
                if (batch // dp) % mb:
                    continue
                for v, extra in schedules(layers, pp, batch // dp // mb):
                    tf = predict(row, mb, extra, work)
                    if tf is not None:
                        tried.append(tf)
                    if (mb, v) == (mb_paper, v_paper):
                        paper = tf
            if paper is None:
                sys.exit(f"selene.py: {params}B does not fit as the paper ran it")
            print(f"selene.py: {params}B on {gpus} GPUs: {len(tried)} configurations",
                  file=sys.stderr)
            rows.append((row, paper, min(tried), max(tried), len(tried)))

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
    w("fp16, full recomputation, each run's micro-batch and interleaving as the paper's own script")
    w("for Table 1 ran it (NVIDIA/Megatron-LM examples/sc21/run_table_1.sh), throughput by the same")
    w("equation over the predicted iteration; the last column is trainsim's range over the")
    w("micro-batches 1-16 and schedules (1F1B, every interleaving Megatron-LM accepts) that fit, to")
    w("show how much those choices weigh. Nothing here set a parameter.")
    w("")
    w("trainsim's kernel tables are bf16 measurements; the A100's tensor cores run fp16 and bf16 at")
    w("the same rate (312 TFLOPS each, NVIDIA's datasheet), so these fp16 runs are priced from the")
    w("A100's kernel table (platforms/kernels/a100.yaml: the H200's measured table carried over by")
    w("the datasheet peaks and bandwidths, derive.py). Until 2026-12-07 trainsim priced fp16 by its")
    w("roofline model: mean absolute difference 2.6% (largest 7.7%, 1.7B at +7.7%); this page's")
    w("column \"as bf16\" then gave the table's prices, as the main column does now.")
    w("")
    w("| parameters | TP x PP | GPUs | batch | micro-batch, schedule | published TFLOPS a GPU | "
      "trainsim | difference | trainsim's range |")
    w("|---|---|---|---|---|---|---|---|---|")
    errors = []
    for row, tf, low, high, n in rows:
        params, _, _, layers, tp, pp, gpus, batch, published, mb, per_vstage = row
        v = layers // pp // per_vstage if per_vstage else 0
        err = 100 * (tf / published - 1)
        errors.append((gpus, err))
        w(f"| {params}B | {tp} x {pp} | {gpus:,} | {batch:,} | {mb}, {schedule_name(v)} | "
          f"{published} | {tf:.1f} | {err:+.1f}% | {low:.1f}-{high:.1f} ({n}) |")
    w("")
    small = [abs(e) for g, e in errors if g <= 1024]
    w(f"Mean absolute difference {sum(abs(e) for _, e in errors) / len(errors):.1f}% "
      f"(largest {max(abs(e) for _, e in errors):.1f}%); up to 1,024 GPUs "
      f"{sum(small) / len(small):.1f}%.")
    w("")
    w("Until 2026-12-06 the kernel table made every run too slow (-10.0% to -1.5%, mean 6.2%): it")
    w("carried the H200's GEMM times as measured, back to back into the H200's 700 W limit, to the")
    w("A100 by the datasheet peaks. It now carries them at the H200's boost clock (the H200's measured")
    w("gemm_table factors, platforms/hgx-h200.yaml; derive.py): the A100 runs its GEMMs at its")
    w("datasheet rate, its own power limit not modelled (ASSUMED; the largest matmul throughput a")
    w("search over shapes found on an A100 SXM is 85.9% of its peak, MAMF, stas00/ml-engineering,")
    w("compute/accelerator/README.md). The same change moved MosaicML's A100 tables closer")
    w("(mosaicml.md: 12.8% -> 10.2% and 8.2% -> 5.9% mean) and the FlashAttention authors' 8-A100")
    w("runs further (a100.md: 3.7% -> 7.8% as FlashAttention-2, too fast; 6.3% with the")
    w("FlashAttention-1 they ran, the small models too slow): the A100's GEMM efficiency by shape")
    w("still needs measurements of its own.")
    w("")
    write_whole(PAGE, "\n".join(lines))
    print(f"selene.py: wrote {os.path.relpath(PAGE, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
