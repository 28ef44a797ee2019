"""Every request PyTorch's caching allocator saw while allocator.py's configurations built and
trained (issue 31 part 2), for validation only: nothing here sets a trainsim parameter. The
traces let trainsim's replay of the allocator's rules (workloads/caching_allocator.c) be checked on
the requests a real step made, and its own generated requests be checked against them.

    python3 bench/device/alloc_trace.py OUT.csv.gz [--hbm 80|141] [--detail] [--smoke] [--amp]
                                           [--only NAME:MICRO_BATCH:RECOMPUTE]

For each configuration, as allocator.measure() runs it (built on the GPU, the cache emptied,
three steps), torch.cuda.memory._record_memory_history records the allocator's trace from
before the build; each event becomes one line:
    A,id,bytes,stream,addr a request of bytes (before rounding) on a stream, the block named id,
                           at its device address (since 2026-12-07 18:45 UTC)
    F,id                   the block freed (free_completed: back in the allocator's pool)
    S,bytes,addr / X,bytes,addr  a segment cudaMalloc'ed / cudaFree'd (the default allocator),
                           or mapped / unmapped (expandable segments), at its device address
                           (best fit breaks ties between free blocks of one size by address;
                           the traces recorded before 2026-12-07 17:00 UTC carry no address)
    O,bytes                out of memory on a request of bytes
    M,name                 a marker: build, emptied (after empty_cache), step1..step3
    I,bytes,allocated,pool a segment the allocator held when the trace began (workspaces)
--detail adds to each A line the innermost frame of the model's own files and PyTorch's
innermost Python frame (small configurations), to read which operation asked.
"""
import argparse
import datetime
import gc
import gzip
import os
import sys

import torch

import allocator

DETAIL_POINTS = [
    ("gpt", "gpt-small", 2, 1024, 16, 16, 4096, 1024, 2, 2, False),
    ("gpt", "gpt-small", 2, 1024, 16, 16, 4096, 1024, 2, 1, True),
    ("llama", "llama-small", 2, 1024, 16, 4, 3584, 1024, 2, 2, False),
    ("llama", "llama-small", 2, 1024, 16, 4, 3584, 1024, 2, 1, True),
]
OWN_FILES = ("gpt.py", "llama_steps.py", "allocator.py")


def frame_names(frames):
    """The innermost frame of the model's files and the innermost of torch's Python."""
    own = torch_frame = ""
    for fr in frames:
        name = os.path.basename(fr["filename"])
        if not own and name in OWN_FILES:
            own = f"{name}:{fr['line']}:{fr['name']}"
        if not torch_frame and "/torch/" in fr["filename"] and name.endswith(".py"):
            torch_frame = f"{name}:{fr['name']}"
    return own, torch_frame


def trace(cfg, detail):
    """Runs one configuration as allocator.measure() does; returns its lines and status."""
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.memory._record_memory_history(
        enabled="all", context="alloc" if detail else None,
        stacks="python", max_entries=2_000_000)
    marks = []  # (trace length, name)
    held = [f"I,{seg['total_size']},{seg['allocated_size']},{seg['segment_type']}"
            for seg in torch.cuda.memory._snapshot()["segments"]]

    def mark(name):
        marks.append((len(torch.cuda.memory._snapshot()["device_traces"][0]), name))

    status = "ok"
    trainer = data = None
    try:
        mark("build")
        trainer, data = allocator.build(cfg)
        gc.collect()
        torch.cuda.empty_cache()
        mark("emptied")
        for k in range(3):
            mark(f"step{k + 1}")
            trainer.step(data)
        torch.cuda.synchronize()
    except torch.OutOfMemoryError:
        status = "oom"
    events = torch.cuda.memory._snapshot()["device_traces"][0]
    torch.cuda.memory._record_memory_history(enabled=None)
    trainer = data = None
    gc.collect()
    torch.cuda.empty_cache()
    ids, streams, lines, mi = {}, {}, held, 0
    for i, e in enumerate(events):
        while mi < len(marks) and marks[mi][0] <= i:
            lines.append(f"M,{marks[mi][1]}")
            mi += 1
        act = e["action"]
        if act == "alloc":
            bid = len(lines)  # unique per allocation
            ids[e["addr"]] = bid
            st = streams.setdefault(e["stream"], len(streams))
            line = f"A,{bid},{e['size']},{st},{e['addr']}"
            if detail:
                own, tf = frame_names(e.get("frames", []))
                line += f",{own},{tf}"
            lines.append(line)
        elif act == "free_completed" and e["addr"] in ids:  # not one made before the trace
            lines.append(f"F,{ids.pop(e['addr'])}")
        elif act in ("segment_alloc", "segment_map"):
            lines.append(f"S,{e['size']},{e['addr']}")
        elif act in ("segment_free", "segment_unmap"):
            lines.append(f"X,{e['size']},{e['addr']}")
        elif act == "oom":
            lines.append(f"O,{e['size']}")
    while mi < len(marks):
        lines.append(f"M,{marks[mi][1]}")
        mi += 1
    return lines, status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--hbm", type=int, choices=(141, 80), default=141)
    ap.add_argument("--detail", action="store_true", help="the small configurations, with frames")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--amp", action="store_true", help="allocator.py --amp's recipe and ladders")
    ap.add_argument("--only", metavar="NAME:MICRO_BATCH:RECOMPUTE",
                    help="trace this rung of the ladders alone, in a process of its own")
    args = ap.parse_args()
    allocator.AMP = args.amp
    torch.backends.cuda.matmul.allow_tf32 = False
    started = datetime.datetime.now(datetime.timezone.utc)
    props = torch.cuda.get_device_properties(0)
    torch.cuda.init()
    free0, total = torch.cuda.mem_get_info()
    allocator.library_workspaces()  # as allocator.py: the libraries' first use precedes the runs
    out = [
        "# Caching-allocator traces recorded by bench/device/alloc_trace.py (validation data). "
        f"device {torch.cuda.get_device_name(0)} ({props.total_memory} bytes), torch "
        f"{torch.__version__}, CUDA {torch.version.cuda}, {started:%Y-%m-%d %H:%M} UTC, "
        f"PYTORCH_CUDA_ALLOC_CONF='{os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')}'",
        f"# before any tensor: cudaMemGetInfo total {total} free {free0}",
    ]
    if args.smoke:
        plan = [allocator.SMOKE_POINTS[0]]
    elif args.detail:
        plan = DETAIL_POINTS
    else:
        if args.amp:
            ladders = allocator.LADDERS_AMP if args.hbm == 141 else allocator.LADDERS_AMP_80GB
        else:
            ladders = allocator.LADDERS if args.hbm == 141 else allocator.LADDERS_80GB
        plan = [cfg for cfg in allocator.rungs(ladders)
                if not args.only or allocator.rung_name(cfg) == args.only]
        if not plan:
            ap.error(f"--only {args.only}: no such rung in the chosen ladders")
    for cfg in plan:
        free, _ = torch.cuda.mem_get_info()
        lines, status = trace(cfg, args.detail or args.smoke)
        out.append(f"C,{','.join(str(v) for v in cfg)},{status},free {free}")
        out += lines
        print(f"alloc_trace: {cfg} {status} {len(lines)} events", file=sys.stderr, flush=True)
        with gzip.open(args.out + ".tmp", "wt") as f:
            f.write("\n".join(out) + "\n")
        os.replace(args.out + ".tmp", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
