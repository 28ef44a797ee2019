"""Memory as PyTorch's caching allocator holds it during training on one GPU (issue 31 part 2),
for validation only (nothing here sets a trainsim parameter beside the CUDA context, a
measurement of the device): what one training step allocates per phase, what the allocator
reserves around it, what the process holds outside the allocator, and where out of memory
really begins.

    python3 bench/device/allocator.py OUT.csv [--smoke] [--adam foreach] [--hbm 80] [--amp]
                                      [--only NAME:MICRO_BATCH:RECOMPUTE]

Models and recipe are gpt.py's and llama_steps.py's (bf16 weights, fp32 main grads by hooks,
fp32 masters, fused AdamW; full recomputation by torch.utils.checkpoint). Each configuration
is built on the GPU, the allocator's cache emptied and its statistics reset, then three steps
run; the third is split into its phases, each with its own peak of memory_allocated:
forward (each microbatch's), backward (each microbatch's; the output layer's backward is its
start) and the optimizer (clip, fused AdamW, copy to the bf16 weights, zeroing). Over the
three steps: the peaks of allocated, requested (before the allocator's rounding) and reserved
bytes, the inactive split bytes (fragmentation inside reserved segments), the allocator's
retries (cache flushes to satisfy a request), and the bytes the process holds outside the
allocator (cudaMemGetInfo's used minus reserved: the CUDA context, cuBLAS and cuDNN handles).

With --amp the recipe is amp_steps.py's automatic mixed precision (fp32 weights, autocast,
set_to_none), on ladders of its own sized by --hbm.

With --only one rung of the chosen ladders runs alone (e.g. gpt-1.3b:32:full), so that a
shell loop gives every rung a process of its own: a ladder's rungs share one process, whose
earlier configurations leave the CUDA driver's virtual address space laid out differently, and
where the driver places a segment decides which free blocks best fit finds first (on an H100
every AMP rung kept its ladder's outcome: bench/device/h100_allocator_amp_fresh.csv).

With --adam foreach the optimizer is torch.optim.AdamW's default foreach kernels (the points
only), whose step allocates a list as large as the second moments (trainsim's step_bytes).

Ladders climb a micro-batch (or a depth) until the first out-of-memory, so that each records
the largest configuration that fits and the smallest that does not, with the request that
failed. The CSV's header names the device, versions and date, and the process's footprint
before any tensor (driver reservation and context).
"""
import argparse
import datetime
import gc
import os
import re
import sys

import torch

import amp_steps
import gpt
import steps

