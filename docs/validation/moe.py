#!/usr/bin/env python3
"""Regenerates docs/validation/moe.md: trainsim against mixture-of-experts training steps and
their parts measured on one NVIDIA H200 (issue 38's own MoE set).

    python3 docs/validation/moe.py      (after a build; under a minute)

VALIDATION ONLY. The steps (bench/device/moe_steps.py -> bench/device/h200_moe_steps.csv, and
--second-set -> h200_moe_steps2.csv) set no parameter. The parts (bench/device/moe_parts.py ->
h200_moe_parts.csv) are kernel microbenchmarks: the tables that price the MoE kernels
(platforms/kernels/h200.yaml) were measured apart by bench/device/kernel_table.py; the parts
are compared here, not read by trainsim."""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

from pages import write_whole
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAINSIM = os.path.join(ROOT, "build", "trainsim")
PLATFORM = os.path.join(ROOT, "platforms", "hgx-h200.yaml")
DEVICE = os.path.join(ROOT, "bench", "device")
PAGE = os.path.join(ROOT, "docs", "validation", "moe.md")


def rows_of(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    return list(csv.DictReader(lines)), [l for l in open(path) if l.startswith("#")]


def workload(c):
    """The workload file describing one measured configuration (moe_steps.py's columns)."""
    layers, dense = int(c["layers"]), int(c["first_dense"])
    model = {
        "num_layers": layers, "hidden_size": int(c["hidden"]),
        "num_attention_heads": int(c["heads"]), "seq_length": int(c["seq"]),
        "vocab_size": int(c["vocab"]), "swiglu": True, "normalization": "RMSNorm",
        "position_embedding_type": "rope", "untie_embeddings_and_output_weights": True,
        "add_bias_linear": False, "attention_dropout": 0, "hidden_dropout": 0,
        "ffn_hidden_size": int(c["dense_ffn"]) if dense else int(c["moe_ffn"]),
        "num_experts": int(c["experts"]), "moe_router_topk": int(c["topk"]),
        "moe_ffn_hidden_size": int(c["moe_ffn"]), "moe_grouped_gemm": c["grouped"] == "1",
        "moe_router_score_function": c["score"],
        "moe_router_enable_expert_bias": c["expert_bias"] == "1",
        "moe_aux_loss_coeff": float(c["aux"]),
    }
    if int(c["shared_ffn"]):
        model["moe_shared_expert_intermediate_size"] = int(c["shared_ffn"])
    if dense:
        model["moe_layer_freq"] = "([0]*%d+[1]*%d)" % (dense, layers - dense)
    if c["mla"] == "1":
        model.update({"multi_latent_attention": True, "kv_lora_rank": int(c["kv_lora"]),
                      "qk_head_dim": 128, "qk_pos_emb_head_dim": 64, "v_head_dim": 128})
        if int(c["q_lora"]):
            model["q_lora_rank"] = int(c["q_lora"])
    else:
        model["num_query_groups"] = int(c["kv_heads"])
    mbs, micro = int(c["mbs"]), int(c["micro"])
    return {
        "name": c["name"], "model": model,
        "training": {"global_batch_size": mbs * micro, "micro_batch_size": mbs,
                     "precision": "bf16", "optimizer": "adam"},
        "parallelism": {"tensor": 1, "pipeline": 1, "data": 1,
                        "recompute": "full" if c["recompute"] == "1" else "none"},
        "stack": {"framework": "pytorch"},
    }


def predict(c, work):
    """trainsim's iteration, peak memory and verdict (fits / oom) for configuration c."""
    path = os.path.join(work, "wl.yaml")
    with open(path, "w") as f:
        json.dump(workload(c), f)  # JSON is YAML
    out = os.path.join(work, "out")
    base = [TRAINSIM, "run", path, "--platform", PLATFORM, "--gpus", "1", "--quiet", "--out", out]
    r = subprocess.run(base, capture_output=True, text=True)
    verdict = "fits"
    if r.returncode != 0:
        if "out of memory" not in r.stderr:
            sys.exit(f"moe.py: trainsim failed on {c['name']}: {r.stderr}")
        verdict = "oom"
        subprocess.run(base + ["--ignore-memory"], check=True, capture_output=True)
    with open(os.path.join(out, "result.json")) as f:
        res = json.load(f)
    return res["metrics"]["iteration_s"], res["memory"]["peak_bytes"], verdict


PROFILE_ROW = re.compile(r"^\s+(fwd|bwd)\s+(.+?)\s{2,}(\S+)\s{2,}.+?\s{2,}(\d+)\s+([\d.]+)\s+\S+\s+[\d.]+%$")


def part_of(piece, kernel):
    """moe_parts.py's part for a row of `trainsim profile` (None: not a MoE part, or the
    main-grad accumulation, which the parts were measured without)."""
    if kernel == "grad_accum":
        return None
    if kernel.startswith("moe_permute"):
        return "permute"
    for part in ("router", "experts", "unpermute", "shared"):
        if piece.startswith(part):
            return part
    return None


def predicted_parts(c, work):
    """trainsim's GPU time (us) of each MoE part of configuration c, forward and backward."""
    path = os.path.join(work, "wl.yaml")
    with open(path, "w") as f:
        json.dump(workload(c), f)
    out = subprocess.run([TRAINSIM, "profile", path, "--platform", PLATFORM, "--gpus", "1"],
                         check=True, capture_output=True, text=True).stdout
    parts = {}
    for line in out.splitlines():
        m = PROFILE_ROW.match(line)
        if m is None:
            continue
        part = part_of(m.group(2), m.group(3))
        if part is not None:
            key = (part, m.group(1))
            parts[key] = parts.get(key, 0.0) + int(m.group(4)) * float(m.group(5))
    return parts


def parts_table(steps, w, work):
    """Per part of the MoE layer: moe_parts.py's kernel sums against trainsim's."""
    rows, head = rows_of(os.path.join(DEVICE, "h200_moe_parts.csv"))
    by_shape = {}
    for c in steps:
        by_shape.setdefault((c["name"], int(c["mbs"]) * int(c["seq"])), c)
    w("## The MoE layer part by part")
    w("")
    w("GPU time of each part of one MoE layer (forward and backward kernels summed), measured by")
    w("`bench/device/moe_parts.py` (" + head[0].strip("# \n").split(" on ", 1)[1] + "; raw in")
    w("`bench/device/h200_moe_parts.csv`; the profiler's kernel times, each part run alone, no")
    w("main-grad accumulation) against `trainsim profile` of the same layer (its kernels of that")
    w("part, the main-grad accumulation left out likewise). The parts are kernel measurements")
    w("made apart from the tables trainsim reads (`bench/device/kernel_table.py`, section moe),")
    w("at the validation models' shapes.")
    w("")
    w("| model | tokens | part | measured fwd | predicted | error | measured bwd | predicted | error |")
    w("|---|---|---|---|---|---|---|---|---|")
    errs = {}
    cache = {}
    for r in rows:
        c = by_shape[(r["config"], int(r["tokens"]))]
        key = (r["config"], r["tokens"])
        if key not in cache:
            cache[key] = predicted_parts(c, work)
        pred = cache[key]
        cells = []
        for d, col in (("fwd", "fwd_us"), ("bwd", "bwd_us")):
            meas, p = float(r[col]), pred.get((r["part"], d), 0.0)
            e = p / meas - 1
            errs.setdefault(r["part"], []).append(e)
            cells += [f"{meas:.0f} us", f"{p:.0f} us", f"{100 * e:+.0f}%"]
        label = r["config"] + ("" if c["grouped"] == "1" else " (loop)")
        w(f"| {label} | {r['tokens']} | {r['part']} | " + " | ".join(cells) + " |")
    w("")
    w("Mean absolute error per part (forward and backward together): " + ", ".join(
        f"{p} {100 * sum(abs(x) for x in v) / len(v):.1f}% ({len(v)})" for p, v in errs.items())
      + ".")
    w("")


def steps_table(steps, w):
    """The measured steps against trainsim's predictions, with the summary line."""
    w("| model | experts, top-k | seq | micro-batch x count | recompute | measured step | "
      "predicted | error | measured peak | predicted | error | OOM: measured / predicted |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    errs, merrs, right = [], [], 0
    with tempfile.TemporaryDirectory() as work:
        for c in steps:
            it, peak, verdict = predict(c, work)
            ok = c["status"] == "ok"
            meas, mpeak = float(c["step_s"] or "nan"), float(c["peak_bytes"])
            e, me = it / meas - 1, peak / mpeak - 1
            if ok:
                errs.append(e)
                merrs.append(me)
            right += verdict == ("fits" if ok else "oom")
            label = c["name"] + ("" if c["grouped"] == "1" else " (loop)")
            w(f"| {label} | {c['experts']}, top-{c['topk']} | {c['seq']} | {c['mbs']} x "
              f"{c['micro']} | {'full' if c['recompute'] == '1' else 'none'} | "
              f"{1e3 * meas:.1f} ms | {1e3 * it:.1f} ms | {100 * e:+.1f}% | "
              f"{mpeak / 2**30:.2f} GiB | {peak / 2**30:.2f} GiB | {100 * me:+.1f}% | "
              f"{'fits' if ok else 'oom'} / {verdict} |")
    w("")
    mean = sum(abs(x) for x in errs) / len(errs)
    w(f"Step time: {len(errs)} cases, mean absolute error {100 * mean:.1f}%, largest "
      f"{100 * max(abs(x) for x in errs):.1f}%. Peak memory: mean absolute error "
      f"{100 * sum(abs(x) for x in merrs) / len(merrs):.1f}%, largest "
      f"{100 * max(abs(x) for x in merrs):.1f}%. Out-of-memory verdicts right: {right} of "
      f"{len(steps)}.")


def main():
    if not os.access(TRAINSIM, os.X_OK):
        sys.exit("moe.py: build trainsim first (build/trainsim)")
    steps, head = rows_of(os.path.join(DEVICE, "h200_moe_steps.csv"))
    lines = []
    w = lines.append
    w("# trainsim against mixture-of-experts training steps on one NVIDIA H200")
    w("")
    w("Generated by `docs/validation/moe.py`; do not edit. Measured: `bench/device/moe_steps.py`")
    w("(" + head[1].strip("# \n").replace("parameter). ", "") + "), raw in")
    w("`bench/device/h200_moe_steps.csv`. Predicted: `trainsim run` on `platforms/hgx-h200.yaml`.")
    w("None of the steps below set or adjusted a parameter.")
    w("")
    steps_table(steps, w)
    w("")
    w("The model (torchtitan's MoE layer, `bench/device/moe.py`): token-choice top-k routing")
    w("(softmax, or sigmoid with an expert bias), dropless; argsort and gather of each token's")
    w("copies; SwiGLU experts by torch._grouped_mm (or, marked loop, one module per expert as")
    w("Megatron-Core's SequentialMLP); the copies weighted in fp32 and scatter-added back; shared")
    w("experts and first dense layers where the model has them; Llama or multi-head latent")
    w("attention; gpt.Trainer's recipe (fp32 main grads by hooks, fused AdamW). What trainsim")
    w("prices (docs/model.md): the grouped GEMMs, the router, the permutations and MLA's attention")
    w("from the H200 kernel table's MoE and MLA sections (kernel microbenchmarks, not these steps),")
    w("each expert's weight gradients accumulated into main_grad, the MoE layer's host time as")
    w("measured on a tiny layer, and the activations autograd keeps (torchtitan's fp32 weighting")
    w("copy among them).")
    w("")
    w("The first grouped-GEMM sweep (`bench/device/moe_parts.py`, raw in")
    w("`bench/device/h200_grouped_mm_sweep.csv`: 8 to 128 experts of 16 to 16k tokens) showed the")
    w("mechanism before the tables existed: with few tokens an expert, reading every expert's")
    w("weights sets the time, at 2.8-3.1 TB/s of the H200's 4.2 (the 16-token points).")
    w("")
    w("Where it still misses: the loop variants (one GEMM per expert) wait for the GPU at")
    w("`.tolist()` once a layer and run hundreds of small kernels with per-parameter hooks: the")
    w("host sets their pace, and its speed varies from run to run (the loop steps' fastest and")
    w("slowest of 10 differ by 25-40%: `min_s`, `max_s` in the CSV); trainsim does not model the")
    w("synchronisation itself. The small models (hidden 1,024) are host-bound, and the host's")
    w("speed is what limits them: `bench/device/host_blocks.py` (2026-12-04 17:05 UTC, one core)")
    w("timed gpt.py's tiny block at 668 us forward where the kernel table's software run")
    w("(2026-12-03) had 318 us, the same code on machines of the same kind; a host-bound step is")
    w("as uncertain as that.")
    w("")
    steps2, head2 = rows_of(os.path.join(DEVICE, "h200_moe_steps2.csv"))
    w("## A second set, measured after the model was built")
    w("")
    w("Eight more steps (`bench/device/moe_steps.py --second-set`, "
      + head2[1].strip("# \n").split("), ", 1)[1] + "; raw in `bench/device/h200_moe_steps2.csv`):")
    w("shapes the model was not built on (DBRX's 16 experts top-4, DeepSeek-V3's 256 experts top-8,")
    w("sequences of 8,192, micro-batches of 2-4, recomputation with shared experts). Nothing was")
    w("changed after they were measured.")
    w("")
    steps_table(steps2, w)
    with tempfile.TemporaryDirectory() as work:
        parts_table(steps, w, work)
    print("\n".join(lines))
    write_whole(PAGE, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
