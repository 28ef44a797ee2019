/* study: a study stopped by a signal stops its point's process too, says so in one line, and
 * dies of the same signal; a point whose process dies fails the study, naming the point. */
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

/* The process whose parent is `parent`, or 0. */
static pid_t child_of(pid_t parent) {
  DIR *d = opendir("/proc");
  assert_non_null(d);
  pid_t found = 0;
  for (struct dirent *e; found == 0 && (e = readdir(d)) != NULL;) {
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = e->d_name[0] >= '0' && e->d_name[0] <= '9' ? fopen(path, "r") : NULL;
    int pid = 0, ppid = 0;
    if (f != NULL && fscanf(f, "%d %*s %*c %d", &pid, &ppid) == 2 && ppid == parent)
      found = pid;
    if (f != NULL)
      fclose(f);
  }
  closedir(d);
  return found;
}

/* Starts a scale study of one point (GPT-175B on 512 GCDs at the aggregate fidelity, which
 * runs for seconds: the default's node and periodic play take 0.1 s, too short a window for a
 * loaded machine to see the point's process) with stderr into err_fd, and waits (up to a
 * minute: sanitizer builds start slowly) until the point runs: the study and its point's
 * process (which may have started the child of its periodic play). */
static pid_t start_study(const char *out, int err_fd) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int null_fd = open("/dev/null", O_WRONLY);
    if (chdir(TS_SOURCE_DIR) != 0 || dup2(null_fd, 1) < 0 || dup2(err_fd, 2) < 0)
      _exit(127);
    execl(TRAINSIM_BIN, TRAINSIM_BIN, "scale", "workloads/gpt-175b.yaml", "--gpus", "512", "--weak",
          "--fidelity", "aggregate", "--out", out, (char *)NULL);
    _exit(127);
  }
  struct timespec tick = {0, 50000000};
  for (int i = 0; i < 1200 && count_processes(out) < 2; i++)
    nanosleep(&tick, NULL);
  assert_true(count_processes(out) >= 2); /* and the point's periodic play (sim/simulate.h) */
  return pid;
}

static void test_stopped_study(void **state) {
  (void)state;
  char out[] = "/tmp/trainsim-study-XXXXXX", err_path[] = "/tmp/trainsim-study-err-XXXXXX";
  assert_non_null(mkdtemp(out));
  int err_fd = mkstemp(err_path);
  assert_true(err_fd >= 0);
  pid_t pid = start_study(out, err_fd);
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

/* The point's process killed (as by the kernel's out-of-memory killer): the study fails with
 * exit status 2 and says which point, instead of going on or reporting success. */
static void test_failed_point(void **state) {
  (void)state;
  char out[] = "/tmp/trainsim-study-XXXXXX", err_path[] = "/tmp/trainsim-study-err-XXXXXX";
  assert_non_null(mkdtemp(out));
  int err_fd = mkstemp(err_path);
  assert_true(err_fd >= 0);
  pid_t pid = start_study(out, err_fd);
  pid_t point = child_of(pid);
  assert_true(point > 0);
  kill(point, SIGKILL);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 2);
  close(err_fd);
  char *err = read_file(err_path, NULL);
  assert_non_null(err);
  assert_non_null(strstr(err, "ended without a result"));
  assert_non_null(strstr(err, "(at 512 GPUs)"));
  free(err);
  unlink(err_path);
  assert_int_equal(remove_dir(out), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_stopped_study),
                                     cmocka_unit_test(test_failed_point)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
