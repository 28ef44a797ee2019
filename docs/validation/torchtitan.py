#!/usr/bin/env python3
"""Regenerates docs/validation/torchtitan.md: trainsim against torchtitan's published Llama 3.1
benchmarks (docs/validation/data/torchtitan.tsv) and against bench/device/op_sac.py's measurements
of torchtitan's Llama block on an H100 (bench/device/h100_op_sac.csv).

    python3 docs/validation/torchtitan.py      (after a build; under a minute)

VALIDATION ONLY: nothing here sets a parameter. Each run is described as torchtitan ran it at
9dec370 (its H100 benchmarks' commit): Llama 3.1 8B (models/llama/__init__.py: dim 4,096, 32
layers, 32 heads, 8 key-value heads, ffn_dim_multiplier 1.3 and multiple_of 1,024, so an FFN of
14,336; vocabulary 128,256; untied output), FSDP2 (`zero_stage: 3`, its MixedPrecisionPolicy
bf16 / fp32), the op-level selective checkpointing of train_configs/llama3_8b.toml
(`recompute: op`), torch.optim.AdamW's foreach step (optimizer.fused false), SDPA with the flash
backend (`sdpa_flash`: cuDNN's attention was opt-in in that PyTorch), its eager fp32 RMSNorm
(norm_type rmsnorm) and complex rotary embedding."""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

from pages import run_result, write_whole

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAINSIM = os.path.join(ROOT, "build", "trainsim")
DATA = os.path.join(ROOT, "docs", "validation", "data", "torchtitan.tsv")
MEASURED = os.path.join(ROOT, "bench", "device", "h100_op_sac.csv")
COMPILED = os.path.join(ROOT, "bench", "device", "h100_compile_block.csv")
KERNELS = os.path.join(ROOT, "bench", "device", "h100_block_kernels.csv")
FLOAT8 = [os.path.join(ROOT, "bench", "device", f"h100_float8_block{tail}.csv")
          for tail in ("", "_shape1", "_shape2")]
CP_RING = os.path.join(ROOT, "bench", "device", "h100_cp_ring_steps.csv")
CP_LOOP = os.path.join(ROOT, "bench", "device", "h100_cp_ring_loop.csv")
CLOCKS = os.path.join(ROOT, "bench", "device", "h100_block_clocks.csv")
FLOAT8_KERNELS = [os.path.join(ROOT, "bench", "device", f"h100_float8_block{tail}_kernels.csv")
                  for tail in ("", "_shape1", "_shape2")]


def family(kernel, float8=False):
    """A kernel's family, by its name in the profiler or in `trainsim profile`; with float8,
    Inductor's kernels that take an amax or cast to FP8 are "FP8 casts"."""
    if kernel.startswith(("nvjet", "gemm_")) or "gemm" in kernel:
        return "GEMMs"
    if "flash" in kernel:
        return "attention"
    if float8 and ("abs" in kernel or "clamp" in kernel or "float8" in kernel):
        return "FP8 casts"
    return "the rest"


