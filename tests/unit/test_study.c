/* study: a study stopped by a signal stops its point's process too, says so in one line, and
 * dies of the same signal. */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "spawn.h"

/* Processes whose command line holds `needle`. */
static int count_processes(const char *needle) {
  DIR *d = opendir("/proc");
  assert_non_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
      continue;
    char buf[4096];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    for (size_t i = 0; i < len; i++)
      if (buf[i] == '\0')
        buf[i] = ' ';
    buf[len] = '\0';
    n += strstr(buf, needle) != NULL;
  }
  closedir(d);
  return n;
}

static void test_stopped_study(void **state) {
  (void)state;
  char out[] = "/tmp/trainsim-study-XXXXXX", err_path[] = "/tmp/trainsim-study-err-XXXXXX";
  assert_non_null(mkdtemp(out));
  int err_fd = mkstemp(err_path);
  assert_true(err_fd >= 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int null_fd = open("/dev/null", O_WRONLY);
    if (chdir(TS_SOURCE_DIR) != 0 || dup2(null_fd, 1) < 0 || dup2(err_fd, 2) < 0)
      _exit(127);
    /* A point of several seconds: GPT-175B on 1,024 GCDs. */
    execl(TRAINSIM_BIN, TRAINSIM_BIN, "scale", "workloads/gpt-175b.yaml", "--gpus", "512,1024",
          "--weak", "--out", out, (char *)NULL);
    _exit(127);
  }
  /* Wait (up to a minute: sanitizer builds start slowly) until the point runs: the study and
   * its point. */
  struct timespec tick = {0, 50000000};
  for (int i = 0; i < 1200 && count_processes(out) < 2; i++)
    nanosleep(&tick, NULL);
  assert_int_equal(count_processes(out), 2);
  kill(pid, SIGTERM);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  struct timespec settle = {0, 300000000};
  nanosleep(&settle, NULL);
  assert_int_equal(count_processes(out), 0); /* the point stopped with it */
  close(err_fd);
  char *err = read_file(err_path, NULL);
  assert_non_null(err);
  assert_string_equal(err, "trainsim: stopped by signal 15 while simulating 512 GPUs; results "
                           "written so far are kept\n");
  free(err);
  unlink(err_path);
  assert_int_equal(remove_dir(out), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_stopped_study)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
