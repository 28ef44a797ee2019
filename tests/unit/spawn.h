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
/* The same with stderr on a pseudo-terminal (stdout still captured apart): err holds what the
 * terminal received, carriage returns included. */
spawn_result spawn_trainsim_tty(const char *args);
/* spawn_trainsim that fails the running cmocka test, with the command and its stderr, unless
 * trainsim exits 0. */
spawn_result spawn_trainsim_ok(const char *args);
void spawn_free(spawn_result *r);
/* Removes a test's output directory and every file in it; 0 on success. */
int remove_dir(const char *dir);
/* Reads a whole file into a new string (NULL when unreadable); *len gets its size. */
char *read_file(const char *path, size_t *len);

#endif
