"""Measures a trainsim kernel table on one NVIDIA GPU (platforms/README.md, "Kernel tables").

    python3 bench/device/kernel_table.py platforms/kernels/h200.yaml [--smoke] [--budget-s S]

For every kernel trainsim prices, times on a grid of shapes, as the operations of gpt.py run
them (bf16, PyTorch eager, flash attention forced):
  * GEMMs of a linear layer: forward y = F.linear(x, W, b), input gradient dy @ W, weight
    gradient dy^T @ x (with the bias gradient), over tokens x widths covering tensor
    parallelism 1-8, hidden 1k-32k and micro-batch x sequence 512-32k;
  * batched GEMMs of attention without flash (Q K^T and P V) and its softmax;
  * flash attention forward and backward, causal or not, over (batch x heads, sequence, head
    dim), and SDPA with PyTorch's default backend (cuDNN on Hopper), causal;
  * memory-bound operations (layer norm, GeLU, dropout + residual, add, cross-entropy,
    embedding) against their shape;
  * the optimizer as gpt.Trainer runs it (fp32 += bf16 gradient accumulation, clip_grad_norm_,
    fused and foreach AdamW, fp16's unscale, master-to-bf16 copy, zeroing) over GPT-shaped
    parameter sets;
  * Llama blocks' memory-bound kernels: RMSNorm, SwiGLU, the rotary embedding (eager);
  * FP8 GEMMs as Transformer Engine runs them (torch._scaled_mm: E4M3 forward, E5M2 x E4M3
    backward), and with DeepSeek-V3's 1 x 128 / 128 x 128 block scaling (section fp8_block);
  * time outside kernels: the GPU's gap between kernels of a CUDA graph, PyTorch's CPU time
    per eager operation, and the CPU time of a tiny GPT's layer (forward, backward), microbatch
    and iteration, where the GPU is idle most of the time.
Kernel times are pure GPU time: each point captures r calls in a CUDA graph (r chosen so that a
replay lasts about 4 ms), replays it 5 times after warm-ups and keeps the median / r; NVML's SM
clock, read every 2 ms while each point is timed, is summarised in a comment above each table's
times (the GPU's power limit holds its clock below the boost clock under sustained load:
docs/validation/power.md; --cool-s S idles S seconds before each point's replays, so that they
run at the boost clock, where without it points timed back to back run partly at the limit).
The optimizer's steps are timed eagerly with CUDA events (as a framework runs them: their CPU time
between the kernels is part of their cost). Points too large for the memory used here (an
operand over 2^29 elements) or the time budget are written as null: trainsim falls back to its
roofline model there. Each section (software, GEMMs, attention, memory-bound, optimizer) runs
in a process of its own, with its share of --budget-s. Prints progress on stderr; --smoke
measures two points per table. --sections picks sections; with --append their tables are
added to an existing table file (the others and its software figures kept), e.g.
    python3 bench/device/kernel_table.py platforms/kernels/h200.yaml --sections llama --append
"""
import argparse
import datetime
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

import gpt
from gpu_sampler import Nvml
from cuda_timing import time_ms

TOKENS = [512, 1024, 2048, 4096, 8192, 16384, 32768]
WIDTHS = [128, 256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576,
          32768, 49152, 65536, 131072]
MAX_ELEMS = 1 << 29  # one operand: 1 GiB of bf16
CE_MAX_ELEMS = 1 << 31  # the logits of cross-entropy: a GPT's vocabulary x 16k+ tokens (4 GiB)
dev = torch.device("cuda")
bf16 = torch.bfloat16
NVML = None  # the SM clock sampler of a measuring process (gpu_sampler.Nvml), where NVML loads
COOL_S = 0.0  # --cool-s: idle seconds before each point's timed replays
STREAM = None  # the side stream every measurement runs on (CUDA graphs cannot capture the
# default stream, and autograd runs a backward on its forward's stream)


class Budget:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds
        self.skipped = 0
        self.failed = 0

    def left(self):
        return self.end - time.monotonic()


def median_graph_s(fn, target_s=0.004, replays=5):
    """GPU seconds of one call of fn: r calls captured in a CUDA graph, median replay / r."""
    for _ in range(3):  # on the side stream STREAM, where the graph is captured
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    fn()
    b.record()
    torch.cuda.synchronize()
    est = max(a.elapsed_time(b) * 1e-3, 1e-6)
    r = int(min(200, max(1, round(target_s / est))))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=torch.cuda.current_stream()):
        for _ in range(r):
            fn()
    g.replay()
    torch.cuda.synchronize()
    if COOL_S > 0:  # the replays (about 20 ms) then run before the power limit answers
        time.sleep(COOL_S)
    times = []
    for _ in range(replays):
        a.record()
        g.replay()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e-3 / r)
    del g
    return statistics.median(times)


def median_eager_s(fn, reps=10):
    return time_ms(fn, warmup=3, reps=reps) * 1e-3


