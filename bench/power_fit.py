"""The power model's parameters from bench/device/power_mix.py's microbenchmark (issue 31;
docs/model.md, "The power limit"): one GPU's kernel classes run in synthetic mixes at the
board's limit, and each class's slowdown is measured against its cool time.

    /usr/bin/python3 bench/power_fit.py bench/device/h200_power_mix.csv

The model (workloads/power.h): kernels alternating faster than the controller answers share one
clock f; with x = f0 / f - 1 (0 at the boost clock f0), a class i whose cool time is t_i takes
t_i (1 + c_i x) and draws P_s + (P_i - P_s) (1 + x)^-g, an idle gap P_s; x is 0 where the mix's
mean power at the boost clock is within the limit, else where it meets the limit. Fitted here,
by least squares over every mix's measured slowdowns and (for mixes below the limit) mean
power: each class's boost power P_i and slowdown coefficient c_i, and the exponent g; P_s and
the limit are read from the data (idle's and the pure mixes' mean power). Prints the fit, its
residuals mix by mix, and the lines for the GPU's kernel table. Microbenchmark data only: no
training step enters the fit.
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


def main():
    head, mixes = read(sys.argv[1])
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

    fit = least_squares(residuals, x0, bounds=([100, 0, 100, 0, 100, 0, 100, 0, 0.05],
                                               [2000, 2, 2000, 2, 2000, 2, 2000, 2, 4]))
    p = unpack(fit.x)
    print(f"# {head.strip()}")
    print(f"limit {limit:.0f} W, static {static:.0f} W")
    for k in names:
        print(f"{k} = {p[k]:.3f}")
    for name, m in mixes.items():
        x, w = throttle(cool_shares(m), p, limit, static)
        meas = ", ".join(f"{r['kernel']} {float(r['stretch']):.3f}/{1 + p['c_' + CLASS[r['kernel']]] * x:.3f}"
                         for r in m["kernels"] if CLASS[r["kernel"]] != "idle")
        print(f"{name:16s} x {x:.3f} (NVML {f0 / m['mhz'] - 1:.3f})  power {m['power']:.0f}/{w:.0f} W  {meas}")


if __name__ == "__main__":
    main()
