"""Training steps of GPT-2 as Hugging Face's eager model code runs it, for validation (issue 31):
the FlashAttention repository's README compares its GPTs with this baseline on 8 A100s (its
*-hf configs: transformers' GPT2LMHeadModel, `scale_attn_by_inverse_layer_idx: true`, PyTorch
Lightning's automatic mixed precision, torch.nn.CrossEntropyLoss, Apex's FusedAdam). Nothing
here sets a trainsim parameter: the steps check the description trainsim prices them by.

The model is written out here as transformers' modeling_gpt2.py (GPT2Attention._attn, GPT2MLP,
GPT2Block; releases 4.2x-4.4x) computes it, operation for operation, with fp32 parameters under
torch.autocast:
  * Conv1D layers: torch.addmm(bias, x, W) with W stored (in, out);
  * attention: torch.matmul(q, k^T) on the permuted heads; the scores divided by a device
    scalar sqrt(head_dim), then by layer_idx + 1 (scale_attn_by_inverse_layer_idx); the causal
    mask by torch.where with the dtype's minimum, a CPU scalar moved to the GPU (a blocking
    copy); softmax (autocast: fp32), cast back, dropout 0.1, torch.matmul with v;
  * gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) as eager operations;
  * LayerNorm under autocast (fp32 out), the residual stream fp32 (the fp32 embeddings' sum);
  * tied output layer at the unpadded vocabulary 50,257; dropout 0.1 on the embeddings and
    both residual branches; torch.nn.CrossEntropyLoss on the logits (autocast: fp32);
  * fp16: torch.amp.GradScaler (Lightning's `precision: 16`); bf16 without; gradient clipping
    at 1.0; torch.optim.AdamW(fused=True) standing in for Apex's FusedAdam.
Variants switch one mechanism off at a time (gpt2-small only): F.gelu(approximate="tanh")
for gelu_new, no score divisions, the vocabulary padded to 50,304. Where transformers is
installed, its own GPT2LMHeadModel (eager attention asked for on the config) runs the same step
as a check of the transcription. (In h100_hf_gpt2_steps.csv the "transformers" row, 132.2 ms and
13.1 GiB, ran transformers 5.17.0's SDPA: the constructor's attn_implementation argument did not
take. Not a check. With eager attention set on the config, run again on an H100 on 2026-12-07:
transformers 5.17.0's GPT2LMHeadModel 209.4 ms and 20.74 GiB at GPT-2 small's row, this
transcription 214.5 ms and 20.76 GiB in the same process; printed, not written to the CSV.)

    python3 bench/device/hf_gpt2_steps.py OUT.csv [--smoke]
    python3 bench/device/hf_gpt2_steps.py OUT.txt --profile gpt2-xl
    python3 bench/device/hf_gpt2_steps.py OUT.csv --zero1-memory

--zero1-memory: the peak memory of one rank of the README's ZeRO-1 configs (gpt3xl-hf.yaml and
gpt3-2.7B-hf.yaml: PyTorch's ZeroRedundancyOptimizer over 8 GPUs, DDP with
gradient_as_bucket_view, whose gradients are views of its buckets): the whole model and its fp32
gradients on the GPU, AdamW (single-tensor, PyTorch 1.13's default) over the largest share of
the parameters ZeroRedundancyOptimizer's partition gives a rank (sorted by size, each to the
rank holding least, per parameter group: weights with decay, biases and norms without), 2
microbatches a step, 3 steps; max_memory_allocated and max_memory_reserved, or the out-of-memory
error's figures.
"""
import argparse
import datetime
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import cuda_timing
from cuda_timing import write_csv

DROPOUT = 0.1


class Conv1D(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.02)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        shape = x.shape[:-1] + (self.weight.shape[1],)
        return torch.addmm(self.bias, x.view(-1, x.shape[-1]), self.weight).view(shape)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


class Block(nn.Module):
    def __init__(self, h, heads, seq, layer_idx, variant):
        super().__init__()
        self.heads, self.layer_idx, self.variant = heads, layer_idx, variant
        self.ln_1, self.ln_2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.c_attn, self.c_proj = Conv1D(h, 3 * h), Conv1D(h, h)
        self.c_fc, self.mlp_proj = Conv1D(h, 4 * h), Conv1D(4 * h, h)
        self.register_buffer("causal", torch.tril(torch.ones(seq, seq, dtype=torch.bool)).view(1, 1, seq, seq))
        self.act = gelu_tanh if variant == "functional_gelu" else gelu_new

    def split(self, t):
        b, s, h = t.shape
        return t.view(b, s, self.heads, h // self.heads).permute(0, 2, 1, 3)

    def attn(self, x):
        q, k, v = (self.split(t) for t in self.c_attn(x).split(x.shape[-1], dim=2))
        w = torch.matmul(q, k.transpose(-1, -2))
        if self.variant != "no_divisions":
            w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype, device=w.device)
            w = w / float(self.layer_idx + 1)
        s = q.size(-2)
        if self.variant == "mask_on_device":  # made on the GPU: no host-to-device copy
            mask_value = torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype, device=w.device)
        else:
            mask_value = torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype).to(w.device)
        w = torch.where(self.causal[:, :, :s, :s], w, mask_value)
        w = F.softmax(w, dim=-1).type(v.dtype)
        w = F.dropout(w, DROPOUT, training=True)
        o = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        o = self.c_proj(o.view(o.shape[:-2] + (-1,)))
        return F.dropout(o, DROPOUT, training=True)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        y = self.mlp_proj(self.act(self.c_fc(self.ln_2(x))))
        return x + F.dropout(y, DROPOUT, training=True)


