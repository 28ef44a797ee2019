"""Measures how a mixture-of-experts layer's grouped GEMM compares with one GEMM over all its
tokens, the way trainsim prices it (workloads/cost.c, mlp_cost: `moe_grouped_gemm` as one GEMM
of every local expert's tokens; without it, one GEMM per expert).

    python3 bench/device/grouped_gemm.py [--out FILE.csv]

For MoE shapes of the presets (Mixtral 8x7B: h 4096, expert FFN 14336; a DeepSeek-V3 shape:
h 7168, expert FFN 2048) and local-expert counts 1-16, times on one GPU, bf16, CUDA events:
  * grouped: torch._grouped_mm over E experts of T / E tokens each (cuBLAS/CUTLASS grouped
    GEMM, as Megatron-Core's TEGroupedMLP and grouped_gemm do on Hopper);
  * one: a single GEMM of all T tokens against one expert's weight (trainsim's price);
  * loop: E GEMMs of T / E tokens (trainsim's price without grouped GEMM).
Prints a CSV row per shape: the three times and grouped / one.
"""
import argparse
import sys

import torch

from cuda_timing import time_ms

bf16 = torch.bfloat16
dev = torch.device("cuda")
# (name, tokens routed to the rank, hidden, expert FFN width of the FC1 output), FC1 forward:
# y[T, n] = x[T, h] W[h, n]; n = 2 x FFN (SwiGLU's gate and up).
SHAPES = [
    ("mixtral fc1", 8192, 4096, 2 * 14336),
    ("mixtral fc2", 8192, 14336, 4096),
    ("deepseek fc1", 32768, 7168, 2 * 2048),
    ("deepseek fc2", 32768, 2048, 7168),
]
EXPERTS = [1, 2, 4, 8, 16]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="also write the CSV here")
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    assert hasattr(torch, "_grouped_mm"), "needs torch._grouped_mm (PyTorch 2.8 or later)"
    rows = ["shape,tokens,k,n,experts,grouped_ms,one_ms,loop_ms,grouped_over_one"]
    for name, tokens, k, n in SHAPES:
        for e in EXPERTS:
            per = tokens // e
            x = torch.randn(tokens, k, device=dev, dtype=bf16)
            w = torch.randn(e, n, k, device=dev, dtype=bf16).transpose(-2, -1)  # [E, k, n]
            offs = torch.arange(per, tokens + 1, per, device=dev, dtype=torch.int32)
            grouped = time_ms(lambda: torch._grouped_mm(x, w, offs=offs, out_dtype=bf16))
            one = time_ms(lambda: x @ w[0])
            chunks = x.split(per)
            loop = time_ms(lambda: [c @ w[i] for i, c in enumerate(chunks)])
            rows.append(f"{name},{tokens},{k},{n},{e},{grouped:.4f},{one:.4f},{loop:.4f},"
                        f"{grouped / one:.3f}")
            print(rows[-1], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(rows) + "\n")
    print(f"grouped_gemm: {len(rows) - 1} shapes on {torch.cuda.get_device_name()}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