# kind, name, layers, hidden, heads, kv heads, ffn, seq, micro-batch, microbatches, recompute
POINTS = [
    ("gpt", "gpt-1.3b", 24, 2048, 16, 16, 8192, 2048, 4, 2, False),
    ("gpt", "gpt-2.7b", 32, 2560, 32, 32, 10240, 2048, 8, 2, True),
    ("llama", "llama-3b", 28, 3072, 24, 8, 8192, 4096, 1, 2, False),
    ("gpt", "gpt-6.7b", 32, 4096, 32, 32, 16384, 2048, 1, 1, True),
]
# ladders: (base configuration, the micro-batches to climb)
LADDERS = [
    (("llama", "llama-8b", 32, 4096, 32, 8, 14336, 4096, 0, 1, True), (1, 2)),
    (("gpt", "gpt-6.7b", 32, 4096, 32, 32, 16384, 2048, 0, 1, True), (16, 17, 18, 19, 20)),
    (("gpt", "gpt-2.7b", 32, 2560, 32, 32, 10240, 2048, 0, 1, False), (13, 14, 15, 16)),
    (("gpt", "gpt-6.7b", 32, 4096, 32, 32, 16384, 2048, 0, 1, False), (2, 3)),
    (("llama", "llama-8b-half", 16, 4096, 32, 8, 14336, 4096, 0, 1, True), (8, 9, 10, 11, 12)),
    (("gpt", "gpt-1.3b", 24, 2048, 16, 16, 8192, 2048, 0, 1, True), (80, 84, 88, 92, 96)),
]
# For a GPU of 80 GB (H100): points that fit there, and ladders climbing through its limit
# (each micro-batch list straddles trainsim's verdicts on platforms/dgx-h100.yaml: fits, AT
# RISK, does not fit); "llama-8b-quarter" is Llama 3 8B's layer with 8 of its 32 layers.
POINTS_80GB = [
    ("gpt", "gpt-1.3b", 24, 2048, 16, 16, 8192, 2048, 4, 2, False),
    ("gpt", "gpt-2.7b", 32, 2560, 32, 32, 10240, 2048, 8, 2, True),
    ("llama", "llama-3b", 28, 3072, 24, 8, 8192, 2048, 1, 2, False),
    ("llama", "llama-8b-quarter", 8, 4096, 32, 8, 14336, 4096, 1, 1, True),
]
LADDERS_80GB = [
    (("llama", "llama-3b", 28, 3072, 24, 8, 8192, 4096, 0, 1, False), (1, 2)),
    (("gpt", "gpt-2.7b", 32, 2560, 32, 32, 10240, 2048, 0, 1, False), (4, 5, 6, 7)),
    (("gpt", "gpt-1.3b", 24, 2048, 16, 16, 8192, 2048, 0, 1, False), (11, 12, 13, 14)),
    (("gpt", "gpt-2.7b", 32, 2560, 32, 32, 10240, 2048, 0, 1, True), (20, 22, 24, 26)),
    (("llama", "llama-8b-quarter", 8, 4096, 32, 8, 14336, 4096, 0, 1, True), (4, 5, 6, 7)),
    (("gpt", "gpt-1.3b", 24, 2048, 16, 16, 8192, 2048, 0, 1, True), (36, 40, 42, 44, 46)),
]
# Under automatic mixed precision (--amp: amp_steps.py's recipe, plain PyTorch's default in
# trainsim), ladders straddling trainsim's verdicts: on platforms/hgx-h200.yaml (each pair: the
# last micro-batch trainsim says fits, then the first it refuses, by bytes or by the replayed
# allocator) and on platforms/dgx-h100.yaml (fits, AT RISK, does not fit)
LADDERS_AMP = [
    (("llama", "llama-8b", 32, 4096, 32, 8, 14336, 4096, 0, 1, True), (3, 4)),
    (("gpt", "gpt-6.7b", 32, 4096, 32, 32, 16384, 2048, 0, 1, True), (21, 22)),
    (("gpt", "gpt-6.7b", 32, 4096, 32, 32, 16384, 2048, 0, 1, False), (4, 5)),
    (("gpt", "gpt-2.7b", 32, 2560, 32, 32, 10240, 2048, 0, 1, False), (13, 14)),
    (("gpt", "gpt-1.3b", 24, 2048, 16, 16, 8192, 2048, 0, 1, True), (68, 72)),
    (("llama", "llama-8b-half", 16, 4096, 32, 8, 14336, 4096, 0, 1, True), (9, 10)),
]
LADDERS_AMP_80GB = [
    (("gpt", "gpt-2.7b", 32, 2560, 32, 32, 10240, 2048, 0, 1, False), (5, 6, 7)),
    (("gpt", "gpt-1.3b", 24, 2048, 16, 16, 8192, 2048, 0, 1, False), (11, 12, 13)),
    (("gpt", "gpt-1.3b", 24, 2048, 16, 16, 8192, 2048, 0, 1, True), (32, 36, 40)),
    (("llama", "llama-8b-quarter", 8, 4096, 32, 8, 14336, 4096, 0, 1, True), (5, 6, 7, 8)),
    (("gpt", "gpt-2.7b", 32, 2560, 32, 32, 10240, 2048, 0, 1, True), (22, 24, 26, 28)),
]
SMOKE_POINTS = [("gpt", "gpt-tiny", 2, 256, 4, 4, 1024, 512, 2, 2, False)]
SMOKE_LADDERS = [(("llama", "llama-tiny", 2, 256, 4, 2, 512, 512, 0, 1, True), (1, 2))]


def rungs(ladders):
    """Every configuration of the ladders, in the order they climb."""
    return [base[:8] + (mb,) + base[9:] for base, mbs in ladders for mb in mbs]


def rung_name(cfg):
    """A configuration as --only names it: name:micro-batch:recompute."""
    return f"{cfg[1]}:{cfg[8]}:{'full' if cfg[10] else 'none'}"


