"""The host-bound step again, on another host of the same GPU (validation data: sets no
parameter): docs/validation/h100.md's GPT-350M at micro-batch 1 (sequence 1,024, 4 microbatches)
took 202-235 ms on the host that measured h100_steps.csv, 1.8x the H200 host's; this repeats
it three times with steps.py's method (3 warm-ups, 10 timed steps, median), beside a GPU-bound
case (GPT-1.3B, sequence 2,048, 4 x 2) that should not move with the host.

    python3 bench/device/host_repeat.py OUT.csv
"""
import datetime
import sys


import steps
from cuda_timing import write_csv

HOST_BOUND = ("gpt-350m", 24, 1024, 16, 1024, 1, 4, False)
GPU_BOUND = ("gpt-1.3b", 24, 2048, 16, 2048, 4, 2, False)


def main():
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for repeat, cfg in enumerate([HOST_BOUND] * 3 + [GPU_BOUND]):
        (status, med, lo, hi), _ = steps.run(cfg, 3, 10)
        rows.append([cfg[0], cfg[4], cfg[5], cfg[6], repeat, status, f"{med * 1e3:.1f}",
                     f"{lo * 1e3:.1f}", f"{hi * 1e3:.1f}"])
        print("host_repeat:", rows[-1], flush=True)
    cpu = open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": \t")
    write_csv(sys.argv[1], "host_repeat.py", f"host CPU {cpu}; step times in ms (median, min, "
              "max of 10 after 3 warm-ups)", ["name", "seq", "micro_batch", "microbatches",
                                                 "repeat", "status", "step_ms", "min_ms",
                                                 "max_ms"], rows, started)


if __name__ == "__main__":
    main()
