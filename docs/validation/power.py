"""Regenerates docs/validation/power.md: what a whole training step's kernels take on an H100 and
an H200, against the kernel tables trainsim prices them from, and what the 700 W power limit
has to do with the difference. Validation only: nothing here sets a parameter.

    python3 docs/validation/power.py        (from the repository root, after a build; PyYAML,
                                            and numpy and scipy for bench/power_fit.py)

Inputs, all measured on the device machines (bench/device):
  h100_ / h200_step_kernels*.csv  step_kernels.py: one profiled step per case, kernel by kernel,
                                  with nvidia-smi's clocks and power over 5 timed steps;
  h100_ / h200_power_probe.csv    power_probe.py: kernels at the steps' shapes timed as
                                  kernel_table.py times them, cool, hot and alone back to back;
  h100_sustained.csv              sustained.py: four kernels for 20 s each, second by second;
  h200_power_data.csv             power_data.py: a model's own operands against randn;
  h100_power_response.csv         power_response.py: kernels alone and alternating, every call
                                  timed by CUDA events, with NVML's samples (*_samples.csv);
  h100_step_clocks.csv            step_clocks.py: one profiled step per case, kernel by kernel,
                                  with NVML's samples (*_samples.csv).
(step_kernels.py's Llama case is in the H100's CSVs but not compared here: its layer is not
the GPT layer this page prices.) The tables' side comes from `trainsim profile` (one layer's
kernels) on platforms/dgx-h100.yaml and platforms/hgx-h200.yaml, times the layers, microbatches
and recomputation of each case.
"""
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile

from pages import write_whole

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEV = os.path.join(ROOT, "bench", "device")
TRAINSIM = os.environ.get("TRAINSIM", os.path.join(ROOT, "build", "trainsim"))
GPUS = [("H100 80GB HBM3", "h100", "platforms/dgx-h100.yaml"),
        ("H200", "h200", "platforms/hgx-h200.yaml")]
VOCAB = 50304
# step_kernels.py's cases: name -> (layers, hidden, heads, ffn, seq, micro-batch, microbatches,
# full recompute, attention)
CASES = {
    "gpt-1.3b-s8k": (24, 2048, 16, 8192, 8192, 1, 2, False, "sdpa"),
    "gpt-1.3b-s8k-flash": (24, 2048, 16, 8192, 8192, 1, 2, False, "flash"),
    "gpt-1.3b-s16k": (24, 2048, 16, 8192, 16384, 1, 2, False, "sdpa"),
    "gpt-1.3b-s16k-flash": (24, 2048, 16, 8192, 16384, 1, 2, False, "flash"),
    "gpt-760m-s16k-mb2": (24, 1536, 16, 6144, 16384, 2, 1, False, "sdpa"),
    "gpt-1.3b-s32k-full": (24, 2048, 16, 8192, 32768, 1, 1, True, "sdpa"),
    "gpt-2.7b-s8k-full": (32, 2560, 32, 10240, 8192, 1, 2, True, "sdpa"),
    "gpt-2.7b-mb16-full": (32, 2560, 32, 10240, 2048, 16, 1, True, "sdpa"),
}


def read_csv(name):
    path = os.path.join(DEV, name)
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines))


def device_line(name):
    with open(os.path.join(DEV, name)) as f:
        return f.readline().lstrip("# ").strip()


def family(kernel):
    """A profiled kernel's family: attention (cuDNN's or flash's, any of their kernels), GEMM
    (cuBLAS's nvjet, CUTLASS) or other."""
    k = kernel.lower()
    if "cudnn" in k or "flash" in k:
        return "attention"
    if k.startswith("nvjet") or "gemm" in k or "cutlass" in k:
        return "gemm"
    return "other"


def predicted(case, platform):
    """Table-priced GPU time (ms) of the case's transformer layers by family, and the FLOPs of
    their GEMMs: `trainsim profile` of one layer, times layers x microbatches (forward twice
    with full recomputation)."""
    layers, h, heads, ffn, seq, mbs, micro, recompute, attn = CASES[case]
    wl = (f"name: {case}\n"
          f"model: {{num_layers: {layers}, hidden_size: {h}, num_attention_heads: {heads}, "
          f"seq_length: {seq}, vocab_size: {VOCAB}, attention_dropout: 0}}\n"
          f"training: {{global_batch_size: {mbs * micro}, micro_batch_size: {mbs}, "
          f"precision: bf16, optimizer: adam, autocast: false, framework: pytorch}}\n"
          f"parallelism: {{tensor: 1, pipeline: 1, data: 1, "
          f"recompute: {'full' if recompute else 'none'}"
          f"{', flash_attention: true' if attn == 'flash' else ''}}}\n")
    if attn == "sdpa":
        wl = wl.replace(", framework: pytorch}", "}") + "stack: {framework: pytorch}\n"
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(wl)
    try:
        out = subprocess.run([TRAINSIM, "profile", f.name, "--platform",
                              os.path.join(ROOT, platform)], capture_output=True, text=True,
                             check=True).stdout
    finally:
        os.unlink(f.name)
    # The power limit's stretches (profile's "power limit" line): the listed attention and
    # memory-bound times are their tables' (at the boost clock) that much longer; divided out,
    # the table's own. The GEMMs stay as priced: their table points are brought to the boost
    # clock by each point's own factor first, which the listing does not show.
    power = re.search(r"([\d.]+) for cuDNN attention, ([\d.]+) flash attention, ([\d.]+) the "
                      r"rest", out)
    stretch = ({"gemm": 1.0, "sdpa": float(power.group(1)), "flash": float(power.group(2)),
                "other": float(power.group(3))}
               if power else {"gemm": 1.0, "sdpa": 1.0, "flash": 1.0, "other": 1.0})
    # by family, and each attention kernel ("attention sdpa_fwd_causal", ...) apart too; the
    # attention also as priced at the modelled clock
    fam = {"gemm": 0.0, "attention": 0.0, "other": 0.0, "attention modelled": 0.0}
    row = re.compile(r"^\s+(fwd|bwd)\s+.*?\s(\S+)\s+.*\s(\d+)\s+([\d.]+)\s+"
                     r"(table|interpolated|model|extrapolated)\s")
    for line in out.splitlines():
        m = row.match(line + " ")
        if not m:
            continue
        passes, kernel, count, us = m.group(1), m.group(2), int(m.group(3)), float(m.group(4))
        f_name = ("gemm" if kernel.startswith("gemm") else
                  "attention" if kernel.startswith(("sdpa", "flash")) else "other")
        t = count * us * layers * micro * (2 if recompute and passes == "fwd" else 1)
        cls = kernel.split("_")[0] if f_name == "attention" else f_name
        fam[f_name] += t / stretch[cls]
        if f_name == "attention":
            fam["attention modelled"] += t
            t /= stretch[cls]
        if f_name == "attention":
            fam[f"attention {kernel}"] = fam.get(f"attention {kernel}", 0.0) + t
    tokens = mbs * seq
    layer_flops = 2 * tokens * (4 * h * h + 2 * h * ffn)
    gemm_flops = layer_flops * layers * micro * (4 if recompute else 3)
    logits_flops = 3 * 2 * tokens * h * VOCAB * micro
    return {k: v / 1e3 for k, v in fam.items()}, gemm_flops, logits_flops


