"""What flash-attn's unpad_input / pad_input pattern adds to a layer, as llm-foundry's MPT calls
it around FlashAttention-2 (stack.unpad_input; workloads/cost.c prices it: the copies by their
bytes and, ASSUMED, the host's time issuing each unpad's kernels after its synchronisations).

    python3 bench/device/unpad_input.py OUT.csv [--smoke]

A layer proxy in bf16 with autograd, forward and backward: the QKV GEMM, attention through
F.scaled_dot_product_attention (PyTorch's own backend), the projection and the MLP's GEMMs
around a GeLU; once with Q, K and V passed straight on, once each unpadded first (a mask of
ones: its sum, torch.nonzero, .max().item(), a cumsum and a pad, then a row gather) and the
output padded back (a zero fill and an index_put), the pattern of flash-attn's
bert_padding.py written out here in plain PyTorch. Each variant is timed as a whole step by
CUDA events (median of 20) and by the host's wall clock; the difference is what the pattern
costs. Shapes: MosaicML's 1B (hidden 2,048, 16 heads) and 7B (4,096, 32) at their
micro-batches, and a tiny one (256, 4 heads, micro-batch 2) whose only cost is the host's. Microbenchmark data; sets no parameter by itself.
"""
import argparse
import datetime

import torch
import torch.nn.functional as F

from cuda_timing import time_ms, write_csv


def unpad(x, mask):
    """x (b, s, w) -> (rows of mask, w), as unpad_input does, with its host synchronisations."""
    seqlens = mask.sum(dim=-1, dtype=torch.int32)
    idx = torch.nonzero(mask.flatten(), as_tuple=False).flatten()
    _ = int(seqlens.max().item())
    _ = F.pad(torch.cumsum(seqlens, dim=0, dtype=torch.int32), (1, 0))
    rows = x.reshape(-1, x.shape[-1])
    return torch.gather(rows, 0, idx[:, None].expand(-1, rows.shape[1])), idx


def pad(values, idx, b, s):
    out = torch.zeros(b * s, values.shape[-1], device=values.device, dtype=values.dtype)
    out[idx] = values
    return out.view(b, s, -1)


def layer(x, w, heads, unpadded, mask):
    b, s, h = x.shape
    qkv = x @ w["qkv"]
    q, k, v = qkv.split(h, dim=-1)
    if unpadded:
        q, idx = unpad(q, mask)
        k, _ = unpad(k, mask)
        v, _ = unpad(v, mask)
        q, k, v = (t.view(b, s, heads, h // heads) for t in (q, k, v))
    else:
        q, k, v = (t.reshape(b, s, heads, h // heads) for t in (q, k, v))
    o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                       is_causal=True).transpose(1, 2).reshape(b * s, h)
    o = pad(o, idx, b, s) if unpadded else o.view(b, s, h)
    y = x + o @ w["proj"]
    return y + F.gelu(y @ w["fc1"]) @ w["fc2"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    # tiny: tensors too small to cost anything but the host's gaps after the synchronisations
    cases = [("tiny", 256, 4, 2), ("1b", 2048, 16, 12), ("7b", 4096, 32, 6)]
    if args.smoke:
        cases = cases[:1]
    s, rows = 2048, []
    for name, h, heads, b in cases:
        torch.manual_seed(0)
        x = torch.randn(b, s, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        w = {k: (torch.randn(*shape, device="cuda", dtype=torch.bfloat16) * 0.02).requires_grad_()
             for k, shape in (("qkv", (h, 3 * h)), ("proj", (h, h)), ("fc1", (h, 4 * h)),
                              ("fc2", (4 * h, h)))}
        mask = torch.ones(b, s, device="cuda", dtype=torch.bool)
        for unpadded in (False, True):
            def step():
                layer(x, w, heads, unpadded, mask).float().sum().backward()
            gpu_ms = time_ms(step, warmup=5, reps=20)
            rows.append([name, h, heads, b, s, int(unpadded), f"{gpu_ms * 1e3:.1f}"])
            print(f"unpad_input: {name} b {b}: unpadded {unpadded}: {gpu_ms:.3f} ms a layer step",
                  flush=True)
    write_csv(args.out, "unpad_input.py", "a layer's forward and backward, CUDA events, median of 20",
              ["model", "hidden", "heads", "micro_batch", "seq", "unpadded", "step_us"], rows,
              started)


if __name__ == "__main__":
    main()
