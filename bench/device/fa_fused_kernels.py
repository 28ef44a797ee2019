"""The FlashAttention repository's own fused kernels, as its GPT training ran them, on one GPU.

    python3 bench/device/fa_fused_kernels.py OUT.csv SRC

The 8 x A100 throughputs of docs/validation/a100.md were published with Dao-AILab/flash-attention
4a6eaa9f (training/README.md, 2022-11-29), whose GPT configs (training/configs/experiment/pile/
gpt3s-flash.yaml and the larger ones built on it) switch on three kernels of its own beside
FlashAttention: fused_dropout_add_ln (csrc/layer_norm, from Apex's FastLayerNorm: dropout of the
branch, the residual add and LayerNorm in one kernel; the residual kept in fp32 by
flash_attn/models/gpt.py), fused_dense_gelu_dense (csrc/fused_dense_lib: cuBLASLt GEMMs with the
bias and GeLU in the first GEMM's epilogue, its pre-activation saved as the epilogue's auxiliary
output, and the GeLU's gradient in the second GEMM's data-gradient epilogue) and the loss
CrossEntropyLossApex (csrc/xentropy, Apex's softmax cross-entropy, in-place backward).

SRC holds csrc/layer_norm, csrc/fused_dense_lib and csrc/xentropy of that commit (`git archive
4a6eaa9f csrc/layer_norm csrc/fused_dense_lib csrc/xentropy`). They are compiled here for this GPU
with torch.utils.cpp_extension, the layer norm's launchers trimmed to the GPT-3 widths (768 to
2,560) and the types the training ran (fp32 weights under autocast, bf16 input and output, fp32
residual), with PyTorch's F.layer_norm at the same shapes beside them. Each kernel is timed
alone (CUDA events, median of 20 after 5 warm-ups) at the rows of 4 to 32 sequences of 2,048
tokens; the fused MLP beside the same GEMMs through torch.mm (its epilogues' cost is the
difference); every row carries the bytes the kernel must move (its inputs and outputs once)
and the rate that gives.
"""
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile

import torch

from cuda_timing import time_ms, write_csv

WIDTHS = [768, 1024, 1536, 2048, 2560]
ROWS = [8192, 16384, 32768, 65536]
VOCAB = 50264  # GPT-2's 50,257 padded to a multiple of 8 (pad_vocab_size_multiple: 8)
DROPOUT = 0.1  # resid_pdrop, GPT2Config's default
# (weight, input, residual, output, compute) as the training ran them
LN_TYPES = "fp32, bf16, fp32, bf16, fp32"


def trimmed_layer_norm(src, build):
    """csrc/layer_norm with only the launchers this run needs (compile time)."""
    shutil.copytree(os.path.join(src, "csrc", "layer_norm"), build)
    keep = re.compile(r"REGISTER_(FWD|BWD)_LAUNCHER\(\s*(\d+),\s*([^;]*)\);")
    for name in ("ln_fwd_cuda_kernel.cu", "ln_bwd_semi_cuda_kernel.cu"):
        path = os.path.join(build, name)
        with open(path) as f:
            lines = f.readlines()
        out = []
        for line in lines:
            m = keep.match(line.strip())
            if m and not (int(m.group(2)) in WIDTHS and m.group(3).startswith(LN_TYPES)):
                continue
            out.append(line)
        with open(path, "w") as f:
            f.writelines(out)
    return [os.path.join(build, n) for n in
            ("ln_api.cpp", "ln_fwd_cuda_kernel.cu", "ln_bwd_semi_cuda_kernel.cu")]


NVCC = ["-O3", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
        "-U__CUDA_NO_BFLOAT16_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
        "-U__CUDA_NO_BFLOAT162_OPERATORS__", "-U__CUDA_NO_BFLOAT162_CONVERSIONS__",
        "--expt-relaxed-constexpr", "--expt-extended-lambda", "--use_fast_math"]


