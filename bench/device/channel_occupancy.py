"""Computation beside a collective whose channels hold their multiprocessors, on one NVIDIA GPU.

    python3 bench/device/channel_occupancy.py OUT.csv

NCCL runs a collective as one kernel launch for the whole call, one thread block (CTA) a
channel, each block resident until the call ends (src/device, src/enqueue.cc). Each block runs
NCCL_MAX_NTHREADS = 640 threads (src/include/device.h) built with -maxrregcount=96
(makefiles/common.mk): up to 61,440 registers, nearly an H100 multiprocessor's 65,536, and
ncclShmemDynamicSize() of shared memory (82,240 bytes on sm_90). A cuBLAS Hopper GEMM block
needs nearly the whole register file too, so a multiprocessor that holds a channel runs no GEMM
block while the collective lasts. comm_overheads.py's overlap section measured a Triton
reduction relaunched back to back beside GEMMs; this one measures the shape NCCL has:

  * nccl: the registers and shared memory of the NCCL library PyTorch loaded (cuobjdump
    --dump-resource-usage on its sm_90 kernels), its collective kernels' spread;
  * kernels: each work kernel's launch (grid, block, registers, shared memory) from the
    PyTorch profiler, to read waves against multiprocessors;
  * beside: a persistent reduction of NCCL's launch shape (640 threads a block, NCCL's dynamic
    shared memory, one block a channel, c = a + b over 512 MiB buffers again and again) started
    first on one stream and lasting beyond the work; the work (GEMMs of training shapes, flash
    attention, a memory-bound add) on another: the work's time alone and beside 8, 16, 24 and
    32 channels, and the reduction's own rate alone and beside back-to-back GEMMs.
The model to compare with: a kernel of many waves slowed by SMs / (SMs - channels).
CUDA events time the GPU work (medians of repetitions alternating alone and beside).
Validation data: nothing here sets a trainsim parameter by itself.
"""
import datetime
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import cupy as cp
import numpy as np
import torch
import torch.nn.functional as F

from cuda_timing import alone_and_beside, time_ms, write_csv

NCCL_THREADS = 640  # NCCL_MAX_NTHREADS, src/include/device.h
NCCL_DYN_SMEM = 20 * ((8 * 32 + 1) * 16)  # ncclShmemDynamicSize(900): 20 warps x 4,112 B
CHANNELS = (8, 16, 24, 32)

SOURCE = r"""
extern "C" __global__ void __launch_bounds__(640, 1)
channel_reduce(const float4* __restrict__ a, const float4* __restrict__ b,
               float4* __restrict__ c, long long n4, int reps) {
  extern __shared__ float4 scratch[];  /* NCCL's footprint; unused */
  long long per = n4 / gridDim.x, lo = per * blockIdx.x, hi = lo + per;
  for (int r = 0; r < reps; r++)
    for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      float4 x = a[i], y = b[i];
      c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
  if (threadIdx.x == 0 && reps < 0) scratch[0] = c[lo];
}
"""

rows = []


def row(section, name, value, unit, note=""):
    rows.append((section, name, "%.6g" % value if isinstance(value, float) else value, unit, note))
    print(f"{section:8s} {name:48s} {value!s:>12} {unit} {note}", flush=True)