class Table:
    """A grid of shapes (first axis slowest) and the time at each, None where not measured."""

    def __init__(self, name, what, axes):
        self.name, self.what, self.axes = name, what, axes
        self.times = {}
        self.clocks = {}  # the mean SM clock (MHz) while each point was timed

    def points(self, smoke):
        pts = [()]
        for _, values in self.axes:
            pts = [p + (v,) for p in pts for v in values]
        return pts[:: max(1, len(pts) // 2)][:2] if smoke else pts

    def values(self):
        pts = [()]
        for _, values in self.axes:
            pts = [p + (v,) for p in pts for v in values]
        return [self.times.get(p) for p in pts]


def measure(table, make, budget, smoke, eager=False):
    """make(*point) returns a callable to time, or None when the point is out of range."""
    t0 = time.monotonic()
    n = failed = 0
    for p in table.points(smoke):
        if budget.left() <= 0:
            budget.skipped += 1
            continue
        fn = None
        try:
            with torch.cuda.stream(STREAM):
                fn = make(*p)
                if fn is not None:
                    t0 = time.perf_counter()
                    table.times[p] = median_eager_s(fn) if eager else median_graph_s(fn)
                    mhz, _, samples = NVML.window(t0, time.perf_counter()) if NVML else (0, 0, 0)
                    if samples:
                        table.clocks[p] = mhz
                    n += 1
        except Exception as e:  # noqa: BLE001 - a point that fails stays null, and is counted
            failed += 1
            if failed == 1:
                print(f"kernel_table: {table.name} at {p}: {type(e).__name__}: {e}",
                      file=sys.stderr, flush=True)
        fn = None
        torch.cuda.empty_cache()
    print(f"kernel_table: {table.name}: {n} points, {failed} failed, in "
          f"{time.monotonic() - t0:.0f} s; {budget.left():.0f} s of its budget left",
          file=sys.stderr, flush=True)
    budget.failed += failed
    return table


SPECS = []  # (section, table, make, budget weight, eager), in the order measured
SECTION = None  # the section being registered


def spec(table, make, weight, eager=False):
    SPECS.append((SECTION, table, make, weight, eager))


def rand(*shape, dtype=bf16, grad=False):
    return torch.randn(*shape, device=dev, dtype=dtype).requires_grad_(grad)


def fits(*shapes):
    return all(math.prod(s) <= MAX_ELEMS for s in shapes)


def backward(out, inputs):
    dout = torch.randn_like(out)
    return lambda: torch.autograd.grad(out, inputs, dout, retain_graph=True)


# ---- GEMMs ---------------------------------------------------------------------------------
def gemm_tables():
    flop_cap = 1 << 46
    fwd = Table("gemm_fwd", "y[m,n] = x[m,k] W[n,k]^T + b (F.linear forward)",
                [("m", TOKENS), ("n", WIDTHS), ("k", WIDTHS)])

    def make_fwd(m, n, k):
        if not fits((m, k), (n, k), (m, n)) or 2 * m * n * k > flop_cap:
            return None
        x, w, b = rand(m, k), rand(n, k), rand(n)
        return lambda: F.linear(x, w, b)

    dgrad = Table("gemm_dgrad", "dx[m,n] = dy[m,k] W[k,n] (F.linear input gradient)",
                  [("m", TOKENS), ("n", WIDTHS), ("k", WIDTHS)])

    def make_dgrad(m, n, k):
        if not fits((m, k), (k, n), (m, n)) or 2 * m * n * k > flop_cap:
            return None
        dy, w = rand(m, k), rand(k, n)
        return lambda: torch.mm(dy, w)

    wgrad = Table("gemm_wgrad",
                  "dW[n,m] = dy[k,n]^T x[k,m], db = sum_k dy (F.linear weight gradient)",
                  [("m", WIDTHS), ("n", WIDTHS), ("k", TOKENS)])

    def make_wgrad(m, n, k):
        if not fits((k, n), (k, m), (m, n)) or 2 * m * n * k > flop_cap:
            return None
        dy, x = rand(k, n), rand(k, m)
        return lambda: (torch.mm(dy.t(), x), dy.sum(0))

    spec(fwd, make_fwd, 50)
    spec(dgrad, make_dgrad, 50)
    spec(wgrad, make_wgrad, 50)


# ---- attention -------------------------------------------------------------------------------
def attention_tables():
    bh_axis = [4, 8, 16, 32, 64, 128, 256]
    seq_axis = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
    d_axis = [64, 80, 128]
    for causal in (True, False):
        suffix = "_causal" if causal else ""
        for direction in ("fwd", "bwd"):
            t = Table(f"flash_{direction}{suffix}",
                      f"flash attention {'backward' if direction == 'bwd' else 'forward'}"
                      f"{', causal' if causal else ''} (SDPA, flash backend), "
                      "q k v of (1, batch x heads, seq, head_dim)",
                      [("batch_heads", bh_axis), ("seq", seq_axis), ("head_dim", d_axis)])

            def make(bh, s, d, causal=causal, direction=direction):
                if bh * s * d > (1 << 28) or 4 * bh * s * s * d > (1 << 47):
                    return None
                q, k, v = (rand(1, bh, s, d, grad=direction == "bwd") for _ in range(3))

                def fwd():
                    with gpt.sdpa_kernel(gpt.SDPBackend.FLASH_ATTENTION):
                        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

                if direction == "fwd":
                    return fwd
                return backward(fwd(), (q, k, v))

            spec(t, make, (30 if direction == "bwd" else 12) if causal else 8)
    b_axis = [4, 16, 64, 256]
    s_axis = [256, 512, 1024, 2048, 4096, 8192]
    qk = Table("bgemm_qk", "S[b,s,s] = Q[b,s,d] K[b,s,d]^T (torch.bmm, attention without flash)",
               [("batch", b_axis), ("seq", s_axis), ("head_dim", [64, 128])])

    def make_qk(b, s, d):
        if b * s * s > (1 << 30):
            return None
        q, k = rand(b, s, d), rand(b, s, d)
        return lambda: torch.bmm(q, k.transpose(1, 2))

    av = Table("bgemm_av", "O[b,s,d] = P[b,s,s] V[b,s,d] (torch.bmm, attention without flash)",
               [("batch", b_axis), ("seq", s_axis), ("head_dim", [64, 128])])

    def make_av(b, s, d):
        if b * s * s > (1 << 30):
            return None
        p, v = rand(b, s, s), rand(b, s, d)
        return lambda: torch.bmm(p, v)

    spec(qk, make_qk, 5)
    spec(av, make_av, 5)
    rows_axis = [1024, 4096, 16384, 65536, 262144, 1048576]
    cols_axis = [256, 512, 1024, 2048, 4096, 8192]
    for direction in ("fwd", "bwd"):
        t = Table(f"softmax_{direction}", f"softmax over the last dim, bf16 ({direction})",
                  [("rows", rows_axis), ("cols", cols_axis)])

        def make(r, c, direction=direction):
            if r * c > (1 << 30):
                return None
            x = rand(r, c, grad=direction == "bwd")
            if direction == "fwd":
                return lambda: torch.softmax(x, -1)
            return backward(torch.softmax(x, -1), (x,))

        spec(t, make, 5)


# ---- memory-bound operations -------------------------------------------------------------
ROWS = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
COLS = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
ELEMS = [1 << e for e in range(10, 31, 2)]


def memory_tables():
    for direction in ("fwd", "bwd"):
        t = Table(f"layer_norm_{direction}", f"F.layer_norm over the last dim, bf16 ({direction})",
                  [("rows", ROWS), ("cols", COLS)])

        def make(r, c, direction=direction):
            if r * c > MAX_ELEMS:
                return None
            g = direction == "bwd"
            x, w, b = rand(r, c, grad=g), rand(c, grad=g), rand(c, grad=g)
            if not g:
                return lambda: F.layer_norm(x, (c,), w, b)
            return backward(F.layer_norm(x, (c,), w, b), (x, w, b))

        spec(t, make, 5)
    unary = {
        "gelu": ("GeLU (tanh)", lambda y, r: gpt.gelu(y)),
        "dropout_add": ("residual + dropout(y, 0.1)", gpt.dropout_add),
        "add": ("a + b, bf16 (the sum of two gradients where the residual stream forks)",
                lambda y, r: y + r),
    }
    for name, (what, op) in unary.items():
        for direction in ("fwd", "bwd"):
            if name == "add" and direction == "bwd":
                continue
            t = Table(f"{name}_{direction}", f"{what} ({direction})", [("elements", ELEMS)])

            def make(n, op=op, direction=direction):
                if n > MAX_ELEMS:
                    return None
                g = direction == "bwd"
                y, r = rand(n, grad=g), rand(n, grad=g)
                if not g:
                    return lambda: op(y, r)
                return backward(op(y, r), (y, r) if name == "dropout_add" else (y,))

            spec(t, make, 4)
    vocab_axis = [8192, 16384, 32768, 65536, 131072, 262144]
    for direction in ("fwd", "bwd"):
        t = Table(f"cross_entropy_{direction}",
                  f"F.cross_entropy(logits.float(), targets) on bf16 logits ({direction})",
                  [("rows", ROWS), ("vocab", vocab_axis)])

        def make(r, v, direction=direction):
            if r * v > CE_MAX_ELEMS:
                return None
            g = direction == "bwd"
            x, tgt = rand(r, v, grad=g), torch.randint(0, v, (r,), device=dev)
            if not g:
                return lambda: gpt.cross_entropy(x, tgt)
            return backward(gpt.cross_entropy(x, tgt), (x,))

        spec(t, make, 5)
    for direction in ("fwd", "bwd"):
        t = Table(f"embedding_{direction}",
                  f"dropout(wte[idx] + wpe[pos], 0.1), vocabulary {gpt.VOCAB} ({direction})",
                  [("tokens", ROWS), ("hidden", COLS)])

        def make(r, h, direction=direction):
            if gpt.VOCAB * h > MAX_ELEMS:
                return None
            g = direction == "bwd"
            wte, wpe = rand(gpt.VOCAB, h, grad=g), rand(r, h, grad=g)
            idx, pos = torch.randint(0, gpt.VOCAB, (r,), device=dev), torch.arange(r, device=dev)

            def fwd():
                return F.dropout(F.embedding(idx, wte) + F.embedding(pos, wpe), 0.1, True)

            return fwd if not g else backward(fwd(), (wte, wpe))

        spec(t, make, 5)
    t = Table("grad_accum", "main_grad (fp32) += grad (bf16), one tensor", [("elements", ELEMS)])

    def make_accum(n):
        main, grad = rand(n, dtype=torch.float32), rand(n)
        return lambda: main.add_(grad)

    spec(t, make_accum, 4)


# ---- Llama blocks: RMSNorm, SwiGLU, rotary embedding ------------------------------------------
def llama_tables():
    for direction in ("fwd", "bwd"):
        t = Table(f"rms_norm_{direction}", f"F.rms_norm over the last dim, bf16 ({direction})",
                  [("rows", ROWS), ("cols", COLS)])

        def make(r, c, direction=direction):
            if r * c > MAX_ELEMS:
                return None
            g = direction == "bwd"
            x, w = rand(r, c, grad=g), rand(c, grad=g)
            if not g:
                return lambda: F.rms_norm(x, (c,), w)
            return backward(F.rms_norm(x, (c,), w), (x, w))

        spec(t, make, 5)
    for direction in ("fwd", "bwd"):
        t = Table(f"swiglu_{direction}",
                  f"F.silu(gate) * up, gate and up the halves of one bf16 tensor ({direction}; "
                  "elements of the output)", [("elements", ELEMS)])

        def make(n, direction=direction):
            if 2 * n > MAX_ELEMS:
                return None
            g = direction == "bwd"
            y = rand(2, n, grad=g)

            def fwd():
                return F.silu(y[0]) * y[1]

            return fwd if not g else backward(fwd(), (y,))

        spec(t, make, 4)
    for direction in ("fwd", "bwd"):
        t = Table(f"rope_{direction}",
                  f"x cos + rotate_half(x) sin on (tokens, 8 heads, 128), eager ({direction}; "
                  "elements of x)", [("elements", ELEMS)])

        def make(n, direction=direction):
            if n < 1024 or n > MAX_ELEMS:
                return None
            g = direction == "bwd"
            x = rand(n // 1024, 8, 128, grad=g)
            cos, sin = rand(n // 1024, 1, 128), rand(n // 1024, 1, 128)

            def fwd():
                x1, x2 = x[..., :64], x[..., 64:]
                return x * cos + torch.cat((-x2, x1), dim=-1) * sin

            return fwd if not g else backward(fwd(), (x,))

        spec(t, make, 4)


# ---- torchtitan's eager RMSNorm and complex rotary embedding ---------------------------------
def titan_tables():
    """The Llama block's norm and rotary embedding as torchtitan wrote them at 9dec370 (2024-12,
    its H100 benchmarks' commit; models/norms.py RMSNorm, models/llama/model.py
    apply_rotary_emb; bench/device/op_sac.py keeps a copy): the norm in fp32 eager operations
    (x.float(), pow, mean, + eps, rsqrt, multiply, type_as, times the weight), the rotation as
    a complex multiplication of the fp32 values by the position's phase (view_as_complex, then
    view_as_real and type_as)."""
    for direction in ("fwd", "bwd"):
        t = Table(f"rms_norm_fp32_{direction}",
                  f"torchtitan's RMSNorm: eager fp32 ops over the last dim, bf16 in and out "
                  f"({direction})", [("rows", ROWS), ("cols", COLS)])

        def make(r, c, direction=direction):
            if r * c > MAX_ELEMS // 2:  # its fp32 temporaries: 4 bytes a value, several live
                return None
            g = direction == "bwd"
            x, w = rand(r, c, grad=g), rand(c, grad=g)

            def fwd():
                y = x.float()
                return (y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-5)).type_as(x) * w

            return fwd if not g else backward(fwd(), (x, w))

        spec(t, make, 5)
    for direction in ("fwd", "bwd"):
        t = Table(f"rope_complex_{direction}",
                  f"view_as_real(view_as_complex(x.float()) * phase).type_as(x) on (tokens, 8 "
                  f"heads, 128), eager ({direction}; elements of x)", [("elements", ELEMS)])

        def make(n, direction=direction):
            if n < 1024 or n > MAX_ELEMS // 2:
                return None
            g = direction == "bwd"
            x = rand(n // 1024, 8, 128, grad=g)
            ang = torch.rand(n // 1024, 1, 64, device=dev)
            phase = torch.polar(torch.ones_like(ang), ang)

            def fwd():
                xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
                return torch.view_as_real(xc * phase).flatten(-2).type_as(x)

            return fwd if not g else backward(fwd(), (x,))

        spec(t, make, 4)


def split_mlp_tables():
    """SwiGLU's backward where gate and up are two tensors (two linears: Hugging Face's gate_proj
    and up_proj, torchtitan's w1 and w3), not two halves of one (llama_tables' swiglu_bwd, whose
    gradient is assembled into the fused tensor)."""
    t = Table("swiglu_split_bwd", "F.silu(gate) * up, gate and up two bf16 tensors (bwd; elements "
              "of the output)", [("elements", ELEMS)])

    def make_split(n):
        if 2 * n > MAX_ELEMS:
            return None
        gate, up = rand(n, grad=True), rand(n, grad=True)
        return backward(F.silu(gate) * up, (gate, up))

    spec(t, make_split, 4)


# ---- FP8 GEMMs ----------------------------------------------------------------------------
FP8_DIMS = [512, 1024, 2048, 4096, 8192, 16384, 32768]


def fp8_tables():
    """Transformer Engine's FP8 GEMMs on Hopper (cuBLASLt through torch._scaled_mm, per-tensor
    scales, bf16 output): the forward as TE runs it, E4M3 x E4M3 with fast accumulation; the
    backward's input and weight gradients, E5M2 gradient x E4M3 (the hybrid recipe) with split
    accumulation, as TE's dgrad and wgrad GEMMs. Both operands are laid out as cuBLASLt wants
    them (TE keeps transposed FP8 copies for that), so one grid over (m, n, k) serves every
    GEMM of a pass."""
    e4m3, e5m2 = torch.float8_e4m3fn, torch.float8_e5m2
    for name, a_dtype, fast, what in (
            ("gemm_fp8_fwd", e4m3, True, "E4M3 x E4M3, fast accumulation (forward)"),
            ("gemm_fp8_bwd", e5m2, False, "E5M2 x E4M3, split accumulation (backward)")):
        t = Table(name, f"C[m,n] = A[m,k] B[k,n], {what}, bf16 out (torch._scaled_mm)",
                  [("m", FP8_DIMS), ("n", FP8_DIMS), ("k", FP8_DIMS)])

        def make(m, n, k, a_dtype=a_dtype, fast=fast):
            if not fits((m, k), (n, k), (m, n)) or 2 * m * n * k > 1 << 46:
                return None
            a = rand(m, k).to(a_dtype)
            b = rand(n, k).to(e4m3).t()  # column-major (k, n), as cuBLASLt's FP8 GEMM needs
            one = torch.ones((), device=dev, dtype=torch.float32)
            return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=bf16,
                                            use_fast_accum=fast)

        spec(t, make, 10)


def fp8_block_tables():
    """FP8 GEMMs with DeepSeek-V3's fine-grained scaling ([DSV3] 3.3.1; Transformer Engine's
    Float8BlockScaling, Megatron-Core's --fp8-recipe blockwise): activations and gradients
    scaled per 1 x 128 tile, weights per 128 x 128 block, E4M3 everywhere, partial sums
    promoted to fp32 every 128 of k (cuBLASLt's VEC128 and BLK128x128 scale modes through
    torch._scaled_mm, which refuses fast accumulation with them). The forward and the input
    gradient are tile x block; the weight gradient multiplies two activation-like operands,
    tile x tile."""
    e4m3 = torch.float8_e4m3fn
    for name, b_blocks, what in (
            ("gemm_fp8_block_fwd", True, "A 1x128 tiles x B 128x128 blocks (forward, input "
                                         "gradient)"),
            ("gemm_fp8_block_wgrad", False, "A 1x128 tiles x B 1x128 tiles (weight gradient)")):
        t = Table(name, f"C[m,n] = A[m,k] B[k,n], E4M3, {what}, fp32 scales, bf16 out "
                  "(torch._scaled_mm)", [("m", FP8_DIMS), ("n", FP8_DIMS), ("k", FP8_DIMS)])

        def make(m, n, k, b_blocks=b_blocks, name=name):
            if not fits((m, k), (n, k), (m, n)) or 2 * m * n * k > 1 << 46:
                return None
            a = rand(m, k).to(e4m3)
            b = rand(n, k).to(e4m3).t()  # column-major (k, n)
            # 1 x 128 scales outer-dim-major, as cuBLASLt's VEC128 mode reads them
            sa = torch.rand(k // 128, m, device=dev, dtype=torch.float32).t()
            sb = (torch.rand(n // 128, k // 128, device=dev, dtype=torch.float32).t()
                  if b_blocks else torch.rand(k // 128, n, device=dev, dtype=torch.float32))
            legacy = lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=bf16,
                                              use_fast_accum=False)
            v2 = lambda: F.scaled_mm(  # PyTorch 2.10's API, the scale modes named
                a, b, sa, F.ScalingType.BlockWise1x128, sb,
                F.ScalingType.BlockWise128x128 if b_blocks else F.ScalingType.BlockWise1x128,
                output_dtype=bf16)
            for fn in (legacy, v2):  # the scale modes reach cuBLASLt through either API
                try:
                    fn()
                    return fn
                except (RuntimeError, AttributeError, TypeError) as e:
                    print(f"kernel_table: {name} {m}x{n}x{k}: {e}"[:300], file=sys.stderr)
            return None

        spec(t, make, 10)


def layer_shapes(h):
    return [(3 * h, h), (3 * h,), (h, h), (h,), (4 * h, h), (4 * h,), (h, 4 * h), (h,),
            (h,), (h,), (h,), (h,)]


def optimizer_tables():
    """The optimizer over `layers` GPT layers of width `hidden` (12 tensors each)."""
    axes = [("hidden", [512, 1024, 2048, 4096, 8192]), ("layers", [1, 2, 4, 8, 16, 32, 64])]
    ops = {
        "clip_grad_norm": "torch.nn.utils.clip_grad_norm_(fp32 masters, 1.0, foreach=True)",
        "adam_fused": "torch.optim.AdamW(fp32 masters, fused=True).step()",
        "adam_foreach": "torch.optim.AdamW(fp32 masters, foreach=True).step() (PyTorch's default)",
        "amp_unscale": "torch._amp_foreach_non_finite_check_and_unscale_(fp32 grads) (fp16 "
                       "loss scaling)",
        "master_copy": "torch._foreach_copy_(bf16 params, fp32 masters)",
        "zero_main_grad": "torch._foreach_zero_(fp32 main grads)",
    }
    for name, what in ops.items():
        t = Table(name, what + ", eager, CUDA-event span", axes)

        def make(h, layers, name=name):
            if layers * (12 * h * h + 13 * h) > (1 << 31):
                return None
            shapes = layer_shapes(h) * layers
            masters = [torch.randn(s, device=dev, dtype=torch.float32) for s in shapes]
            for m in masters:
                m.grad = torch.randn_like(m)
            if name == "clip_grad_norm":
                return lambda: torch.nn.utils.clip_grad_norm_(masters, 1.0, foreach=True)
            if name in ("adam_fused", "adam_foreach"):
                fused = name == "adam_fused"
                opt = torch.optim.AdamW(masters, lr=1e-4, fused=fused, foreach=not fused)
                return opt.step
            if name == "amp_unscale":
                found, inv = torch.zeros(1, device=dev), torch.full((1,), 1 / 65536, device=dev)
                grads = [m.grad for m in masters]
                return lambda: torch._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
            if name == "master_copy":
                params = [m.detach().to(bf16) for m in masters]
                return lambda: torch._foreach_copy_(params, masters)
            return lambda: torch._foreach_zero_([m.grad for m in masters])

        spec(t, make, 8, eager=True)


# ---- time outside kernels -----------------------------------------------------------------
def host_s(fn, reps=20, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def software(smoke):
    """CPU-side costs of gpt.py's training step, where the GPU waits on the host: the figures
    trainsim uses, and the measurements behind them."""
    res, details = {}, {}
    x = torch.zeros(1, device=dev)

    def chain():
        for _ in range(1000):
            x.add_(1)

    res["eager_op_us"] = 1e6 * host_s(chain, reps=5) / 1000
    with torch.cuda.stream(STREAM):
        res["graph_kernel_us"] = 1e6 * median_graph_s(lambda: x.add_(1), target_s=0.002)
    # A tiny GPT (h 256, 4 heads, seq 128, micro-batch 1): its kernels take a few us, so the
    # host sets the pace. T(L, m) = iteration + m (microbatch + L layer). The host's speed
    # drifts over seconds (two earlier runs measured 527 and 324 us for a layer's forward), so
    # the process keeps one core, the garbage collector stays off, and the four steps (and the
    # two forwards) are timed in turns, round after round: each difference is the median of its
    # rounds' differences, and its interquartile range is recorded beside it.
    h, heads, seq = 256, 4, 128
    rounds = 5 if smoke else 200
    models, steps, forwards = {}, {}, {}
    for layers in (1, 4):
        model = gpt.make_model(layers, h, heads, seq, False)
        trainer = gpt.Trainer(model)
        one = gpt.batches(1, 1, seq)
        models[layers] = (model, trainer)
        for m in (1, 4):
            data = gpt.batches(m, 1, seq)
            steps[(layers, m)] = lambda trainer=trainer, data=data: trainer.step(data)

        def forward(model=model, one=one):
            model(*one[0]).detach()

        def forward_only(model=model, one=one):
            with torch.no_grad():
                model(*one[0])

        forwards[layers] = forward
        details[f"forward_no_grad_{layers}_layers_us"] = 1e6 * host_s(forward_only, reps=5)
    samples = {k: [] for k in list(steps) + [("fwd", 1), ("fwd", 4)]}
    for fn in list(steps.values()) + list(forwards.values()):
        for _ in range(3):
            fn()
    gc.disable()
    try:
        for _ in range(rounds):
            for k, fn in steps.items():
                samples[k].append(host_s(fn, reps=1, warmup=0))
            for layers, fn in forwards.items():
                samples[("fwd", layers)].append(host_s(fn, reps=1, warmup=0))
    finally:
        gc.enable()

    def spread(values):
        q = statistics.quantiles(values, n=4)
        return statistics.median(values), q[2] - q[0]

    def combo(terms, div):
        """median and IQR over rounds of sum(w x T[k]) / div"""
        per_round = [1e6 * sum(w * samples[k][i] for k, w in terms) / div for i in range(rounds)]
        return spread(per_round)

    fwd, fwd_iqr = combo([(("fwd", 4), 1), (("fwd", 1), -1)], 3)
    layer, layer_iqr = combo([((4, 4), 1), ((1, 4), -1)], 12)
    micro, micro_iqr = combo([((1, 4), 1), ((1, 1), -1), ((4, 4), -0.25), ((1, 4), 0.25)], 3)
    iteration, it_iqr = combo([((1, 1), 4), ((1, 4), -1)], 3)
    res["cpu_layer_forward_us"] = fwd
    res["cpu_layer_backward_us"] = layer - fwd
    res["cpu_microbatch_us"] = micro
    res["cpu_iteration_us"] = iteration
    details["cpu_layer_forward_iqr_us"] = fwd_iqr
    details["cpu_layer_iqr_us"] = layer_iqr
    details["cpu_microbatch_iqr_us"] = micro_iqr
    details["cpu_iteration_iqr_us"] = it_iqr
    details["host_rounds"] = rounds
    details["cpu_layer_from_one_microbatch_us"] = combo([((4, 1), 1), ((1, 1), -1)], 3)[0]
    for (layers, m), v in sorted(samples.items(), key=str):
        details[f"tiny_step_{layers}_{m}_us"] = 1e6 * statistics.median(v)
    del models
    # Kernels of one block, forward and backward, as the profiler counts them.
    try:
        from torch.profiler import ProfilerActivity, profile

        blk = gpt.Block(h, heads).to(dev, bf16)
        xin = rand(1, seq, h, grad=True)
        for phase in ("forward", "backward"):
            y = blk(xin)
            dy = torch.randn_like(y)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                if phase == "forward":
                    blk(xin)
                else:
                    y.backward(dy)
                torch.cuda.synchronize()
            kernels = [e for e in prof.events() if e.device_type.name == "CUDA"]
            res[f"kernels_per_layer_{phase}"] = len(kernels)
    except Exception as e:  # noqa: BLE001 - the counts are informative, not required
        print(f"kernel_table: kernel count failed: {e}", file=sys.stderr)
    return res, details


# ---- output -----------------------------------------------------------------------------------
def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:  # noqa: BLE001
        return "unavailable"


def fmt(v):
    return "null" if v is None else f"{v * 1e6:.4g}"


def write(path, tables, soft, details, argv, started):
    smi = run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem,"
               "clocks.max.sm,power.limit,temperature.gpu", "--format=csv,noheader"])
    props = torch.cuda.get_device_properties(0)
    lines = [
        "# trainsim kernel table: kernel times measured on one GPU (platforms/README.md,",
        "# 'Kernel tables'). Generated; do not edit. Regenerate on the GPU with:",
        f"#   python3 bench/device/kernel_table.py {' '.join(argv)}",
        f"# device: {torch.cuda.get_device_name(0)}, {props.multi_processor_count} SMs, "
        f"{props.total_memory / 2**30:.1f} GiB",
        f"# nvidia-smi (name, driver, SM clock, memory clock, max SM clock, power limit, "
        f"temperature) at the end: {smi}",
        f"# torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN "
        f"{torch.backends.cudnn.version()}, Python {platform.python_version()}",
        f"# measured {started:%Y-%m-%d %H:%M} UTC, {time_taken(started):.0f} s",
        "# Times in microseconds of GPU time (CUDA graph replays, median of 5), null where not",
        "# measured; each table's values run over its axes with the first axis slowest.",
        "format: 1",
        f"device: {torch.cuda.get_device_name(0)}",
        f"framework: pytorch {torch.__version__} eager, bf16",
        "software:",
    ]
    for k, v in soft.items():
        lines.append(f"  {k}: {v:.4g}" if isinstance(v, float) else f"  {k}: {v}")
    lines.append("software_details:")
    for k, v in details.items():
        lines.append(f"  {k}: {v:.4g}" if isinstance(v, float) else f"  {k}: {v}")
    lines.append("tables:")
    lines += table_lines(tables)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def table_lines(tables):
    lines = []
    for t in tables:
        lines.append(f"  {t.name}:")
        lines.append(f"    what: \"{t.what}\"")
        lines.append("    axes:")
        for name, values in t.axes:
            lines.append(f"      {name}: [{', '.join(str(v) for v in values)}]")
        vals = [fmt(v) for v in t.values()]
        if t.clocks:  # a comment: the power limit's clock is not modelled yet (power.md)
            c = sorted(t.clocks.values())
            lines.append(f"    # SM clock while timed (NVML every 2 ms): median "
                         f"{statistics.median(c):.0f} MHz, {c[0]:.0f}-{c[-1]:.0f} MHz over "
                         f"{len(c)} points")
        lines.append("    time_us: [")
        for i in range(0, len(vals), 12):
            lines.append("      " + ", ".join(vals[i:i + 12]) + ("," if i + 12 < len(vals) else ""))
        lines.append("    ]")
    return lines


def append(path, tables, soft, argv, started, replace=False):
    """Adds tables measured now to an existing table file (its tables section is last), and the
    software figures their sections measure to its software map, with a header line that says
    how; the tables and software figures already there stay."""
    with open(path) as f:
        text = f.read()
    if replace:  # drop the tables and software figures about to be measured again
        lines, keep, skipping = text.split("\n"), [], False
        drop = {t.name for t in tables}
        for line in lines:
            name = line[2:].split(":")[0] if line.startswith("  ") and not line.startswith("   ") else None
            if name is not None:
                skipping = name in drop
                if name in soft:
                    continue
            if line.startswith("#") and " added " in line and any(n in line for n in drop):
                skipping = False
                keep.append(line.replace(" added ", " replaced later, first added "))
                continue
            if not skipping:
                keep.append(line)
        text = "\n".join(keep)
    if any(f"\n  {k}:" in text for k in soft):
        sys.exit(f"kernel_table: {path} already has some of {sorted(soft)}")
    if soft:
        at = text.index("software_details:")
        text = text[:at] + "".join(f"  {k}: {v:.4g}\n" for k, v in soft.items()) + text[at:]
    names = {t.name for t in tables}
    if any(f"\n  {n}:\n" in text for n in names):
        sys.exit(f"kernel_table: {path} already has some of {sorted(names)}")
    header_end = text.index("format: 1")
    note = (f"# {', '.join(sorted(names))} added {started:%Y-%m-%d %H:%M} UTC by:\n"
            f"#   python3 bench/device/kernel_table.py {' '.join(argv)}\n")
    text = text[:header_end] + note + text[header_end:].rstrip("\n") + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text + "\n".join(table_lines(tables)) + "\n")
    os.replace(tmp, path)


def time_taken(started):
    return (datetime.datetime.now(datetime.timezone.utc) - started).total_seconds()


def softmax_fp32_tables():
    """Softmax over the last dim of fp32 input, fp32 out: what attention without flash runs under
    autocast for bf16 scores (softmax is on autocast's fp32 list: the scores cast up first), whose
    per-byte rate differs from the bf16 softmax's at the same shape (PyTorch's warp softmax keeps
    a row in registers: at 2,048 columns the fp32 kernel moved its bytes 1.6x as fast as the
    bf16 table's point prices them; bench/device/h100_hf_head_copies.csv). Forward only: the
    backward, priced from the bf16 table by its bytes, matched the steps' kernels within 2%."""
    t = Table("softmax_fp32_fwd", "softmax over the last dim, fp32 in and out (fwd)",
              [("rows", [1024, 4096, 16384, 65536, 262144, 1048576]),
               ("cols", [256, 512, 1024, 2048, 4096, 8192])])

    def make(r, c):
        if r * c > (1 << 30):
            return None
        x = rand(r, c, dtype=torch.float32)
        return lambda: torch.softmax(x, -1)

    spec(t, make, 5)


def mask_tables():
    """The causal mask of attention without the masked-softmax fusion, as Megatron's
    FusedScaleMaskSoftmax.forward_torch_softmax applies it: scores.masked_fill(mask, -inf) with
    a broadcast bool [s, s] mask, and its backward (the gradient masked alike); (rows, cols)
    as the softmax's: batch x heads x s rows of s scores."""
    for direction in ("fwd", "bwd"):
        t = Table(f"attention_mask_{direction}",
                  f"scores.masked_fill(causal mask, -inf), bf16 ({direction})",
                  [("rows", [1024, 4096, 16384, 65536, 262144, 1048576]),
                   ("cols", [256, 512, 1024, 2048, 4096, 8192])])

        def make(r, c, direction=direction):
            if r < c or r * c > (1 << 30):
                return None
            x = rand(r // c, c, c, grad=direction == "bwd")
            mask = torch.ones(c, c, dtype=torch.bool, device=dev).triu_(1)
            if direction == "fwd":
                return lambda: x.masked_fill(mask, float("-inf"))
            return backward(x.masked_fill(mask, float("-inf")), (x,))

        spec(t, make, 5)


def sdpa_tables():
    """F.scaled_dot_product_attention with PyTorch's own choice of backend (none forced), as a
    plain PyTorch model calls it: on an H100 or H200 with PyTorch 2.5 and later, cuDNN's fused
    attention (bench/device/sdpa_backends.py records the choice), not the flash backend the
    flash_* tables force. q, k, v as a model's projection makes them: (1, seq, batch x heads,
    head_dim) viewed as (1, batch x heads, seq, head_dim). Causal, as trainsim's GPT layers."""
    bh_axis = [4, 8, 16, 32, 64, 128, 256]
    seq_axis = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
    d_axis = [64, 80, 128]
    for direction in ("fwd", "bwd"):
        t = Table(f"sdpa_{direction}_causal",
                  f"F.scaled_dot_product_attention {'backward' if direction == 'bwd' else 'forward'}"
                  ", causal, PyTorch's default backend, q k v of (1, batch x heads, seq, head_dim)"
                  " strided as (1, seq, batch x heads, head_dim)",
                  [("batch_heads", bh_axis), ("seq", seq_axis), ("head_dim", d_axis)])

        def make(bh, s, d, direction=direction):
            if bh * s * d > (1 << 28) or 4 * bh * s * s * d > (1 << 47):
                return None
            q, k, v = (rand(1, s, bh, d).transpose(1, 2).detach().requires_grad_(direction == "bwd")
                       for _ in range(3))

            def fwd():
                return F.scaled_dot_product_attention(q, k, v, is_causal=True)

            if direction == "fwd":
                return fwd
            return backward(fwd(), (q, k, v))

        spec(t, make, 30 if direction == "bwd" else 12)


def mla_tables():
    """Multi-head latent attention's core as a plain PyTorch model calls it (moe.py's MLA,
    torchtitan's DeepSeek attention): F.scaled_dot_product_attention with PyTorch's own choice
    of backend, causal, queries and keys of 192 (DeepSeek-V2/V3's 128 + 64 rotary: each built
    by torch.cat, so contiguous) and values of 128 (a slice of the key-value up-projection)."""
    bh_axis = [4, 8, 16, 32, 64, 128, 256]
    seq_axis = [256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
    for direction in ("fwd", "bwd"):
        t = Table(f"sdpa_mla_{direction}_causal",
                  f"F.scaled_dot_product_attention {'backward' if direction == 'bwd' else 'forward'}"
                  ", causal, PyTorch's default backend, q and k (1, batch x heads, seq, 192) "
                  "contiguous, v (1, batch x heads, seq, 128) sliced from (seq, heads, 256)",
                  [("batch_heads", bh_axis), ("seq", seq_axis)])

        def make(bh, s, direction=direction):
            if bh * s * 192 > (1 << 28) or 4 * bh * s * s * 192 > (1 << 47):
                return None
            g = direction == "bwd"
            q, k = (rand(1, bh, s, 192, grad=g) for _ in range(2))
            kv = rand(1, s, bh, 256)
            v = kv[..., 128:].transpose(1, 2).detach().requires_grad_(g)

            def fwd():
                return F.scaled_dot_product_attention(q, k, v, is_causal=True)

            if direction == "fwd":
                return fwd
            return backward(fwd(), (q, k, v))

        spec(t, make, 30 if direction == "bwd" else 12)


# ---- mixture of experts ----------------------------------------------------------------------
MOE_EXPERTS = [1, 4, 16, 64]
MOE_TOKENS = [16, 64, 256, 1024, 4096, 16384]  # tokens per expert
MOE_DIMS = [512, 1024, 2048, 4096, 8192, 16384]
MOE_ROWS = [1024, 4096, 16384, 65536, 262144]  # tokens x top-k
MOE_HIDDEN = [512, 1024, 2048, 4096, 8192]


def moe_tables():
    """moe.py's MoE layer (torchtitan's) kernel by kernel: torch._grouped_mm over E experts of
    m tokens each (forward, input gradient, weight gradient: the weight-gradient GEMM is ragged
    in its reduction), the router after its gate GEMM (fp32 softmax, top-k, normalisation,
    histc), the permutation (argsort, gather) and the unpermutation (fp32 weighting by the
    scores, scatter_add), forward and backward."""
    import moe

    def groups(e, m):
        return torch.arange(m, e * m + 1, m, device=dev, dtype=torch.int32)

    def too_big(e, m, n, k):
        return (not fits((e * m, k), (e * m, n), (e, n, k)) or 2 * e * m * n * k > 1 << 44)

    axes = [("experts", MOE_EXPERTS), ("tokens", MOE_TOKENS), ("n", MOE_DIMS), ("k", MOE_DIMS)]
    fwd = Table("grouped_mm_fwd", "y[E m, n] = x[E m, k] W[E, k, n]: torch._grouped_mm over E "
                "groups of m tokens (forward)", axes)

    def make_fwd(e, m, n, k):
        if too_big(e, m, n, k):
            return None
        x, w, offs = rand(e * m, k), rand(e, n, k).transpose(-2, -1), groups(e, m)
        return lambda: torch._grouped_mm(x, w, offs=offs)

    dgrad = Table("grouped_mm_dgrad", "dx[E m, n] = dy[E m, k] W[E, k, n] (input gradient: W "
                  "the forward's weight as stored)", axes)

    def make_dgrad(e, m, n, k):
        if too_big(e, m, n, k):
            return None
        dy, w, offs = rand(e * m, k), rand(e, k, n), groups(e, m)
        return lambda: torch._grouped_mm(dy, w, offs=offs)

    wgrad = Table("grouped_mm_wgrad", "dW[E, k, n] = x[E m, k]^T dy[E m, n], ragged in the "
                  "reduction (weight gradient)", axes)

    def make_wgrad(e, m, n, k):
        if too_big(e, m, n, k):
            return None
        x, dy, offs = rand(e * m, k), rand(e * m, n), groups(e, m)
        xt = x.t()
        return lambda: torch._grouped_mm(xt, dy, offs=offs)

    spec(fwd, make_fwd, 20)
    spec(dgrad, make_dgrad, 20)
    spec(wgrad, make_wgrad, 20)
    for direction in ("fwd", "bwd"):
        t = Table(f"moe_router_{direction}", "moe.route on the gate's bf16 logits: fp32 "
                  f"softmax, top-k, normalisation, histc ({direction})",
                  [("tokens", ROWS), ("experts", [8, 16, 32, 64, 128, 256]),
                   ("topk", [1, 2, 4, 8])])

        def make(tokens, e, k, direction=direction):
            if k > e:
                return None
            g = direction == "bwd"
            logits = rand(tokens, e, grad=g)
            if not g:
                return lambda: moe.route(logits, k, "softmax", None, True)
            return backward(moe.route(logits, k, "softmax", None, True)[1], (logits,))

        spec(t, make, 3)
    for part in ("permute", "unpermute"):
        for direction in ("fwd", "bwd"):
            t = Table(f"moe_{part}_{direction}",
                      f"moe.{part} of tokens x top-8 rows of `hidden` ({direction}: "
                      + ("argsort, gather" if part == "permute" else "fp32 weighting, scatter_add")
                      + (")" if direction == "fwd" else ", the backward" + (
                          ")" if part == "permute" else " to the rows and their scores)")),
                      [("rows", MOE_ROWS), ("hidden", MOE_HIDDEN)])

            def make(rows, h, part=part, direction=direction):
                if rows * h > MAX_ELEMS:
                    return None
                g = direction == "bwd"
                tokens = rows // 8
                idx = torch.randint(0, 64, (tokens, 8), device=dev)
                top = torch.rand(tokens, 8, device=dev)
                if part == "permute":
                    x = rand(tokens, h, grad=g)

                    def fwd():
                        return moe.permute(x, top, idx, 8)[0]
                    return fwd if not g else backward(fwd(), (x,))
                _, top_sorted, token = moe.permute(rand(tokens, h), top, idx, 8)
                routed, base = rand(rows, h, grad=g), rand(tokens, h)
                top_sorted = top_sorted.detach().requires_grad_(g)

                def fwd():
                    return moe.unpermute(routed, top_sorted, token, base)
                return fwd if not g else backward(fwd(), (routed, top_sorted))

            spec(t, make, 2)


def moe_software(smoke):
    """CPU time of moe.py's MoE layer where the GPU waits on the host (a tiny layer: h 256, 128
    tokens), with gpt.Trainer's hooks on its parameters (fp32 main_grad += grad, one per
    parameter tensor and microbatch) as the steps run them: forward and backward with grouped
    GEMM (8 experts, top-2), and per expert without it (Megatron-Core's SequentialMLP: 8
    against 32 experts, the difference per expert). The host's speed drifts over seconds, so
    the layers are timed in turns, round after round, each figure the median over rounds."""
    import moe

    rounds = 5 if smoke else 60
    calls = {}
    for e, grouped in ((8, True), (8, False), (32, False)):
        c = {"hidden": 256, "experts": e, "topk": 2, "moe_ffn": 128, "grouped": grouped}
        torch.manual_seed(0)
        with torch.device(dev):
            layer = moe.MoE(c).to(bf16)
        gpt.Trainer(layer)  # registers the main-grad hooks
        x = rand(1, 128, 256, grad=True)

        def fwd(layer=layer, x=x):
            return layer(x)[0]

        calls[(e, grouped, "fwd")] = fwd
        calls[(e, grouped, "step")] = lambda fwd=fwd: fwd().sum().backward()
    for fn in calls.values():
        for _ in range(3):
            fn()
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})  # one core: steadier host times
    samples = {k: [] for k in calls}
    gc.disable()
    try:
        for _ in range(rounds):
            for k, fn in calls.items():
                samples[k].append(host_s(fn, reps=1, warmup=0))
    finally:
        gc.enable()

    def med(terms, div=1):
        return 1e6 * statistics.median(
            sum(w * samples[k][i] for k, w in terms) / div for i in range(rounds))

    g, l8, l32 = (8, True), (8, False), (32, False)
    return {"cpu_moe_layer_forward_us": med([(g + ("fwd",), 1)]),
            "cpu_moe_layer_backward_us": med([(g + ("step",), 1), (g + ("fwd",), -1)]),
            "cpu_moe_expert_forward_us": med([(l32 + ("fwd",), 1), (l8 + ("fwd",), -1)], 24),
            "cpu_moe_expert_backward_us": med([(l32 + ("step",), 1), (l32 + ("fwd",), -1),
                                               (l8 + ("step",), -1), (l8 + ("fwd",), 1)], 24)}


SECTIONS = [("gemm", gemm_tables), ("attention", attention_tables), ("memory", memory_tables),
            ("optimizer", optimizer_tables), ("llama", llama_tables), ("fp8", fp8_tables),
            ("fp8_block", fp8_block_tables), ("mask", mask_tables), ("sdpa", sdpa_tables),
            ("moe", moe_tables), ("mla", mla_tables), ("titan", titan_tables),
            ("split_mlp", split_mlp_tables), ("softmax_fp32", softmax_fp32_tables)]
# Sections that also measure software figures (merged into the table's software map).
SECTION_SOFTWARE = {"moe": moe_software}


def child(args):
    """Measures one section's tables (or the software figures) into a JSON file. A capture
    that fails can leave CUDA's random generator unusable for the rest of the process, so each
    section runs in a process of its own."""
    global STREAM, NVML
    STREAM = torch.cuda.Stream()
    if args.one != "software":  # the host figures are timed on one core: no sampling thread
        try:
            NVML = Nvml()
        except (OSError, AssertionError) as e:
            print(f"kernel_table: no NVML, clocks not recorded ({e})", file=sys.stderr)
    torch.backends.cuda.matmul.allow_tf32 = False
    if args.one == "software":
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})  # one core: steadier host times
        soft, details = software(args.smoke)
        result = {"software": soft, "details": details}
    else:
        result = {}
        for _, table, make, weight, eager in (s for s in SPECS if s[0] == args.one):
            budget = Budget(args.budget_s * weight)
            measure(table, make, budget, args.smoke, eager)
            result[table.name] = {"times": [list(p) + [t] for p, t in table.times.items()],
                                  "clocks": [list(p) + [c] for p, c in table.clocks.items()],
                                  "skipped": budget.skipped, "failed": budget.failed}
        if NVML:  # a section's host figures are timed without the sampling thread
            NVML.close()
        if args.one in SECTION_SOFTWARE:
            result["software"] = SECTION_SOFTWARE[args.one](args.smoke)
    with open(args.json, "w") as f:
        json.dump(result, f)


def main():
    global SECTION, COOL_S
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true", help="two points per table")
    ap.add_argument("--budget-s", type=float, default=330, help="seconds for all the tables")
    ap.add_argument("--sections", help="comma-separated sections to measure (default: all; "
                    + ", ".join(n for n, _ in SECTIONS) + ")")
    ap.add_argument("--append", action="store_true",
                    help="add the measured tables to the existing table file OUT")
    ap.add_argument("--replace", action="store_true",
                    help="with --append: measure the sections' tables again, replacing them")
    ap.add_argument("--cool-s", type=float, default=0,
                    help="idle seconds before each point's timed replays of a CUDA graph, so "
                    "that they run at the boost clock: the 700 W limit's controller takes 46-59 "
                    "ms to slow a GEMM from idle on an H100 (docs/validation/power.md); 0.1 "
                    "adds about 8 minutes to the GEMM sections (raise --budget-s)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--json", help=argparse.SUPPRESS)
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    COOL_S = args.cool_s
    for SECTION, register in SECTIONS:
        register()
    chosen = [n for n, _ in SECTIONS] if not args.sections else args.sections.split(",")
    unknown = [n for n in chosen if n not in dict(SECTIONS)]
    if unknown:
        ap.error(f"unknown sections {unknown}")
    if args.append and not os.path.exists(args.out):
        ap.error(f"--append: {args.out} does not exist")
    total_weight = sum(s[3] for s in SPECS if s[0] in chosen)
    if args.one:  # --budget-s is then seconds per unit of weight
        return child(args)
    started = datetime.datetime.now(datetime.timezone.utc)
    tmp = args.out + ".part.json"

    def one(name, budget_s):
        cmd = [sys.executable, os.path.abspath(__file__), args.out, "--one", name, "--json", tmp,
               "--budget-s", f"{args.budget_s / total_weight:.4f}"]
        cmd += ["--smoke"] if args.smoke else []
        cmd += ["--cool-s", str(args.cool_s)] if args.cool_s > 0 else []
        if os.path.exists(tmp):
            os.remove(tmp)
        rc = subprocess.run(cmd, timeout=budget_s + 120).returncode
        if rc != 0 or not os.path.exists(tmp):
            print(f"kernel_table: {name}: the measuring process failed ({rc})", file=sys.stderr)
            return None
        with open(tmp) as f:
            return json.load(f)

    got = {"software": {}, "details": {}} if args.append else one("software", 60) or {
        "software": {}, "details": {}}
    soft, details = got["software"], got["details"]
    added_soft = {}
    skipped = failed = 0
    for section in chosen:
        weight = sum(s[3] for s in SPECS if s[0] == section)
        got = one(section, args.budget_s * weight / total_weight) or {}
        added_soft.update(got.get("software", {}))
        for _, table, _, _, _ in (s for s in SPECS if s[0] == section):
            res = got.get(table.name, {"times": [], "skipped": 0, "failed": 0})
            for row in res["times"]:
                table.times[tuple(row[:-1])] = row[-1]
            for row in res.get("clocks", []):
                table.clocks[tuple(row[:-1])] = row[-1]
            skipped += res["skipped"]
            failed += res["failed"]
    if os.path.exists(tmp):
        os.remove(tmp)
    if skipped:
        print(f"kernel_table: the budget ran out: {skipped} points not measured", file=sys.stderr)
    tables = [s[1] for s in SPECS if s[0] in chosen]
    if args.append:
        append(args.out, tables, added_soft, sys.argv[1:], started, args.replace)
        print(f"kernel_table: added {len(tables)} tables to {args.out} ({skipped} points skipped "
              f"for time, {failed} failed)", file=sys.stderr)
        return
    details["points_skipped_for_time"] = skipped
    details["points_failed"] = failed
    write(args.out, tables, {**soft, **added_soft}, details, sys.argv[1:], started)
    print(f"kernel_table: wrote {args.out} in {time_taken(started):.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
