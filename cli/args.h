/* args: trainsim's commands and their flags, described once, in tables (Redis's command table
 * is the model), and the parser, usage text, did-you-mean and docs/cli.md's flag tables that
 * come from them.
 *
 * A command is a ts_command: its name, synopsis, description, main function and groups of
 * flags. A flag is a ts_flag: its name, the value it takes, its help, and where and how its
 * value is stored in the command's argument struct (a group's flags are stored relative to the
 * group's base, so that one group, such as the layout overrides, serves several commands).
 * Options are `--name value` or `--name=value`; switches take no value. Errors read
 *   trainsim: error: --tp: expected an integer from 1 to 100000000, found 'abc'
 *   trainsim: error: unknown option '--tpp' (did you mean '--tp'?)
 */
#ifndef TS_ARGS_H
#define TS_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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

/* How a flag's value is checked and stored (at the flag's offset in its group). */
typedef enum ts_flag_kind {
  TS_FLAG_SWITCH, /* no value: a bool set to true */
  TS_FLAG_COUNT, /* an integer from lo to hi: a long */
  TS_FLAG_CHOICE, /* one of choices: an int (or an enum of int's size), its index */
  TS_FLAG_BYTES, /* a whole number of bytes such as 64KiB: a double */
  TS_FLAG_TEXT, /* any text: a const char * into argv */
  TS_FLAG_CUSTOM /* parse() checks and stores it */
} ts_flag_kind;

typedef struct ts_flag {
  const char *name; /* "--tp" */
  const char *value; /* the value's name in the help ("N", "FILE"); NULL: a switch, of any kind */
  const char *help; /* what it does, in sentences: wrapped when printed */
  ts_flag_kind kind;
  size_t offset; /* of the value in the group's struct */
  size_t set_offset; /* of a bool set when the flag is given, plus one; 0: none */
  long lo, hi; /* TS_FLAG_COUNT's range */
  const char *const *choices; /* TS_FLAG_CHOICE's names, NULL-terminated */
  /* TS_FLAG_CUSTOM: checks value (NULL for a switch) and stores it into group; 0, or -1 with an
   * error naming the flag */
  int (*parse)(void *group, const char *flag, const char *value, ts_err *err);
  const char *alias; /* a short form such as "-j", or NULL */
  bool is_output; /* shapes only the outputs: not recorded with a result, nor digested */
} ts_flag;

/* set_offset for the bool `field` of `type`. */
#define TS_FLAG_SET(type, field) (offsetof(type, field) + 1)

/* Flags sharing a heading in the help, stored relative to base in the command's arguments. */
typedef struct ts_flag_group {
  const char *title; /* e.g. "layout (each overrides the workload file)" */
  const ts_flag *flags; /* terminated by an entry whose name is NULL */
  size_t base;
} ts_flag_group;

typedef struct ts_command {
  const char *name; /* "run" */
  const char *synopsis; /* the usage lines after "trainsim NAME", '\n'-separated */
  const char *summary; /* one line for 'trainsim --help' */
  const char *description; /* the help's text, laid out by hand (it may hold examples) */
  const ts_flag_group *groups; /* terminated by a group whose flags is NULL */
  bool reads_no_workload; /* --set of a workload key is then an error */
  int (*main)(int argc, char **argv); /* argv after the command's name; the exit status */
} ts_command;

/* Every command, in the order 'trainsim --help' lists them; NULL-terminated. */
extern const ts_command *const ts_commands[];

/* Shared groups: the layout overrides of the workload file (stored in a ts_overrides). */
extern const ts_flag ts_args_override_flags[];

typedef enum ts_args_item {
  TS_ARGS_END,
  TS_ARGS_ARGUMENT, /* a positional argument, in *value */
  TS_ARGS_OPTION, /* a flag of the tables, in *flag (*value its text, NULL for a switch) */
  TS_ARGS_HELP /* -h or --help */
} ts_args_item;

/* A walk over a command's argv. With out set, every option is checked and stored into out (the
 * command's argument struct) before it is returned; with out NULL, options are only named
 * (a second walk, as to record them). --set KEY=VALUE is registered with the document loaders
 * (doc.h) and never returned, unless skips_set (a second walk) passes it over. */
typedef struct ts_args {
  const ts_command *command;
  int argc;
  char **argv;
  int i;
  void *out;
  bool skips_set;
} ts_args;

/* The next item (ts_args_item), or -1 with an error for an unknown option (with a did-you-mean
 * from the tables), a missing or bad value. */
int ts_args_next(ts_args *cli, const ts_flag **flag, const char **value, ts_err *err);

/* Stores flag `name` with value (NULL for a switch) into out as command c's tables say:
 * for callers that hold flags as data (a sweep's axes). 0, or -1 with an error. */
int ts_args_apply(const ts_command *c, void *out, const char *name, const char *value, ts_err *err);

/* Value parsers: each records "trainsim: error: <flag>: expected ..., found '<text>'". */
int ts_args_count(const char *flag, const char *text, long lo, long hi, long *out, ts_err *err);
int ts_args_choice(const char *flag, const char *text, const char *const *names, int *out,
                   ts_err *err);
int ts_args_bytes(const char *flag, const char *text, double *out, ts_err *err);

/* The command named name, or NULL. */
const ts_command *ts_args_command(const char *name);
/* 'trainsim COMMAND --help': the synopsis, the description, each group's flags with their help
 * wrapped at 96 columns, then --set and --help. */
void ts_args_usage(FILE *f, const ts_command *c);
/* 'trainsim --help': every command with its summary. */
void ts_args_usage_all(FILE *f);
/* docs/cli.md's flag tables ('trainsim help --markdown'): a table per command. */
void ts_args_markdown(FILE *f);

/* Loads the platform file at path, or the built-in default when path is NULL. */
/* Prints err's line on stderr, with `note` after it when not NULL (" (at 64 GPUs)"), and keeps
 * the first error a process reports, as fields, for the library (api.h): how every command
 * reports an input error. */
void ts_args_report(const ts_err *err, const char *note);
/* The first error this process reported (NULL: none). */
const ts_err *ts_args_first_report(void);

/* The file holding trainsim's code, digested into results: /proc/self/exe, or the shared
 * library when a binding runs a command (api.h), which then says so here; commands that start
 * trainsim again (run --explain, sweep --slurm) need the executable, ts_args_executable (NULL in
 * the library). */
void ts_args_set_library(const char *path);
const char *ts_args_program(void);
const char *ts_args_executable(void);

int ts_args_load_platform(const char *path, ts_platform *pf, ts_err *err);

#endif
