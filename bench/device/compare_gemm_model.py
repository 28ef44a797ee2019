"""Holds trainsim's GEMM cost model (workloads/cost.c: ceiling x tile and wave quantisation,
bounded by HBM) against the GEMM times measured by h200_calibration.py, and prints a
Markdown table. Usage: python3 bench/device/compare_gemm_model.py [CSV]."""
import csv
import math
import statistics
import sys

PEAK, HBM, LAUNCH = 989.4e12, 4.2e12, 2e-6  # platforms/hgx-h200.yaml
CEILING, TILE_M, TILE_N, UNITS = 0.765, 128, 256, 132


def model_s(m, n, k):
    tiles = math.ceil(m / TILE_M) * math.ceil(n / TILE_N)
    waves = math.ceil(tiles / UNITS)
    eff = CEILING * m * n / (waves * UNITS * TILE_M * TILE_N)
    flops, data = 2.0 * m * n * k, 2.0 * (m * k + k * n + m * n)
    return max(flops / (PEAK * eff), data / HBM) + LAUNCH


path = sys.argv[1] if len(sys.argv) > 1 else "bench/device/h200_calibration.csv"
errors = []
print("| GEMM | M x N x K | measured TFLOPS | model TFLOPS | model time / measured |")
print("|---|---|---|---|---|")
for row in csv.DictReader(open(path)):
    if row["kind"] != "gemm":
        continue
    m, n, k = int(row["m_or_bytes"]), int(row["n"]), int(row["k"])
    measured = float(row["ms"]) * 1e-3
    predicted = model_s(m, n, k)
    if not row["label"].startswith("square"):
        errors.append(predicted / measured - 1)
    print(f"| {row['label']} | {m} x {n} x {k} | {2 * m * n * k / measured / 1e12:.1f} | "
          f"{2 * m * n * k / predicted / 1e12:.1f} | {predicted / measured:.3f} |")
print()
print(f"Over the {len(errors)} non-square GEMMs: mean error {100 * statistics.mean(errors):+.1f}%, "
      f"mean absolute {100 * statistics.mean(abs(e) for e in errors):.1f}%, "
      f"from {100 * min(errors):+.1f}% to {100 * max(errors):+.1f}% (negative: the model is faster).")