def steps_table(tag, platform):
    summary = {r["case"]: r for r in read_csv(f"{tag}_step_kernels_summary.csv")}
    measured = {}
    for r in read_csv(f"{tag}_step_kernels.csv"):
        fam = measured.setdefault(r["case"], {"gemm": 0.0, "attention": 0.0, "other": 0.0})
        fam[family(r["kernel"])] += float(r["total_us"]) / 1e3
    alone = alone_ratios(tag)
    out = ["| case | step | mean SM clock | mean power | GEMMs in the step | GEMMs as priced "
           "| attention in the step | in the table | step / table | alone at the limit / cool "
           "| at the modelled clock | step / modelled |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ratios = {"sdpa": [], "flash": [], "alone": [], "modelled": []}
    gemm_ratios = []
    for case in CASES:
        s = summary.get(case)
        if not s or s["status"] != "ok":
            continue
        pred, gflops, lflops = predicted(case, platform)
        meas = measured[case]
        # The measured GEMM time includes the output layer's; its FLOPs are counted with it.
        meas_rate = (gflops + lflops) / (meas["gemm"] * 1e-3) / 1e12
        table_rate = gflops / (pred["gemm"] * 1e-3) / 1e12
        gemm_ratios.append(meas_rate / table_rate)
        att = meas["attention"] / pred["attention"]
        ratios[CASES[case][8]].append(att)
        modelled = meas["attention"] / pred["attention modelled"]
        ratios["modelled"].append(modelled)
        # What power_probe.py's attention alone back to back says, where it probed these shapes:
        # its sustained / cool ratio, forward and backward weighted by the table's times.
        layers, h, heads, _, seq, mbs = CASES[case][:6]
        parts = [(pred[k], alone.get((k.split()[1], f"{heads * mbs}x{seq}x{h // heads}")))
                 for k in pred if k.startswith("attention ") and k != "attention modelled"]
        a = (sum(t * r for t, r in parts) / sum(t for t, _ in parts)
             if parts and all(r for _, r in parts) else None)
        if a:
            ratios["alone"].append(a / att)
        out.append(f"| {case} | {float(s['step_us']) / 1e3:.1f} ms | {s['sm_mhz']} MHz "
                   f"| {s['power_w']} W | {meas_rate:.0f} TFLOP/s | {table_rate:.0f} TFLOP/s "
                   f"| {meas['attention']:.1f} ms | {pred['attention']:.1f} ms | {att:.3f} "
                   f"| {f'{a:.3f}' if a else '-'} | {pred['attention modelled']:.1f} ms "
                   f"| {modelled:.3f} |")
    reasons = sorted({s["event_reasons"] for s in summary.values() if s["status"] == "ok"})
    clocks = [int(s["sm_mhz"]) for s in summary.values() if s["status"] == "ok"]
    return out, ratios, gemm_ratios, reasons, clocks


def alone_ratios(tag):
    """{(kernel, shape): sustained / cool} from power_probe.py."""
    by = {}
    for r in read_csv(f"{tag}_power_probe.csv"):
        by.setdefault((r["kernel"], r["shape"]), {})[r["state"]] = float(r["time_us"])
    return {k: st["sustained"] / st["cool"] for k, st in by.items()}


def probe_table(tag, platform_table, table_cool):
    """power_probe.py's cool, hot and sustained times beside the kernel table's point; each
    table / cool ratio is added to table_cool[kernel family] ("gemm" or "other")."""
    rows = read_csv(f"{tag}_power_probe.csv")
    table = load_table(platform_table)
    by = {}
    for r in rows:
        by.setdefault((r["kernel"], r["shape"]), {})[r["state"]] = r
    out = ["| kernel | shape | table | cool (clock) | hot (clock) | alone, back to back (clock, "
           "power) | table / cool |", "|---|---|---|---|---|---|---|"]
    for (kernel, shape), st in by.items():
        dims = tuple(int(x) for x in shape.split("x"))
        t = table_point(table, kernel, dims)
        cool = float(st["cool"]["time_us"])
        if t:
            table_cool.setdefault("gemm" if kernel.startswith("gemm") else "other",
                                  []).append(t / cool)
        fmt = (lambda s: f"{float(s['time_us']):.1f} us ({s['sm_mhz']} MHz)")
        sus = st["sustained"]
        out.append(f"| {kernel} | {shape} | {t:.1f} us | {fmt(st['cool'])} | {fmt(st['hot'])} "
                   f"| {float(sus['time_us']):.1f} us ({sus['sm_mhz']} MHz, {sus['power_w']} W) "
                   f"| {t / cool:.3f} |" if t else
                   f"| {kernel} | {shape} | - | {fmt(st['cool'])} | {fmt(st['hot'])} | "
                   f"{float(sus['time_us']):.1f} us ({sus['sm_mhz']} MHz) | - |")
    return out


def load_table(path):
    import yaml
    with open(os.path.join(ROOT, path)) as f:
        return yaml.safe_load(f)["tables"]


def table_point(tables, kernel, dims):
    """The table's time at exactly these axes' values, or None."""
    t = tables.get(kernel)
    if not t:
        return None
    axes = list(t["axes"].values())
    if len(axes) != len(dims) or any(d not in a for d, a in zip(dims, axes)):
        return None
    idx = 0
    for d, a in zip(dims, axes):
        idx = idx * len(a) + a.index(d)
    return t["time_us"][idx]


def main():
    if not os.access(TRAINSIM, os.X_OK):
        sys.exit(f"power.py: {TRAINSIM} not found: build first")
    lines = ["# Power and clocks: a step's kernels against the kernel tables", "",
             "Generated by `docs/validation/power.py`; do not edit. Validation only: no "
             "parameter is set here. Sources: " + "; ".join(
                 device_line(f) for f in ("h100_step_kernels.csv", "h200_step_kernels.csv")) +
             ".", ""]
    stats = {"sdpa": [], "flash": [], "gemm": [], "table_cool": {}, "modelled": []}
    for gpu, tag, platform in GPUS:
        steps, ratios, gemm_ratios, reasons, clocks = steps_table(tag, platform)
        stats["sdpa"] += ratios["sdpa"]
        stats["flash"] += ratios["flash"]
        stats["gemm"] += gemm_ratios
        stats["alone"] = stats.get("alone", []) + ratios["alone"]
        stats["modelled"] += ratios["modelled"]
        lines += [f"## {gpu}: whole steps, kernel by kernel", "",
                  f"`bench/device/step_kernels.py` on the {gpu} "
                  f"(`bench/device/{tag}_step_kernels*.csv`): each case is one step of "
                  "docs/validation/h200.md's models and recipe (fp32 main gradients, fused "
                  "AdamW), PyTorch's own attention backend (cuDNN) unless the case says flash; "
                  "GPU time by kernel family from the profiler, against the same families "
                  "priced from the GPU's kernel table (`trainsim profile`, the transformer "
                  "layers only; the measured GEMMs include the output layer's, whose FLOPs are "
                  "counted with them; the GEMMs as trainsim prices them, each table point "
                  "brought to the boost clock and then to the modelled one), and the "
                  "attention as trainsim prices it at the clock "
                  "its power model gives the step's mix (docs/model.md, \"The power limit\"). "
                  "Clock and power: nvidia-smi's means over 5 timed steps.",
                  ""] + steps + [""]
        lines += [
            f"- Every step ran at the power limit: mean power {min_pw(tag)}-{max_pw(tag)} W of "
            f"700, clock-event reasons {', '.join(reasons)} (0x4: software power cap) in "
            f"every case, mean SM clock {min(clocks)}-{max(clocks)} MHz against the "
            "1,980 MHz the GPU boosts to when its power allows.",
            f"- Attention in the step over the table: cuDNN {fmt_range(ratios['sdpa'])}, "
            f"flash {fmt_range(ratios['flash'])}; GEMMs' rate in the step over trainsim's "
            f"{fmt_range(gemm_ratios)}. Attention in the step over its price at the modelled "
            f"clock: {fmt_range(ratios['modelled'])}.", ""]
        lines += [f"## {gpu}: the tables' points, cool, hot and alone back to back", "",
                  "`bench/device/power_probe.py` "
                  f"(`bench/device/{tag}_power_probe.csv`): each kernel timed as "
                  "kernel_table.py times it (randn operands, calls captured in a CUDA graph, "
                  "median of 5 replays), after 1.5 s idle (cool), right after 2 s of a large "
                  "GEMM (hot), and alone back to back for 4 s (eager calls with a "
                  "synchronisation each, so short kernels carry their launch); SM clock and "
                  "power read through NVML every 2 ms. (NVML's power is a trailing average: "
                  "meaningful for the 4 s runs only.)", ""]
        lines += probe_table(tag, f"platforms/kernels/{tag}.yaml", stats["table_cool"]) + [""]
    lines += (sustained_section() + data_section(stats) + response_section(stats) +
              in_step_section(stats) + bias_section() + mix_section(stats) + reading(stats))
    write_whole(os.path.join(ROOT, "docs", "validation", "power.md"), "\n".join(lines) + "\n")


def min_pw(tag):
    return min(int(r["power_w"]) for r in read_csv(f"{tag}_step_kernels_summary.csv")
               if r["status"] == "ok")


def max_pw(tag):
    return max(int(r["power_w"]) for r in read_csv(f"{tag}_step_kernels_summary.csv")
               if r["status"] == "ok")


def fmt_range(xs):
    if not xs:
        return "-"
    return f"{min(xs):.3f}-{max(xs):.3f} (median {statistics.median(xs):.3f})"


def sustained_section():
    rows = read_csv("h100_sustained.csv")
    out = ["## H100: four kernels for 20 s each", "",
           "`bench/device/sustained.py` (`bench/device/h100_sustained.csv`): a burst after 3 s "
           "idle as kernel_table.py would time it, then 20 s back to back (median of each "
           "second), then the burst again; nvidia-smi's clock and power per second.", "",
           "| kernel | idle burst | seconds 0-1 | seconds 18-19 (clock, power) | hot burst |",
           "|---|---|---|---|---|"]
    kernels = []
    for r in rows:
        if r["kernel"] not in kernels:
            kernels.append(r["kernel"])
    for k in kernels:
        rs = [r for r in rows if r["kernel"] == k]
        idle = next(r for r in rs if r["phase"] == "burst_idle")
        hot = next(r for r in rs if r["phase"] == "burst_hot")
        sus = [r for r in rs if r["phase"] == "sustained"]
        first, last = sus[:2], sus[-2:]
        avg = (lambda xs, key: statistics.mean(float(x[key]) for x in xs))
        out.append(f"| {k} | {float(idle['median_ms']):.3f} ms | {avg(first, 'median_ms'):.3f} ms "
                   f"| {avg(last, 'median_ms'):.3f} ms ({avg(last, 'sm_mhz'):.0f} MHz, "
                   f"{avg(last, 'power_w'):.0f} W) | {float(hot['median_ms']):.3f} ms |")
    return out + [""]


def data_section(stats):
    rows = read_csv("h200_power_data.csv")
    out = ["## H200: a model's own operands against randn", "",
           "`bench/device/power_data.py` (`bench/device/h200_power_data.csv`): a GPT-1.3B "
           "block's FC1 operands and Q, K, V captured after 3 training steps, against randn of "
           "the same shapes (and scaled to the same standard deviation), each cool and after "
           "1.5 s of its own graph back to back (steady).", "",
           "| kernel | operands | cool | steady (clock, power) |", "|---|---|---|---|"]
    by = {}
    for r in rows:
        by.setdefault((r["kernel"], r["operands"]), {})[r["state"]] = r
    model = {k: float(st["steady"]["time_us"]) for (k, ops), st in by.items() if ops == "model"}
    stats["data"] = [float(st["steady"]["time_us"]) / model[k] for (k, ops), st in by.items()
                     if ops != "model"]
    for (k, ops), st in by.items():
        c, s = st["cool"], st["steady"]
        out.append(f"| {k} | {ops} | {float(c['time_us']):.1f} us | {float(s['time_us']):.1f} us "
                   f"({s['sm_mhz']} MHz, {s['power_w']} W) |")
    return out + [""]


def calls(rows, phase, kernel):
    """[(start after the phase's first call, ms), duration (us)] of a phase's calls of kernel."""
    mine = [r for r in rows if r["phase"] == phase]
    t0 = float(mine[0]["start_us"])
    return [((float(r["start_us"]) - t0) / 1e3, float(r["dur_us"])) for r in mine
            if r["kernel"] == kernel]


def update_ms(samples):
    """The median interval (ms) between changes of NVML's power reading."""
    t = [float(x[0]) for x in samples]
    changes = [t[i] for i in range(1, len(samples)) if samples[i][1] != samples[i - 1][1]]
    return statistics.median(b - a for a, b in zip(changes, changes[1:])) / 1e3


def response_section(stats):
    note = open(os.path.join(DEV, "h100_power_response.csv")).readline()
    cool = {k: float(v) for k, v in re.findall(r"(\w+) ([\d.]+) us", note)}
    rows = read_csv("h100_power_response.csv")
    samples = [(r["us_after_marker"], r["power_w"]) for r in
               read_csv("h100_power_response_samples.csv")]
    stats["nvml_update_ms"] = update_ms(samples)
    out = ["## H100: how fast the limit's controller answers", "",
           "`bench/device/power_response.py` (`bench/device/h100_power_response*.csv`; "
           + device_line("h100_power_response.csv").split(";")[0].split(": ", 1)[1] + "): one "
           "stream, the host never letting the GPU wait; every call timed by CUDA events. Each "
           "kernel alone for 1.5 s after 1 s idle (the fc1 GEMM 16,384 x 8,192 x 2,048, cuDNN's "
           "and flash's causal attention forward at 16 heads x 8,192 x 128; a 256 MiB copy "
           "after the GEMM), then the GEMM alternating with the copy or with idle gaps in "
           "stretches of 1 to 64 ms (as long of each). Cool: the kernel's CUDA-graph median "
           "after 1 s idle.", "",
           "| phase | kernel | cool | calls | median | median / cool | slowed from (9 calls' "
           "median 3% over cool) "
           "| late stretches' last 5 calls / cool |", "|---|---|---|---|---|---|---|---|"]
    onset = {}
    for phase in ("gemm", "copy", "sdpa", "flash", "gemm_copy_1ms", "gemm_idle_1ms",
                  "gemm_copy_4ms", "gemm_idle_4ms", "gemm_copy_16ms", "gemm_idle_16ms",
                  "gemm_copy_64ms", "gemm_idle_64ms"):
        kernel = phase.split("_")[0]
        c = calls(rows, phase, kernel)
        d = [x[1] for x in c]
        # where the limit slows it (its median 5% over cool): the first call whose 9 calls'
        # median is 3% over cool (single calls of flash vary by 5% at the boost clock)
        slowed = statistics.median(d) > 1.05 * cool[kernel]
        first = next((c[i][0] for i in range(len(c) - 8)
                      if statistics.median(d[i:i + 9]) > 1.03 * cool[kernel]), None) \
            if slowed else None
        if phase == kernel and first is not None:
            onset[kernel] = first
        stretch = []  # the GEMM's runs between the other kernel's, in order
        last = None
        for r in [r for r in rows if r["phase"] == phase]:
            if r["kernel"] == kernel:
                if last != kernel:
                    stretch.append([])
                stretch[-1].append(float(r["dur_us"]))
            last = r["kernel"]
        tails = [statistics.mean(x[-5:]) / cool[kernel] for x in stretch if len(x) >= 5]
        tail = "-" if phase == kernel or not tails else fmt_range(tails)
        out.append(f"| {phase} | {kernel} | {cool[kernel]:.1f} us | {len(d)} | "
                   f"{statistics.median(d):.1f} us | {statistics.median(d) / cool[kernel]:.3f} | "
                   + (f"{first:.0f} ms" if first is not None and phase == kernel else "-")
                   + f" | {tail} |")
    stats["onset"] = onset
    smp = read_csv("h100_power_response_samples.csv")
    stats["copy_w"] = phase_mean_w(rows, smp, "copy")
    stats["idle_w"] = phase_mean_w(rows, smp, "idle")
    stats["gemm_limit_w"] = phase_mean_w(rows, smp, "gemm")
    stats["gemm_alone"] = (statistics.median(x[1] for x in calls(rows, "gemm", "gemm")) /
                           cool["gemm"])
    stats["boost_w"] = power_at_boost(rows, smp, cool)
    alt = {p: statistics.median(x[1] for x in calls(rows, p, "gemm")) / cool["gemm"]
           for p in ("gemm_copy_16ms", "gemm_idle_16ms", "gemm_copy_64ms", "gemm_idle_64ms")}
    stats["alt16"] = max(alt["gemm_copy_16ms"], alt["gemm_idle_16ms"])
    return out + ["", f"- NVML's readings move in steps: its power (the instantaneous field, "
                  f"186) changed every {stats['nvml_update_ms']:.0f} ms (median) although read "
                  "every millisecond, and the SM clock with it; so no NVML sample can say which "
                  "kernel of a step ran at which clock, and the clocks of the tables above that "
                  "come from samples inside a few milliseconds are the last reading's.",
                  f"- From idle, the GEMM runs at its cool time for {onset['gemm']:.0f} ms and "
                  f"cuDNN's attention for {onset['sdpa']:.0f} ms before the limit slows them; "
                  "flash's attention and the copy do not reach it. Alternating with the copy "
                  "or idle in stretches of up to 16 ms the GEMM keeps its cool time (medians "
                  f"within {100 * (stats['alt16'] - 1):.1f}%); in 64 ms stretches it slows in "
                  "each stretch's second half. The controller answers over tens of "
                  "milliseconds: a step's kernels share one clock set by their mix's power "
                  "over that span, not each its own.",
                  "- Each kernel's power at the boost clock, which no reading catches "
                  "directly: where it alternates every 1-4 ms with idle or the copy and is not "
                  "slowed (its median within 0.5% of its cool time, the phase under 700 W on "
                  "average), the phase's mean power is the kernel's and the other's weighted by "
                  "their time (CUDA events), the other's taken from its own phase: "
                  + ", ".join(f"{k} {w:.0f} W ({p})" for p, k, w in stats["boost_w"]) + "; "
                  f"the copy alone draws {stats['copy_w']:.0f} W at the boost clock, idle "
                  f"{stats['idle_w']:.0f} W, the GEMM alone at the limit "
                  f"{stats['gemm_limit_w']:.0f} W after slowing by "
                  f"{100 * (stats['gemm_alone'] - 1):.1f}%.", ""]


def phase_mean_w(rows, samples, phase, skip_ms=200):
    """The phase's mean power (W): NVML's trailing one-second average read at its end where the
    samples have it and the phase lasts over a second, else the mean of its readings after its
    first skip_ms."""
    mine = [r for r in rows if r["phase"] == phase]
    t0 = float(mine[0]["start_us"])
    t1 = max(float(r["start_us"]) + float(r["dur_us"]) for r in mine)
    inside = [x for x in samples if t0 + skip_ms * 1e3 <= float(x["us_after_marker"]) <= t1]
    if "power_1s_avg_w" in samples[0] and t1 - t0 > 1.1e6:
        return float(inside[-1]["power_1s_avg_w"])
    return statistics.mean(float(x["power_w"]) for x in inside)


def power_at_boost(rows, samples, cool):
    """[(phase, kernel, its power at the boost clock)] from the phases where a kernel alternates
    every 1 or 4 ms with idle or the copy without being slowed (its median within 0.5% of its
    cool time, the phase's mean under the 700 W limit): the phase's mean power less the
    other's (from its own phase) by their times' shares (CUDA events)."""
    phases = []
    for r in rows:
        if r["phase"] not in phases:
            phases.append(r["phase"])
    other_w = {"idle": phase_mean_w(rows, samples, "idle"),
               "copy": phase_mean_w(rows, samples, "copy")}
    out = []
    for phase in phases:
        m = re.fullmatch(r"(\w+?)_(idle|copy)_(1|4)ms", phase)
        if not m:
            continue
        kernel, other = m.group(1), m.group(2)
        mine = [r for r in rows if r["phase"] == phase]
        busy = {k: sum(float(r["dur_us"]) for r in mine if r["kernel"] == k)
                for k in (kernel, other)}
        share = busy[kernel] / sum(busy.values())
        mean = phase_mean_w(rows, samples, phase)
        median = statistics.median(float(r["dur_us"]) for r in mine if r["kernel"] == kernel)
        if median > 1.005 * cool[kernel] or mean >= 700:
            continue
        out.append((phase, kernel, (mean - (1 - share) * other_w[other]) / share))
    return out


def in_step_section(stats):
    rows = read_csv("h100_step_clocks.csv")
    probe = {(r["kernel"], r["shape"], r["state"]): float(r["time_us"])
             for r in read_csv("h100_power_probe.csv")}
    shape = "16x16384x128"
    kinds = [("gpt-1.3b-s16k", "sdpa_fwd_causal", "flash_fprop"),
             ("gpt-1.3b-s16k", "sdpa_bwd_causal", "flash_bprop"),
             ("gpt-1.3b-s16k-flash", "flash_fwd_causal", "flash_fwd_kernel"),
             ("gpt-1.3b-s16k-flash", "flash_bwd_causal", "flash_bwd_dq")]
    out = ["## H100: a step's attention kernels in place", "",
           "`bench/device/step_clocks.py` (`bench/device/h100_step_clocks*.csv`; "
           + device_line("h100_step_clocks.csv").split(";")[0].split(": ", 1)[1] + "): one "
           "profiled step of step_kernels.py's GPT-1.3B at 16,384 tokens, its attention "
           f"kernels (shape {shape}, 48 calls of each) against power_probe.py's cool and alone "
           "times of that shape.", "",
           "| case | kernel | cool | in the step: median (range) | over cool | alone at the "
           "limit, over cool |", "|---|---|---|---|---|---|"]
    over = []
    for case, kernel, pattern in kinds:
        d = [float(r["dur_us"]) for r in rows if r["case"] == case and pattern in r["kernel"]]
        cool = probe[(kernel, shape, "cool")]
        alone = probe[(kernel, shape, "sustained")]
        over.append((statistics.median(d) / cool, alone / cool))
        out.append(f"| {case} | {kernel} | {cool:.1f} us | {statistics.median(d):.1f} us "
                   f"({min(d):.0f}-{max(d):.0f}) | {statistics.median(d) / cool:.3f} | "
                   f"{alone / cool:.3f} |")
    stats["in_step"] = over
    return out + [""]


def bias_section():
    """gemm_bias.py's sample of each GPU's GEMM table against the same shapes cool and hot,
    where it has been run."""
    out = []
    for gpu, tag, _ in GPUS:
        name = f"{tag}_gemm_bias.csv"
        if not os.path.exists(os.path.join(DEV, name)):
            continue
        rows = read_csv(name)
        out += [f"## {gpu}: the GEMM table's points against the boost clock", "",
                f"`bench/device/gemm_bias.py` (`bench/device/{name}`): points of the table's "
                "GEMMs of at least 100 us, sampled evenly, timed as kernel_table.py times them "
                "after 1 s idle (cool) and right after 0.5 s of the fc1 GEMM (hot). Where the "
                "table sits: 0 at the cool time, 1 at the hot one.", "",
                "| kernel | points | table / cool | hot / cool | where the table sits |",
                "|---|---|---|---|---|"]
        fp8 = f"{tag}_gemm_bias_fp8.csv"
        if os.path.exists(os.path.join(DEV, fp8)):
            rows = rows + read_csv(fp8)
        for kernel in ("gemm_fwd", "gemm_dgrad", "gemm_wgrad", "gemm_fp8_fwd", "gemm_fp8_bwd"):
            rs = [r for r in rows if r["kernel"] == kernel]
            if not rs:
                continue
            t = [float(r["table_us"]) for r in rs]
            c = [float(r["cool_us"]) for r in rs]
            h = [float(r["hot_us"]) for r in rs]
            where = [(a - b) / (d - b) for a, b, d in zip(t, c, h) if d - b > 0.02 * b]
            out.append(f"| {kernel} | {len(rs)} | {fmt_range([a / b for a, b in zip(t, c)])} | "
                       f"{fmt_range([d / b for d, b in zip(h, c)])} | "
                       + (fmt_range(where) if where else "-") + " |")
        out.append("")
        if os.path.exists(os.path.join(DEV, fp8)):
            sys.path.insert(0, os.path.join(ROOT, "bench"))
            import power_fit
            quarters = power_fit.gemm_table(os.path.join(DEV, fp8))
            out += ["The FP8 tables (`bench/device/" + fp8 + "`, `gemm_bias.py --kernels "
                    "gemm_fp8_fwd,gemm_fp8_bwd`) sit over their cool times as the bf16 ones do, "
                    "table / cool by quarter of table time " + ", ".join(
                        f"{r:.3f} at {t:.0f} us" for t, r in quarters) + " (the platform's "
                    "`fp8_gemm_table` brings them to the boost clock, as `gemm_table` the bf16 "
                    "ones); their hot times (after 0.5 s of bf16 GEMMs) sit below the table's: "
                    "the table's long FP8 points ran deeper into the limit than that heating.", ""]
            out += fp8_mix_section(tag)
    return out


def fp8_mix_section(tag):
    """power_mix.py --fp8's mixes against the power model with FP8 GEMMs in its gemm class (the
    first unit's fit), where they have been measured."""
    path = os.path.join(DEV, f"{tag}_power_mix_fp8.csv")
    if not os.path.exists(path):
        return []
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import power_fit
    fit = power_fit.fit(os.path.join(DEV, f"{tag}_power_mix.csv"))
    power_fit.CLASS["fp8"] = "gemm"
    _, mixes = power_fit.read(path)
    out = ["`bench/device/power_mix.py --fp8` (`bench/device/" + os.path.basename(path) + "`, "
           + device_line(os.path.basename(path)).split(";")[0].split(": ", 1)[1] + "): the fc1 "
           "GEMM's shape in FP8 (torch._scaled_mm, E4M3, the FP8 forward table's kernel) in mixes "
           "with the classes the model has, against the model with FP8 GEMMs in its gemm class "
           "(the first unit's parameters above). Each cell: measured / model.", "",
           "| mix | kernel | stretch, measured / model |", "|---|---|---|"]
    errs = []
    for name, m in mixes.items():
        x, _ = power_fit.throttle(power_fit.cool_shares(m), fit["params"], fit["limit"],
                                  fit["static"])
        for r in m["kernels"]:
            c = power_fit.CLASS[r["kernel"]]
            if c == "idle":
                continue
            model = 1 + fit["params"]["c_" + c] * x
            errs.append(abs(model / float(r["stretch"]) - 1))
            out.append(f"| {name} | {r['kernel']} | {float(r['stretch']):.3f} / {model:.3f} |")
    out += ["", f"- {len(errs)} slowdowns within {100 * max(errs):.1f}% (mean "
            f"{100 * statistics.mean(errs):.1f}%), as the bf16 mixes' own fit: FP8 GEMMs draw as "
            "the bf16 GEMM class does, so trainsim gives them that class. With the FP8 tables "
            "brought to the boost clock, NeMo's FP8 runs (docs/validation/nemo.md) moved from "
            "-1.0% to +3.3% mean and DeepSeek-V3's FP8 GEMMs to 0.86 of DeepSeek's trace "
            "(deepseek-profile.md): FP8 GEMMs in Transformer Engine's and DeepSeek's runs take "
            "longer than torch._scaled_mm's at the modelled clock, a mechanism not found yet "
            "(their cuBLASLt configurations and epilogues, the FP8 weight casts around them).", ""]
    return out


def mix_section(stats):
    """power_mix.py's synthetic mixes against the power model fitted to them (power_fit.py),
    where they have been measured."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import power_fit
    out = []
    for gpu, tag, platform in GPUS:
        name = f"{tag}_power_mix.csv"
        if not os.path.exists(os.path.join(DEV, name)):
            continue
        fit = power_fit.fit(os.path.join(DEV, name))
        p = fit["params"]
        out += [f"## {gpu}: kernel mixes at the limit, the power model's microbenchmark", "",
                f"`bench/device/power_mix.py` (`bench/device/{name}`; "
                + device_line(name).split(";")[0].split(": ", 1)[1] + "): each mix gives "
                "its kernels shares of an 8 ms block at their cool times and repeats it for "
                "2.5 s; the last 1.5 s measured (every call by CUDA events; NVML's mean SM "
                "clock and its trailing one-second power). `bench/power_fit.py` fits the power "
                "model to them (docs/model.md, \"The power limit\"), its x held to NVML's "
                f"clock: limit {fit['limit']:.0f} W, idle {fit['static']:.0f} W, exponent "
                f"{p['g']:.3f}; "
                + ", ".join(f"{c} {p['P_' + c]:.0f} W and slowdown {p['c_' + c]:.3f}"
                            for c in power_fit.CLASSES)
                + f" ({platform} carries them). Each cell: measured / model.", "",
                "| mix | clock (NVML / model) | power | slowdowns over the cool times |",
                "|---|---|---|---|"]
        for mix, r in fit["rows"].items():
            out.append(f"| {mix} | {r['mhz']:.0f} / {r['model_mhz']:.0f} MHz | "
                       f"{r['power']:.0f} / {r['model_power']:.0f} W | "
                       + ", ".join(f"{k} {a:.3f} / {b:.3f}" for k, a, b in r["kernels"]) + " |")
        errs = [abs(b / a - 1) for r in fit["rows"].values() for _, a, b in r["kernels"]]
        out += ["", f"- Slowdowns: {len(errs)} kernels in {len(fit['rows'])} mixes, the model "
                f"within {100 * max(errs):.1f}% of each (mean {100 * statistics.mean(errs):.1f}%). "
                "cuDNN's attention loses most to the limit beside GEMMs (gemm75_sdpa25: the GEMM "
                "+14%, the attention +23-26%): the GEMMs draw the power, every kernel pays in "
                "clock, and attention's time follows the clock more closely than a GEMM's.",
                f"- The fit's GEMM draw at the boost clock, {p['P_gemm']:.0f} W, is above what "
                "power_response.py's unslowed alternations give ("
                + ", ".join(f"{w:.0f} W" for _, k, w in stats["boost_w"] if k == "gemm")
                + f"; this table's gemm50_idle50 reads {fit['rows']['gemm50_idle50']['power']:.0f} "
                f"W where the fit says {fit['rows']['gemm50_idle50']['model_power']:.0f}): a "
                "draw the board never holds, inferred by the fit from how far the limit slows "
                "the mixes. What the model needs, the slowdowns at the limit, the fit "
                "reproduces; the mixes' power below the limit it misses by up to "
                + f"{max(abs(r['model_power'] / r['power'] - 1) for r in fit['rows'].values()) * 100:.0f}%."]
        out += second_unit(power_fit, fit, tag) + [""]
    return out


def second_unit(power_fit, fit, tag):
    """Another unit of the same GPU ({tag}b_*.csv): its own fit beside the first's, and the
    first unit's parameters predicting its mixes (the model's transfer between boards)."""
    mix, bias = os.path.join(DEV, f"{tag}b_power_mix.csv"), os.path.join(DEV, f"{tag}b_gemm_bias.csv")
    if not os.path.exists(mix):
        return []
    other = power_fit.fit(mix)
    _, mixes = power_fit.read(mix)
    errs = {"first": [], "own": []}
    for m in mixes.values():
        shares = power_fit.cool_shares(m)
        for key, f in (("first", fit), ("own", other)):
            x, _ = power_fit.throttle(shares, f["params"], f["limit"], f["static"])
            errs[key] += [abs((1 + f["params"]["c_" + power_fit.CLASS[r["kernel"]]] * x)
                              / float(r["stretch"]) - 1)
                          for r in m["kernels"] if power_fit.CLASS[r["kernel"]] != "idle"]
    q = other["params"]
    out = [f"- A second unit (`bench/device/{tag}b_power_mix.csv`, "
           + device_line(f"{tag}b_power_mix.csv").split(";")[0].split(": ", 1)[1]
           + f"), the same mixes: its own fit gives limit {other['limit']:.0f} W, idle "
           f"{other['static']:.0f} W, exponent {q['g']:.3f}, "
           + ", ".join(f"{c} {q['P_' + c]:.0f} W and {q['c_' + c]:.3f}" for c in power_fit.CLASSES)
           + f". The first unit's parameters predict its {len(errs['first'])} slowdowns within "
           f"{100 * max(errs['first']):.1f}% (mean {100 * statistics.mean(errs['first']):.2f}%), "
           f"its own fit within {100 * max(errs['own']):.1f}% (mean "
           f"{100 * statistics.mean(errs['own']):.2f}%): the model carries between boards."]
    if os.path.exists(bias):
        mine = power_fit.gemm_table(os.path.join(DEV, f"{tag}_gemm_bias.csv"))
        theirs = power_fit.gemm_table(bias)
        out.append("- The table's GEMMs against the second unit's cool times "
                   f"(`bench/device/{tag}b_gemm_bias.csv`), table / cool by quarter of table "
                   "time: " + ", ".join(f"{a:.3f}" for _, a in theirs) + " against the first "
                   "unit's " + ", ".join(f"{a:.3f}" for _, a in mine) + ": two boards, neither "
                   "the table's, agree that its long GEMMs were timed at the limit (the bias is "
                   "the table's timing, not a slow unit).")
    return out


def pct(lo, hi):
    """A range of ratios as signed percentages."""
    return f"{100 * (lo - 1):+.0f}% to {100 * (hi - 1):+.0f}%"


def reading(stats):
    sd, fl, gm, tc = stats["sdpa"], stats["flash"], stats["gemm"], stats["table_cool"]
    al = stats["alone"]
    dev = max(abs(x - 1) for x in stats["data"])
    other_dev = max(abs(x - 1) for x in tc["other"])
    return [
        "## What this says", "",
        "- The mechanism behind the SDPA sets' misses (docs/validation/h200.md, h100.md): the "
        "GPUs train at their 700 W limit, and the limit's clock, not the boost clock, sets how "
        "long the attention takes. The tables price attention and the memory-bound kernels at "
        "the boost clock (their points agree with the cool times above within "
        f"{100 * other_dev:.1f}%: "
        "kernel_table.py times each in a burst of milliseconds after host-side setup that lets "
        "the GPU's power fall); in a step the same kernels run at a clock the power limit "
        f"holds down: cuDNN's attention, which runs its tensor cores near GEMM rates, "
        f"{pct(min(sd), max(sd))} on the table over both GPUs' steps, flash attention "
        f"{pct(min(fl), max(fl))}. Where power_probe.py timed the steps' own attention shapes "
        "alone back to back at the limit, that predicts the step's attention "
        f"{pct(min(al), max(al))} (the last column over the step / table column): close, "
        "not exact, since what runs beside the attention in a step sets the clock too.",
        "- The GEMMs go the other way: the tables' GEMM points sit "
        f"{pct(min(tc['gemm']), max(tc['gemm']))} on the cool times (kernel_table.py times its thousands of GEMM shapes back to back, "
        "so the GPU is partly at its limit already). Before the power limit was modelled, "
        "the two errors cancelled in the flash set and not with cuDNN's attention: the SDPA "
        "sets' miss. trainsim now brings each GEMM point to the boost clock by its time "
        "(gemm_bias.py's factors) and prices it at the modelled clock; the steps' GEMMs' "
        f"rate is {pct(min(gm), max(gm))} on that price.",
        "- Not the operands: a model's own tensors draw the same power and hold the same clock "
        f"as randn (the table above: steady times within {100 * dev:.1f}%), so the tables' randn "
        "operands are not the cause (the data dependence Horace He measured on A100s, "
        "\"Strangely, matrix multiplications on GPUs run faster when given 'predictable' "
        "data\", thonking.ai, 2024, is between randn and zeros or small integers, not between "
        "randn and a model's values).",
        "- Modelled since (docs/model.md, \"The power limit\"; the step / modelled column "
        "above). The controller answers over tens of milliseconds (from idle "
        f"the GEMM keeps its cool time for {stats['onset']['gemm']:.0f} ms, cuDNN's attention "
        f"for {stats['onset']['sdpa']:.0f} ms; a GEMM alternating with lighter work in "
        "stretches of up to 16 ms is not slowed), longer than a layer's kernels, so a step's "
        "kernels run at one clock set by the power of their mix, not each at the clock it "
        "would hold alone: in the step cuDNN's and flash's attention at 16,384 tokens run "
        + ", ".join(f"{a:.3f}" for a, _ in stats["in_step"]) + " of their cool times, "
        "against " + ", ".join(f"{b:.3f}" for _, b in stats["in_step"]) + " alone at the "
        "limit. So trainsim gives a step's work one clock from its mix (power_mix.py's mixes "
        "set each class's power and slowdown; NVML's readings, moving every "
        f"{stats['nvml_update_ms']:.0f} ms, say nothing of a kernel of milliseconds, only of "
        "a steady mix), and these steps hold it to account: attention in the step over its "
        f"price at the modelled clock {pct(min(stats['modelled']), max(stats['modelled']))}.",
        ""]


if __name__ == "__main__":
    main()