GIB = 2**30
ADAM = "fused"  # --adam
AMP = False  # --amp


def library_workspaces():
    """What the libraries' first calls leave: allocator bytes beyond the live tensors (cuBLAS's
    workspace comes from the caching allocator, CublasHandlePool.cpp), and the process's bytes
    outside the allocator (cudaMemGetInfo's used less reserved: context, handles, modules)."""
    out = {}

    def outside():
        free, total = torch.cuda.mem_get_info()
        return total - free - torch.cuda.memory_reserved()

    out["outside_before"] = outside()
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    base = torch.cuda.memory_allocated()
    c = a @ a
    torch.cuda.synchronize()
    out["cublas_allocated"] = torch.cuda.memory_allocated() - base - c.numel() * c.element_size()
    out["outside_after_cublas"] = outside()
    q = torch.randn(4, 16, 2048, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    base = torch.cuda.memory_allocated()
    y = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    y.sum().backward()
    torch.cuda.synchronize()
    out["sdpa_allocated_after_backward"] = (torch.cuda.memory_allocated() - base
                                            - y.numel() * y.element_size()
                                            - q.grad.numel() * q.grad.element_size())
    out["outside_after_sdpa"] = outside()
    del a, c, q, y
    gc.collect()
    torch.cuda.empty_cache()
    out["allocated_left"] = torch.cuda.memory_allocated()
    return out


def build(cfg):
    # automatic mixed precision keeps the fp32 weights
    model, data = amp_steps.model_and_data(cfg, low_precision=not AMP)
    if AMP:
        return amp_steps.AmpTrainer(model), data
    trainer = gpt.Trainer(model)
    if ADAM == "foreach":  # the same masters and hyper-parameters, PyTorch's default kernels
        trainer.opt = torch.optim.AdamW(trainer.masters, lr=1e-4, foreach=True)
    return trainer, data


def peak_since_reset():
    torch.cuda.synchronize()
    p = torch.cuda.max_memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    return p


def phased_step(trainer, data):
    """gpt.Trainer.step split into phases: the peak allocated bytes of each."""
    fwd = bwd = kept = 0
    peak_since_reset()
    for idx, targets in data:
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=AMP):
            loss = trainer.model(idx, targets)
        kept = max(kept, torch.cuda.memory_allocated())
        fwd = max(fwd, peak_since_reset())
        loss.backward()
        bwd = max(bwd, peak_since_reset())
    if AMP:
        torch.nn.utils.clip_grad_norm_(trainer.params, trainer.clip, foreach=True)
        trainer.opt.step()
        trainer.opt.zero_grad(set_to_none=True)
    else:
        torch.nn.utils.clip_grad_norm_(trainer.masters, trainer.clip, foreach=True)
        trainer.opt.step()
        torch._foreach_copy_([p.data for p in trainer.params], trainer.masters)
        torch._foreach_zero_([m.grad for m in trainer.masters])
    opt = peak_since_reset()
    return fwd, kept, bwd, opt


def measure(cfg):
    """One configuration: ('ok', figures) or ('oom', figures at the failure)."""
    trainer = data = None
    gc.collect()
    torch.cuda.empty_cache()
    out = {"status": "ok", "failed_request": ""}
    try:
        trainer, data = build(cfg)
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.reset_accumulated_memory_stats()
        out["states"] = torch.cuda.memory_allocated()
        worst_used = 0
        for _ in range(2):
            trainer.step(data)
            free, total = torch.cuda.mem_get_info()
            worst_used = max(worst_used, total - free - torch.cuda.memory_reserved())
        stats = torch.cuda.memory_stats()
        fwd, kept, bwd, opt = phased_step(trainer, data)
        out.update(fwd=fwd, kept=kept, bwd=bwd, opt=opt)
        free, total = torch.cuda.mem_get_info()
        out["outside"] = max(worst_used, total - free - torch.cuda.memory_reserved())
    except torch.OutOfMemoryError as e:
        out["status"] = "oom"
        m = re.search(r"Tried to allocate ([0-9.]+ [KMG]iB)", str(e))
        out["failed_request"] = m.group(1) if m else "?"
        stats = torch.cuda.memory_stats()
        free, total = torch.cuda.mem_get_info()
        out["outside"] = total - free - torch.cuda.memory_reserved()
    out["allocated_peak"] = stats["allocated_bytes.all.peak"]
    out["requested_peak"] = stats["requested_bytes.all.peak"]
    out["reserved_peak"] = stats["reserved_bytes.all.peak"]
    out["inactive_split_peak"] = stats["inactive_split_bytes.all.peak"]
    out["retries"] = stats["num_alloc_retries"]
    trainer = data = None
    gc.collect()
    torch.cuda.empty_cache()
    return out


