/* cli: see cli.h. Commands are dispatched from the command table (args.h). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "../workloads/doc.h"
#include "args.h"
#include "bench.h"
#include "explain.h"
#include "import_cmd.h"
#include "memory_cmd.h"
#include "platform_cmd.h"
#include "profile.h"
#include "run.h"
#include "scale.h"
#include "search.h"
#include "sweep.h"

const ts_command *const ts_commands[] = {&ts_run_command,
                                         &ts_scale_command,
                                         &ts_search_command,
                                         &ts_sweep_command,
                                         &ts_explain_command,
                                         &ts_memory_command,
                                         &ts_profile_command,
                                         &ts_bench_command,
                                         &ts_platform_command,
                                         &ts_import_command,
                                         NULL};

/* `trainsim help [COMMAND | --markdown]`: the usage, a command's help, or every command's flags
 * as docs/cli.md tables them. */
static int help_main(int argc, char **argv) {
  if (argc == 0) {
    ts_args_usage_all(stdout);
    return 0;
  }
  if (argc == 1 && strcmp(argv[0], "--markdown") == 0) {
    ts_args_markdown(stdout);
    return 0;
  }
  const ts_command *c = argc == 1 ? ts_args_command(argv[0]) : NULL;
  if (c == NULL) {
    fprintf(stderr,
            "trainsim: error: help takes a command or --markdown, found '%s' (see 'trainsim "
            "--help')\n",
            argv[0]);
    return TS_ARGS_EXIT_INPUT;
  }
  ts_args_usage(stdout, c);
  return 0;
}

int ts_cli_main(int argc, char **argv) {
  if (argc < 2) {
    ts_args_usage_all(stderr);
    return TS_ARGS_EXIT_INPUT;
  }
  if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
    return help_main(0, NULL);
  if (strcmp(argv[1], "help") == 0)
    return help_main(argc - 2, argv + 2);
  const ts_command *c = ts_args_command(argv[1]);
  if (c != NULL)
    return c->main(argc - 2, argv + 2);
  const char *names[32];
  int n = 0;
  char list[256] = "";
  for (const ts_command *const *k = ts_commands; *k != NULL && n < 31; k++) {
    names[n++] = (*k)->name;
    size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s%s", used > 0 ? ", " : "", (*k)->name);
  }
  names[n] = NULL;
  const char *hint = ts_did_you_mean(argv[1], names);
  if (hint != NULL)
    fprintf(stderr, "trainsim: error: unknown command '%s' (did you mean '%s'?)\n", argv[1], hint);
  else
    fprintf(stderr, "trainsim: error: unknown command '%s' (commands: %s; see 'trainsim --help')\n",
            argv[1], list);
  return TS_ARGS_EXIT_INPUT;
}
