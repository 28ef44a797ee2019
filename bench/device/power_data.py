"""Does a kernel draw less power, and so hold a higher clock under the 700 W limit, on a model's
own tensors than on the randn operands kernel_table.py times it with? For validation (issue
31): in a training step the GEMMs ran near their cool-clock speed while the step's mean clock
was far below it (bench/device/step_kernels.py, power_probe.py). Horace He, "Strangely, matrix
multiplications on GPUs run faster when given 'predictable' data" (thonking.ai, 2024) showed
the power a GEMM draws depends on its operands' bits.

    python3 bench/device/power_data.py OUT.csv [--smoke]

Operands: a GPT-1.3B-shaped model's (gpt.py; 2 layers, hidden 2,048, sequence 16,384) own
tensors, captured by hooks in its second block after 3 training steps: FC1's input and weight,
the gradient at FC1's output, Q K V; against randn operands of the same shapes, and randn
scaled to the model tensor's standard deviation. Each kernel in two states, timed as
kernel_table.py times (r calls in a CUDA graph, median of 5 replays), NVML's SM clock and power
sampled every 2 ms (gpu_sampler.Nvml): cool (after 1.5 s idle) and steady (after 1.5 s of
replaying the same graph back to back: the clock this kernel settles at by itself).
"""
import argparse
import datetime
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import gpt
import kernel_table as kt
from cuda_timing import write_csv
from gpu_sampler import Nvml


def captured(smoke):
    """fc1 input x, fc1 weight w, gradient at fc1's output dy, and q, k, v of block 1."""
    layers, h, heads, seq = (2, 256, 4, 1024) if smoke else (2, 2048, 16, 16384)
    model = gpt.make_model(layers, h, heads, seq, False)
    trainer = gpt.Trainer(model)
    data = gpt.batches(1, 1, seq)
    for _ in range(3):
        trainer.step(data)
    blk, got = model.blocks[1], {}

    def fc1_in(mod, args, out):
        got["x"] = args[0].detach().reshape(-1, h).clone()
        out.register_hook(lambda g: got.__setitem__("dy", g.detach().reshape(-1, 4 * h).clone()))

    def qkv_out(mod, args, out):
        qkv = out.detach().view(1, seq, 3, heads, h // heads)
        got["qkv"] = [t.transpose(1, 2) for t in qkv.clone().unbind(2)]

    hooks = [blk.fc1.register_forward_hook(fc1_in), blk.qkv.register_forward_hook(qkv_out)]
    loss = model(*data[0])
    loss.backward()
    for hk in hooks:
        hk.remove()
    got["w"] = blk.fc1.weight.detach().clone()
    got["b"] = blk.fc1.bias.detach().clone()
    return got


def steady_graph_s(fn, seconds):
    """kernel_table.median_graph_s after `seconds` of replaying the same graph back to back."""
    est = kt.median_graph_s(fn, replays=1)
    r = int(min(200, max(1, round(0.004 / est))))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=torch.cuda.current_stream()):
        for _ in range(r):
            fn()
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        for _ in range(10):
            g.replay()
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(5):
        a.record()
        g.replay()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e-3 / r)
    return statistics.median(times), t0, time.perf_counter()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    torch.backends.cuda.matmul.allow_tf32 = False
    started = datetime.datetime.now(datetime.timezone.utc)
    got = captured(args.smoke)
    kt.STREAM = torch.cuda.Stream()
    nvml = Nvml()
    hold = 0.3 if args.smoke else 1.5
    with torch.cuda.stream(kt.STREAM):  # autograd's backward runs on its forward's stream
        run_cases(got, nvml, hold, args, started)
    nvml.close()


def like(t, scale=False):
    """randn of t's shape, scaled to t's standard deviation if asked."""
    r = torch.randn_like(t)
    return r * t.float().std().to(t.dtype) if scale else r


def run_cases(got, nvml, hold, args, started):
    """Times each operand set's kernels cool and steady; writes the CSV."""
    x, w, b, dy = got["x"], got["w"], got["b"], got["dy"]
    q, k, v = got["qkv"]
    cases = []
    for label, xs, ws, dys in (("model", x, w, dy), ("randn", like(x), like(w), like(dy)),
                               ("randn_scaled", like(x, True), like(w, True), like(dy, True))):
        cases.append(("gemm_fwd fc1", label, lambda xs=xs, ws=ws: F.linear(xs, ws, b)))
        cases.append(("gemm_dgrad fc1", label, lambda dys=dys, ws=ws: torch.mm(dys, ws)))
        cases.append(("gemm_wgrad fc1", label, lambda dys=dys, xs=xs: torch.mm(dys.t(), xs)))
    for label, qs in (("model", (q, k, v)), ("randn", tuple(like(t) for t in (q, k, v)))):
        qs = tuple(t.detach().requires_grad_() for t in qs)

        def fwd(qs=qs):
            return F.scaled_dot_product_attention(*qs, is_causal=True)
        cases.append(("sdpa_fwd_causal", label, fwd))
        cases.append(("sdpa_bwd_causal", label, kt.backward(fwd(), qs)))
    rows = []
    for name, label, fn in cases:
        torch.cuda.synchronize()
        time.sleep(hold)
        t0 = time.perf_counter()
        cool = kt.median_graph_s(fn)
        t1 = time.perf_counter()
        steady, s0, s1 = steady_graph_s(fn, hold)
        for state, secs, w0, w1 in (("cool", cool, t0, t1), ("steady", steady, s0, s1)):
            clk, watts, n = nvml.window(w0, w1)
            rows.append([name, label, state, f"{secs * 1e6:.2f}", f"{clk:.0f}" if n else "",
                         f"{watts:.0f}" if n else "", n])
            print(f"power_data: {name} {label} {state}: {secs * 1e6:.1f} us at "
                  f"{clk if n else float('nan'):.0f} MHz, {watts if n else float('nan'):.0f} W",
                  file=sys.stderr, flush=True)
    write_csv(args.out, "power_data.py", "NVML clock and power sampled every 2 ms; validation data",
              ["kernel", "operands", "state", "time_us", "sm_mhz", "power_w", "samples"], rows,
              started)


if __name__ == "__main__":
    main()
