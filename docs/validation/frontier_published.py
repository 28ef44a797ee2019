#!/usr/bin/env python3
"""Regenerates docs/validation/frontier-published.md: published training throughputs measured
on Frontier (docs/validation/frontier-published.tsv, each cited) against `trainsim run` on the
built-in Frontier platform, the runs described by docs/validation/data/published/*.yaml.

    python3 docs/validation/frontier_published.py      (after a build; about a minute)

VALIDATION ONLY: no row sets or adjusts a parameter. Each published figure is converted by
the formula its authors used; trainsim's tokens per second are put through the same formula.
Memory is not checked here (--ignore-memory): DeepSpeed 0.7.3's ZeRO-1 holds the gradients
in bf16 where trainsim's accounting keeps Megatron's fp32 copy (docs/model.md)."""
import json
import os
import subprocess
import sys
import tempfile

from points import read_points

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAINSIM = os.path.join(ROOT, "build", "trainsim")
POINTS = os.path.join(ROOT, "docs", "validation", "frontier-published.tsv")
DATA = os.path.join(ROOT, "docs", "validation", "data", "published")
PAGE = os.path.join(ROOT, "docs", "validation", "frontier-published.md")
TARGET = 0.25  # issue 30: held-out Frontier runs within 25%


def params(model):
    """Every parameter, embeddings included (GPT-NeoX's get_total_params): per layer QKV,
    projection and the MLP with biases (12 h^2 + 13 h), two norms' weights and biases inside
    those 13 h, the final norm (2 h), the untied input and output embeddings (rotary: no
    position table)."""
    L, h = model["num_layers"], model["hidden_size"]
    f, v = model["ffn_hidden_size"], model["padded_vocab_size"]
    per_layer = 4 * h * h + 4 * h + 2 * h * f + f + h + 4 * h
    return L * per_layer + 2 * h + 2 * v * h


def neox_flops_per_token(model):
    """megatron/logging.py get_flops: 6 N + 60 s h L per token."""
    s, h, L = model["seq_length"], model["hidden_size"], model["num_layers"]
    return 6 * params(model) + 60 * s * h * L


