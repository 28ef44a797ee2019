"""Whole training steps under PyTorch's automatic mixed precision, the recipe a plain PyTorch
user writes (the AMP recipe of PyTorch's own documentation, Hugging Face Trainer's `bf16`,
Lightning's `bf16-mixed`, nanoGPT): for validation only (nothing here sets a trainsim
parameter). docs/validation/h100.sh holds them against `trainsim run` with `stack: {framework:
pytorch}` and `training: {autocast: true}`.

    python3 bench/device/amp_steps.py OUT.csv [--smoke]   (the set sized for the GPU's memory)

The models are gpt.py's GPT (hidden dropout 0.1, SDPA with PyTorch's own backend choice, as
sdpa_steps.py runs it) and llama_steps.py's Llama, built in fp32 on the GPU and kept in fp32;
each microbatch's forward runs under torch.autocast(bfloat16), its backward accumulates the
fp32 .grad; then clip_grad_norm_ (foreach), fused AdamW on the fp32 weights and
zero_grad(set_to_none=True). Full recomputation is torch.utils.checkpoint per block
(use_reentrant=False). Timed by steps.time_training: 2 warm-ups, median of 5, peak of
max_memory_allocated; a configuration that runs out of memory is reported as such (PyTorch's
default caching allocator).
"""
import argparse
import datetime
import sys

import torch
import torch.nn.functional as F

import gpt
import llama_steps
import steps

# kind, name, layers, hidden, heads, kv heads, ffn, seq, micro-batch, microbatches, recompute
CONFIGS = [
    ("gpt", "gpt-125m", 12, 768, 12, 12, 3072, 1024, 32, 2, False),
    ("gpt", "gpt-350m", 24, 1024, 16, 16, 4096, 2048, 16, 1, False),
    ("gpt", "gpt-1.3b", 24, 2048, 16, 16, 8192, 8192, 1, 2, False),
    ("gpt", "gpt-1.3b", 24, 2048, 16, 16, 8192, 16384, 1, 1, False),
    ("gpt", "gpt-2.7b", 32, 2560, 32, 32, 10240, 8192, 1, 2, True),
    ("gpt", "gpt-2.7b", 32, 2560, 32, 32, 10240, 2048, 16, 1, True),
    ("gpt", "gpt-6.7b", 32, 4096, 32, 32, 16384, 2048, 16, 1, True),
    ("gpt", "gpt-6.7b", 32, 4096, 32, 32, 16384, 2048, 2, 1, False),
    ("gpt", "gpt-6.7b", 32, 4096, 32, 32, 16384, 4096, 1, 2, True),
    ("llama", "llama-1b", 16, 2048, 32, 8, 8192, 8192, 1, 2, False),
    ("llama", "llama-3b", 28, 3072, 24, 8, 8192, 4096, 2, 1, False),
    ("llama", "llama-8b", 32, 4096, 32, 8, 14336, 4096, 1, 1, True),
    ("llama", "llama-8b", 32, 4096, 32, 8, 14336, 2048, 4, 1, True),
    ("llama", "llama-8b", 32, 4096, 32, 8, 14336, 8192, 1, 1, True),
]
# For a GPU of 80 GB (H100): the same blocks where they fit there ("llama-8b-quarter": Llama 3
# 8B's layer with 8 of its 32 layers), the first four the H200 set's own.
CONFIGS_80GB = [CONFIGS[i] for i in (0, 1, 2, 5)] + [
    ("gpt", "gpt-2.7b", 32, 2560, 32, 32, 10240, 2048, 2, 2, False),
    ("gpt", "gpt-1.3b", 24, 2048, 16, 16, 8192, 2048, 8, 1, False),
    ("llama", "llama-1b", 16, 2048, 32, 8, 8192, 8192, 1, 2, False),
    ("llama", "llama-3b", 28, 3072, 24, 8, 8192, 4096, 1, 2, True),
    ("llama", "llama-3b", 28, 3072, 24, 8, 8192, 2048, 2, 1, False),
    ("llama", "llama-8b-quarter", 8, 4096, 32, 8, 14336, 4096, 2, 1, True),
    ("llama", "llama-8b-quarter", 8, 4096, 32, 8, 14336, 4096, 1, 2, False),
]
SMOKE = [("gpt", "gpt-tiny", 2, 256, 4, 4, 1024, 512, 2, 2, True),
         ("llama", "llama-tiny", 2, 256, 4, 2, 512, 512, 2, 2, False)]


