/* err: input-error reports that print like a compiler's.
 *
 * An input error (bad YAML, impossible layout, model that does not fit) is returned as a
 * non-zero code plus a ts_err holding one line:
 *   workloads/x.yaml:12:7: error: key 'tensor': expected a positive integer, found '-3'
 *   trainsim: error: --tp: expected a positive integer, found 'abc'
 * Lines and columns are 1-based. Only the command front-end (cli/) turns an error into an exit
 * status (2).
 */
#ifndef TS_ERR_H
#define TS_ERR_H

#include <stdbool.h>

#define TS_ERR_MSG_MAX 1024

typedef struct ts_err {
  char msg[TS_ERR_MSG_MAX]; /* the whole line, without a trailing newline */
  bool is_set;
  /* Where, as fields for bindings (cli/api.h): the ts_loc's, "" and 0 when not known. */
  char file[512];
  int line, col;
  char key[256];
  char flag[256];
} ts_err;

/* Where a value came from: a place in a file, or a command-line flag (flag != NULL wins). */
typedef struct ts_loc {
  const char *file; /* borrowed; lives as long as the document or program that owns it */
  int line; /* 1-based; 0 when unknown */
  int col; /* 1-based; 0 when unknown */
  const char *flag; /* e.g. "--tp"; NULL when the value came from a file */
  /* The key's path in its document, such as parallelism.tensor or node.nics[0].bandwidth
   * (doc.h's ts_doc_loc fills it; borrowed like file); NULL when not known. */
  const char *key;
} ts_loc;

/* Records "file:line:col: error: <fmt>" (or "trainsim: error: --flag: <fmt>" for flags, or
 * "file: error: <fmt>" when line is 0). A NULL err is allowed and ignored. Returns -1 so that
 * callers can write `return ts_err_at(...)`. */
int ts_err_at(ts_err *err, ts_loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Records "trainsim: error: <fmt>" for errors with no place (missing file, I/O). Returns -1. */
int ts_err_plain(ts_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Always-on assertion for bugs (never for input errors): prints and aborts. */
#define TS_ASSERT(cond) ((cond) ? (void)0 : ts_assert_fail(#cond, __FILE__, __LINE__))
void ts_assert_fail(const char *expr, const char *file, int line) __attribute__((noreturn));

#endif
