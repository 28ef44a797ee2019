/* cli: command-line parsing shared by trainsim's commands.
 *
 * Options are `--name value` or `--name=value`; switches take no value. Errors read
 *   trainsim: error: --tp: expected an integer from 1 to 100000000, found 'abc'
 *   trainsim: error: unknown option '--tpp' (did you mean '--tp'?)
 */
#ifndef TS_CLI_H
#define TS_CLI_H

#include <stdbool.h>

#include "../workloads/err.h"
#include "../workloads/workload.h"
#include "platform.h"

typedef struct ts_cli {
  int argc;
  char **argv;
  int i;
  const char *command; /* for "see 'trainsim <command> --help'" */
  const char *const *options; /* take a value; NULL-terminated */
  const char *const *switches; /* take none; NULL-terminated; "--help" is always one */
  bool takes_overrides; /* also accept the options of ts_cli_override */
} ts_cli;

typedef enum ts_cli_item { TS_CLI_END, TS_CLI_OPTION, TS_CLI_ARGUMENT } ts_cli_item;

/* The next item: an option (*flag set; *value NULL for a switch) or a positional argument
 * (*value set). Returns -1 with an error for unknown options and missing values. */
int ts_cli_next(ts_cli *cli, const char **flag, const char **value, ts_err *err);

/* Value parsers: each records "trainsim: error: <flag>: expected ..., found '<text>'". */
int ts_cli_count(const char *flag, const char *text, long lo, long hi, long *out, ts_err *err);
int ts_cli_choice(const char *flag, const char *text, const char *const *names, int *out,
                  ts_err *err);
int ts_cli_bytes(const char *flag, const char *text, double *out, ts_err *err);

/* Options that override the workload file (--tp, --pp, --micro-batch-size,
 * --global-batch-size, --schedule, --recompute, --zero-stage, --sequence-parallel), shared
 * by the commands that take them: returns 1 when flag is one of them and was stored in *ov,
 * 0 when it is not one of them, -1 on a bad value. */
int ts_cli_override(const char *flag, const char *value, ts_overrides *ov, ts_err *err);
/* Their names, NULL-terminated: the ones taking a value, and the one switch. */
extern const char *const ts_cli_override_options[];
extern const char *const ts_cli_override_switches[];

/* Loads the platform file at path, or the built-in default when path is NULL. */
int ts_cli_load_platform(const char *path, ts_platform *pf, ts_err *err);

#endif