def float8_section(w, fig, shapes):
    """torchao's float8 linears on the block, measured against bf16 (bench/device/float8_block.py),
    and the compiled block against trainsim's figures: `fig` (layer_figures with float8) and
    `shapes`, (name, micro-batch, precision) -> trainsim's compute a layer without
    recomputation."""
    measured = []
    for path in FLOAT8:
        with open(path) as f:
            measured += list(csv.DictReader(line for line in f if not line.startswith("#")))
    with open(FLOAT8[0]) as f:
        header = f.readline().lstrip("# ").strip()
    got = {}
    for r in measured:
        layers = int(r["layers"])
        got[(r["name"], int(r["micro_batch"]), int(r["seq"]), r["mode"], r["build"],
             r["precision"])] = ((float(r["fwd_ms"]) + float(r["bwd_ms"])) / layers,
                                 int(r["held_bytes"]) / layers)
    w("## torchao's float8 linears on the block")
    w("")
    w(f"`bench/device/float8_block.py` ({header}) converts the same blocks' linears with")
    w("torchao's convert_to_float8_training and Float8LinearConfig's defaults, as torchtitan's")
    w("float8 runs did (torchao's float8 code at 52b6f4d9f, the same as at eab345c, the published")
    w("runs' torchao, carried to the device: dynamic tensorwise scaling, E4M3 forward and E5M2")
    w("gradients, torch._scaled_mm with fast accumulation in the forward only), against bf16 in")
    w("the same run; the two other shapes (`h100_float8_block_shape1.csv`, `_shape2.csv`) from a")
    w("later run on a fresh H100 machine. A layer is the measurement over its layers; \"kept\" is")
    w("the bytes held after the forward.")
    w("")
    w("| shape | micro-batch x seq | mode | build | bf16 forward + backward | float8 | speed-up | "
      "bf16 kept | float8 kept |")
    w("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(k for k in got if k[5] == "float8"):
        name, mbs, seq, mode, build, _ = key
        b, f8 = got[key[:5] + ("bf16",)], got[key]
        w(f"| {name} | {mbs} x {seq:,} | {mode} | {build} | {b[0]:.2f} ms | {f8[0]:.2f} ms | "
          f"{b[0] / f8[0]:.2f}x | {b[1] / 1e9:.3f} GB | {f8[1] / 1e9:.3f} GB |")
    fams, sums = {}, {}  # the first shape's by family; every shape's sum a pass
    for path, shape in zip(FLOAT8_KERNELS, (("llama3-8b", 2), ("llama3-8b", 1), ("llama3-1b", 4))):
        with open(path) as f:
            for r in csv.DictReader(line for line in f if not line.startswith("#")):
                us = float(r["device_us"])
                k = shape + (r.get("precision", "float8"), r["build"])  # the first: float8 only
                sums[k] = sums.get(k, 0.0) + us
                if shape == ("llama3-8b", 2):
                    fk = (r["build"], r["pass"], family(r["kernel"], True))
                    fams[fk] = fams.get(fk, 0.0) + us
    w("")
    w("One float8 block at micro-batch 2 x 8,192 without recomputation, its kernels by family")
    w("(the profiler's device time, each pass apart):")
    w("")
    w("| build | pass | GEMMs | attention | FP8 casts | the rest |")
    w("|---|---|---|---|---|---|")
    for build in ("eager", "compiled"):
        for p in ("fwd", "bwd"):
            cells = " | ".join(f"{fams.get((build, p, fam), 0) / 1e3:.2f} ms"
                               for fam in ("GEMMs", "attention", "FP8 casts", "the rest"))
            w(f"| {build} | {p} | {cells} |")
    op_c = got[("llama3-8b", 2, 8192, "op", "compiled", "bf16")][0] / \
        got[("llama3-8b", 2, 8192, "op", "compiled", "float8")][0]
    drop = (got[("llama3-8b", 2, 8192, "none", "compiled", "bf16")][1] -
            got[("llama3-8b", 2, 8192, "none", "compiled", "float8")][1])
    op_eager = {p: got[("llama3-8b", 2, 8192, "op", "eager", p)][1] for p in ("bf16", "float8")}
    w("")
    t1 = {r["float8"]: float(r["tps_gpu"]) for r in rows()
          if r["table"] == "1" and r["compile"] == "yes"}
    w(f"- Compiled, the float8 layer under op-level checkpointing runs {op_c:.2f}x as fast as the")
    w(f"  bf16 one, beside the published runs' {t1['yes'] / t1['no']:.2f}x (Table 1: "
      f"{t1['yes']:,.0f} against {t1['no']:,.0f} tokens")
    w("  a second a GPU, FSDP on 8 GPUs); its FP8 GEMMs take about half the bf16 ones' time, and the")
    w("  casts (an amax pass and a cast per tensor: each linear's input and weight in the")
    w("  forward, its output gradient in the backward) give part of it back. Eager, the casts")
    w("  run as separate abs, max, reciprocal, clamp and copy kernels and float8 is slower than")
    w("  bf16: torchtitan's float8 runs all compiled.")
    w(f"- Compiled without recomputation, float8 keeps {drop / 1e9:.3f} GB a layer less than bf16:")
    w("  exactly the bf16 bytes of the two norms' outputs and SwiGLU's product (2 x 2 x 16,384 x")
    w("  4,096 + 2 x 16,384 x 14,336 bytes; likewise at the other two shapes). The compiled graph")
    w("  keeps neither them nor their FP8 casts, nor the FP8 weights torchao's autograd function")
    w("  saves, and redoes the norms, the product and the casts in the backward. Under op-level")
    w("  checkpointing it keeps what bf16 keeps, to the byte: torchao calls torch.mm on its")
    w("  float8 tensors, which the policy sees as aten.mm before the subclass turns it into")
    w("  _scaled_mm; eager, op also keeps the abs output of every amax (the list names")
    w(f"  aten.abs), {op_eager['float8'] / 1e9:.2f} GB a layer against {op_eager['bf16'] / 1e9:.2f}.")
    w("")
    w("trainsim describes the compiled runs with `stack.fp8_linear: torchao` (`fp8: hybrid`,")
    w("`fp8_recipe: tensorwise`, `compile: true`; the eager ones it refuses): per layer at")
    w("micro-batch 2 x 8,192, from the difference of 8 and 4 layers as above.")
    w("")
    w("| mode | kept a layer: measured | trainsim | recomputation a layer: measured | trainsim | "
      "forward + backward a layer: measured | trainsim |")
    w("|---|---|---|---|---|---|---|")
    base = {m: got[("llama3-8b", 2, 8192, m, "compiled", "float8")] for m in ("none", "op", "full")}
    raw = {}
    for r in measured:
        if (r["name"], r["micro_batch"], r["build"], r["precision"]) == \
                ("llama3-8b", "2", "compiled", "float8"):
            raw[r["mode"]] = float(r["bwd_ms"]) / int(r["layers"])
    for mode in ("none", "op", "full"):
        kept, rec_s, comp_s = fig[mode]
        rec = "- | -" if mode == "none" else \
            f"{raw[mode] - raw['none']:.2f} ms | {1e3 * rec_s:.2f} ms"
        both = (f"{base['none'][0]:.2f} ms | {1e3 * comp_s:.2f} ms" if mode == "none"
                else "- | -")
        w(f"| {mode} | {base[mode][1] / 1e9:.3f} GB | {kept / 1e9:.3f} GB | {rec} | {both} |")
    w("")
    w("The three measured shapes without recomputation, compiled (a layer's forward and")
    w("backward, timed by CUDA events over the layers, and the sum of one block's kernels in the")
    w("profiler, where it was profiled):")
    w("")
    w("| shape | micro-batch x seq | precision | measured | kernels' sum | trainsim | error | "
      "against the kernels |")
    w("|---|---|---|---|---|---|---|---|")
    for (name, mbs, seq) in sorted({k[:3] for k in got}):
        for p in ("bf16", "float8"):
            meas = got[(name, mbs, seq, "none", "compiled", p)][0]
            pred = 1e3 * shapes[(name, mbs, p)]
            ksum = sums.get((name, mbs, p, "compiled"))
            kcells = (f"{ksum / 1e3:.2f} ms | {pred:.2f} ms | {100 * (pred / meas - 1):+.1f}% | "
                      f"{100 * (pred * 1e3 / ksum - 1):+.1f}%" if ksum else
                      f"- | {pred:.2f} ms | {100 * (pred / meas - 1):+.1f}% | -")
            w(f"| {name} | {mbs} x {seq:,} | {p} | {meas:.2f} ms | {kcells} |")
    w("")
    with open(CLOCKS) as f:
        clk = {r["precision"]: r for r in csv.DictReader(line for line in f
                                                          if not line.startswith("#"))}
    cell = lambda p: (f"{float(clk[p]['timed_ms']):.2f} ms timed, "
                      f"{float(clk[p]['back_to_back_kernels_ms']):.2f} back to back, "
                      f"{float(clk[p]['apart_kernels_ms']):.2f} apart")
    w("- The layers timed whole run 0.9-2.1 ms longer than their kernels' sum, bf16 and float8")
    w("  alike. Profiled back to back instead (`bench/device/block_clocks.py`, micro-batch 2), the")
    w(f"  kernels sum to the timed steps: bf16 {cell('bf16')},")
    w(f"  float8 {cell('float8')} a layer. Nothing idles between")
    w("  the kernels; they run faster in the short passes profiled apart (each ended by a")
    w("  synchronisation) than step after step, so trainsim's layers are to be read against the")
    w("  timed steps: at micro-batch 2 bf16 5% and float8 7% fast (the clock a sustained step")
    w("  runs at, which trainsim's power model sets, is not told apart here from the rest). At")
    w("  micro-batch 1 Inductor generates one persistent reduction for a norm's work (pow, sum,")
    w("  div) with FP8 casts and a transposed write, 2.46 ms a layer, where at micro-batch 2 the")
    w("  kernels of the same operations take 0.92 ms over twice the tokens: a code-generation")
    w("  choice of that shape, which trainsim does not model.")
    w("")


def kernel_families(work):
    """(measured, trainsim) us by (pass, family) for one layer at micro-batch 2 x 8,192."""
    measured = {}
    with open(KERNELS) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            k = (r["pass"], family(r["kernel"]))
            measured[k] = measured.get(k, 0.0) + float(r["device_us"])
    wl = os.path.join(work, "profile.yaml")
    workload(wl, 4, 2, 2, 1, "none", TORCHTITAN_STACK)
    out = subprocess.run([TRAINSIM, "profile", wl, "--platform",
                          os.path.join(ROOT, "platforms", "dgx-h100.yaml"), "--gpus", "1"],
                         capture_output=True, text=True, check=True).stdout
    priced = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 7 and f[0] in ("fwd", "bwd") and f[-1].endswith("%"):
            # pass, piece words, kernel, shape words, count, time_us, source, share
            count, us, kernel = float(f[-4]), float(f[-3]), next(x for x in f[1:] if "_" in x)
            k = (f[0], family(kernel))
            priced[k] = priced.get(k, 0.0) + count * us
    return measured, priced
PAGE = os.path.join(ROOT, "docs", "validation", "torchtitan.md")
# layers, hidden, heads, kv heads, ffn: Llama 3.1 8B, and Llama 3.2 1B's shape (op_sac.CASES)
MODELS = {"8b": (32, 4096, 32, 8, 14336), "1b": (16, 2048, 32, 8, 8192)}
VOCAB = 128256
TORCHTITAN_STACK = {"framework": "pytorch", "attention": "sdpa_flash", "rms_norm": "eager_fp32",
                    "rope": "complex", "gate_up": "separate"}
# Grand Teton's H100 as torchtitan's page describes it: 96 GB of HBM2e at 2.4 TB/s (the
# derived kernel table: platforms/kernels/h100-hbm2e.yaml), a 500 W power limit; the GH100
# compute and the DGX H100 pod's network (eight 400 Gb/s NICs a host, as the page's "400 Gb/s
# per GPU" RDMA) ASSUMED. The limit's steady reading ASSUMED at the 700 W part's ratio (690 of
# 700 W, platforms/dgx-h100.yaml): 493 W. Capacity: 96 GiB less the 361 MiB nvidia-smi hides
# of the 80 GB part (ASSUMED alike).
GRAND_TETON = ["--set", "gpu.kernel_table=kernels/h100-hbm2e.yaml",
               "--set", "gpu.hbm_capacity=97943MiB", "--set", "gpu.hbm_bandwidth=2.4TBps",
               "--set", "gpu.power=500W", "--set", "gpu.power_limit.limit=493W"]


def rows():
    with open(DATA) as f:
        return list(csv.DictReader((line for line in f if not line.startswith("#")),
                                   delimiter="\t"))


def modelled(row):
    """What trainsim cannot describe of a run, or None."""
    if row["table"] == "h200":
        return "the 2025 stack (torchtitan e7c0cae, NGC 25.05's torchao, not measured)"
    if row["async_tp"] == "yes":
        return "compile + float8 + async TP"
    if row["float8"] == "yes" and (int(row["tp"]) > 1 or int(row["pp"]) > 1):
        return "float8 with tensor parallelism"
    return None


def workload(path, layers, micro, global_batch, dp, recompute, stack, seq=8192, model="8b",
             float8=False, cp=1):
    """A torchtitan Llama 3 run; float8: torchao's float8 linears (stack.fp8_linear torchao,
    with the FP8 format and scaling of Float8LinearConfig's defaults)."""
    n, h, heads, kv, ffn = MODELS[model]
    fp8 = {"fp8": "hybrid", "fp8_recipe": "tensorwise"} if float8 else {}
    stack = dict(stack, fp8_linear="torchao") if float8 else stack
    with open(path, "w") as f:
        json.dump({"name": f"torchtitan-llama3-{model}",
                   "model": {"num_layers": layers or n, "hidden_size": h,
                             "num_attention_heads": heads, "num_query_groups": kv,
                             "ffn_hidden_size": ffn, "seq_length": seq, "vocab_size": VOCAB,
                             "swiglu": True, "normalization": "RMSNorm",
                             "position_embedding_type": "rope",
                             "untie_embeddings_and_output_weights": True,
                             "add_bias_linear": False, "attention_dropout": 0,
                             "hidden_dropout": 0},
                   "training": {"global_batch_size": global_batch, "micro_batch_size": micro,
                                "precision": "bf16", "optimizer": "adam",
                                "adam_implementation": "foreach", **fp8,
                                # one GPU: the blocks bench/device measured, bf16 weights (FSDP's
                                # policy keeps fp32 shards, modelled apart)
                                **({} if dp * cp > 1 else {"autocast": False})},
                   "parallelism": {"tensor": 1, "pipeline": 1, "data": dp, "context": cp,
                                   "zero_stage": 3 if dp * cp > 1 else 0,
                                   "recompute": recompute},
                   "stack": stack}, f)


def run(work, wl, gpus, platform_args, tag):
    out = os.path.join(work, "out-" + tag)
    cmd = [TRAINSIM, "run", wl, "--platform", os.path.join(ROOT, "platforms", "dgx-h100.yaml"),
           "--gpus", str(gpus), "--quiet", "--ignore-memory", "--out", out] + platform_args
    return run_result(cmd, out, f"torchtitan.py ({tag})")


def published_runs(work):
    out = []
    for i, row in enumerate(rows()):
        why = modelled(row)
        if why is not None:
            out.append((row, why, None))
            continue
        gpus, micro = int(row["gpus"]), int(row["local_batch"])
        non_dp = int(row["cp"]) * int(row["tp"]) * int(row["pp"])
        preds = {}
        described = dict(TORCHTITAN_STACK, compile=row["compile"] == "yes")
        for tag, stack in (("described", described),
                           ("defaults", {"framework": "pytorch", "compile": row["compile"] == "yes"})):
            wl = os.path.join(work, f"tt{i}-{tag}.yaml")
            workload(wl, None, micro, int(row["global_batch"]), int(row["fsdp"]), row["ac"], stack,
                     int(row["seq"]), row["model"], row["float8"] == "yes", int(row["cp"]))
            res = run(work, wl, gpus, GRAND_TETON, f"{i}-{tag}")
            # torchtitan's TPS a GPU: a data-parallel rank's tokens over its cp x tp x pp GPUs
            # (train.py at 9dec370: ntokens / (time x parallel_dims.non_data_parallel_size))
            preds[tag] = (micro * int(row["seq"]) / non_dp / res["metrics"]["iteration_s"],
                          res["memory"]["peak_bytes"] / 2**30, res["memory"]["fits"],
                          res["breakdown_s"]["recompute"] / res["metrics"]["iteration_s"])
        out.append((row, None, preds))
    return out


def layer_figures(work, compiled, float8=False, model="8b", micro=2, seq=8192,
                  modes=("none", "op", "full")):
    """Per layer, from the difference of 8 and 4 layers (the embedding, output layer and loss
    cancel): trainsim's kept bytes and recomputation ms for each mode, on the measuring H100."""
    figs = {}
    stack = dict(TORCHTITAN_STACK, compile=compiled)
    for mode in modes:
        per = {}
        for layers in (4, 8):
            tag = f"layer-{mode}-{layers}-{compiled}-{float8}-{model}-{micro}"
            wl = os.path.join(work, tag + ".yaml")
            workload(wl, layers, micro, micro, 1, mode, stack, seq, model, float8)
            res = run(work, wl, 1, [], tag)
            st = res["stages"][0]
            per[layers] = (st["memory_bytes"]["activations"], res["breakdown_s"]["recompute"],
                           res["breakdown_s"]["compute"])
        figs[mode] = tuple((per[8][k] - per[4][k]) / 4 for k in range(3))
    return figs


def ring_eager_ms(work, cp):
    """trainsim's eager kernels of PyTorch's ring loop (ms, forward and backward) on its last
    rank, for cp_ring_loop.py's case (a Llama 3 8B layer's 32 heads of 128 at 32,768 tokens a
    rank, micro-batch 1): the cp_* rows of `trainsim profile` on the measuring H100
    (platforms/dgx-h100.yaml), each row's time by its count."""
    wl = os.path.join(work, f"ring-{cp}.yaml")
    workload(wl, 1, 1, 1, 1, "none", dict(TORCHTITAN_STACK, cp_attention="pytorch"),
             32768 * cp, cp=cp)
    out = subprocess.run([TRAINSIM, "profile", wl, "--platform",
                          os.path.join(ROOT, "platforms", "dgx-h100.yaml")],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"torchtitan.py: trainsim profile failed: {out.stderr}")
    ms = {"fwd": 0.0, "bwd": 0.0}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) >= 6 and f[2].startswith("cp_"):
            ms[f[0]] += int(f[-4]) * float(f[-3]) / 1e3
    return ms["fwd"], ms["bwd"]