class AmpTrainer:
    """fp32 weights and gradients, the forward under autocast, fused AdamW on the weights."""

    def __init__(self, model, clip=1.0):
        self.model = model
        self.params = list(model.parameters())
        self.opt = torch.optim.AdamW(self.params, lr=1e-4, fused=True)
        self.clip = clip

    def step(self, batches):
        total = None
        for idx, targets in batches:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = self.model(idx, targets)
            loss.backward()
            total = loss.detach() if total is None else total + loss.detach()
        torch.nn.utils.clip_grad_norm_(self.params, self.clip, foreach=True)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        return total


def n_params(cfg):
    kind, _, layers, h, heads, kv, ffn, seq = cfg[:8]
    if kind == "gpt":
        return gpt.n_params(layers, h, seq)
    return llama_steps.n_params(layers, h, heads, kv, ffn)


def model_and_data(cfg, low_precision=False):
    """A configuration's model, built in fp32 on the GPU (the host's init of billions is slow)
    and, with low_precision, cast to bf16 weight by weight (.to); then its batches."""
    kind, _, layers, h, heads, kv, ffn, seq, mbs, n_micro, recompute = cfg
    torch.manual_seed(0)
    with torch.device("cuda"):
        if kind == "gpt":
            model = gpt.GPT(layers, h, heads, seq, recompute)
        else:
            model = llama_steps.Llama(layers, h, heads, kv, ffn, seq, recompute)
    if low_precision:
        model = model.to(torch.bfloat16)
    vocab = gpt.VOCAB if kind == "gpt" else llama_steps.VOCAB
    g = torch.Generator(device="cuda").manual_seed(1)
    data = [(torch.randint(0, vocab, (mbs, seq), device="cuda", generator=g),
             torch.randint(0, vocab, (mbs, seq), device="cuda", generator=g))
            for _ in range(n_micro)]
    return model, data


def run(cfg, warmup, reps):
    def build():
        model, data = model_and_data(cfg)
        return AmpTrainer(model), data

    return steps.time_training(build, warmup, reps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    gpt.attention = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    props = torch.cuda.get_device_properties(0)
    lines = [
        "# Training steps under automatic mixed precision measured by bench/device/amp_steps.py",
        f"# (validation data: sets no parameter). device {torch.cuda.get_device_name(0)} "
        f"({props.total_memory / 2**30:.1f} GiB), torch {torch.__version__}, CUDA "
        f"{torch.version.cuda}, {started:%Y-%m-%d %H:%M} UTC",
        "# step times in seconds (median, min, max of 5 after 2 warm-ups); peak bytes from "
        "torch.cuda.max_memory_allocated",
        "kind,name,layers,hidden,heads,kv_heads,ffn,seq,micro_batch,microbatches,recompute,"
        "params,status,step_s,min_s,max_s,peak_bytes",
    ]
    big = props.total_memory > 100 * 2**30  # an H200's set, else an 80 GB GPU's
    for cfg in SMOKE if args.smoke else CONFIGS if big else CONFIGS_80GB:
        (status, med, lo, hi), peak = run(cfg, 2, 2 if args.smoke else 5)
        lines.append(",".join(str(v) for v in [
            *cfg[:10], "full" if cfg[10] else "none", n_params(cfg), status,
            *steps.timing_fields(med, lo, hi), peak]))
        print(f"amp_steps: {lines[-1]}", file=sys.stderr, flush=True)
        steps.write_lines(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