def build_all(src, work):
    """The three extensions, built at once in separate processes; returns the modules that
    built (a failed build's log is printed and its kernels left out)."""
    exts = {
        "dropout_layer_norm": lambda d: trimmed_layer_norm(src, os.path.join(d, "src")),
        "fused_dense_lib": lambda d: [os.path.join(src, "csrc", "fused_dense_lib", n)
                                      for n in ("fused_dense.cpp", "fused_dense_cuda.cu")],
        "xentropy_cuda_lib": lambda d: [os.path.join(src, "csrc", "xentropy", n)
                                        for n in ("interface.cpp", "xentropy_kernel.cu")],
    }
    procs = {}
    for name, sources in exts.items():
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        srcs = sources(d)
        code = ("import torch.utils.cpp_extension as c; c.load(name=%r, sources=%r, "
                "build_directory=%r, extra_cflags=['-O3'], extra_cuda_cflags=%r, "
                "extra_include_paths=[%r], verbose=False)"
                % (name, srcs, d, NVCC, os.path.dirname(srcs[0])))
        procs[name] = (subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True), d, srcs)
    mods = {}
    import torch.utils.cpp_extension as cpp
    for name, (p, d, srcs) in procs.items():
        log = p.communicate()[0]
        if p.returncode != 0:
            print(f"fa_fused_kernels: {name} did not build:\n{log[-4000:]}", file=sys.stderr)
            continue
        mods[name] = cpp.load(name=name, sources=srcs, build_directory=d, extra_cflags=["-O3"],
                              extra_cuda_cflags=NVCC, extra_include_paths=[os.path.dirname(srcs[0])])
    return mods


