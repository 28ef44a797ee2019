/* args: command-line parsing shared by trainsim's commands.
 *
 * Options are `--name value` or `--name=value`; switches take no value. Errors read
 *   trainsim: error: --tp: expected an integer from 1 to 100000000, found 'abc'
 *   trainsim: error: unknown option '--tpp' (did you mean '--tp'?)
 */
#ifndef TS_ARGS_H
#define TS_ARGS_H

#include <stdbool.h>

#include "../sim/network/platform.h"
#include "../workloads/err.h"
#include "../workloads/workload.h"

/* Exit statuses, chosen by the command front-ends only: 0 success, 1 other failures (results
 * could not be written), 2 input errors (a bad file, flag or layout, or a model that does not
 * fit). */
#define TS_ARGS_EXIT_FAILURE 1
#define TS_ARGS_EXIT_INPUT 2
/* The largest count a flag takes (GPUs, ranks, parallel sizes). */
#define TS_ARGS_MAX_COUNT 100000000L

typedef struct ts_args {
  int argc;
  char **argv;
  int i;
  const char *command; /* for "see 'trainsim <command> --help'" */
  const char *const *options; /* take a value; NULL-terminated */
  const char *const *switches; /* take none; NULL-terminated; "--help" is always one */
  bool takes_overrides; /* also accept the options of ts_args_override */
  bool reads_no_workload; /* --set of a workload key is then an error */
  bool skips_set; /* --set is passed over, not registered (a second walk over the same argv) */
} ts_args;

typedef enum ts_args_item { TS_ARGS_END, TS_ARGS_OPTION, TS_ARGS_ARGUMENT } ts_args_item;

/* The next item: an option (*flag set; *value NULL for a switch) or a positional argument
 * (*value set). Returns -1 with an error for unknown options and missing values. Every
 * command takes --set KEY=VALUE: it is registered with the document loaders (doc.h) here and
 * never returned. */
int ts_args_next(ts_args *cli, const char **flag, const char **value, ts_err *err);

/* Value parsers: each records "trainsim: error: <flag>: expected ..., found '<text>'". */
int ts_args_count(const char *flag, const char *text, long lo, long hi, long *out, ts_err *err);
int ts_args_choice(const char *flag, const char *text, const char *const *names, int *out,
                   ts_err *err);
int ts_args_bytes(const char *flag, const char *text, double *out, ts_err *err);

/* Options that override the workload file (--tp, --pp, --micro-batch-size,
 * --global-batch-size, --schedule, --recompute, --zero-stage, --sequence-parallel), shared
 * by the commands that take them: returns 1 when flag is one of them and was stored in *ov,
 * 0 when it is not one of them, -1 on a bad value. */
int ts_args_override(const char *flag, const char *value, ts_overrides *ov, ts_err *err);
/* Their names, NULL-terminated: the ones taking a value, and the one switch. */
extern const char *const ts_args_override_options[];
extern const char *const ts_args_override_switches[];

/* Loads the platform file at path, or the built-in default when path is NULL. */
int ts_args_load_platform(const char *path, ts_platform *pf, ts_err *err);

#endif
