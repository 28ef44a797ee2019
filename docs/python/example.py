"""docs/python.md's example: a strong-scaling curve and a what-if, from Python.

    pip install --no-build-isolation --no-index ./python   # once, from the repository root
    python3 docs/python/example.py                          # writes docs/python/*.svg

It needs matplotlib (Debian: apt-get install python3-matplotlib); pandas is optional.
"""
import os

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

import trainsim  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
plt.rcParams["svg.hashsalt"] = "trainsim"  # the same SVG from the same numbers


def records(rows):
    """Rows as a list of dicts, whether pandas is installed (a DataFrame) or not."""
    return rows.to_dict("records") if hasattr(rows, "to_dict") else rows


# 1. One iteration, and what it is made of.
r = trainsim.run("workloads/gpt-175b.yaml", gpus=1024, tp=8, pp=16)
print(r)
print("breakdown (s):", {k: round(v, 2) for k, v in r.breakdown.items() if v > 0})
print(f"peak memory: {r.memory['peak_bytes'] / 2**30:.1f} GiB of {r.memory['hbm_bytes'] / 2**30:.0f}")

# 2. Strong scaling of GPT-175B on Frontier, as the paper ran it (TP 8, PP 16).
rows = records(trainsim.scale("workloads/gpt-175b.yaml", gpus=[256, 512, 1024, 2048],
                              strong=True, tp=8, pp=16))
for row in rows:
    print(f"{row['gpus']:5d} GCDs  {row['iteration_s']:8.2f} s  "
          f"efficiency {100 * row['efficiency']:.1f}%  bubble {row['bubble_s']:.2f} s")
fig, ax = plt.subplots(figsize=(5, 3.2))
gpus = [row["gpus"] for row in rows]
ax.plot(gpus, [100 * row["efficiency"] for row in rows], "o-", label="simulated")
ax.axhline(100, color="grey", lw=0.8, ls="--", label="ideal")
ax.set_xscale("log", base=2)
ax.set_xticks(gpus, [str(g) for g in gpus])
ax.set_xlabel("MI250X GCDs")
ax.set_ylabel("strong-scaling efficiency (%)")
ax.set_title("GPT-175B on Frontier, TP 8 x PP 16")
ax.legend()
fig.tight_layout()
fig.savefig(os.path.join(HERE, "strong-scaling.svg"), metadata={"Date": None})

# 3. What if the NICs were slower or faster? Every Slingshot NIC's bandwidth, swept.
nics = ["6.25GBps", "12.5GBps", "25GBps", "50GBps"]
rows = records(trainsim.sweep({
    "name": "nic-what-if",
    "workload": "workloads/gpt-175b.yaml",
    "fixed": {"gpus": 1024, "tp": 8, "pp": 16},
    "grid": {"node.nics[*].bandwidth": nics}}))
for row in rows:
    print(f"NIC {row['node.nics[*].bandwidth']:>9}  {row['iteration_s']:7.2f} s  "
          f"MFU {row['mfu_percent']:.2f}%")
fig, ax = plt.subplots(figsize=(5, 3.2))
ax.bar([n.replace("GBps", " GB/s") for n in nics], [row["mfu_percent"] for row in rows])
ax.set_xlabel("NIC bandwidth (Frontier: 25 GB/s)")
ax.set_ylabel("MFU (%)")
ax.set_title("GPT-175B, 1,024 GCDs: what the NIC is worth")
fig.tight_layout()
fig.savefig(os.path.join(HERE, "nic-what-if.svg"), metadata={"Date": None})

# 4. A mistake, as Python sees it.
try:
    trainsim.run("workloads/gpt-175b.yaml", gpus=1024, tp=8, pp=16,
                 set={"parallelism.schedule": "zero-bubble"})
except trainsim.InputError as e:
    print("InputError:", e.message)
    print("  key:", e.key, " flag:", e.flag)
