"""The kernels Hugging Face's eager GPT-2 adds (hf_gpt2_steps.py's model), each timed alone against
a plain add moving as many bytes, for the cost model's stack.gelu eager_tanh and
stack.score_divisions (issue 31). Microbenchmark data: sets the rates trainsim prices them at.

  add              a + b, both in the dtype (3 x 2 bytes an element): the reference rate;
  div_device       w / torch.full([], sqrt(d), device=cuda): the scores divided by a 0-dim CUDA
                   tensor (GPT2Attention._attn's scale), and its gradient's kernel (the same);
  div_scalar       w / float(layer_idx + 1) (scale_attn_by_inverse_layer_idx);
  where            torch.where(causal bool mask [1, 1, s, s], w, 0-dim CUDA tensor);
  gelu_new_*       0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) on x [8192, 3072], its forward
                   and its forward + backward (autograd, a ones gradient), under torch.autocast
                   (pow is on autocast's fp32 list: the chain runs in fp32 from it) and without;
  gelu_tanh_*      F.gelu(approximate="tanh") the same ways, for reference.
Scores [8, 12, 1024, 1024] (GPT-2 small at micro-batch 8). CUDA events, median of 20 after 5
warm-ups (cuda_timing.time_ms); microseconds. And the host's time an eager operation (host_us).

    python3 bench/device/hf_eager_kernels.py OUT.csv
"""
import argparse
import datetime
import math
import statistics
import time

import torch
import torch.nn.functional as F

import cuda_timing
from cuda_timing import write_csv


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


def fwd_bwd(fn, x, autocast, dtype):
    def run():
        with torch.autocast("cuda", dtype=dtype, enabled=autocast):
            y = fn(x)
        y.backward(torch.ones_like(y))
        x.grad = None
    return run


def fwd(fn, x, autocast, dtype):
    def run():
        with torch.no_grad(), torch.autocast("cuda", dtype=dtype, enabled=autocast):
            fn(x)
    return run


def measure(name, dtype):
    rows = []
    w = torch.randn(8, 12, 1024, 1024, device="cuda", dtype=dtype)
    b = torch.randn_like(w)
    scale = torch.full([], 8.0, dtype=dtype, device="cuda")
    mask = torch.tril(torch.ones(1024, 1024, dtype=torch.bool, device="cuda")).view(1, 1, 1024, 1024)
    low = torch.full([], torch.finfo(dtype).min, dtype=dtype).to("cuda")
    for kernel, fn in (("add", lambda: w + b), ("div_device", lambda: w / scale),
                       ("div_scalar", lambda: w / 3.0), ("where", lambda: torch.where(mask, w, low))):
        rows.append([name, kernel, w.numel(), f"{cuda_timing.time_ms(fn) * 1e3:.1f}"])
    x = torch.randn(8192, 3072, device="cuda", dtype=dtype, requires_grad=True)
    xa, ba = torch.randn(8192, 3072, device="cuda", dtype=dtype), torch.randn(8192, 3072, device="cuda", dtype=dtype)
    rows.append([name, "add", xa.numel(), f"{cuda_timing.time_ms(lambda: xa + ba) * 1e3:.1f}"])
    for gname, gfn in (("gelu_new", gelu_new), ("gelu_tanh", gelu_tanh)):
        for autocast in (True, False):
            tag = "autocast" if autocast else "plain"
            rows.append([name, f"{gname}_fwd_{tag}", x.numel(),
                         f"{cuda_timing.time_ms(fwd(gfn, x, autocast, dtype)) * 1e3:.1f}"])
            rows.append([name, f"{gname}_fwd_bwd_{tag}", x.numel(),
                         f"{cuda_timing.time_ms(fwd_bwd(gfn, x, autocast, dtype)) * 1e3:.1f}"])
    return rows


def host_us():
    """The host's time a kernel for element-wise operations on 16 values (the GPU runs ahead, so
    the CPU sets the pace), 1,000 in a chain: an in-place add without autograd (the kernel
    table's eager_op_us), an out-of-place product on a tensor that requires grad under autocast
    (the forward of an eager model's extra operation: dispatcher, autocast, autograd's node,
    the output's allocation), and the backward through that chain (autograd's engine, one
    kernel a node). Median of 7."""
    x = torch.zeros(16, device="cuda", requires_grad=True)
    z = torch.zeros(16, device="cuda")

    def timed(fn, prepare=lambda: None):
        times = []
        for _ in range(9):
            prepare()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        return statistics.median(times[2:]) * 1e6 / 1000

    def inplace():
        with torch.no_grad():
            for _ in range(1000):
                z.add_(1)

    def chain():
        with torch.autocast("cuda", dtype=torch.float16):
            y = x
            for _ in range(1000):
                y = y * 1.0001
        return y

    graphs = []

    def build():
        graphs.append(chain().sum())

    def backward():
        graphs.pop().backward()

    rows = [["host", "eager_op_inplace_nograd", 16, f"{timed(inplace):.2f}"],
            ["host", "autograd_op_forward", 16, f"{timed(build):.2f}"]]
    graphs.clear()
    rows.append(["host", "autograd_node_backward", 16, f"{timed(backward, prepare=build):.2f}"])
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = host_us()
    for name, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
        rows += measure(name, dtype)
        torch.cuda.empty_cache()
    for r in rows:
        print(*r, flush=True)
    write_csv(args.out, "hf_eager_kernels.py", "microseconds, median of 20 after 5 warm-ups",
              ["dtype", "kernel", "elements", "time_us"], rows, started)


if __name__ == "__main__":
    main()