FIELDS = ["status", "states", "fwd", "kept", "bwd", "opt", "allocated_peak", "requested_peak",
          "reserved_peak", "inactive_split_peak", "retries", "outside", "failed_request"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--adam", choices=("fused", "foreach"), default="fused",
                    help="foreach: torch.optim.AdamW's default on CUDA, on the points only")
    ap.add_argument("--hbm", type=int, choices=(141, 80), default=141,
                    help="the set sized for a GPU of this many GB: 141 (H200) or 80 (H100)")
    ap.add_argument("--amp", action="store_true",
                    help="amp_steps.py's automatic mixed precision, its ladders (80 GB) alone")
    ap.add_argument("--only", metavar="NAME:MICRO_BATCH:RECOMPUTE",
                    help="run this rung of the chosen ladders alone (recompute: full or none)")
    args = ap.parse_args()
    global ADAM, AMP
    ADAM, AMP = args.adam, args.amp
    torch.backends.cuda.matmul.allow_tf32 = False
    started = datetime.datetime.now(datetime.timezone.utc)
    props = torch.cuda.get_device_properties(0)
    torch.cuda.init()
    free0, total = torch.cuda.mem_get_info()  # the context exists now, no tensor yet
    work = library_workspaces()
    lines = [
        "# Caching-allocator memory measured by bench/device/allocator.py (validation data; the",
        f"# context figure is a device measurement). device {torch.cuda.get_device_name(0)} "
        f"({props.total_memory / GIB:.2f} GiB), torch {torch.__version__}, CUDA "
        f"{torch.version.cuda}, {started:%Y-%m-%d %H:%M} UTC, PYTORCH_CUDA_ALLOC_CONF="
        f"'{os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')}', Adam {ADAM}"
        + (", automatic mixed precision (amp_steps.py)" if AMP else ""),
        f"# before any tensor: cudaMemGetInfo total {total} free {free0} (used {total - free0})",
        "# libraries' first use, bytes the allocator holds beyond the tensors: "
        + ", ".join(f"{k} {v}" for k, v in work.items()),
        "# bytes; fwd/bwd/opt: the third step's per-phase peaks of memory_allocated; kept: "
        "allocated after a forward",
        "set,kind,name,layers,hidden,heads,kv_heads,ffn,seq,micro_batch,microbatches,recompute,"
        + ",".join(FIELDS),
    ]
    ladders, points = (LADDERS, POINTS) if args.hbm == 141 else (LADDERS_80GB, POINTS_80GB)
    if AMP:
        ladders, points = (LADDERS_AMP if args.hbm == 141 else LADDERS_AMP_80GB), []
    plan = [] if ADAM == "foreach" else [
        ("ladder", item) for item in (SMOKE_LADDERS if args.smoke else ladders)]
    plan += [("point", c) for c in (SMOKE_POINTS if args.smoke else points)]
    if args.only:
        plan = [("ladder", (cfg, (cfg[8],))) for cfg in rungs(SMOKE_LADDERS if args.smoke else ladders)
                if rung_name(cfg) == args.only]
        if not plan:
            ap.error(f"--only {args.only}: no such rung in the chosen ladders")
    for kind, item in plan:
        cfgs = [item] if kind == "point" else rungs([item])
        for cfg in cfgs:
            r = measure(cfg)
            lines.append(",".join(str(v) for v in (kind,) + cfg[:10] +
                                  ("full" if cfg[10] else "none",) +
                                  tuple(r.get(f, "") for f in FIELDS)))
            print(f"allocator: {lines[-1]}", file=sys.stderr, flush=True)
            steps.write_lines(args.out, lines)
            if r["status"] == "oom":
                break
    return 0


if __name__ == "__main__":
    sys.exit(main())
