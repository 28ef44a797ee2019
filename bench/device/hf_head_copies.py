"""Every GPU kernel of one Hugging Face GPT-2 block (hf_gpt2_steps.py's transcription of
transformers' eager modeling_gpt2.py), forward and backward apart, each attributed to the
operations that launched it: which copies torch.matmul makes of the heads that view and permute
split out of c_attn's output, and of the merge, and at what rate they run against a contiguous
add of the same tensor, timed in the same process (issue 31). Microbenchmark data.

    python3 bench/device/hf_head_copies.py OUT.csv [--smoke] [--code baddbmm]

Per model of hf_gpt2_steps.CONFIGS (layer_idx 1, its micro-batch and sequence, fp32 parameters
under torch.autocast in its dtype), 3 warm-ups, then one forward profiled, then its backward
profiled (torch.profiler, record_shapes). --code baddbmm: instead gpt.py's block (q, k, v by
unbind and transpose) with stack_steps.py's unfused attention (each head tensor folded by
reshape, Q K^T by torch.baddbmm on k's transposed view), bf16 parameters, at stack_steps.py's
shapes without flash (BADDBMM_CONFIGS). --code flash: gpt.py's block as it is (SDPA's flash
backend) at those shapes. Writes OUT.csv: model, pass, the launching
operations (innermost last, up to 4), the innermost one's input shapes, kernel name (cut to 90
characters), device microseconds. Rows of pass "ref": the contiguous add a + b and clone of a
(batch, seq, hidden) tensor in the dtype, medians of 20 by CUDA events (cuda_timing.time_ms).
"""
import argparse
import datetime

import torch
from torch.profiler import ProfilerActivity, profile

import cuda_timing
import hf_gpt2_steps
from cuda_timing import write_csv


def op_chain(ev):
    names = []
    while ev is not None and len(names) < 4:
        names.append(ev.name.replace("autograd::engine::evaluate_function: ", ""))
        ev = ev.cpu_parent
    return ">".join(reversed(names))


def kernel_rows(prof, model, pass_):
    rows = []
    for ev in prof.events():
        for k in getattr(ev, "kernels", []) or []:
            shapes = str(ev.input_shapes).replace(",", ";") if ev.input_shapes else ""
            rows.append([model, pass_, op_chain(ev).replace(",", ";"), shapes,
                         k.name[:90].replace(",", ";"), f"{k.duration:.2f}"])
    if not rows:  # no launching operation known: the kernels alone
        for ev in prof.events():
            if ev.device_type.name == "CUDA":
                rows.append([model, pass_, "", "", ev.name[:90].replace(",", ";"),
                             f"{ev.device_time_total:.2f}"])
    return rows


# name, hidden, heads, seq, micro-batch: stack_steps.py's unfused rows (FORGE-S's head of 86)
BADDBMM_CONFIGS = [("forge-s", 2064, 24, 2048, 4), ("gpt-1.3b", 2048, 16, 2048, 8),
                   ("gpt-2.7b", 2560, 32, 2048, 4)]


def block(name, layers, h, heads, seq, mbs, dtype, code="matmul"):
    torch.manual_seed(0)
    if code in ("baddbmm", "flash"):
        import gpt
        import stack_steps
        if code == "baddbmm":
            gpt.attention = stack_steps.unfused_attention
        gpt.HIDDEN_DROPOUT = 0.0  # as stack_steps.py runs it
        blk = gpt.Block(h, heads).cuda().to(dtype).train()
        x = torch.randn(mbs, seq, h, device="cuda", dtype=dtype, requires_grad=True)
        g = torch.randn(mbs, seq, h, device="cuda", dtype=dtype)

        def forward():
            return blk(x)
    else:
        blk = hf_gpt2_steps.Block(h, heads, seq, 1, "hf").cuda().train()
        x = torch.randn(mbs, seq, h, device="cuda", requires_grad=True)
        g = torch.randn(mbs, seq, h, device="cuda")

        def forward():
            with torch.autocast("cuda", dtype=dtype):
                return blk(x)

    for _ in range(3):
        forward().backward(g)
    torch.cuda.synchronize()
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with profile(activities=acts, record_shapes=True) as pf:
        y = forward()
        torch.cuda.synchronize()
    with profile(activities=acts, record_shapes=True) as pb:
        y.backward(g)
        torch.cuda.synchronize()
    rows = kernel_rows(pf, name, "fwd") + kernel_rows(pb, name, "bwd")
    a, b = (torch.randn(mbs, seq, h, device="cuda", dtype=dtype) for _ in range(2))
    for kind, fn in (("add", lambda: a + b), ("clone", lambda: a.clone())):
        rows.append([name, "ref", kind, f"[[{mbs}; {seq}; {h}]]", kind,
                     f"{cuda_timing.time_ms(fn) * 1e3:.2f}"])
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--code", choices=["matmul", "baddbmm", "flash"], default="matmul")
    args = ap.parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    configs = hf_gpt2_steps.CONFIGS if args.code == "matmul" else [
        (name, 1, h, heads, seq, mbs, "bf16") for name, h, heads, seq, mbs in BADDBMM_CONFIGS]
    for name, layers, h, heads, seq, mbs, dt in configs[:1] if args.smoke else configs:
        dtype = torch.float16 if dt == "fp16" else torch.bfloat16
        got = block(name, layers, h, heads, seq, mbs, dtype, args.code)
        copies = [r for r in got if "copy" in r[4].lower() or "Cat" in r[4]]
        print(f"{name}: {len(got)} kernels, {len(copies)} copies, "
              f"{sum(float(r[5]) for r in copies if r[1] != 'ref'):.1f} us of copies", flush=True)
        rows += got
        torch.cuda.empty_cache()
    write_csv(args.out, "hf_head_copies.py" + (f" --code {args.code}" if args.code != "matmul" else ""),
              "device microseconds a kernel (one forward, one backward, profiled); ref rows median of 20",
              ["model", "pass", "ops", "shapes", "kernel", "us"], rows, started)


if __name__ == "__main__":
    main()
