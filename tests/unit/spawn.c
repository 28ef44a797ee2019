/* spawn: see spawn.h. */
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname */
#include "spawn.h"

#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

int remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d == NULL)
    return -1;
  char path[600];
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  return rmdir(dir);
}

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

/* Runs the binary with stdout on out_fd and stderr on err_fd; returns its exit status, or -1.
 * While it runs, tty_master (when >= 0) is read into *tty_text. */
static int run_child(const char *args, int out_fd, int err_fd, int tty_master, char **tty_text) {
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
    if (tty_master >= 0)
      close(tty_master);
    if (chdir(TS_SOURCE_DIR) != 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
      _exit(127);
    execv(TRAINSIM_BIN, argv);
    _exit(127);
  }
  if (tty_master >= 0) { /* until the child has closed the terminal: EIO, or end of file */
    close(err_fd);
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (ssize_t got; (got = read(tty_master, buf + n, cap - n - 1)) > 0;) {
      n += (size_t)got;
      if (cap - n < 2)
        buf = realloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    *tty_text = buf;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

spawn_result spawn_trainsim(const char *args) {
  char out_path[] = "/tmp/trainsim-test-out-XXXXXX", err_path[] = "/tmp/trainsim-test-err-XXXXXX";
  int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
  spawn_result r = {-1, NULL, NULL};
  if (out_fd < 0 || err_fd < 0)
    return r;
  r.status = run_child(args, out_fd, err_fd, -1, NULL);
  close(out_fd);
  close(err_fd);
  r.out = read_file(out_path, NULL);
  r.err = read_file(err_path, NULL);
  unlink(out_path);
  unlink(err_path);
  return r;
}

spawn_result spawn_trainsim_tty(const char *args) {
  char out_path[] = "/tmp/trainsim-test-out-XXXXXX";
  spawn_result r = {-1, NULL, NULL};
  int out_fd = mkstemp(out_path);
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (out_fd < 0 || master < 0 || grantpt(master) != 0 || unlockpt(master) != 0)
    return r;
  int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  if (slave < 0)
    return r;
  r.status = run_child(args, out_fd, slave, master, &r.err);
  close(master);
  close(out_fd);
  r.out = read_file(out_path, NULL);
  unlink(out_path);
  return r;
}

void spawn_free(spawn_result *r) {
  free(r->out);
  free(r->err);
}

spawn_result spawn_trainsim_ok(const char *args) {
  spawn_result r = spawn_trainsim(args);
  if (r.status != 0)
    fail_msg("trainsim %s: exit %d: %s", args, r.status, r.err);
  return r;
}
