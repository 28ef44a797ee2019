"""The power model's parameters from bench/device/power_mix.py's microbenchmark (issue 31;
docs/model.md, "The power limit"): one GPU's kernel classes run in synthetic mixes at the
board's limit, and each class's slowdown is measured against its cool time.

    /usr/bin/python3 bench/power_fit.py bench/device/h100_power_mix.csv [h100_gemm_bias.csv]
                                          (numpy and scipy: python3-numpy, python3-scipy)

The model (workloads/power.h): kernels alternating faster than the controller answers share one
clock f; with x = f0 / f - 1 (0 at the boost clock f0), a class i whose cool time is t_i takes
t_i (1 + c_i x) and draws P_s + (P_i - P_s) (1 + x)^-g, an idle gap P_s; x is 0 where the mix's
mean power at the boost clock is within the limit, else where it meets the limit. Fitted here,
by least squares over every mix's measured slowdowns, mean power (NVML's trailing one-second
average) and mean clock (NVML's, as x: it keeps x a clock, which the slowdowns alone leave free
to trade against g): each class's boost power P_i and slowdown coefficient c_i, and the exponent
g; P_s and the limit are read from the data (idle's and the pure GEMM and cuDNN mixes' mean
power). Prints the fit, its residuals mix by mix, and the platform's gpu.power_limit lines
(with gemm_bias.py's CSV, its gemm_table too: the sampled points in four quarters by their
table time, each quarter's median time and median table / cool ratio). Microbenchmark data only: no training step enters the fit.
"""
import csv
import sys

import numpy as np
from scipy.optimize import least_squares

CLASS = {"gemm": "gemm", "sdpa_fwd": "sdpa", "sdpa_bwd": "sdpa", "flash_fwd": "flash",
         "flash_bwd": "flash", "copy": "other", "idle": "idle"}
CLASSES = ["gemm", "sdpa", "flash", "other"]


def read(path):
    with open(path) as f:
        head = f.readline()
        rows = list(csv.DictReader(f))
    mixes = {}
    for r in rows:
        m = mixes.setdefault(r["mix"], {"kernels": [], "power": float(r["power_1s_avg_w"]),
                                        "inst": float(r["power_w"]), "mhz": float(r["sm_mhz"])})
        m["kernels"].append(r)
    return head, mixes


def cool_shares(mix):
    """{class: cool seconds a second of the mix at the boost clock}, idle included."""
    busy = {}
    for r in mix["kernels"]:
        c = CLASS[r["kernel"]]
        base = float(r["median_us"]) if c == "idle" else float(r["cool_us"])
        busy[c] = busy.get(c, 0.0) + int(r["calls"]) * base
    total = sum(busy.values())
    return {c: v / total for c, v in busy.items()}


def throttle(shares, p, limit, static):
    """x where the mix meets the limit (0 when it is within it at the boost clock)."""
    def power(x):
        t = {c: s * (1 + (p["c_" + c] * x if c != "idle" else 0)) for c, s in shares.items()}
        w = sum(v * (static if c == "idle" else static + (p["P_" + c] - static) * (1 + x) ** -p["g"])
                for c, v in t.items())
        return w / sum(t.values())
    if power(0) <= limit:
        return 0.0, power(0)
    lo, hi = 0.0, 4.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if power(mid) > limit else (lo, mid)
    return hi, power(hi)


def fit(path):
    """The fit of the mixes at path: {"head", "limit", "static", "params": {P_<class>,
    c_<class>, g}, "rows": {mix: {"mhz", "model_mhz", "power", "model_power", "kernels":
    [(kernel, measured slowdown, model's)]}}}."""
    head, mixes = read(path)
    static = mixes["idle"]["power"]
    limit = float(np.median([m["inst"] for name, m in mixes.items() if name in ("gemm", "sdpa")]))
    f0 = max(m["mhz"] for m in mixes.values())  # the boost clock, where nothing throttles
    names = [f"{k}_{c}" for c in CLASSES for k in ("P", "c")] + ["g"]
    x0 = [900, 1, 800, 1, 650, 1, 500, 0.3, 1.5]

    def unpack(v):
        return dict(zip(names, v))

    def residuals(v):
        p = unpack(v)
        out = []
        for name, m in mixes.items():
            shares = cool_shares(m)
            x, w = throttle(shares, p, limit, static)
            for r in m["kernels"]:
                c = CLASS[r["kernel"]]
                if c == "idle" or r["stretch"] == "-":
                    continue
                out.append(100 * ((1 + p["c_" + c] * x) / float(r["stretch"]) - 1))
            out.append((w - m["power"]) / 10)  # at the limit: the limit against the reading
            # the clock: NVML's mean reading over the window (updated every ~100 ms, so a
            # steady mix's mean only), as x, in percent like the slowdowns
            out.append(100 * (x - (f0 / m["mhz"] - 1)))
        return out

    result = least_squares(residuals, x0, bounds=([100, 0, 100, 0, 100, 0, 100, 0, 0.05],
                                                  [2000, 2, 2000, 2, 2000, 2, 2000, 2, 4]))
    p = unpack(result.x)
    rows = {}
    for name, m in mixes.items():
        x, w = throttle(cool_shares(m), p, limit, static)
        rows[name] = {"mhz": m["mhz"], "model_mhz": f0 / (1 + x), "power": m["power"],
                      "model_power": w,
                      "kernels": [(r["kernel"], float(r["stretch"]),
                                   1 + p["c_" + CLASS[r["kernel"]]] * x)
                                  for r in m["kernels"] if CLASS[r["kernel"]] != "idle"]}
    return {"head": head.strip(), "limit": limit, "static": static, "params": p, "rows": rows}


def gemm_table(path):
    """[(table time us, table / cool)] of gemm_bias.py's points, one a quarter of them by table
    time: the quarter's medians."""
    with open(path) as f:
        f.readline()
        pts = sorted((float(r["table_us"]), float(r["table_us"]) / float(r["cool_us"]))
                     for r in csv.DictReader(f))
    out = []
    for q in range(4):
        part = pts[q * len(pts) // 4:(q + 1) * len(pts) // 4]
        out.append((float(np.median([t for t, _ in part])), float(np.median([r for _, r in part]))))
    return out


def main():
    f = fit(sys.argv[1])
    print(f["head"])
    print(f"limit {f['limit']:.0f} W, static {f['static']:.0f} W")
    for k, v in f["params"].items():
        print(f"{k} = {v:.3f}")
    for name, r in f["rows"].items():
        print(f"{name:16s} {r['mhz']:.0f} / {r['model_mhz']:.0f} MHz, {r['power']:.0f} / "
              f"{r['model_power']:.0f} W: "
              + ", ".join(f"{k} {a:.3f} / {b:.3f}" for k, a, b in r["kernels"]))
    p = f["params"]
    print(f"  power_limit:\n    limit: {f['limit']:.0f}W\n    idle: {f['static']:.0f}W\n"
          f"    exponent: {p['g']:.3f}")
    if len(sys.argv) > 2:
        anchors = gemm_table(sys.argv[2])
        print("    gemm_table: {time: [" + ", ".join(f"{t:.0f}us" for t, _ in anchors)
              + "], ratio: [" + ", ".join(f"{r:.3f}" for _, r in anchors) + "]}")
    for c in CLASSES:
        print(f"    {c}: {{boost: {p['P_' + c]:.0f}W, slowdown: {p['c_' + c]:.3f}}}")


if __name__ == "__main__":
    main()
