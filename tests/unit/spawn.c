/* spawn: see spawn.h. */
#include "spawn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (size_t got; (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
    n += got;
    if (cap - n < 2) {
      cap *= 2;
      buf = realloc(buf, cap);
    }
  }
  fclose(f);
  buf[n] = '\0';
  if (len != NULL)
    *len = n;
  return buf;
}

spawn_result spawn_trainsim(const char *args) {
  char out_path[] = "/tmp/trainsim-test-out-XXXXXX", err_path[] = "/tmp/trainsim-test-err-XXXXXX";
  int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
  spawn_result r = {-1, NULL, NULL};
  if (out_fd < 0 || err_fd < 0)
    return r;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    char *copy = strdup(args);
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)TRAINSIM_BIN;
    for (char *tok = strtok(copy, " "); tok != NULL && argc < 63; tok = strtok(NULL, " "))
      argv[argc++] = tok;
    argv[argc] = NULL;
    if (chdir(TS_SOURCE_DIR) != 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
      _exit(127);
    execv(TRAINSIM_BIN, argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(out_fd);
  close(err_fd);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out_path, NULL);
  r.err = read_file(err_path, NULL);
  unlink(out_path);
  unlink(err_path);
  return r;
}

void spawn_free(spawn_result *r) {
  free(r->out);
  free(r->err);
}
