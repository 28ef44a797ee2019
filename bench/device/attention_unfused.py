"""The kernels of attention without flash, one by one, on one GPU (validation only: nothing here
sets a trainsim parameter). For each shape (batch x heads, sequence, head dim) it times, with
CUDA events (median of 20 after 5 warm-ups):
  qk_contig   torch.baddbmm(Q, K^T) on contiguous (B, s, d) operands (as kernel_table.py's
              bgemm_qk measures torch.bmm);
  qk_strided  the same on Megatron's layout: Q, K are views of a [s, b, n, d] tensor, batch
              stride d (no copy);
  mask        masked_fill of the causal mask (a broadcast bool [s, s]);
  softmax     torch.softmax over the last dimension, bf16;
  pv_strided  torch.bmm(P, V) with V a view of the [s, b, n, d] tensor;
  copy_qkv    what a (b, s, n, d) layout pays to flatten Q, K and V for bmm (three copies);
  core_fwd, core_bwd   the whole core (strided, no copies: scale in baddbmm, mask, softmax,
              P V) forward, and its backward through autograd.
    python3 bench/device/attention_unfused.py OUT.csv
"""
import sys

import torch

import cuda_timing

SHAPES = [(192, 2048, 86), (192, 2048, 88), (192, 2048, 96), (192, 2048, 64), (128, 2048, 128),
          (256, 2048, 128), (64, 1024, 64), (384, 1024, 128)]


def timed(fn):
    return cuda_timing.time_ms(fn) * 1e-3


def shape_times(bh, s, d):
    dev, dt = "cuda", torch.bfloat16
    b, n = 8, bh // 8
    base = torch.randn(s, b, 3, n, d, device=dev, dtype=dt)  # [s, b, 3, n, d], as Megatron's QKV
    q, k, v = (base[:, :, i].reshape(s, b * n, d).transpose(0, 1) for i in range(3))
    qc, kc, vc = (t.contiguous() for t in (q, k, v))
    mask = torch.ones(s, s, dtype=torch.bool, device=dev).triu_(1)
    scale = d ** -0.5
    out = torch.empty(bh, s, s, device=dev, dtype=dt)
    t = {}
    t["qk_contig"] = timed(lambda: torch.baddbmm(out, qc, kc.transpose(1, 2), beta=0.0, alpha=scale))
    t["qk_strided"] = timed(lambda: torch.baddbmm(out, q, k.transpose(1, 2), beta=0.0, alpha=scale))
    scores = torch.baddbmm(out, q, k.transpose(1, 2), beta=0.0, alpha=scale)
    t["mask"] = timed(lambda: scores.masked_fill(mask, float("-inf")))
    masked = scores.masked_fill(mask, float("-inf"))
    t["softmax"] = timed(lambda: torch.softmax(masked, -1))
    probs = torch.softmax(masked, -1)
    t["pv_strided"] = timed(lambda: torch.bmm(probs, v))
    src = torch.randn(b, s, 3, n, d, device=dev, dtype=dt)  # a (b, s, n, d) layout
    t["copy_qkv"] = timed(lambda: [src[:, :, i].transpose(1, 2).reshape(bh, s, d)
                                   for i in range(3)])

    qg, kg, vg = (x.detach().clone().requires_grad_(True) for x in (q, k, v))

    def core():
        sc = torch.baddbmm(torch.empty(bh, s, s, device=dev, dtype=dt), qg, kg.transpose(1, 2),
                           beta=0.0, alpha=scale)
        return torch.bmm(torch.softmax(sc.masked_fill(mask, float("-inf")), -1), vg)

    t["core_fwd"] = timed(core)
    o = core()
    g = torch.randn_like(o)
    t["core_bwd"] = timed(lambda: torch.autograd.grad(o, (qg, kg, vg), g, retain_graph=True))
    return t


def main():
    out = sys.argv[1]
    torch.backends.cuda.matmul.allow_tf32 = False
    keys = None
    rows = []
    for bh, s, d in SHAPES:
        t = shape_times(bh, s, d)
        keys = list(t)
        rows.append([bh, s, d] + ["%.3f" % (t[k] * 1e6) for k in keys])
        print("attention_unfused:", bh, s, d, " ".join("%s %.0f" % (k, t[k] * 1e6) for k in keys),
              flush=True)
        torch.cuda.empty_cache()
    with open(out, "w") as f:
        f.write("# %s, torch %s, CUDA %s: kernels of attention without flash, microseconds "
                "(median of 20)\n" % (torch.cuda.get_device_name(), torch.__version__,
                                      torch.version.cuda))
        f.write("batch_heads,seq,head_dim," + ",".join(k + "_us" for k in keys) + "\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")


if __name__ == "__main__":
    main()