class GPT2(nn.Module):
    def __init__(self, layers, h, heads, seq, vocab, variant):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, h), nn.Embedding(seq, h)
        self.blocks = nn.ModuleList(Block(h, heads, seq, i, variant) for i in range(layers))
        self.ln_f = nn.LayerNorm(h)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = F.dropout(self.wte(idx) + self.wpe(pos), DROPOUT, training=True)
        for blk in self.blocks:
            x = blk(x)
        return F.linear(self.ln_f(x), self.wte.weight)


def transformers_model(layers, h, heads, seq):
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_embd=h, n_head=heads, n_layer=layers, n_positions=seq,
                     scale_attn_by_inverse_layer_idx=True, reorder_and_upcast_attn=False,
                     attn_implementation="eager")
    cfg._attn_implementation = "eager"  # the 2022 code path, not the SDPA newer releases pick
    model = GPT2LMHeadModel(cfg)
    return lambda idx: model(idx).logits, model


def run(layers, h, heads, seq, mbs, n_micro, dtype, variant, reps, profile_out=None):
    torch.manual_seed(0)
    torch.cuda.reset_peak_memory_stats()
    vocab = 50304 if variant == "vocab_50304" else 50257
    if variant == "transformers":
        forward, module = transformers_model(layers, h, heads, seq)
        vocab = module.config.vocab_size
    else:
        module = GPT2(layers, h, heads, seq, vocab, variant)
        forward = module
    module.cuda().train()
    opt = torch.optim.AdamW(module.parameters(), lr=1e-4, weight_decay=0.1, fused=True)
    scaler = torch.amp.GradScaler("cuda", enabled=dtype == torch.float16)
    data = [(torch.randint(0, vocab, (mbs, seq), device="cuda"),
             torch.randint(0, vocab, (mbs, seq), device="cuda")) for _ in range(n_micro)]

    def step():
        for idx, tgt in data:
            with torch.autocast("cuda", dtype=dtype):
                logits = forward(idx)
                loss = nn.CrossEntropyLoss()(logits.view(-1, logits.shape[-1]), tgt.view(-1)) / n_micro
            scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    if profile_out:
        for _ in range(3):
            step()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            step()
            torch.cuda.synchronize()
        with open(profile_out, "w") as f:
            f.write(prof.key_averages().table(sort_by="cuda_time_total", row_limit=60, max_name_column_width=90))
        return 0.0, 0.0
    ms = cuda_timing.time_ms(step, warmup=3, reps=reps)
    return ms, torch.cuda.max_memory_allocated() / 2**30


# name, layers, hidden, heads, seq, micro-batch, dtype: the FlashAttention README's Hugging Face
# configs (training/configs/experiment/owt/gpt2*-hf.yaml, pile/gpt3*-hf.yaml at 4a6eaa9f)
CONFIGS = [
    ("gpt2-small", 12, 768, 12, 1024, 8, "fp16"),
    ("gpt2-medium", 24, 1024, 16, 1024, 4, "fp16"),
    ("gpt2-large", 36, 1280, 20, 1024, 2, "fp16"),
    ("gpt2-xl", 48, 1600, 25, 1024, 1, "fp16"),
    ("gpt3-125m", 12, 768, 12, 2048, 8, "bf16"),
    ("gpt3-355m", 24, 1024, 16, 2048, 4, "bf16"),
    ("gpt3-760m", 24, 1536, 16, 2048, 2, "bf16"),
]
VARIANTS = ["functional_gelu", "no_divisions", "vocab_50304", "transformers"]
# --ablate: the models whose steps run again with the mask's minimum made on the GPU (no
# pageable host-to-device copy, which blocks the host each layer)
ABLATIONS = ["mask_on_device"]
# the README's ZeRO-1 GPT-3 configs (pile/gpt3xl-hf.yaml, gpt3-2.7B-hf.yaml): 2.7B out of memory
ZERO1_CONFIGS = [
    ("gpt3-1.3b", 24, 2048, 16, 2048, 2, "bf16"),
    ("gpt3-2.7b", 32, 2560, 32, 2048, 1, "bf16"),
]