def measured_layers(path, build):
    """Per layer of Llama 3 8B at micro-batch 2: mode -> (forward ms, backward ms, held bytes),
    and the file's header line."""
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    got = {}
    for r in csv.DictReader(lines):
        if (r["name"] == "llama3-8b" and r["micro_batch"] == "2" and r.get("status", "ok") == "ok"
                and r.get("build", "eager") == build):
            layers = int(r["layers"])
            got[r["mode"]] = (float(r["fwd_ms"]) / layers, float(r["bwd_ms"]) / layers,
                              int(r["held_bytes"]) / layers)
    with open(path) as f:
        header = f.readline().lstrip("# ").strip()
    return got, header


def main():
    if not os.access(TRAINSIM, os.X_OK):
        sys.exit("torchtitan.py: build trainsim first (build/trainsim)")
    with tempfile.TemporaryDirectory() as work:
        runs = published_runs(work)
        figs = {False: layer_figures(work, False), True: layer_figures(work, True)}
        float8_figs = layer_figures(work, True, float8=True)
        shapes = {}
        for model, micro, seq in (("8b", 2, 8192), ("8b", 1, 8192), ("1b", 4, 4096)):
            for f8 in (False, True):
                shapes[(f"llama3-{model}", micro, "float8" if f8 else "bf16")] = layer_figures(
                    work, True, f8, model, micro, seq, ("none",))["none"][2]
        measured_k, priced_k = kernel_families(work)
        eager = {cp: ring_eager_ms(work, cp) for cp in (2, 4, 8)}
    got, header = measured_layers(MEASURED, "eager")
    compiled, compiled_header = measured_layers(COMPILED, "compiled")
    lines = []
    w = lines.append
    w("# trainsim against torchtitan (Llama 3.1 on H100 and H200)")
    w("")
    w("Generated by `docs/validation/torchtitan.py`; do not edit. Validation only: nothing here")
    w("set a parameter.")
    w("")
    w("## torchtitan's Llama block on an H100: what op-level checkpointing keeps and redoes")
    w("")
    w(f"`bench/device/op_sac.py` ({header}) runs four of torchtitan's Llama 3 8B blocks (its")
    w("code at 9dec370) at micro-batch 2 x 8,192 with no recomputation, its op-level selective")
    w("checkpointing, and full recomputation (with and without torch.utils.checkpoint's early")
    w("stop). trainsim's figures a layer are the difference of 8 and 4 layers on")
    w("`platforms/dgx-h100.yaml` (its kernel table measured on an H100 80GB HBM3), described as")
    w("torchtitan ran (`stack: {framework: pytorch, attention: sdpa_flash, rms_norm: eager_fp32,")
    w("rope: complex}`); the measured recomputation is the mode's backward less the backward")
    w("without recomputation.")
    w("")
    w(f"Compiled (`bench/device/compile_block.py`: {compiled_header}): the same blocks under")
    w("torch.compile as torchtitan applies it (per block, after the checkpoint wrapper), described")
    w("with `compile: true`.")
    w("")
    w("| build | mode | kept a layer: measured | trainsim | recomputation a layer: measured | "
      "trainsim | forward + backward a layer: measured | trainsim |")
    w("|---|---|---|---|---|---|---|---|")
    for build, meas, fig in (("eager", got, figs[False]), ("compiled", compiled, figs[True])):
        base_bwd = meas["none"][1]
        for mode in ("none", "op", "full"):
            held = meas[mode][2]
            kept, rec_s, comp_s = fig[mode]
            rec_meas = "-" if mode == "none" else f"{meas[mode][1] - base_bwd:.2f} ms"
            rec_pred = "-" if mode == "none" else f"{1e3 * rec_s:.2f} ms"
            both = (f"{meas['none'][0] + meas['none'][1]:.2f} ms | {1e3 * comp_s:.2f} ms"
                    if mode == "none" else "- | -")
            w(f"| {build} | {mode} | {held / 1e9:.3f} GB | {kept / 1e9:.3f} GB | {rec_meas} | "
              f"{rec_pred} | {both} |")
    no_stop = got.get("full_no_early_stop")
    base_bwd = got["none"][1]
    w("")
    w("- Kept bytes: the measured \"held\" includes each block's output (the next block's input),")
    w("  which trainsim counts as the next layer's input: the same quantity. op keeps the layer's")
    w("  input, wq's, wv's, w1's and w2's outputs and the attention's output and log-sum-exp;")
    w("  compiled, the graph drops w2's output (no backward reads it) and the norms keep what")
    w("  F.rms_norm keeps.")
    w("- Forward and backward: trainsim's backward adds the fp32 gradient accumulation of plain")
    w("  PyTorch's recipe, which the block measurement (bf16 .grad) does not run.")
    if no_stop is not None:
        w(f"- Early stop: eager full recomputation took {got['full'][1] - base_bwd:.2f} ms a layer, "
          f"and {no_stop[1] - base_bwd:.2f} ms with")
        w("  set_checkpoint_early_stop(False): PyTorch's non-reentrant checkpoint stops at the")
        w("  last tensor the backward needs (w2's input), so w2 and the last residual add are not")
        w("  re-run; trainsim models that (`ts_workload_recompute_stops_early`).")
    w("")
    w("The eager block's kernels by family (`bench/device/block_kernels.py`, one block, the")
    w("profiler's device time, each pass apart and followed by a synchronisation), against")
    w("`trainsim profile` (its kernels at the clock its power model gives a training step at")
    w("700 W: the measurement's isolated passes may run nearer the boost clock):")
    w("")
    w("| pass | family | measured | trainsim |")
    w("|---|---|---|---|")
    for p in ("fwd", "bwd"):
        for fam in ("GEMMs", "attention", "the rest"):
            w(f"| {p} | {fam} | {measured_k.get((p, fam), 0) / 1e3:.2f} ms | "
              f"{priced_k.get((p, fam), 0) / 1e3:.2f} ms |")
    w("")
    float8_section(w, float8_figs, shapes)
    w("## torchtitan's published runs")
    w("")
    w("Published: pytorch/torchtitan `benchmarks/llama3_h100_202412_torchtitan.md` (torchtitan")
    w("9dec370, PyTorch 1963fc8, December 2024: Grand Teton hosts of 8 H100 with 96 GB of HBM2e")
    w("at 2.4 TB/s and a 500 W limit, 400 Gb/s RDMA a GPU; tokens a second a GPU at the 90th")
    w("iteration; memory the largest `max_reserved` over the GPUs) and")
    w("`benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md` (8 H200 a host). Predicted:")
    w("`trainsim run` on `platforms/dgx-h100.yaml` with Grand Teton's GPU set by `--set` (the")
    w("kernel table `kernels/h100-hbm2e.yaml`, derived from the measured H100's with its")
    w("memory-bound kernels slowed by the bandwidth ratio; 96 GB; 2.4 TB/s; a 500 W limit, its")
    w("steady reading ASSUMED at 493 W as the 700 W part's 690) and the DGX pod's network")
    w("(ASSUMED alike: 400 Gb/s a GPU). trainsim's memory is what the tensors take at the peak;")
    w("PyTorch's reserved bytes add the caching allocator's rounding and fragmentation, so")
    w("trainsim's should sit below the published, not on it. \"Stack defaults\" describes the")
    w("same runs with `framework: pytorch` alone (SDPA as today's PyTorch runs it on Hopper,")
    w("cuDNN's; F.rms_norm; rotate_half), to show what the description of the stack moves.")
    w("")
    w("| table | GPUs | model | seq | FSDP x TP x PP x CP | batch a GPU | recompute | "
      "published tokens/s/GPU | trainsim | difference | stack defaults | published memory "
      "(reserved) | trainsim peak |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    errs = []
    for row, why, preds in runs:
        pub = float(row["tps_gpu"])
        layout = f"{row['fsdp']} x {row['tp']} x {row['pp']} x {row['cp']}"
        lead = (f"| {row['table']} | {row['gpus']} | {row['model']} | {int(row['seq']):,} | "
                f"{layout} | {row['local_batch']} | {row['ac']} | {pub:,.0f} |")
        if preds is None:
            w(f"{lead} not modelled: {why} | | | {row['memory_gib']} GiB | |")
            continue
        tps, peak, fits, _ = preds["described"]
        e = tps / pub - 1
        errs.append(e)
        dflt = preds["defaults"][0] / pub - 1
        w(f"{lead} {tps:,.0f} | {100 * e:+.1f}% | {100 * dflt:+.1f}% | {row['memory_gib']} GiB | "
          f"{peak:.1f} GiB{'' if fits else ', OOM'} |")
    w("")
    w(f"Modelled runs: {len(errs)}, mean absolute difference "
      f"{100 * statistics.mean(map(abs, errs)):.1f}% (mean {100 * statistics.mean(errs):+.1f}%).")
    w("")
    w("## What the comparisons say")
    w("")
    w("- FSDP2 (`fully_shard`) copies each layer's gathered weights out of the all-gather's flat")
    w("  output and its gradients, cast to fp32, into the reduce-scatter's flat input, both on")
    w("  the compute stream (`stack.fsdp_version: 2`, the default; measured on an H100,")
    w("  bench/device/h100_fsdp_copies.csv: 335 us a gather and 720 us a reduction for this")
    w("  layer, priced 358 and 713 us at the copy kernels' rates measured at 8-512 ranks'")
    w("  shapes, h100_fsdp_copy_kernels.csv): 1.39 ms a layer and step measured, 1.43 priced.")
    w("  Before they were modelled (2026-12-06) the four runs sat at 2.5% mean (-2.2%, +0.8%,")
    w("  +1.9%, +4.9%).")
    w("- FSDP2's collectives run beside the layers' compute, so how overlap is priced moves these")
    w("  runs: trainsim slows a kernel that starts beside a collective by overlap_slowdown for its")
    w("  whole length (docs/model.md); slowing it only while the collective itself runs put them")
    w("  at 10.3% mean, all too fast (tried on 2026-12-06 before the copies above were modelled,")
    w("  not kept: a collective beside GEMMs was measured 2.5-2.7 times longer than alone,")
    w("  bench/device/h100_overlap_mutual.csv, which trainsim does not model yet). The H100's")
    w("  overlap_slowdown measured on H100s (0.10; the H200's 0.11 gave 2.0% mean before the")
    w("  copies) is what these rows use.")
    f8 = [(row, preds) for row, _, preds in runs
          if preds is not None and row["float8"] == "yes"]
    f8_errs = {int(r["cp"]): p["described"][0] / float(r["tps_gpu"]) - 1 for r, p in f8}
    no_cp = [e for r, p in f8 for e in [p["described"][0] / float(r["tps_gpu"]) - 1]
             if r["cp"] == "1"]
    w("- The float8 runs of Tables 1 to 3 are described with torchao's float8 linears")
    w("  (`stack.fp8_linear: torchao`, compiled, the block measurement above): without context")
    w(f"  parallelism they sit at {', '.join(f'{100 * e:+.1f}%' for e in no_cp)}. FSDP's all-gathers")
    w("  are played in bf16: whether the runs set torchtitan's enable_fsdp_float8_all_gather is not")
    w("  published (its default is off), and at 8 and 128 GPUs they are hidden under compute.")
    w("  With context parallelism (Table 2, PyTorch's ring attention over 2, 4 and 8 GPUs)")
    w(f"  trainsim is {', '.join(f'{100 * f8_errs[c]:+.1f}%' for c in (2, 4, 8) if c in f8_errs)}:"
      " too fast at 4 and 8 ranks.")
    ring = {}
    with open(CP_RING) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            ring[int(r["cp"])] = {k: float(v) for k, v in r.items()}
    r8 = ring[8]
    loop = {}
    with open(CP_LOOP) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            if int(r["rank"]) == int(r["cp"]) - 1:
                loop[int(r["cp"])] = {k: float(v) for k, v in r.items()}
    w("  trainsim plays them as PyTorch's ring attention runs them (`stack.cp_attention: pytorch`,")
    w("  the default under framework pytorch since 2026-12-07; as Transformer Engine runs it")
    w("  before): the flash calls of load-balanced causal chunks beside the keys and values")
    w("  all-gathered, and the eager kernels of PyTorch's loop around them (workloads/cost.c:")
    w("  each step's output cast to fp32 and merged into the running one, the keys and values")
    w("  concatenated at every step; in the backward fp32 gradient sums and concatenations, and")
    w("  the keys' and values' fp32 gradients passed rank to rank). One rank's steps replayed on an")
    w("  H100 (`bench/device/cp_ring_steps.py`, a Llama 3 8B layer, 32,768 tokens a rank, no")
    w("  communication) take the flash kernels' expected time: " +
      ", ".join(f"{ring[c]['fwd_kernels_ms']:.1f}" for c in sorted(ring)) +
      f" ms forward at cp {', '.join(str(c) for c in sorted(ring))}, against cp times the")
    w(f"  rank's own causal block ({r8['causal_fwd_ms']:.1f} ms). PyTorch's own loop on an")
    w("  H100, its communication replaced by local buffers and its flash calls answered from")
    w("  earlier results (`bench/device/cp_ring_loop.py`, the last rank), runs its eager kernels")
    w("  in " + ", ".join(f"{loop[c]['eager_fwd_ms']:.1f}" for c in sorted(loop)) +
      " ms forward and " + ", ".join(f"{loop[c]['eager_bwd_ms']:.1f}" for c in sorted(loop)) +
      " ms backward a layer at cp " + ", ".join(str(c) for c in sorted(loop)) + ";")
    w("  trainsim prices them at " + ", ".join(f"{eager[c][0]:.1f}" for c in sorted(loop)) +
      " and " + ", ".join(f"{eager[c][1]:.1f}" for c in sorted(loop)) +
      " ms (" + ", ".join(f"{100 * (eager[c][0] / loop[c]['eager_fwd_ms'] - 1):+.0f}%"
                          for c in sorted(loop)) + "; " +
      ", ".join(f"{100 * (eager[c][1] / loop[c]['eager_bwd_ms'] - 1):+.0f}%"
                for c in sorted(loop)) + "). The loop less its flash calls timed apart")
    w("  agrees in this run (" +
      ", ".join(f"{loop[c]['loop_less_flash_bwd_ms']:.1f}" for c in sorted(loop)) +
      " ms backward), but an earlier one the same day gave 16.1 ms at cp 8: 0.6 s of")
    w("  flash backward timed twice varies by as much as the eager kernels take, hence the")
    w("  answered flash calls.")
    row8, pred8 = next((r, p) for r, p in f8 if r["cp"] == "8")
    tokens8 = int(row8["local_batch"]) * int(row8["seq"]) / 8  # a rank's, as TPS counts them
    gap8 = tokens8 / float(row8["tps_gpu"]) - tokens8 / pred8["described"][0]
    w(f"  At cp 8 the published step is still {gap8:.1f} s longer than trainsim's. The ring's")
    w("  communication at these sizes (the keys and values of every head gathered, their fp32")
    w("  gradients passed on at each step) and what else PyTorch's context parallelism of")
    w("  1963fc8 did are not measured here (one GPU): the gap is not explained.")
    w("- Tables 4 to 6 ran float8 with tensor parallelism, most with async tensor parallelism,")
    w("  which trainsim does not model; the H200 runs ran 2025's stack (torchtitan e7c0cae, the")
    w("  torchao of NGC 25.05), whose float8 code was not measured: listed, not predicted.")
    w("- Four pieces of torchtitan's stack move these runs: its RMSNorm written as eager fp32")
    w("  operations (measured on the H100: 1,005 us forward and 2,339 us backward over 16,384 x")
    w("  4,096 values, against F.rms_norm's 68 and 160), its complex rotary embedding, its gate")
    w("  and up as two linears (whose SwiGLU backward writes two gradients: 394 against 1,008 us")
    w("  at 2^26 elements), and its op-level checkpointing, which redoes the norms, wk, wo, w3 and")
    w("  the rest in the backward; described with PyTorch's defaults instead the prediction is the")
    w("  \"stack defaults\" column.")
    eager = [(row, preds) for row, _, preds in runs
             if preds is not None and row["compile"] == "no"]
    if len(eager) >= 2:
        (r8, p8), (r128, p128) = eager[0], eager[-1]
        pub_change = float(r128["tps_gpu"]) / float(r8["tps_gpu"]) - 1
        sim_change = p128["described"][0] / p8["described"][0] - 1
        w(f"- From {r8['gpus']} to {r128['gpus']} GPUs the published throughput a GPU moves "
          f"{100 * pub_change:+.1f}%, trainsim's {100 * sim_change:+.1f}%:")
        w("  FSDP's gathers and reduce-scatters leave the host's NVLink for the network at 128")
        w("  GPUs, hidden under the layers' compute in trainsim; the published runs lose a few")
        w("  percent there, as MosaicML's FSDP runs do at scale (docs/validation/mosaicml.md).")
    w("- Memory: the logits dominate the peak beside the kept activations (F.cross_entropy on")
    w("  fp32 logits: 12 bytes a logit of 2 x 8,192 x 128,256 at the backward's start, 23.5 GiB);")
    w("  the published reserved bytes sit above trainsim's peak by the caching allocator's")
    w("  share, which trainsim does not model (docs/validation/h200.md, the allocator section).")
    write_whole(PAGE, "\n".join(lines) + "\n")
    print(f"torchtitan.py: wrote {PAGE}")


if __name__ == "__main__":
    main()
