"""FSDP's own GPU work around its collectives, on one NVIDIA GPU (one rank).

    python3 bench/device/fsdp_copies.py OUT.csv

FSDP2 (torch.distributed.fsdp.fully_shard) moves each unit's parameters through buffers of its
own: before an all-gather it copies the local shards into one flat input (copy-in, on its
all-gather copy-in stream); after it, the unit's parameters are copied out of the flat output
into each parameter's storage (copy-out, on the stream that waits for them: the compute
stream); before a reduce-scatter the gradients are copied, cast to the reduce dtype, into one
flat input (chunk_cat, on the current stream, which the reduce-scatter stream then waits for:
the compute stream). Those kernels are memory-bound and run whatever the rank count.

For layers of three shapes (Llama 3 8B's, torchtitan's model; MPT-7B's and MPT-1B's), each a
stack of transformer-shaped blocks with every weight matrix of the real layer (no attention
core: only the parameters matter here), wrapped a block a unit as torchtitan (FSDP2) and
Composer (FSDP1, FullyShardedDataParallel with flat parameters) wrap them, with bf16
parameters and fp32 reduction, this records a profiled step's kernels grouped by the operator
that launched them and the stream they ran on, per unit and step, and the step's time against
the same bf16 stack without FSDP. On one rank the all-gather is in place, the reduce-scatter a
copy, the copy-in cast the whole parameter (1/N of it on N ranks), and FSDP1 runs NO_SHARD.
"""
import collections
import datetime
import json
import os
import sys
import tempfile

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch
import torch.distributed as dist
import torch.nn as nn

from cuda_timing import time_ms, write_csv

# h, key/value width (GQA), FFN width, SwiGLU or GeLU, blocks, tokens a step
CONFIGS = {
    "llama3-8b": (4096, 1024, 14336, True, 4, 8192),  # Llama 3 8B (torchtitan's llama3_8b)
    "mpt-7b": (4096, 4096, 16384, False, 4, 12288),  # MPT-7B: 4h GeLU MLP, micro-batch 6 x 2k
    "mpt-1b": (2048, 2048, 8192, False, 8, 24576),  # MPT-1B: micro-batch 12 x 2k
}


class Block(nn.Module):
    def __init__(self, h, kv, ffn, swiglu):
        super().__init__()
        self.norm1, self.norm2 = nn.RMSNorm(h), nn.RMSNorm(h)
        self.q, self.k, self.v = nn.Linear(h, h, False), nn.Linear(h, kv, False), nn.Linear(h, kv, False)
        self.o = nn.Linear(h, h, False)
        self.swiglu = swiglu
        if swiglu:
            self.gate, self.up = nn.Linear(h, ffn, False), nn.Linear(h, ffn, False)
        else:
            self.up = nn.Linear(h, ffn, False)
        self.down = nn.Linear(ffn, h, False)
        self.reps = h // kv

    def forward(self, x):
        y = self.norm1(x)
        a = self.q(y) + (self.k(y) + self.v(y)).repeat(1, self.reps)
        x = x + self.o(a)
        y = self.norm2(x)
        m = nn.functional.silu(self.gate(y)) * self.up(y) if self.swiglu else \
            nn.functional.gelu(self.up(y))
        return x + self.down(m)


def stack(cfg):
    h, kv, ffn, swiglu, layers, _ = cfg
    return nn.Sequential(*[Block(h, kv, ffn, swiglu) for _ in range(layers)]).cuda()


def step_fn(model, x):
    def step():
        model(x).float().pow(2).mean().backward()
    return step


def kernels_by_op(step, steps, tmp):
    """{(launching operator, stream): [kernels, us]} per step, from a profiled run."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    path = os.path.join(tmp, "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    # the innermost CPU operator of each external id: the one that launched the kernel
    op_of = {}
    for e in events:
        if e.get("cat") == "cpu_op" and "External id" in e.get("args", {}):
            xid = e["args"]["External id"]
            if xid not in op_of or e.get("dur", 0) <= op_of[xid][1]:
                op_of[xid] = (e["name"], e.get("dur", 0))
    groups = collections.defaultdict(lambda: [0, 0.0])
    for e in events:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        args = e.get("args", {})
        op = op_of.get(args.get("External id"), (e["cat"], 0))[0]
        g = groups[(op, args.get("stream", -1), e["name"][:60])]
        g[0] += 1
        g[1] += e.get("dur", 0.0)
    return {k: (v[0] / steps, v[1] / steps) for k, v in groups.items()}


def wrap_fsdp2(cfg):
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    model = stack(cfg)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model:
        fully_shard(block, mp_policy=mp, reshard_after_forward=True)
    fully_shard(model, mp_policy=mp, reshard_after_forward=True)
    return model


def wrap_fsdp1(cfg):
    """FSDP1 as Composer ran it for MPT (flat parameters, a unit a block, original parameters
    exposed, bf16 parameters and fp32 reduction); on one rank FSDP1 runs NO_SHARD, so its
    reduction is an all-reduce, but its flat parameter's views and casts are the same."""
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32,
                        buffer_dtype=torch.float32)
    return FSDP(stack(cfg), auto_wrap_policy=ModuleWrapPolicy({Block}), mixed_precision=mp,
                use_orig_params=True, limit_all_gathers=True, device_id=0)


def measure(name, cfg, rows, tmp):
    h, _, _, _, layers, tokens = cfg
    x = torch.randn(tokens, h, device="cuda", dtype=torch.bfloat16)
    plain = stack(cfg).to(torch.bfloat16)
    params = sum(p.numel() for p in plain[0].parameters())
    rows.append((name, "parameters a unit", params, "elements", "one block"))
    t_plain = time_ms(step_fn(plain, x), warmup=3, reps=10)
    del plain
    rows.append((name, "step without FSDP", "%.4g" % (t_plain * 1e3), "us",
                 "%d blocks, %d tokens, bf16 weights" % (layers, tokens)))
    for version, wrap in (("FSDP2", wrap_fsdp2), ("FSDP1", wrap_fsdp1)):
        model = wrap(cfg)
        step = step_fn(model, x)
        t_fsdp = time_ms(step, warmup=3, reps=10)
        rows.append((name, "step with " + version, "%.4g" % (t_fsdp * 1e3), "us",
                     "a unit a block and the root; bf16 parameters, fp32 reduction"))
        rows.append((name, version + " added a unit and step",
                     "%.4g" % ((t_fsdp - t_plain) * 1e3 / layers), "us",
                     "the step less the plain step, over the units"))
        groups = kernels_by_op(step, 3, tmp)
        for (op, stream, kernel), (count, us) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
            if us < 5:
                continue
            rows.append((name, "%s kernels of %s on stream %s" % (version, op, stream),
                         "%.4g" % (us / layers), "us a unit and step",
                         "%.3g calls a unit; %s" % (count / layers, kernel)))
        del model, step
        torch.cuda.empty_cache()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "fsdp_copies.csv"
    started = datetime.datetime.now(datetime.timezone.utc)
    torch.manual_seed(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("nccl", init_method="file://%s/pg" % tmp, rank=0, world_size=1,
                                device_id=torch.device("cuda", 0))
        for name, cfg in CONFIGS.items():
            first = len(rows)
            measure(name, cfg, rows, tmp)
            for r in rows[first:]:
                print(",".join(map(str, r)), flush=True)
        dist.destroy_process_group()
    write_csv(out, "fsdp_copies.py", "one rank, kernels per unit and step (profiled, 3 steps)",
              ["config", "what", "value", "unit", "note"], rows, started)


if __name__ == "__main__":
    main()