def zero1_share(module, world):
    """The parameters of ZeroRedundancyOptimizer's largest rank share (torch/distributed/optim/
    zero_redundancy_optimizer.py, _partition_parameters): per group, sorted by size, largest
    first, each to the rank with the fewest elements so far."""
    decay = [p for p in module.parameters() if p.dim() >= 2]
    no_decay = [p for p in module.parameters() if p.dim() < 2]
    sizes, shares = [0] * world, [[] for _ in range(world)]
    for group in (decay, no_decay):
        for p in sorted(group, key=lambda t: t.numel(), reverse=True):
            r = sizes.index(min(sizes))
            shares[r].append(p)
            sizes[r] += p.numel()
    return shares[sizes.index(max(sizes))], max(sizes)


def zero1_memory(name, layers, h, heads, seq, mbs, dtype, world=8, n_micro=2):
    torch.manual_seed(0)
    torch.cuda.reset_peak_memory_stats()
    module = GPT2(layers, h, heads, seq, 50257, "hf").cuda().train()
    share, elems = zero1_share(module, world)
    opt = torch.optim.AdamW(share, lr=1e-4, weight_decay=0.1, foreach=False)
    params = sum(p.numel() for p in module.parameters())
    data = [torch.randint(0, 50257, (mbs, seq), device="cuda") for _ in range(n_micro)]
    try:
        for _ in range(3):
            for idx in data:
                with torch.autocast("cuda", dtype=dtype):
                    logits = module(idx)
                    loss = nn.CrossEntropyLoss()(logits.view(-1, logits.shape[-1]), idx.view(-1)) / n_micro
                loss.backward()
                del logits, loss
            torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=False)  # DDP's bucket views stay
        verdict = "fits"
    except torch.OutOfMemoryError as e:
        verdict = "out of memory: " + str(e).split("\n")[0][:200].replace(",", ";")
    stats = torch.cuda.memory_stats()
    row = [name, layers, h, heads, seq, mbs, n_micro, "bf16" if dtype == torch.bfloat16 else "fp16",
           params, elems, f"{stats['allocated_bytes.all.peak'] / 2**30:.3f}",
           f"{stats['reserved_bytes.all.peak'] / 2**30:.3f}", verdict]
    print(*row, flush=True)
    del module, opt, data
    torch.cuda.empty_cache()
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--profile", metavar="MODEL", help="instead: one step of MODEL (Hugging Face's "
                    "code) under torch.profiler, its CUDA kernels tabled into OUT")
    ap.add_argument("--ablate", metavar="MODELS", help="instead: MODELS (comma-separated) as "
                    "Hugging Face's code runs them and with each of ABLATIONS")
    ap.add_argument("--zero1-memory", action="store_true",
                    help="instead: the README's ZeRO-1 GPT-3 configs' peak memory on one rank")
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    n_micro, reps = 2, 2 if args.smoke else 8
    if args.zero1_memory:
        free, total = torch.cuda.mem_get_info()
        rows = [zero1_memory(name, layers, h, heads, seq, mbs,
                             torch.float16 if dt == "fp16" else torch.bfloat16)
                for name, layers, h, heads, seq, mbs, dt in ZERO1_CONFIGS]
        write_csv(args.out, "hf_gpt2_steps.py --zero1-memory",
                  f"one rank of ZeRO-1 over 8; GPU total {total / 2**30:.2f} GiB, free at start {free / 2**30:.2f} GiB",
                  ["model", "layers", "hidden", "heads", "seq", "micro_batch", "microbatches", "dtype",
                   "params", "optimizer_share", "peak_allocated_gib", "peak_reserved_gib", "verdict"],
                  rows, started)
        return
    if args.profile:
        name, layers, h, heads, seq, mbs, dt = next(c for c in CONFIGS if c[0] == args.profile)
        dtype = torch.float16 if dt == "fp16" else torch.bfloat16
        run(layers, h, heads, seq, mbs, n_micro, dtype, "hf", reps, profile_out=args.out)
        return
    rows = []
    chosen = args.ablate.split(",") if args.ablate else None
    for name, layers, h, heads, seq, mbs, dt in CONFIGS[:1] if args.smoke else CONFIGS:
        dtype = torch.float16 if dt == "fp16" else torch.bfloat16
        if chosen is not None and name not in chosen:
            continue
        extra = ABLATIONS if chosen is not None else VARIANTS if name == "gpt2-small" else []
        for variant in ["hf"] + extra:
            try:
                ms, peak = run(layers if not args.smoke else 2, h, heads, seq, mbs, n_micro, dtype, variant, reps)
            except ImportError as e:
                print(f"{name} {variant}: skipped ({e})", flush=True)
                continue
            torch.cuda.empty_cache()
            print(f"{name} {variant}: {ms:.1f} ms, {peak:.2f} GiB", flush=True)
            rows.append([name, layers, h, heads, seq, mbs, n_micro, dt, variant, f"{ms:.2f}", f"{peak:.3f}"])
    write_csv(args.out, "hf_gpt2_steps.py",
              f"median of {reps} steps of {n_micro} microbatches after 3 warm-ups (cuda_timing.time_ms); peak over all",
              ["model", "layers", "hidden", "heads", "seq", "micro_batch", "microbatches", "dtype",
               "variant", "step_ms", "peak_allocated_gib"], rows, started)


if __name__ == "__main__":
    main()