def nccl_resources():
    """REG and SHARED of the loaded libnccl's sm_90 kernels (cuobjdump)."""
    torch.cuda.nccl.version()
    libs = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libnccl" in line})
    if not libs:
        libs = glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "nccl",
                                      "lib", "libnccl.so*"))
    if not libs:
        row("nccl", "library", "not found", "")
        return
    row("nccl", "library", os.path.basename(libs[0]), "", ".".join(map(str, torch.cuda.nccl.version())))
    try:
        out = subprocess.run(["cuobjdump", "--dump-resource-usage", libs[0]], capture_output=True,
                             text=True, timeout=300).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        row("nccl", "cuobjdump", "failed", "", str(e)[:80])
        return
    arch, fn, regs, smem = None, None, [], []
    for line in out.splitlines():
        m = re.match(r"\s*arch = (sm_\w+)", line)
        if m:
            arch = m.group(1)
        m = re.match(r"\s*Function (\S+?)[(:]", line)
        if m:
            fn = m.group(1)
        m = re.search(r"REG:(\d+).*SHARED:(\d+)", line)
        if m and fn and arch in ("sm_90", "sm_90a") and "ncclDevKernel" in fn:
            regs.append(int(m.group(1)))
            smem.append(int(m.group(2)))
    if not regs:
        row("nccl", "sm_90 kernels", 0, "kernels", "none parsed")
        return
    row("nccl", "sm_90 collective kernels", len(regs), "kernels")
    row("nccl", "registers a thread, min", min(regs), "registers")
    row("nccl", "registers a thread, median", statistics.median(regs), "registers")
    row("nccl", "registers a thread, max", max(regs), "registers")
    row("nccl", "registers a block of 640, median", statistics.median(regs) * NCCL_THREADS,
        "registers", "of the multiprocessor's 65,536")
    row("nccl", "static shared memory, max", max(smem), "bytes",
        f"plus {NCCL_DYN_SMEM} dynamic (ncclShmemDynamicSize)")


def kernel_shapes(name, fn):
    """The launch of each GPU kernel fn issues (PyTorch profiler's trace)."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        events = json.load(open(path))["traceEvents"]
    seen = set()
    for ev in events:
        if ev.get("cat") != "kernel":
            continue
        a = ev.get("args", {})
        key = (ev["name"][:60], str(a.get("grid")), str(a.get("block")))
        if key in seen:
            continue
        seen.add(key)
        row("kernels", name, ev["name"][:60].replace(",", ";"), "kernel",
            "grid %s block %s registers %s shared %s blocks/SM %s" % (
                a.get("grid"), a.get("block"), a.get("registers per thread"),
                a.get("shared memory"), a.get("blocks per SM")))


class Channels:
    """The persistent reduction: `channels` blocks of NCCL's launch shape."""

    def __init__(self):
        self.kernel = cp.RawKernel(SOURCE, "channel_reduce", options=("-maxrregcount=96",))
        self.kernel.max_dynamic_shared_size_bytes = NCCL_DYN_SMEM
        n = 1 << 27  # 128 Mi floats: 512 MiB a buffer, far above the L2
        self.a, self.b, self.c = (torch.randn(n, device="cuda") for _ in range(3))
        self.n4 = n // 4
        self.bytes = 3 * 4 * n  # read 2, write 1

    def launch(self, channels, reps):
        args = (cp.asarray(self.a), cp.asarray(self.b), cp.asarray(self.c), np.int64(self.n4),
                np.int32(reps))
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            self.kernel((channels,), (NCCL_THREADS,), args, shared_mem=NCCL_DYN_SMEM)


def beside(work, ch, channels):
    """Median times of work alone and while the reduction (one launch, its blocks taking their
    SMs first, lasting longer than the work) runs on another stream."""
    s_work, s_red = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(s_work):
        t_work = time_ms(work, warmup=2, reps=3)
    with torch.cuda.stream(s_red):
        t_pass = time_ms(lambda: ch.launch(channels, 1), warmup=1, reps=3)
    passes = max(1, int(6 * t_work / t_pass))  # outlasts the work slowed up to six-fold
    return alone_and_beside(work, lambda: ch.launch(channels, passes), 1_000_000)


def reduction_beside(ch, channels, work, work_ms, reps=5):
    """The reduction's own time alone and beside back-to-back work launched at the same time
    (its blocks wait for multiprocessors as a collective posted beside GEMMs does)."""
    s_work, s_red = torch.cuda.Stream(), torch.cuda.Stream()
    passes = 4
    with torch.cuda.stream(s_red):
        t_red = time_ms(lambda: ch.launch(channels, passes), warmup=1, reps=3)
    n_work = int(4 * t_red / work_ms) + 2  # outlasts the reduction slowed up to four-fold
    alone, mixed = [], []
    for _ in range(reps):
        for with_work in (False, True):
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            with torch.cuda.stream(s_red):
                torch.cuda._sleep(1_000_000)
                e0.record()
                ch.launch(channels, passes)
                e1.record()
            if with_work:
                with torch.cuda.stream(s_work):
                    for _ in range(n_work):
                        work()
            torch.cuda.synchronize()
            (mixed if with_work else alone).append(e0.elapsed_time(e1))
    return statistics.median(alone), statistics.median(mixed)


