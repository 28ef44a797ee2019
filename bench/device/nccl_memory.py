"""GPU memory NCCL itself takes on one GPU, outside PyTorch's caching allocator: for validation of
trainsim's NCCL memory model (workloads/ccl_memory.c), not to set it. One GPU can hold only
single-rank communicators, so this checks the per-communicator terms that do not need a peer: the
channel structures (under cuMem every device allocation rounds to its granularity) and the
network send pool NCCL 2.12-2.21 allocates at init (and later releases with NCCL_RUNTIME_CONNECT=0).

    python3 bench/device/nccl_memory.py OUT.csv

Each variant runs in a fresh process (NCCL reads its environment once): a world of one rank
(FileStore), then three communicators made one by one, each by a first all_reduce on a new
group (PyTorch creates a group's communicator at its first collective). After each, the GPU's
used bytes (cudaMemGetInfo's total - free, so the CUDA context and NCCL's own cudaMalloc and cuMem
allocations count, PyTorch's cache does not change: the tensor is made before the first
reading) and NCCL's channel count from its INFO log. Variants: NCCL's defaults;
NCCL_RUNTIME_CONNECT=0; NCCL_CUMEM_ENABLE=0.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys
import tempfile

VARIANTS = [("default", {}), ("runtime_connect_0", {"NCCL_RUNTIME_CONNECT": "0"}),
            ("cumem_0", {"NCCL_CUMEM_ENABLE": "0"})]
COMMS = 3

CHILD = r"""
import os, sys, torch, torch.distributed as dist
torch.cuda.set_device(0)
x = torch.ones(1024, device="cuda")
torch.cuda.synchronize()
def used():
    free, total = torch.cuda.mem_get_info()
    return total - free
print("used", 0, used(), flush=True)
dist.init_process_group("nccl", init_method="file://" + sys.argv[1], rank=0, world_size=1)
for i in range(1, int(sys.argv[2]) + 1):
    g = dist.new_group([0])
    dist.all_reduce(x, group=g)
    torch.cuda.synchronize()
    print("used", i, used(), flush=True)
print("nccl", ".".join(str(v) for v in torch.cuda.nccl.version()), flush=True)
dist.destroy_process_group()
"""


def run_variant(env_extra):
    env = dict(os.environ, NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,ALLOC", **env_extra)
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([sys.executable, "-c", CHILD, os.path.join(d, "store"), str(COMMS)],
                           env=env, capture_output=True, text=True, timeout=240)
    used = {int(m.group(1)): int(m.group(2))
            for m in re.finditer(r"^used (\d+) (\d+)$", p.stdout, re.M)}
    version = re.search(r"^nccl (\S+)$", p.stdout, re.M)
    channels = sorted({int(m.group(1)) for m in re.finditer(r"Channel \d+/(\d+)", p.stderr)})
    # ALLOC lines: "Cuda Alloc Size N pointer P" (cudaMalloc, and cuMem under NCCL_CUMEM_ENABLE);
    # host allocations ("Cuda Host Alloc") left out
    allocs = re.findall(r"(?<!Host )Alloc Size (\d+)", p.stderr)
    return p.returncode, used, version.group(1) if version else "", channels, allocs, p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    args = ap.parse_args()
    import torch
    started = datetime.datetime.now(datetime.timezone.utc)
    lines = [
        "# NCCL's own GPU memory per single-rank communicator, measured by "
        "bench/device/nccl_memory.py (validation data: sets no parameter).",
        f"# device {torch.cuda.get_device_name(0)}, torch {torch.__version__}, CUDA "
        f"{torch.version.cuda}, {started:%Y-%m-%d %H:%M} UTC; used = cudaMemGetInfo total - free",
        "variant,nccl,rc,channels,comms,used_bytes,delta_bytes,alloc_lines",
    ]
    for name, env in VARIANTS:
        rc, used, version, channels, allocs, err = run_variant(env)
        for i in sorted(used):
            delta = used[i] - used[i - 1] if i - 1 in used else 0
            lines.append(",".join(str(v) for v in [
                name, version, rc, "/".join(map(str, channels)), i, used[i], delta,
                len(allocs) if i == max(used) else ""]))
        if rc != 0:
            print(err[-3000:], file=sys.stderr)
        sizes = {}
        for a in allocs:
            sizes[a] = sizes.get(a, 0) + 1
        print(f"nccl_memory {name}: allocation sizes {sorted(sizes.items(), key=lambda kv: -kv[1])[:8]}",
              flush=True)
    with open(args.out + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(args.out + ".tmp", args.out)
    print("\n".join(lines[2:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
