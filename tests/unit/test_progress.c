/* progress: the status line on a real pseudo-terminal, in process and through the commands;
 * nothing on a file, nothing with --quiet, stdout the same either way. */
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../cli/progress.h"
#include "spawn.h"

/* stderr of this process moved onto a new pseudo-terminal; restore with tty_end. */
typedef struct tty {
  int master, saved_stderr;
} tty;

static tty tty_begin(void) {
  tty t = {posix_openpt(O_RDWR | O_NOCTTY), dup(2)};
  assert_true(t.master >= 0 && t.saved_stderr >= 0);
  assert_int_equal(grantpt(t.master), 0);
  assert_int_equal(unlockpt(t.master), 0);
  int slave = open(ptsname(t.master), O_RDWR | O_NOCTTY);
  assert_true(slave >= 0);
  fflush(stderr);
  assert_true(dup2(slave, 2) == 2);
  close(slave);
  fcntl(t.master, F_SETFL, O_NONBLOCK);
  return t;
}

/* What the terminal has received since the last call (NUL-terminated, static). */
static const char *tty_read(const tty *t) {
  static char buf[4096];
  fflush(stderr);
  ssize_t n = read(t->master, buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  return buf;
}

static void tty_end(tty *t) {
  fflush(stderr);
  dup2(t->saved_stderr, 2);
  close(t->saved_stderr);
  close(t->master);
}

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

static void test_line_on_a_terminal(void **state) {
  (void)state;
  tty t = tty_begin();
  ts_progress p;
  ts_progress_init(&p, "scale: point 1 of 2", false);
  assert_true(p.is_on);
  ts_progress_show(&p, 0, 10, "starting");
  assert_string_equal(tty_read(&t), "\rscale: point 1 of 2: starting, 0:00 elapsed");
  ts_progress_show(&p, 5, 10, "half"); /* within 0.2 s of the last: not shown */
  assert_string_equal(tty_read(&t), "");
  sleep_s(0.25);
  ts_progress_show(&p, 5, 10, "half");
  /* Half done after about 0.25 s: the same again to go; the previous line was longer, so the
   * new one is padded over it. */
  assert_string_equal(tty_read(&t), "\rscale: point 1 of 2: 50%, half, 0:00 elapsed, ETA 0:00");
  ts_progress_clear(&p);
  const char *cleared = tty_read(&t);
  size_t n = strlen(cleared);
  assert_true(n == strlen("scale: point 1 of 2: 50%, half, 0:00 elapsed, ETA 0:00") + 2);
  assert_true(cleared[0] == '\r' && cleared[n - 1] == '\r' && strspn(cleared + 1, " ") == n - 2);
  ts_progress_show(&p, 1, 10, "x"); /* after a clear, shown at once */
  assert_true(strstr(tty_read(&t), "10%, x, ") != NULL);
  ts_progress_clear(&p);
  tty_read(&t);

  ts_progress quiet;
  ts_progress_init(&quiet, "run", true);
  ts_progress_show(&quiet, 1, 2, "x");
  ts_progress_clear(&quiet);
  assert_false(quiet.is_on);
  assert_string_equal(tty_read(&t), "");
  tty_end(&t);
}

static void test_nothing_on_a_file(void **state) {
  (void)state;
  char path[] = "/tmp/trainsim-progress-XXXXXX";
  int fd = mkstemp(path), saved = dup(2);
  assert_true(fd >= 0 && saved >= 0);
  fflush(stderr);
  dup2(fd, 2);
  ts_progress p;
  ts_progress_init(&p, "run", false);
  ts_progress_show(&p, 1, 2, "x");
  ts_progress_clear(&p);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  assert_false(p.is_on);
  assert_int_equal(lseek(fd, 0, SEEK_END), 0);
  close(fd);
  unlink(path);
}

/* The same command, writing into out_dir, with stderr on a file and on a terminal: the same
 * stdout, and the status line (beginning with `label`) only on the terminal, erased at the end.
 * out_dir is removed after each run, so that a study cannot reuse the other run's points. */
static void check_command(const char *command, const char *out_dir, const char *label) {
  char args[512];
  snprintf(args, sizeof args, "%s --out %s", command, out_dir);
  spawn_result plain = spawn_trainsim(args);
  assert_int_equal(remove_dir(out_dir), 0);
  spawn_result on_tty = spawn_trainsim_tty(args);
  assert_int_equal(remove_dir(out_dir), 0);
  assert_int_equal(plain.status, 0);
  assert_int_equal(on_tty.status, 0);
  assert_string_equal(plain.out, on_tty.out);
  assert_null(strchr(plain.err, '\r'));
  char expected[128];
  snprintf(expected, sizeof expected, "\r%s", label);
  if (strstr(on_tty.err, expected) == NULL)
    fail_msg("'%s' on a terminal: expected a line beginning '%s', found '%s'", args, label,
             on_tty.err);
  size_t n = strlen(on_tty.err);
  assert_true(n > 0 && on_tty.err[n - 1] == '\r'); /* ends erased */
  spawn_free(&plain);
  spawn_free(&on_tty);
}

static void test_commands_on_a_terminal(void **state) {
  (void)state;
  const char *out = "/tmp/trainsim-progress-out";
  check_command("run tests/data/good/tiny.yaml --gpus 32", out, "run: ");
  check_command("scale tests/data/good/tiny.yaml --gpus 16,32 --weak", out,
                "scale: point 1 of 2, 16 GPUs: ");
  check_command("search tests/data/good/tiny.yaml --gpus 16 --top 1", out, "search: ");
  /* bench writes no files */
  spawn_result bench = spawn_trainsim_tty("bench allreduce --gpus 16 --max-bytes 1MiB");
  assert_int_equal(bench.status, 0);
  assert_non_null(strstr(bench.err, "\rbench: "));
  spawn_free(&bench);
  /* --quiet: the terminal gets nothing. */
  spawn_result quiet = spawn_trainsim_tty("run tests/data/good/tiny.yaml --gpus 32 --quiet --out "
                                          "/tmp/trainsim-progress-out");
  assert_int_equal(quiet.status, 0);
  assert_string_equal(quiet.err, "");
  spawn_free(&quiet);
  assert_int_equal(remove_dir(out), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_line_on_a_terminal),
      cmocka_unit_test(test_nothing_on_a_file),
      cmocka_unit_test(test_commands_on_a_terminal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
