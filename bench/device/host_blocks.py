"""CPU time of one transformer block's forward and backward where the GPU waits on the host,
for the block kinds the validation steps run: gpt.py's GPT block, llama_steps.py's Llama block,
and moe.py's blocks (Llama attention or MLA, with a MoE MLP), each with gpt.Trainer's main-grad
hooks, timed in turns round after round (medians), with Python's garbage collector off and on.

    python3 bench/device/host_blocks.py

A diagnostic of trainsim's host model (workloads/cost.c, host_bound): it prints, it sets nothing.
"""
import gc
import statistics
import time

import torch

import gpt
import llama_steps
import moe

dev = torch.device("cuda")
bf16 = torch.bfloat16


def host_s(fn):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def main():
    h, seq = 256, 128
    base = dict(hidden=h, heads=4, kv_heads=2, experts=8, topk=2, moe_ffn=128, vocab=1024,
                seq=seq)
    blocks = {
        "gpt": lambda: gpt.Block(h, 4),
        "llama": lambda: llama_steps.Block(h, 4, 2, 512),
        "llama+moe": lambda: moe.Block(base, True),
        "llama+moe aux": lambda: moe.Block(dict(base, aux=0.01), True),
        "mla+moe": lambda: moe.Block(dict(base, mla=True, kv_lora=64, q_lora=96, qk_nope=32,
                                          qk_rope=32, v_dim=32, shared_ffn=128,
                                          score="sigmoid", expert_bias=True), True),
    }
    calls = {}
    for name, make in blocks.items():
        torch.manual_seed(0)
        with torch.device(dev):
            blk = make().to(bf16)
        gpt.Trainer(blk)
        x = torch.randn(1, seq, h, device=dev, dtype=bf16, requires_grad=True)
        rot = 32 if name.startswith("mla") else h // 4
        cos = torch.randn(1, 1, seq, rot, device=dev, dtype=bf16)
        sin = torch.randn(1, 1, seq, rot, device=dev, dtype=bf16)

        def fwd(blk=blk, x=x, cos=cos, sin=sin, name=name):
            y = blk(x) if name == "gpt" else blk(x, cos, sin)
            return y[0] if isinstance(y, tuple) else y

        calls[(name, "fwd")] = fwd
        calls[(name, "step")] = lambda fwd=fwd: fwd().sum().backward()
    for fn in calls.values():
        for _ in range(5):
            fn()
    for gc_on in (False, True):
        samples = {k: [] for k in calls}
        (gc.enable if gc_on else gc.disable)()
        for _ in range(60):
            for k, fn in calls.items():
                samples[k].append(host_s(fn))
        gc.enable()
        for name in blocks:
            f = statistics.median(samples[(name, "fwd")])
            s = statistics.median(samples[(name, "step")])
            print(f"gc {'on ' if gc_on else 'off'} {name:14s} forward {1e6 * f:7.0f} us  "
                  f"backward {1e6 * (s - f):7.0f} us")


if __name__ == "__main__":
    main()