def works():
    bf = dict(device="cuda", dtype=torch.bfloat16)
    g = torch.randn(8192, 8192, **bf)
    x = torch.randn(8192, 4096, **bf)
    wq, wf = torch.randn(4096, 12288, **bf), torch.randn(4096, 14336, **bf)
    wo = torch.randn(14336, 4096, **bf)
    h = torch.randn(8192, 14336, **bf)
    s = torch.randn(4096, 4096, **bf)
    q, k, v = (torch.randn(4, 32, 4096, 128, **bf) for _ in range(3))
    p, r = torch.randn(1 << 28, **bf), torch.empty(1 << 28, **bf)
    return [
        ("gemm 8192x8192x8192", lambda: [torch.mm(g, g) for _ in range(4)], 4 * 2 * 8192**3),
        ("gemm 8192x4096x12288 (qkv)", lambda: [torch.mm(x, wq) for _ in range(8)],
         8 * 2 * 8192 * 4096 * 12288),
        ("gemm 8192x4096x14336 (ffn up)", lambda: [torch.mm(x, wf) for _ in range(8)],
         8 * 2 * 8192 * 4096 * 14336),
        ("gemm 8192x14336x4096 (ffn down)", lambda: [torch.mm(h, wo) for _ in range(8)],
         8 * 2 * 8192 * 4096 * 14336),
        ("gemm 4096x4096x4096", lambda: [torch.mm(s, s) for _ in range(32)], 32 * 2 * 4096**3),
        ("flash attention forward 4x32x4096x128 causal",
         lambda: [F.scaled_dot_product_attention(q, k, v, is_causal=True) for _ in range(8)], 0),
        ("add 2^28 bf16", lambda: [torch.add(p, p, out=r) for _ in range(8)], 0),
    ]


def main():
    out = sys.argv[1]
    started = datetime.datetime.now(datetime.timezone.utc)
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    row("device", "multiprocessors", sms, "SMs", props.name)
    nccl_resources()
    ch = Channels()
    row("reduction", "registers a thread", ch.kernel.num_regs, "registers",
        f"{NCCL_THREADS} threads, {NCCL_DYN_SMEM} B dynamic shared memory")
    t_end = time.perf_counter() + 3  # clocks up from idle before anything is timed
    wl = works()
    while time.perf_counter() < t_end:
        wl[0][1]()
        torch.cuda.synchronize()
    for name, fn, flops in wl:
        kernel_shapes(name, fn)
    for channels in CHANNELS:
        t = time_ms(lambda: ch.launch(channels, 2), warmup=1, reps=5)
        row("reduction", f"{channels} channels alone", 2 * ch.bytes / t / 1e6, "GB/s",
            "HBM bytes (read 2, write 1) a second")
    for name, fn, flops in wl:
        for channels in CHANNELS:
            alone, mixed = beside(fn, ch, channels)
            note = f"alone {alone:.3f} ms" + (
                f", {flops / alone / 1e9:.0f} TFLOP/s" if flops else "")
            row("beside", f"{name} | {channels} channels", mixed / alone - 1, "slowdown",
                note + f"; SMs/(SMs-channels)-1 = {sms / (sms - channels) - 1:.3f}")
    gemm = wl[0][1]
    g_ms = time_ms(gemm, warmup=1, reps=3)
    for channels in CHANNELS:
        alone, mixed = reduction_beside(ch, channels, gemm, g_ms)
        row("stretch", f"{channels} channels beside gemm 8192^3", mixed / alone - 1, "slowdown",
            f"alone {alone:.2f} ms")
    write_csv(out, "channel_occupancy.py", "validation data: sets no parameter",
              ["section", "name", "value", "unit", "note"], rows, started)


if __name__ == "__main__":
    main()
