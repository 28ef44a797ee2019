/* cli: the trainsim command line; see cli.h. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "args.h"
#include "bench.h"
#include "explain.h"
#include "memory_cmd.h"
#include "platform_cmd.h"
#include "profile.h"
#include "run.h"
#include "scale.h"
#include "search.h"
#include "sweep.h"

static const char usage[] =
    "usage: trainsim <command> [options]\n"
    "\n"
    "Simulates large-scale LLM training on a described machine (default: Frontier, OLCF).\n"
    "\n"
    "commands:\n"
    "  run WORKLOAD [options]   simulate one training iteration and report it\n"
    "  scale WORKLOAD --gpus N1,N2,... --weak|--strong\n"
    "                           a scaling study with efficiencies (scale.csv)\n"
    "  search WORKLOAD --gpus N the fastest layouts of N GPUs (analytic estimate, then the\n"
    "                           top ones simulated; search.csv)\n"
    "  sweep SPEC.yaml          a what-if study over any axes, points in parallel, resumable\n"
    "                           (sweep.csv)\n"
    "  explain RESULT_DIR       what limits a run's iteration, and the changes that would\n"
    "                           cut it most, each re-simulated\n"
    "  memory WORKLOAD          memory per GPU by stage, and the fewest GPUs that fit\n"
    "  profile WORKLOAD         one layer's kernels: shape, time, what priced them, share\n"
    "  bench OPERATION          simulated nccl-tests-style collective and p2p benchmarks\n"
    "  platform check|show [FILE]\n"
    "                           validate a platform file, or print what it describes\n"
    "\n"
    "Run 'trainsim COMMAND --help' for a command's options.\n"
    "Exit status: 0 success, 2 input error, 1 other failure.\n";

int ts_cli_main(int argc, char **argv) {
  if (argc < 2) {
    fputs(usage, stderr);
    return TS_ARGS_EXIT_INPUT;
  }
  if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
      strcmp(argv[1], "help") == 0) {
    fputs(usage, stdout);
    return 0;
  }
  if (strcmp(argv[1], "run") == 0)
    return ts_run_main(argc - 2, argv + 2);
  if (strcmp(argv[1], "memory") == 0)
    return ts_memory_cmd_main(argc - 2, argv + 2);
  if (strcmp(argv[1], "scale") == 0)
    return ts_scale_main(argc - 2, argv + 2);
  if (strcmp(argv[1], "bench") == 0)
    return ts_bench_main(argc - 2, argv + 2);
  if (strcmp(argv[1], "search") == 0)
    return ts_search_main(argc - 2, argv + 2);
  if (strcmp(argv[1], "platform") == 0)
    return ts_platform_main(argc - 2, argv + 2);
  if (strcmp(argv[1], "profile") == 0)
    return ts_profile_main(argc - 2, argv + 2);
  if (strcmp(argv[1], "sweep") == 0)
    return ts_sweep_main(argc - 2, argv + 2);
  if (strcmp(argv[1], "explain") == 0)
    return ts_explain_main(argc - 2, argv + 2);
  fprintf(stderr,
          "trainsim: error: unknown command '%s' (commands: run, scale, search, sweep, explain, "
          "memory, "
          "profile, bench, platform; "
          "see "
          "'trainsim --help')\n",
          argv[1]);
  return TS_ARGS_EXIT_INPUT;
}
