/* spawn: runs the trainsim binary from the source directory and captures its output. */
#ifndef TS_TEST_SPAWN_H
#define TS_TEST_SPAWN_H

#include <stddef.h>

typedef struct spawn_result {
  int status; /* exit status, or -1 when killed by a signal */
  char *out; /* stdout, NUL-terminated; free() it */
  char *err; /* stderr, NUL-terminated; free() it */
} spawn_result;

/* Runs TRAINSIM_BIN with args (space-separated, no quoting) in TS_SOURCE_DIR. */
spawn_result spawn_trainsim(const char *args);
void spawn_free(spawn_result *r);
/* Reads a whole file into a new string (NULL when unreadable); *len gets its size. */
char *read_file(const char *path, size_t *len);

#endif
