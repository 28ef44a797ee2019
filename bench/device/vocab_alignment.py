"""The output layer's kernels at an unpadded vocabulary, for the cost model (issue 31): plain
PyTorch keeps GPT-2's 50,257 tokens where Megatron pads the vocabulary to a multiple of 128 x TP
(50,304) (trainsim priced every framework's output layer at the padded size until it measured
this: workloads/cost.c's misaligned GEMMs). A row of 50,257
bf16 values is not a multiple of 16 bytes, so the logits and their gradient are strided off the
alignment that Hopper's bulk copies (TMA) and cuBLAS's vectorised kernels need. For each hidden
size and token count, at each vocabulary, with CUDA events (median of 20 after 5 warm-ups):
  logits_fwd     F.linear(X [tokens, hidden], W [vocab, hidden]): the logits [tokens, vocab];
  logits_dgrad   dLogits @ W: the input's gradient (the vocabulary is the reduction);
  logits_wgrad   dLogits^T @ X: the weight's gradient (the vocabulary is the output's rows);
  cross_entropy  F.cross_entropy on the bf16 logits (forward), and cross_entropy_bwd its backward.
Both operand layouts are as nn.Linear and autograd hold them (no copies). Microbenchmark data
for a misaligned-vocabulary price, as h200_attention_unfused.csv is for the head dimension.

    python3 bench/device/vocab_alignment.py OUT.csv [--smoke] [--dtype bf16|fp16]
"""
import argparse
import datetime

import torch
import torch.nn.functional as F

import cuda_timing
from cuda_timing import write_csv

VOCABS = [50257, 50304, 50280, 32000, 32001]  # GPT-2 as PyTorch and as Megatron pads it, a
# multiple of 8 only, Llama 2's, and Llama 2's + 1
SHAPES = [(8192, 768), (8192, 1024), (16384, 1024), (8192, 2048), (16384, 2048), (8192, 4096)]


def times(tokens, hidden, vocab, dt):
    dev = "cuda"
    x = torch.randn(tokens, hidden, device=dev, dtype=dt)
    w = torch.randn(vocab, hidden, device=dev, dtype=dt)
    logits = F.linear(x, w)
    dlogits = torch.randn_like(logits)
    target = torch.randint(0, vocab, (tokens,), device=dev)
    t = {"logits_fwd": cuda_timing.time_ms(lambda: F.linear(x, w)),
         "logits_dgrad": cuda_timing.time_ms(lambda: dlogits @ w),
         "logits_wgrad": cuda_timing.time_ms(lambda: dlogits.t() @ x),
         "cross_entropy": cuda_timing.time_ms(lambda: F.cross_entropy(logits, target))}
    lg = logits.detach().requires_grad_(True)
    loss = F.cross_entropy(lg, target)
    t["cross_entropy_bwd"] = cuda_timing.time_ms(
        lambda: torch.autograd.grad(loss, lg, retain_graph=True))
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    args = ap.parse_args()
    dt = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    torch.backends.cuda.matmul.allow_tf32 = False
    started = datetime.datetime.now(datetime.timezone.utc)
    shapes = [(1024, 256)] if args.smoke else SHAPES
    rows, keys = [], None
    for tokens, hidden in shapes:
        for vocab in VOCABS:
            t = times(tokens, hidden, vocab, dt)
            keys = list(t)
            rows.append([tokens, hidden, vocab] + [f"{t[k] * 1e3:.2f}" for k in keys])
            print("vocab_alignment:", tokens, hidden, vocab,
                  " ".join(f"{k} {t[k] * 1e3:.0f}" for k in keys), flush=True)
            torch.cuda.empty_cache()
    write_csv(args.out, "vocab_alignment.py",
              f"{args.dtype}; microseconds, median of 20 after 5 warm-ups",
              ["tokens", "hidden", "vocab"] + [k + "_us" for k in keys], rows, started)


if __name__ == "__main__":
    main()
