"""The host's loops over the data-parallel ranks in DeepSpeed 0.3.16's ZeRO-3, on one GPU.

    python3 bench/device/deepspeed_host_loops.py OUT.csv

Before 0.5.5 DeepSpeed gathers and reduce-scatters each parameter through PyTorch's list
collectives, building one view per rank in Python first, and PyTorch copies each rank's piece
apart in C++ (ProcessGroupNCCL's flatten_for_scatter_gather and its post hook). trainsim prices
those loops per rank (workloads/schedule.c). This times them as the code wrote them, on a
one-rank NCCL group (the loops run N times whatever the group's size; the collective itself is
not called), for N = 384, 1,536 and 2,240 ranks (Narayanan et al.'s ZeRO-3 runs):
  * gather_views: partition_parameters.py at v0.3.16, _allgather_param: a narrow view a rank
    appended to a list, and a torch.distributed.get_rank(group=...) call a rank, over the
    world group and over a group made by new_group (Megatron passes its data-parallel group);
  * scatter_views: _reduce_scatter_gradient: the bounds, param.grad.view(-1).narrow(...) a rank;
  * narrow: a narrow view alone (the "Python op" trainsim prices the loops with);
  * cpp_copies: copy_(src, non_blocking=True) of 4 KiB pieces issued from a C++ loop (built
    with torch.utils.cpp_extension; skipped if it cannot build), and the same from a Python
    loop for comparison;
  * post_hook: ProcessGroupNCCL's loop as PyTorch 1.8 wrote it (allgather's post hook and
    reduce_scatter's pre hook alike): on the NCCL stream, for each rank's piece,
    recordStream(piece.storage().data_ptr(), stream), then piece.copy_(flat[j], true), flat
    being the [ranks, numel] buffer it gathered into; the list handed over from Python
    counted in, as dist.all_gather hands it. At 4 KiB and at 1 MiB a piece (a 2.3 GB
    matrix of GPT-530B's over 2,240 ranks).
Host times are medians of 7 wall-clock repetitions after a warm-up, per rank (per copy).
Without a GPU the view loops run on CPU tensors over a one-rank gloo group (the copies need
the GPU and are skipped): a view's cost is its metadata, the same whatever the device holds.
2021's stack runs it too: Debian 11's PyTorch 1.7.1 and Python 3.9, unpacked beside Debian 12's
(apt-get download with a bullseye sources list, dpkg -x into a directory, LD_LIBRARY_PATH and
PYTHONHOME pointing there).
"""
import csv
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # gloo resolves the host name otherwise

import torch
import torch.distributed as dist

RANKS = (384, 1536, 2240)
PIECE = 2048  # elements a rank (4 KiB in fp16): the loops' cost does not depend on it
rows = []


def row(name, ranks, value, note):
    rows.append((name, ranks, "%.6g" % value, "us", note))
    print("%-28s %6d %10.3f us  %s" % (name, ranks, value, note), flush=True)


GPU = torch.cuda.is_available()
DEVICE = "cuda" if GPU else "cpu"


def sync():
    if GPU:
        torch.cuda.synchronize()


def per_rank_us(fn, n, reps=7):
    fn(n)
    times = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        fn(n)
        times.append((time.perf_counter() - t0) / n * 1e6)
    sync()
    return statistics.median(times)


def gather_views(group, flat, src):
    def loop(n):  # partition_parameters.py v0.3.16, _allgather_param
        partitions = []
        for i in range(n):
            partitions.append(flat.narrow(0, PIECE * i, PIECE))
            if i == dist.get_rank(group=group):
                partitions[i].data.copy_(src.data, non_blocking=True)
        return partitions
    return loop


def scatter_views(grad, numel):
    def loop(n):  # partition_parameters.py v0.3.16, _reduce_scatter_gradient
        input_list = []
        for i in range(n):
            start = i * PIECE
            end = start + PIECE
            if start < numel and end <= numel:
                piece = grad.view(-1).narrow(0, start, PIECE)
            input_list.append(piece)
        return input_list
    return loop


def narrows(flat):
    def loop(n):
        for i in range(n):
            flat.narrow(0, PIECE * i, PIECE)
    return loop


