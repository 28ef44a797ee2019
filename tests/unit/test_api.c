/* api: the library's calls as a binding makes them (each command in a child process), its
 * flag tables, and its errors as fields. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../cli/api.h"

static void test_flags(void **state) {
  (void)state;
  char buf[8192];
  int n = ts_api_flags("run", buf, sizeof buf);
  assert_true(n > 0 && n < (int)sizeof buf);
  assert_int_equal((int)strlen(buf), n);
  assert_non_null(strstr(buf, "--gpus\tN\n"));
  assert_non_null(strstr(buf, "--sequence-parallel\t\n")); /* a switch */
  assert_non_null(strstr(buf, "--set\tKEY=VALUE\n"));
  char small[16];
  assert_int_equal(ts_api_flags("run", small, sizeof small), n); /* the whole length */
  assert_int_equal((int)strlen(small), (int)sizeof small - 1);
  assert_int_equal(ts_api_flags("run", NULL, 0), n);
  assert_int_equal(ts_api_flags("nosuch", buf, sizeof buf), -1);
  assert_int_equal(ts_api_flags(NULL, buf, sizeof buf), -1);
}

static void test_run(void **state) {
  (void)state;
  char out[] = "/tmp/test_api.XXXXXX";
  assert_non_null(mkdtemp(out));
  const char *argv[] = {
      "run",    TS_SOURCE_DIR "/tests/data/good/tiny.yaml", "--fidelity", "analytic", "--out", out,
      "--quiet"};
  ts_api_outcome o;
  assert_int_equal(ts_api_call(7, argv, &o), 0);
  assert_non_null(strstr(o.output, "trainsim: tiny on frontier"));
  assert_string_equal(o.errors, "");
  assert_string_equal(o.error, "");
  ts_api_outcome_free(&o);
  char path[64];
  snprintf(path, sizeof path, "%s/result.json", out);
  assert_int_equal(access(path, R_OK), 0);
  /* Twice at a SimGrid fidelity from one process: each call has its own child. */
  const char *hybrid[] = {"run", TS_SOURCE_DIR "/tests/data/good/tiny.yaml", "--out", out,
                          "--quiet"};
  for (int k = 0; k < 2; k++) {
    assert_int_equal(ts_api_call(5, hybrid, &o), 0);
    ts_api_outcome_free(&o);
  }
}

static void test_errors_as_fields(void **state) {
  (void)state;
  ts_api_outcome o;
  const char *bad[] = {"run", "tests/data/bad/bad-enum.yaml"};
  assert_int_equal(chdir(TS_SOURCE_DIR), 0);
  assert_int_equal(ts_api_call(2, bad, &o), 2);
  assert_string_equal(
      o.error, "tests/data/bad/bad-enum.yaml:16:13: error: key 'schedule': "
               "expected one of 'gpipe', '1f1b', 'interleaved', 'zb-h1', 'dualpipe', 'zb-v', found "
               "'zero-bubble'");
  assert_string_equal(o.error_file, "tests/data/bad/bad-enum.yaml");
  assert_int_equal(o.error_line, 16);
  assert_int_equal(o.error_col, 13);
  assert_string_equal(o.error_key, "parallelism.schedule");
  assert_string_equal(o.error_flag, "");
  assert_non_null(strstr(o.errors, o.error)); /* what the command printed */
  ts_api_outcome_free(&o);

  const char *flag[] = {"run", "tests/data/good/tiny.yaml", "--tp", "x"};
  assert_int_equal(ts_api_call(4, flag, &o), 2);
  assert_string_equal(o.error_flag, "--tp");
  assert_string_equal(o.error_file, "");
  ts_api_outcome_free(&o);

  /* An error printed without a ts_err: its line on stderr, with no fields. */
  const char *unknown[] = {"rnu"};
  assert_int_equal(ts_api_call(1, unknown, &o), 2);
  assert_string_equal(o.error, "trainsim: error: unknown command 'rnu' (did you mean 'run'?)");
  assert_string_equal(o.error_key, "");
  ts_api_outcome_free(&o);

  /* No command at all. */
  assert_int_equal(ts_api_call(0, NULL, &o), -1);
  assert_non_null(strstr(o.error, "needs a command"));
  ts_api_outcome_free(&o);
  ts_api_outcome_free(NULL);
}

int main(void) {
  assert_string_equal(ts_api_version(), TS_VERSION);
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_flags), cmocka_unit_test(test_run),
                                     cmocka_unit_test(test_errors_as_fields)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