def run(row, tmp):
    """trainsim's result.json for the row. A workload named NAME is docs/validation/data/
    published/NAME.yaml, whose global batch is micro-batch x gas x data parallelism (pipeline
    1); a path (workloads/...) takes its batch from the row's flags."""
    name = row["workload"]
    wl_path = os.path.join(ROOT, name) if name.endswith(".yaml") else os.path.join(DATA,
                                                                                   name + ".yaml")
    flags = [] if row["flags"] == "-" else row["flags"].split()
    gpus = int(row["gpus"])
    out = os.path.join(tmp, row["id"])
    args = [TRAINSIM, "run", wl_path, "--gpus", str(gpus), "--ignore-memory", "--quiet",
            "--out", out] + flags
    if row["gas"] != "-":
        with open(wl_path) as f:
            text = f.read()
        mbs = int(text.split("micro_batch_size:")[1].split()[0])
        tp = int(flags[flags.index("--tp") + 1]) if "--tp" in flags else int(
            text.split("tensor:")[1].split()[0])
        args += ["--global-batch-size", str(mbs * int(row["gas"]) * (gpus // tp))]
    subprocess.run(args, check=True, capture_output=True, text=True)
    with open(os.path.join(out, "result.json")) as f:
        return json.load(f)


def main():
    if not os.access(TRAINSIM, os.X_OK):
        sys.exit("frontier_published.py: %s not found: build first" % TRAINSIM)
    lines, errors, within, one_node, scaled = [], [], 0, [], []
    dash, ratios = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in read_points(POINTS):
            res = run(r, tmp)
            m = res["metrics"]
            gpus = int(r["gpus"])
            gbs = res["layout"]["global_batch_size"]
            pub = float(r["published"])
            if r["metric"] == "megatron_percent":
                sim = 100 * m["megatron_fraction_of_peak"]
                ratios.append(sim / pub)
                dash.append("| %s | %s | %d | %s | %d | %.2f%% | %.2f%% | %.2fx | %s |"
                            % (r["id"], r["workload"], gpus, r["flags"], gbs, pub, sim, sim / pub,
                               r["note"]))
                continue
            sim = m["tokens_per_s"] / gpus * neox_flops_per_token(res["model"]) / 1e12
            err = (sim - pub) / pub
            errors.append(err)
            (one_node if gpus <= 8 else scaled).append(err)
            if gpus <= 8:
                ratios.append(1 + err)
            within += abs(err) <= TARGET
            b = res["breakdown_s"]
            it = m["iteration_s"]
            comm = sum(b.get(k, 0) for k in ("tp_comm", "dp_comm", "pp_comm"))
            lines.append("| %s | %s | %d | %s | %d | %.4g | %.4g | %+.0f%% | %.3g s | %.0f%% | %s |"
                         % (r["id"], r["workload"], gpus, r["flags"] if r["flags"] != "-" else "",
                            gbs, pub, sim, 100 * err, it, 100 * comm / it, r["note"]))
    mean_abs = sum(abs(e) for e in errors) / len(errors)
    faster = sum(e > 0 for e in errors)
    page = PAGE_TEXT.format(n=len(errors), within=within, target="%d%%" % round(100 * TARGET),
                            mean_abs=100 * mean_abs, lo=100 * min(errors), hi=100 * max(errors),
                            table="\n".join(lines), faster=faster, dash="\n".join(dash),
                            ratio_lo=min(ratios), ratio_hi=max(ratios),
                            one_node=100 * sum(one_node) / len(one_node),
                            scaled=100 * sum(scaled) / len(scaled))
    with open(PAGE + ".tmp", "w") as out:
        out.write(page)
    os.replace(PAGE + ".tmp", PAGE)


PAGE_TEXT = """# trainsim against other published Frontier training runs

Generated by `docs/validation/frontier_published.py` from
`docs/validation/frontier-published.tsv`: training throughputs published for runs on Frontier
(AMD MI250X GCDs, Slingshot-11), each against `trainsim run` on the built-in platform with the
run's model, layout, batch and software stack (`docs/validation/data/published/*.yaml`, each
value cited or marked ASSUMED). **Validation only: no figure here sets or adjusts a
parameter.** Each published figure is in its authors' unit; trainsim's tokens per second are
converted by the same formula.

## FORGE (Yin et al., SC'23; at-aaims/forge)

GPT-NeoX (e48b0c45) on DeepSpeed 0.7.3, PyTorch 1.14 (ROCm fork), ROCm 5.1-5.4, the
aws-ofi-rccl plugin: attention without flash (batched GEMMs around Megatron's fused
masked softmax), bias-GeLU fusion, no dropout, rotary embeddings, activation checkpointing,
ZeRO-1, bf16 (175B: fp16). The figures are the notebook's (`plots.ipynb`), in GPT-NeoX's
TFLOPS per GCD: B s (6 N + 60 s h L) / (t GCDs), N every parameter. The stack is
`framework: gpt-neox, attention: unfused, fused_kernels: [masked_softmax, bias_gelu]` with
RCCL 2.12.12 (ASSUMED: the notebook does not name the ROCm release).

{within} of {n} rows within {target}; mean absolute error {mean_abs:.0f}%, from {lo:+.0f}% to {hi:+.0f}%.

| row | workload | GCDs | flags | global batch | published TFLOPS/GCD | trainsim | error | iteration | comm. share | what the source says |
|---|---|---|---|---|---|---|---|---|---|---|
{table}

## What the misses say

trainsim is faster than measured on {faster} of {n} rows: by {one_node:+.0f}% on average on one
node, {scaled:+.0f}% from 128 GCDs up. The one-node rows price a node's own work (no network),
so most of the miss is in the GCD's kernels as this software stack ran them, not in the
network. Candidate mechanisms, none fitted, each to
be modelled only from kernel-level evidence:
- the MI250X's kernel table is grounded in ROCm 5.7 / 6.x measurements (rocBLAS 32768^3 on the
  Frontier fleet, CK FlashAttention) and carries PyTorch's memory-bound kernels from the H200
  at the ratio of achievable bandwidth; FORGE ran ROCm 5.1-5.4 and PyTorch 1.14, whose
  rocBLAS and eager kernels are not measured here;
- unfused attention on MI200 GPUs is published only as whole forward and backward passes
  (ROCm/flash-attention 0.2.0_rocm_benchmark, ROCm 5.4: 26.3 ms forward, 63.1 ms backward at
  batch 64, 16 heads, 1,024 tokens, dimension 64, dropout 0.1), which trainsim's table
  prices at about half that (docs/validation/kernels.md);
- DeepSpeed 0.7.3's engine: a device-wide synchronisation before each gradient bucket's
  reduction (stage_1_and_2.py average_tensor), one `dist.reduce` per data-parallel partition
  instead of a reduce-scatter, activation checkpointing that synchronises at every layer
  (`synchronize-each-layer`), and the all-gather of the updated weights in 500M-element
  buckets;
- the tensor-parallel rows on one node (TP 2, TP 8) add the in-node RCCL model of an older
  release;
- FORGE-S's head dimension, 86, is not a multiple of 8: on an H200, cuBLAS's batched GEMMs
  of attention take 1.8-2.9x the aligned time at it (measured; trainsim prices that on NVIDIA
  GPUs, docs/validation/h200.md); for Q K^T on the MI250X none of the 276 solutions of
  rocBLAS's Tensile logic (aldebaran_Cijk_Alik_Bljk_BBS_BH.yaml, ROCm/rocBLAS b520bc8) asserts
  a summation element multiple (each takes any head dimension, the remainder in a tail loop),
  and P V's were not examined, so nothing is priced for it on Frontier; not measured on an
  MI250X.

## Dash et al.'s own launch scripts

The study's final layouts and batches are not in the paper; the presets assume them
(docs/validation/frontier.md). The authors' repository (sajal-vt/Megatron-DeepSpeed-ORNL,
@03325d4: `launch_gpt22b_bf16.slurm`, `launch_gpt175b_bf16.slurm`, `launch_gpt1T_bf16.slurm`)
holds launch scripts of the same models with FlashAttention-2 on ROCm 5.7, on fewer GCDs than
the paper's figures; that they are the paper's runs is not stated. Each against the paper's
% of peak (Megatron-DeepSpeed's formula, recomputation counted), which its weak scaling (100%)
says holds at any GCD count:

| row | workload | GCDs | flags | global batch | paper | trainsim | ratio | what the script says |
|---|---|---|---|---|---|---|---|---|
{dash}

On one node (FORGE, no network) and in these scripts, trainsim's GCD runs the same work
{ratio_lo:.2f} to {ratio_hi:.2f} times faster than the real runs did, on both stacks. No layout explains it. Settling it needs a kernel-level measurement of a
training step on an MI250X (a rocprof trace of one layer), which nothing published here gives.

## Other published Frontier figures, not comparable

- AxoNN (Singh et al., arXiv:2502.08145): 1.381 EFLOP/s in bf16 on 32,768 GCDs (about 42
  TFLOPS per GCD); the model, batch and layout behind that figure are not published in the
  material read.
- ORBIT (Wang et al., arXiv:2404.14712): 684 PFLOPS to 1.6 EFLOPS on 49,152 GCDs (about 32.6
  TFLOPS per GCD) for a vision transformer; configurations not found.
- arXiv:2501.04266 (ZeRO++-style partitioning on Frontier): relative figures only (1.71x over
  ZeRO++, 0.94 scaling efficiency for a 20B model up to 384 GCDs); no absolute throughput.
- Dash et al. (arXiv:2312.12705) are compared in docs/validation/frontier.md.
"""

if __name__ == "__main__":
    main()
