"""What a collective costs the GPU and the host besides its transfers, on one NVIDIA GPU.

    python3 bench/device/comm_overheads.py OUT.csv

Three measurements, each a row group of OUT.csv (section, name, value, unit, note):
  * launch: the host time of one torch.distributed collective call (NCCL, a one-rank group),
    issued back to back without synchronising: PyTorch's and NCCL's enqueue cost per call;
  * fsdp: the host time FSDP2 (torch.distributed.fsdp.fully_shard, one rank) adds per wrapped
    unit to a forward and backward pass of tiny layers, where the GPU waits on the host;
  * overlap: a communication kernel's shape beside computation. NCCL runs a collective as one
    thread block (CTA) per channel, each streaming its share of the buffer through load,
    reduce and store; channel_reduce below does the same (c = a + b, bf16, grid = channels).
    For 8, 16 and 32 channels: its rate alone; a bf16 8192^3 GEMM alone and with it running
    beside (the GEMM's slowdown); a memory-bound add over all SMs alone and beside it; and the
    reduction's own slowdown beside back-to-back GEMMs (the interference the other way).
CUDA events time the GPU work (medians of several repetitions after warm-ups); host times
are medians of wall-clock loops. NVLink multicast stays off (the device notes require it).
"""
import csv
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch
import torch.distributed as dist
import triton
import triton.language as tl

import cuda_timing as timing
from cuda_timing import time_ms as gpu_ms

rows = []


def row(section, name, value, unit, note=""):
    rows.append((section, name, "%.6g" % value, unit, note))
    print("%-8s %-40s %12.4g %s" % (section, name, value, unit), flush=True)


def median_host_us(fn, calls, reps=7):
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        times.append((t1 - t0) / calls * 1e6)
    return statistics.median(times)


def launch_costs():
    x = torch.randn(256, device="cuda")
    out = torch.empty(256, device="cuda")
    ops = {
        "all_reduce": lambda: dist.all_reduce(x),
        "all_gather_into_tensor": lambda: dist.all_gather_into_tensor(out, x),
        "reduce_scatter_tensor": lambda: dist.reduce_scatter_tensor(out, x),
        "broadcast": lambda: dist.broadcast(x, 0),
    }
    for name, fn in ops.items():
        for _ in range(200):
            fn()
        row("launch", name, median_host_us(fn, 2000), "us", "host time per call, 1 KiB, 1 rank")
    row("launch", "torch.add (reference)", median_host_us(lambda: torch.add(x, x), 2000), "us",
        "an eager kernel launch for comparison")


def fsdp_costs():
    from torch.distributed.fsdp import fully_shard

    units, width, batch = 32, 256, 8

    def model():
        torch.manual_seed(0)
        blocks = [torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU())
                  for _ in range(units)]
        return torch.nn.Sequential(*blocks).cuda()

    x = torch.randn(batch, width, device="cuda")

    def step_ms(m):
        def one():
            m(x).sum().backward()
        for _ in range(10):
            one()
        times = []
        for _ in range(30):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            one()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    plain = step_ms(model())
    sharded = model()
    for block in sharded:
        fully_shard(block)
    fully_shard(sharded)
    fsdp = step_ms(sharded)
    row("fsdp", "step without FSDP", plain * 1e3, "us", "%d units of Linear(%d)+ReLU" % (units, width))
    row("fsdp", "step with FSDP2", fsdp * 1e3, "us", "fully_shard per unit and at the root")
    row("fsdp", "added per unit (forward + backward)", (fsdp - plain) * 1e3 / units, "us",
        "host time: all-gathers in forward and backward, reduce-scatter, hooks")


@triton.jit
def channel_reduce(a, b, c, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(c + offs, tl.load(a + offs, mask=mask) + tl.load(b + offs, mask=mask), mask=mask)


def alone_and_beside(work, noise, work_ms, noise_ms):
    """Median times of `work` alone and while `noise`, relaunched back to back, runs on another
    stream (started about 1 ms first)."""
    def start_noise():
        for _ in range(int(3 * work_ms / noise_ms) + 2):
            noise()

    return timing.alone_and_beside(work, start_noise, 2_000_000)


def overlap_costs():
    n = 1 << 28  # 256 Mi bf16 elements, 512 MiB per buffer: far above the L2
    a, b, c = (torch.randn(n, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    g = 8192
    x = torch.randn(g, g, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(g, g, device="cuda", dtype=torch.bfloat16)
    y = torch.empty(g, g, device="cuda", dtype=torch.bfloat16)
    m = 1 << 28
    p, q, r = (torch.randn(m, device="cuda", dtype=torch.bfloat16) for _ in range(3))

    def gemm():
        for _ in range(10):
            torch.mm(x, w, out=y)

    def add():
        for _ in range(10):
            torch.add(p, q, out=r)

    t_end = time.perf_counter() + 3  # clocks up from idle before anything is timed
    while time.perf_counter() < t_end:
        gemm()
        torch.cuda.synchronize()
    t_gemm = gpu_ms(gemm, warmup=3, reps=10) / 10
    t_add = gpu_ms(add, warmup=3, reps=10) / 10
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    row("overlap", "gemm 8192^3 bf16 alone", t_gemm * 1e3, "us",
        "%.1f TFLOP/s" % (2 * g ** 3 / t_gemm / 1e9))
    row("overlap", "add 2^28 bf16 alone", t_add * 1e3, "us",
        "%.0f GB/s (read 2, write 1)" % (3 * 2 * m / t_add / 1e6))
    row("overlap", "multiprocessors", sms, "SMs")
    for channels in (8, 16, 32):
        def red():
            channel_reduce[(channels,)](a, b, c, n, BLOCK=4096, num_warps=16)

        t_red = gpu_ms(red, warmup=3, reps=10)
        row("overlap", "channel_reduce %d CTAs alone" % channels, 3 * 2 * n / t_red / 1e6, "GB/s",
            "HBM bytes moved (read 2, write 1) per second")
        alone, mixed = alone_and_beside(gemm, red, 10 * t_gemm, t_red)
        row("overlap", "gemm beside %d CTAs" % channels, mixed / alone - 1, "slowdown",
            "fraction added to the GEMM's time (alone %.0f us)" % (alone * 100))
        alone, mixed = alone_and_beside(add, red, 10 * t_add, t_red)
        row("overlap", "add beside %d CTAs" % channels, mixed / alone - 1, "slowdown",
            "fraction added to the memory-bound kernel's time (alone %.0f us)" % (alone * 100))
        alone, mixed = alone_and_beside(red, gemm, t_red, 10 * t_gemm)
        row("overlap", "%d CTAs beside gemm" % channels, mixed / alone - 1, "slowdown",
            "fraction added to the reduction's own time beside GEMMs (alone %.0f us)"
            % (alone * 1e3))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "comm_overheads.csv"
    props = torch.cuda.get_device_properties(0)
    print("# %s, torch %s, CUDA %s, NCCL %s" % (props.name, torch.__version__, torch.version.cuda,
                                               ".".join(map(str, torch.cuda.nccl.version()))))
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("nccl", init_method="file://%s/pg" % tmp, rank=0, world_size=1,
                                device_id=torch.device("cuda", 0))
        launch_costs()
        fsdp_costs()
        overlap_costs()
        dist.destroy_process_group()
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["# %s, torch %s, CUDA %s, NCCL %s, %s" % (
            props.name, torch.__version__, torch.version.cuda,
            ".".join(map(str, torch.cuda.nccl.version())), time.strftime("%Y-%m-%d"))])
        w.writerow(["section", "name", "value", "unit", "note"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
