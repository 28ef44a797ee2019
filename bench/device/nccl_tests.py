"""nccl-tests-style collective curves over the GPUs of one host, with torch.distributed (NCCL).

    python3 bench/device/nccl_tests.py OUT.csv [--gpus 2,4,8] [--min-bytes 8] [--max-bytes 8G]

For each GPU count (default: 2, 4 and 8, those the host has), launches one process per GPU
(torch.multiprocessing) that times all-reduce, all-gather, reduce-scatter, all-to-all and
send/recv (each rank to the next, a ring) from --min-bytes to --max-bytes, doubling, on bf16
buffers, as nccl-tests defines its columns: size is the buffer of all-reduce, the gathered
output of all-gather, the scattered input of reduce-scatter, what each rank sends in all of
all-to-all and to its peer in send/recv (count: the bf16 elements in it); time is the mean of back-to-back calls (CUDA events,
after warm-ups), the slowest rank's; algbw = size / time; busbw = algbw x 2(n-1)/n
(all-reduce), x (n-1)/n (all-gather, reduce-scatter, all-to-all), x 1 (send/recv). NCCL's
algorithm and protocol for each size come from its own log (NCCL_DEBUG=INFO,
NCCL_DEBUG_SUBSYS=COLL,TUNING), where it prints them. NVLink multicast (NVLS) stays off, as the
device notes require. Writes OUT.csv (one row per op, GPU count and size) after each count.
--smoke: 1 GPU allowed, two sizes, to check the script on a single-GPU machine.
"""
import argparse
import csv
import glob
import os
import re
import sys
import tempfile

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

OPS = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "sendrecv"]
BUS = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
       "reduce_scatter": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n,
       "sendrecv": lambda n: 1.0}
NCCL_NAME = {"all_reduce": "AllReduce", "all_gather": "AllGather",
             "reduce_scatter": "ReduceScatter", "all_to_all": "SendRecv", "sendrecv": "SendRecv"}
COLUMNS = ["op", "gpus", "size_bytes", "count", "type", "redop", "time_us", "algbw_GBps",
           "busbw_GBps", "algorithm", "protocol"]


def parse_bytes(text):
    m = re.fullmatch(r"(\d+)([KMG]?)", text.strip().upper().rstrip("B").rstrip("I"))
    if not m:
        raise argparse.ArgumentTypeError(f"expected a size such as 8, 64K or 8G, found {text!r}")
    return int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]


