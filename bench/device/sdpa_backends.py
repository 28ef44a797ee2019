"""Which kernel F.scaled_dot_product_attention runs when plain PyTorch does not force one, and
how fast each backend is, causal, bf16, on the GPU at hand (issue 31: trainsim's flash tables
were measured with the flash backend forced, as gpt.py trains; a plain PyTorch model calls
SDPA with the default backend choice).

    python3 bench/device/sdpa_backends.py OUT.csv [--smoke] [--dropout P]

For each shape (batch, heads, sequence, head dim; q, k, v laid out as a model makes them, a
(batch, seq, heads, head_dim) projection viewed as (batch, heads, seq, head_dim)) it records
the backend PyTorch picks by default with dropout 0 and with dropout 0.1
(torch._fused_sdp_choice), then the median forward time and backward time (CUDA events, 20
repeats after warm-up, fresh random inputs) of the default choice and of each backend forced:
flash, cudnn, efficient (a backend that refuses the shape is recorded as such). With
--dropout P every timed call applies attention dropout P (dropout_p, as a model in training
mode passes it): each backend draws its mask inside the kernel (Philox) and its backward draws
it again, which the times then include.
"""
import argparse
import datetime
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from cuda_timing import time_ms

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}
# torch._fused_sdp_choice's values (aten/src/ATen/native/transformers/sdp_utils_cpp.h)
CHOICE = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn", 4: "overrideable"}

# batch, heads, seq, head dim
SHAPES = [(8, 16, 2048, 128), (4, 32, 2048, 128), (2, 32, 4096, 128), (1, 32, 8192, 128),
          (1, 32, 16384, 128), (1, 32, 32768, 128), (1, 16, 16384, 64), (16, 12, 1024, 64),
          (4, 32, 4096, 80), (1, 64, 8192, 128)]
SMOKE = [(1, 4, 512, 64)]


def qkv(b, n, s, d, grad):
    """q, k, v as a model's projection makes them: (b, s, n, d) viewed as (b, n, s, d)."""
    out = []
    for _ in range(3):
        t = torch.randn(b, s, n, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        out.append(t.detach().requires_grad_(grad))
    return out


def timed(b, n, s, d, backend, dropout):
    """(forward ms, backward ms) with `backend` forced (None: PyTorch's choice), or None."""
    q, k, v = qkv(b, n, s, d, True)

    def fwd():
        if backend is None:
            return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=True)
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=True)

    try:
        out = fwd()
        torch.cuda.synchronize()
    except RuntimeError:
        return None
    dout = torch.randn_like(out)
    f_ms = time_ms(fwd)
    b_ms = time_ms(lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True))
    return f_ms, b_ms


def choice(b, n, s, d, dropout):
    q, k, v = qkv(b, n, s, d, True)
    return CHOICE.get(torch._fused_sdp_choice(q, k, v, None, dropout, True), "?")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--dropout", type=float, default=0.0, help="attention dropout of every timed call")
    args = ap.parse_args()
    shapes = SMOKE if args.smoke else SHAPES
    rows = []
    for b, n, s, d in shapes:
        row = [b, n, s, d, choice(b, n, s, d, 0.0), choice(b, n, s, d, 0.1)]
        for name, backend in [("default", None)] + list(BACKENDS.items()):
            r = timed(b, n, s, d, backend, args.dropout)
            row += ["refused", "refused"] if r is None else ["%.4f" % r[0], "%.4f" % r[1]]
        rows.append(row)
        print(",".join(str(x) for x in row), flush=True)
        torch.cuda.empty_cache()
    cols = ["batch", "heads", "seq", "head_dim", "default_dropout0", "default_dropout0.1"]
    for name in ["default"] + list(BACKENDS):
        cols += [name + "_fwd_ms", name + "_bwd_ms"]
    with open(args.out, "w") as f:
        f.write("# F.scaled_dot_product_attention backends, causal bf16, attention dropout %g, "
                "measured by bench/device/sdpa_backends.py\n" % args.dropout)
        f.write("# device %s, torch %s, CUDA %s, cuDNN %s, %s\n" % (
            torch.cuda.get_device_name(), torch.__version__, torch.version.cuda,
            torch.backends.cudnn.version(),
            datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")))
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
