"""Lists the GPU kernels of moe.py's MoE layer, part by part, forward and backward, with their
times (torch.profiler): what a MoE layer runs as PyTorch dispatches it, for reading beside
trainsim's `profile` of the same layer.

    python3 bench/device/moe_kernels.py [CONFIG_NAME]   (default dsv3mini-6l)

Also says whether the experts' weight gradients keep their parameters' layout (PyTorch's
gradient layout contract: AccumulateGrad copies a gradient whose strides differ).
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import moe
import moe_steps


def kernels(fn):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [(e.name, e.time_range.elapsed_us()) for e in prof.events()
            if e.device_type.name == "CUDA"]


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "dsv3mini-6l"
    c = next(c for c in moe_steps.CONFIGS if c["name"] == name)
    torch.manual_seed(0)
    with torch.device("cuda"):
        layer = moe.MoE(c).to(torch.bfloat16)
    for p in layer.parameters():
        torch.nn.init.normal_(p, std=0.02)
    x = torch.randn(c["mbs"] * c["seq"], c["hidden"], device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    for _ in range(2):
        layer(x[None])[0].sum().backward()
    out = layer(x[None])[0]
    dy = torch.randn_like(out)
    fwd = kernels(lambda: layer(x[None]))
    bwd = kernels(lambda: out.backward(dy))
    for phase, ks in (("forward", fwd), ("backward", bwd)):
        print(f"== {name} MoE layer {phase}: {len(ks)} kernels, {sum(t for _, t in ks):.1f} us")
        for n, t in ks:
            print(f"  {t:9.2f} us  {n[:110]}")
    for pname, p in layer.named_parameters():
        if p.grad is not None:
            print(f"grad layout {pname}: param strides {p.stride()}, grad strides "
                  f"{p.grad.stride()}")


if __name__ == "__main__":
    main()
