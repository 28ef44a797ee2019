/* err: formatting of input errors; see err.h. */
#include "err.h"
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((format(printf, 3, 0))) static int vrecord(ts_err *err, const char *prefix,
                                                         const char *fmt, va_list ap) {
  if (err == NULL)
    return -1;
  err->file[0] = err->key[0] = err->flag[0] = '\0';
  err->line = err->col = 0;
  int n = snprintf(err->msg, sizeof err->msg, "%s", prefix);
  if (n < 0 || (size_t)n >= sizeof err->msg)
    n = 0;
  vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
  ts_text_clean(err->msg); /* values quoted from input reach a terminal */
  err->is_set = true;
  return -1;
}

int ts_err_at(ts_err *err, ts_loc loc, const char *fmt, ...) {
  char prefix[512];
  if (loc.flag != NULL)
    snprintf(prefix, sizeof prefix, "trainsim: error: %s: ", loc.flag);
  else if (loc.file != NULL && loc.line > 0)
    snprintf(prefix, sizeof prefix, "%s:%d:%d: error: ", loc.file, loc.line, loc.col);
  else if (loc.file != NULL)
    snprintf(prefix, sizeof prefix, "%s: error: ", loc.file);
  else
    snprintf(prefix, sizeof prefix, "trainsim: error: ");
  va_list ap;
  va_start(ap, fmt);
  vrecord(err, prefix, fmt, ap);
  va_end(ap);
  if (err != NULL) {
    ts_text_copy(err->file, sizeof err->file, loc.flag == NULL && loc.file ? loc.file : "");
    err->line = loc.flag == NULL ? loc.line : 0;
    err->col = loc.flag == NULL ? loc.col : 0;
    ts_text_copy(err->key, sizeof err->key, loc.key ? loc.key : "");
    ts_text_copy(err->flag, sizeof err->flag, loc.flag ? loc.flag : "");
  }
  return -1;
}

int ts_err_plain(ts_err *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vrecord(err, "trainsim: error: ", fmt, ap);
  va_end(ap);
  return -1;
}

void ts_assert_fail(const char *expr, const char *file, int line) {
  fprintf(stderr, "trainsim: internal error: assertion '%s' failed at %s:%d\n", expr, file, line);
  abort();
}
