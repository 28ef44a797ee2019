/* api: trainsim as a shared library (libtrainsim.so), what bindings such as the Python package
 * (python/trainsim) call. The only symbols the library exports are these (cli/api.map).
 *
 * ts_api_call runs one command as `trainsim ARGS...` would, in a child process of the caller:
 * SimGrid initialises once per process, --set overrides are process-wide, and a failure, even an
 * internal assertion, must not take the caller (a Python interpreter) down. It returns what the
 * command printed, its exit status and its first error as fields (file, line, key, flag), the
 * same error the command line prints. Calls run one at a time in a process (a lock): a study's
 * points run side by side through the commands' own --jobs. While a call runs, SIGINT is
 * passed on to the command (which stops as it does on a terminal's Ctrl-C) and raised again in
 * the caller once the call returns, so that Python raises KeyboardInterrupt. */
#ifndef TS_API_H
#define TS_API_H

typedef struct ts_api_outcome {
  /* The command's exit status (0 success, 2 input error, 1 other failure); 128 + N when signal
   * N ended it; -1 when it could not be started (errors says why). */
  int status;
  char *output; /* what it printed on stdout */
  char *errors; /* what it printed on stderr */
  /* The first error it reported: the line as printed ("" when none), and where: a file, line
   * and column, the key's path in that file (parallelism.tensor), a command-line flag; "" and 0
   * when not known. */
  char *error;
  char *error_file;
  int error_line, error_col;
  char *error_key;
  char *error_flag;
} ts_api_outcome;

/* argv[0..argc-1] are the command and its arguments, without the program name ("run",
 * "workloads/gpt-22b.yaml", "--gpus", "64"). Fills *out (free it with ts_api_outcome_free) and
 * returns out->status. */
int ts_api_call(int argc, const char *const *argv, ts_api_outcome *out);
void ts_api_outcome_free(ts_api_outcome *out);

/* The flags a command takes, one a line as "NAME\tVALUE\n" (VALUE as the help names it, ""
 * for a switch), --set included, into buf (size bytes, NUL-terminated when size > 0): bindings
 * check their keywords against the command line's own table. Returns the text's length (the
 * whole of it when size was too small), or -1 for an unknown command. */
int ts_api_flags(const char *command, char *buf, int size);

/* trainsim's version, "0.1.0". */
const char *ts_api_version(void);

#endif