def layer_norm_rows(ln):
    rows = []
    for r in ROWS:
        for h in WIDTHS:
            x0 = torch.randn(r, h, device="cuda", dtype=torch.bfloat16)
            x1 = torch.randn(r, h, device="cuda", dtype=torch.float32)
            gamma = torch.ones(h, device="cuda")
            beta = torch.zeros(h, device="cuda")
            out = ln.dropout_add_ln_fwd(x0, x1, gamma, beta, None, DROPOUT, 1e-5, None, True)
            z, x, dmask, mu, rsigma = out
            # x0 (2) and x1 (4) read; z (2), x (4) and the mask (1) written
            t = time_ms(lambda: ln.dropout_add_ln_fwd(x0, x1, gamma, beta, None, DROPOUT, 1e-5,
                                                      None, True))
            rows.append(("dropout_add_ln_fwd", r, h, "", f"{1e3 * t:.2f}", 13 * r * h))
            dz = torch.randn(r, h, device="cuda", dtype=torch.bfloat16)
            dx = torch.randn(r, h, device="cuda", dtype=torch.float32)
            # dz (2), dx (4), x (4), the mask (1) read; dx0 (2), dx1 (4) written
            t = time_ms(lambda: ln.dropout_add_ln_prenorm_bwd(dz, dx, x, dmask, mu, rsigma, gamma,
                                                              None, DROPOUT, True))
            rows.append(("dropout_add_ln_prenorm_bwd", r, h, "", f"{1e3 * t:.2f}", 17 * r * h))
            # what they replace in plain PyTorch, the kernel table's layer_norm_* (bf16)
            xb = torch.randn(r, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            wb = torch.randn(h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            bb = torch.randn(h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            t = time_ms(lambda: torch.nn.functional.layer_norm(xb, (h,), wb, bb))
            rows.append(("torch_layer_norm_fwd", r, h, "", f"{1e3 * t:.2f}", 4 * r * h))
            zb = torch.nn.functional.layer_norm(xb, (h,), wb, bb)
            gz = torch.randn_like(zb)
            t = time_ms(lambda: torch.autograd.grad(zb, (xb, wb, bb), gz, retain_graph=True))
            rows.append(("torch_layer_norm_bwd", r, h, "", f"{1e3 * t:.2f}", 6 * r * h))
    return rows


def mlp_rows(fd):
    rows = []
    for r in ROWS:
        for h in WIDTHS:
            f = 4 * h
            x = torch.randn(r, h, device="cuda", dtype=torch.bfloat16)
            w1 = torch.randn(f, h, device="cuda", dtype=torch.bfloat16) * 0.02
            b1 = torch.randn(f, device="cuda", dtype=torch.bfloat16) * 0.02
            w2 = torch.randn(h, f, device="cuda", dtype=torch.bfloat16) * 0.02
            out1, gelu_in = fd.linear_gelu_forward(x, w1, b1, True, 0)
            dout2 = torch.randn(r, h, device="cuda", dtype=torch.bfloat16)
            t = time_ms(lambda: fd.linear_gelu_forward(x, w1, b1, True, 0), reps=20)
            t_mm = time_ms(lambda: torch.addmm(b1, x, w1.t()), reps=20)
            # the epilogue's extra output: the pre-activation (2 bytes an element of r x f)
            rows.append(("linear_gelu_fwd", r, h, f, f"{1e3 * t:.2f}", 2 * r * f))
            rows.append(("addmm_fc1_fwd", r, h, f, f"{1e3 * t_mm:.2f}", 0))
            t = time_ms(lambda: fd.linear_gelu_linear_backward(x, gelu_in, out1, w1, w2, dout2, 0),
                        reps=20)
            dgelu = torch.randn(r, f, device="cuda", dtype=torch.bfloat16)

            def plain():
                torch.mm(dout2, w2)  # FC2's data gradient
                torch.mm(dout2.t(), out1)  # FC2's weight gradient
                dout2.sum(0)
                torch.mm(dgelu, w1)  # FC1's data gradient
                torch.mm(dgelu.t(), x)  # FC1's weight gradient
                dgelu.sum(0)
            t_mm = time_ms(plain, reps=20)
            # the epilogue reads the pre-activation (2 bytes an element of r x f)
            rows.append(("linear_gelu_linear_bwd", r, h, f, f"{1e3 * t:.2f}", 2 * r * f))
            rows.append(("mm_mlp_bwd", r, h, f, f"{1e3 * t_mm:.2f}", 0))
    return rows


def xentropy_rows(xe):
    rows = []
    for r in ROWS:
        logits = torch.randn(r, VOCAB, device="cuda", dtype=torch.bfloat16)
        labels = torch.randint(0, VOCAB, (r,), device="cuda")
        losses, mlse = xe.forward(logits, labels, 0.0)
        t = time_ms(lambda: xe.forward(logits, labels, 0.0))
        rows.append(("xentropy_fwd", r, VOCAB, "", f"{1e3 * t:.2f}", 2 * r * VOCAB))
        grad = torch.ones(r, device="cuda")
        t = time_ms(lambda: xe.backward(grad, logits, mlse, labels, 0.0, True))
        rows.append(("xentropy_bwd_inplace", r, VOCAB, "", f"{1e3 * t:.2f}", 4 * r * VOCAB))
    return rows


def measure(mods):
    rows = []
    if "dropout_layer_norm" in mods:
        rows += layer_norm_rows(mods["dropout_layer_norm"])
    if "fused_dense_lib" in mods:
        rows += mlp_rows(mods["fused_dense_lib"])
    if "xentropy_cuda_lib" in mods:
        rows += xentropy_rows(mods["xentropy_cuda_lib"])
    return rows


def main():
    out, src = sys.argv[1], sys.argv[2]
    started = datetime.datetime.now(datetime.timezone.utc)
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "%d.%d" % torch.cuda.get_device_capability())
    os.environ.setdefault("MAX_JOBS", str(os.cpu_count()))
    with tempfile.TemporaryDirectory() as work:
        mods = build_all(src, work)
        rows = measure(mods)
    rows = [row + (f"{row[5] / float(row[4]) / 1e3:.1f}" if row[5] else "",) for row in rows]
    write_csv(out, "fa_fused_kernels.py",
              "Dao-AILab/flash-attention 4a6eaa9f csrc kernels (layer_norm trimmed to the "
              "widths run), built here; CUDA events, median of 20 after 5 warm-ups; bytes: "
              "what the kernel must move (the MLP rows: what its epilogue adds)",
              ["kernel", "rows", "hidden", "ffn", "time_us", "bytes", "GB_per_s"], rows, started)


if __name__ == "__main__":
    main()