CPP = r"""
#include <torch/extension.h>
void copies(std::vector<at::Tensor> out, std::vector<at::Tensor> in) {
  for (size_t j = 0; j < out.size(); j++)
    out[j].copy_(in[j], true);
}
"""
CPP_HOOK = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
/* ProcessGroupNCCL::allgather's post hook (PyTorch 1.8, torch/lib/c10d/ProcessGroupNCCL.cpp). */
void post_hook(std::vector<at::Tensor> out, at::Tensor flat) {
  static c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
  c10::cuda::CUDAStreamGuard guard(stream);
  for (size_t j = 0; j < out.size(); j++) {
    c10::cuda::CUDACachingAllocator::recordStream(out[j].storage().data_ptr(), stream);
    out[j].copy_(flat[j], true);
  }
}
"""


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_path = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("nccl" if GPU else "gloo", init_method="file://%s/pg" % tmp,
                                rank=0, world_size=1)
        try:
            sub = dist.new_group([0])
            n_max = max(RANKS)
            flat = torch.zeros(PIECE * n_max, dtype=torch.float16, device=DEVICE)
            src = torch.ones(PIECE, dtype=torch.float16, device=DEVICE)
            grad = torch.ones(PIECE * n_max, dtype=torch.float16, device=DEVICE)
            for n in RANKS:
                row("gather_views_world", n, per_rank_us(gather_views(dist.group.WORLD, flat, src), n),
                    "narrow + append + get_rank(group=WORLD), a rank")
                row("gather_views_new_group", n, per_rank_us(gather_views(sub, flat, src), n),
                    "narrow + append + get_rank(group=new_group), a rank")
                row("scatter_views", n, per_rank_us(scatter_views(grad, grad.numel()), n),
                    "bounds + view(-1).narrow + append, a rank")
                row("narrow", n, per_rank_us(narrows(flat), n), "one narrow view")
            if not GPU:
                raise StopIteration
            pieces = 512  # a stream holds about a thousand queued operations: stay under
            outs = [torch.empty(PIECE, dtype=torch.float16, device=DEVICE) for _ in range(pieces)]
            ins = [torch.ones(PIECE, dtype=torch.float16, device=DEVICE) for _ in range(pieces)]

            def python_copies(n):
                for j in range(n):
                    outs[j].copy_(ins[j], non_blocking=True)
            row("python_copies", pieces, per_rank_us(python_copies, pieces),
                "copy_(non_blocking) of a 4 KiB piece from a Python loop")
            try:
                from torch.utils.cpp_extension import load_inline
                ext = load_inline("ds_copies", CPP, functions=["copies"], verbose=False)
                row("cpp_copies", pieces,
                    per_rank_us(lambda n: ext.copies(outs[:n], ins[:n]), pieces),
                    "copy_(non_blocking) of a 4 KiB piece from a C++ loop")
                hook = load_inline("ds_post_hook", CPP_HOOK, functions=["post_hook"],
                                   with_cuda=True, verbose=False)
                for piece in (PIECE, 1 << 19):  # elements: 4 KiB and 1 MiB in fp16
                    gathered = torch.zeros(pieces * piece, dtype=torch.float16, device=DEVICE)
                    views = [gathered.narrow(0, piece * j, piece) for j in range(pieces)]
                    flat2d = torch.ones(pieces, piece, dtype=torch.float16, device=DEVICE)
                    row("post_hook_%dKiB" % (piece * 2 // 1024), pieces,
                        per_rank_us(lambda n: hook.post_hook(views[:n], flat2d), pieces),
                        "recordStream + copy_(flat[j]) a piece from C++, the list from Python")
            except Exception as e:  # no compiler or ninja on the machine
                print("cpp_copies skipped: %s" % e, flush=True)
        except StopIteration:  # no GPU: the copies are not measured
            pass
        finally:
            dist.destroy_process_group()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "unknown CPU")
    header = "# %s, %s, torch %s, Python %s, %s" % (
        torch.cuda.get_device_name(0) if GPU else "no GPU", cpu, torch.__version__, sys.version.split()[0],
        time.strftime("%Y-%m-%d"))
    tmp_path = out_path + ".tmp"
    with open(tmp_path, "w", newline="") as f:
        f.write(header + "\n")
        w = csv.writer(f)
        w.writerow(("name", "ranks", "value", "unit", "note"))
        w.writerows(rows)
    os.replace(tmp_path, out_path)


if __name__ == "__main__":
    main()
