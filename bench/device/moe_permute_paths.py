"""Token permutation and unpermutation of a MoE layer as each framework runs them (issue 38
part 1), on one GPU, in bf16: what `framework: megatron` should be priced from, beside the
kernel table's torchtitan path.

    python3 bench/device/moe_permute_paths.py OUT.csv

Per (tokens, top-k, hidden): the forward and backward of
- torchtitan: gather the copies, weigh them in fp32 by their router probabilities and
  scatter-add them back (moe.py: routed_output.to(float32) * top_scores; the kernel table's
  moe_unpermute rows);
- megatron: Megatron-Core's unfused path (moe_permute_fusion false, its default): permute is
  index_select of each token's copies, unpermute a bf16 scatter_add of the expert outputs (the
  probabilities were applied in the experts' activation: experts.py activation_func_with_probs).
Times are CUDA-event medians of 20 runs after 5 warm-ups, on random data (never zeros), each
result checked against a float64 reference.
"""
import csv
import sys

import torch

from cuda_timing import time_ms


def case(tokens, k, hidden, dev):
    copies = tokens * k
    x = torch.randn(tokens, hidden, device=dev, dtype=torch.bfloat16)
    # each token's k copies, sorted by expert: a random permutation of the copies
    src = torch.arange(tokens, device=dev).repeat_interleave(k)
    order = torch.randperm(copies, device=dev)
    src = src[order]
    idx = src.unsqueeze(1).expand(-1, hidden)
    y = torch.randn(copies, hidden, device=dev, dtype=torch.bfloat16)  # expert outputs
    probs = torch.rand(copies, 1, device=dev, dtype=torch.float32)
    grad_out = torch.randn(tokens, hidden, device=dev, dtype=torch.bfloat16)

    def permute():
        return x.index_select(0, src)

    def permute_bwd():  # the copies' gradients summed back per token
        return torch.zeros(tokens, hidden, device=dev, dtype=torch.bfloat16).scatter_add_(0, idx, y)

    def unpermute_megatron():
        return torch.zeros(tokens, hidden, device=dev, dtype=torch.bfloat16).scatter_add_(0, idx, y)

    def unpermute_megatron_bwd():
        return grad_out.index_select(0, src)

    def unpermute_torchtitan():
        w = y.to(torch.float32) * probs
        out = torch.zeros(tokens, hidden, device=dev, dtype=torch.float32).scatter_add_(0, idx, w)
        return out.to(torch.bfloat16)

    def unpermute_torchtitan_bwd():  # the outputs' and the scores' gradients
        g = grad_out.to(torch.float32).index_select(0, src)
        return (g * probs).to(torch.bfloat16), (g * y.to(torch.float32)).sum(1)

    # correctness against float64
    ref = torch.zeros(tokens, hidden, device=dev, dtype=torch.float64)
    ref.scatter_add_(0, idx, y.double())
    got = unpermute_megatron().double()
    err = ((got - ref).norm() / ref.norm()).item()
    assert err < 1e-2, f"bf16 scatter_add off by {err}"
    assert torch.equal(permute(), x[src])
    rows = []
    for name, fn in (("permute_fwd", permute), ("permute_bwd", permute_bwd),
                     ("unpermute_megatron_fwd", unpermute_megatron),
                     ("unpermute_megatron_bwd", unpermute_megatron_bwd),
                     ("unpermute_torchtitan_fwd", unpermute_torchtitan),
                     ("unpermute_torchtitan_bwd", unpermute_torchtitan_bwd)):
        rows.append((name, tokens, k, hidden, time_ms(fn) * 1e3))
    return rows


def main():
    dev = "cuda"
    out = sys.argv[1]
    rows = []
    for hidden in (2048, 4096, 7168):
        for tokens, k in ((1024, 8), (4096, 2), (4096, 8), (8192, 8)):
            rows += case(tokens, k, hidden, dev)
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["# " + torch.cuda.get_device_name() + ", torch " + torch.__version__])
        w.writerow(["kernel", "tokens", "topk", "hidden", "time_us"])
        w.writerows(rows)
    for r in rows:
        if r[3] == 7168 and r[1] == 4096 and r[2] == 8:
            print(f"{r[0]:28s} {r[4]:9.1f} us")


if __name__ == "__main__":
    main()