def one_call(op, n, rank, size, elem):
    """Buffers for one call of `op` with nccl-tests' size, and the call itself."""
    dev = torch.device("cuda", rank)
    count = max(size // elem, n)
    count -= count % n
    if op == "all_reduce":
        buf = torch.ones(count, dtype=torch.bfloat16, device=dev)
        return count, lambda: dist.all_reduce(buf)
    if op == "all_gather":
        out = torch.empty(count, dtype=torch.bfloat16, device=dev)
        inp = torch.ones(count // n, dtype=torch.bfloat16, device=dev)
        return count, lambda: dist.all_gather_into_tensor(out, inp)
    if op == "reduce_scatter":
        inp = torch.ones(count, dtype=torch.bfloat16, device=dev)
        out = torch.empty(count // n, dtype=torch.bfloat16, device=dev)
        return count, lambda: dist.reduce_scatter_tensor(out, inp)
    if op == "all_to_all":
        inp = torch.ones(count, dtype=torch.bfloat16, device=dev)
        out = torch.empty(count, dtype=torch.bfloat16, device=dev)
        return count, lambda: dist.all_to_all_single(out, inp)
    send = torch.ones(count, dtype=torch.bfloat16, device=dev)
    recv = torch.empty(count, dtype=torch.bfloat16, device=dev)

    def ring():
        ops = [dist.P2POp(dist.isend, send, (rank + 1) % n),
               dist.P2POp(dist.irecv, recv, (rank - 1) % n)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()

    return count, ring


def worker(rank, n, args, port, out_path):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=n,
                            device_id=torch.device("cuda", rank))
    rows, elem = [], 2
    for op in args.ops:
        if n == 1 and op == "sendrecv":
            continue
        size = args.min_bytes
        while size <= args.max_bytes:
            count, call = one_call(op, n, rank, size, elem)
            iters = 20 if size < (64 << 20) else 5
            for _ in range(5):
                call()
            torch.cuda.synchronize()
            dist.barrier()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(iters):
                call()
            b.record()
            torch.cuda.synchronize()
            t = torch.tensor([a.elapsed_time(b) * 1e-3 / iters], device="cuda")
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            bytes_ = count * elem
            algbw = bytes_ / t.item()
            rows.append({"op": op, "gpus": n, "size_bytes": bytes_, "count": count,
                         "type": "bfloat16", "redop": "sum" if "reduce" in op else "none",
                         "time_us": f"{t.item() * 1e6:.3f}", "algbw_GBps": f"{algbw / 1e9:.3f}",
                         "busbw_GBps": f"{algbw * BUS[op](n) / 1e9:.3f}"})
            del call
            torch.cuda.empty_cache()
            size *= 2
    if rank == 0:
        with open(out_path, "w") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS[:-2], lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    dist.destroy_process_group()


ALGOS = ["Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"]
PROTOS = ["LL", "LL128", "Simple"]


def nccl_choices(log_dir):
    """(collective, count) -> (algorithm, protocol) from rank 0's NCCL log: a COLL line names the
    call ("AllReduce: opCount 3 ... count 1048576 ..."), a TUNING line after it its choice,
    by name or by NCCL's indices ("... Algo 1 proto 2 ..."). Empty where the log says nothing."""
    found = {}
    call = re.compile(r"(\w+): opCount \w+ .*?count (\d+)")
    choice = re.compile(r"[Aa]lgo(?:rithm)? (\w+) [Pp]roto(?:col)? (\w+)")
    logs = sorted(glob.glob(os.path.join(log_dir, "nccl.*")))
    for path in logs[:1]:
        last = None
        with open(path, errors="replace") as f:
            for line in f:
                m = call.search(line)
                if m:
                    last = (m.group(1), int(m.group(2)))
                m = choice.search(line)
                if m and last is not None:
                    algo, proto = m.group(1), m.group(2)
                    algo = ALGOS[int(algo)] if algo.isdigit() and int(algo) < len(ALGOS) else algo
                    proto = (PROTOS[int(proto)] if proto.isdigit() and int(proto) < len(PROTOS)
                             else proto)
                    found[last] = (algo, proto)
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--gpus", default="2,4,8")
    ap.add_argument("--min-bytes", type=parse_bytes, default=8)
    ap.add_argument("--max-bytes", type=parse_bytes, default=8 << 30)
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    args.ops = args.ops.split(",")
    if any(op not in OPS for op in args.ops):
        ap.error(f"--ops: each of {OPS}")
    have = torch.cuda.device_count()
    counts = [int(c) for c in args.gpus.split(",")]
    if args.smoke:
        counts, args.max_bytes = [min(have, 2)], min(args.max_bytes, args.min_bytes * 2)
    counts = [c for c in counts if c <= have and (c >= 2 or args.smoke)]
    if not counts:
        sys.exit(f"nccl_tests: this host has {have} GPU(s); --gpus {args.gpus} needs more")
    all_rows = []
    for i, n in enumerate(counts):
        log_dir = tempfile.mkdtemp(prefix="nccl-log-")
        os.environ.update(NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="COLL,TUNING",
                          NCCL_DEBUG_FILE=os.path.join(log_dir, "nccl.%h.%p"))
        part = os.path.join(log_dir, "rows.csv")
        print(f"nccl_tests: {n} GPU(s), {args.ops}", file=sys.stderr, flush=True)
        mp.spawn(worker, args=(n, args, 29500 + i, part), nprocs=n, join=True)
        choices = nccl_choices(log_dir)
        with open(part) as f:
            for r in csv.DictReader(f):
                algo, proto = choices.get((NCCL_NAME[r["op"]], int(r["count"])), ("", ""))
                all_rows.append({**r, "algorithm": algo, "protocol": proto})
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"# nccl_tests.py on {torch.cuda.get_device_name(0)}, torch "
                    f"{torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
                    f"NCCL_NVLS_ENABLE={os.environ['NCCL_NVLS_ENABLE']}\n")
            w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerows(all_rows)
        os.replace(tmp, args.out)
    print(f"nccl_tests: wrote {args.out} ({len(all_rows)} rows)", file=sys.stderr)


if __name__ == "__main__":
    main()
