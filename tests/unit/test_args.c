/* args: the command table is well formed (every flag named, explained and storable, no name
 * twice in a command), and the parser stores each kind of flag where its entry says, takes
 * aliases and --name=value, names near misses, and leaves output flags out of a second walk's
 * results only when asked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <string.h>

#include "../../cli/args.h"
#include "../../cli/run.h"
#include "../../workloads/doc.h"

static void test_table_is_well_formed(void **state) {
  (void)state;
  int n_commands = 0;
  for (const ts_command *const *c = ts_commands; *c != NULL; c++, n_commands++) {
    assert_ptr_equal(ts_args_command((*c)->name), *c);
    assert_non_null((*c)->main);
    assert_true(strlen((*c)->summary) > 0 && strlen((*c)->synopsis) > 0);
    const char *seen[256];
    int n = 0;
    for (const ts_flag_group *g = (*c)->groups; g->flags != NULL; g++) {
      assert_non_null(g->title);
      for (const ts_flag *f = g->flags; f->name != NULL; f++) {
        if (strncmp(f->name, "--", 2) != 0 || strlen(f->help) < 8)
          fail_msg("%s %s: a flag is --name with a help text", (*c)->name, f->name);
        if ((f->kind == TS_FLAG_SWITCH) != (f->value == NULL) && f->kind != TS_FLAG_CUSTOM)
          fail_msg("%s %s: a switch has no value, an option has one", (*c)->name, f->name);
        if ((f->kind == TS_FLAG_CHOICE && f->choices == NULL) ||
            (f->kind == TS_FLAG_CUSTOM && f->parse == NULL) ||
            (f->kind == TS_FLAG_COUNT && f->lo > f->hi))
          fail_msg("%s %s: its kind needs choices, a parser or a range", (*c)->name, f->name);
        for (int k = 0; k < n; k++)
          if (strcmp(seen[k], f->name) == 0)
            fail_msg("%s: %s twice", (*c)->name, f->name);
        assert_true(n < 256);
        seen[n++] = f->name;
      }
    }
  }
  assert_int_equal(n_commands, 10);
  assert_null(ts_args_command("rn"));
}

/* argv from string literals (the parser takes char **, as main's). */
#define ARGV(name, ...)                                                                            \
  static char name##_text[][24] = {__VA_ARGS__};                                                   \
  char *name[sizeof name##_text / sizeof *name##_text];                                            \
  for (size_t i_ = 0; i_ < sizeof name##_text / sizeof *name##_text; i_++)                         \
    name[i_] = name##_text[i_];

/* Walks argv as `run` parses it, storing into a. */
static int walk(char **argv, int argc, ts_run_args *a, ts_err *err) {
  memset(a, 0, sizeof *a);
  ts_args cli = {&ts_run_command, argc, argv, 0, a, false};
  const ts_flag *flag = NULL;
  const char *value = NULL;
  int item = 0;
  while ((item = ts_args_next(&cli, &flag, &value, err)) > TS_ARGS_END)
    ;
  return item;
}

static void test_stores_each_kind(void **state) {
  (void)state;
  ARGV(argv, "w.yaml", "--tp=4", "--schedule", "gpipe", "--fsdp", "--timeline", "--dp-bucket-size",
       "64MiB", "--platform", "p.yaml", "--seed", "7", "--timeline-window", "1s:2s");
  ts_run_args a;
  ts_err err = {0};
  assert_int_equal(walk(argv, 14, &a, &err), TS_ARGS_END);
  assert_true(a.ov.is_tp_set);
  assert_int_equal(a.ov.tp, 4);
  assert_true(a.ov.is_schedule_set);
  assert_int_equal(a.ov.schedule, TS_SCHED_GPIPE);
  assert_true(a.ov.is_fsdp && a.ov.is_zero_stage_set);
  assert_int_equal(a.ov.zero_stage, 3);
  assert_true(a.is_timeline);
  assert_true(a.ov.is_dp_bucket_set);
  assert_true(a.ov.dp_bucket_bytes == 64.0 * 1024 * 1024);
  assert_string_equal(a.platform, "p.yaml");
  assert_true(a.is_seed_set && a.seed == 7);
  assert_true(a.is_window_set && a.window_start_s == 1 && a.window_end_s == 2);
}

static void test_errors(void **state) {
  (void)state;
  ts_run_args a;
  ts_err err = {0};
  ARGV(near, "--tpp", "2");
  assert_int_equal(walk(near, 2, &a, &err), -1);
  assert_string_equal(err.msg, "trainsim: error: unknown option '--tpp' (did you mean '--tp'?)");
  err = (ts_err){0};
  ARGV(bad, "--tp", "0");
  assert_int_equal(walk(bad, 2, &a, &err), -1);
  assert_string_equal(err.msg,
                      "trainsim: error: --tp: expected an integer from 1 to 100000000, found '0'");
  err = (ts_err){0};
  ARGV(valued_switch, "--report=yes");
  assert_int_equal(walk(valued_switch, 1, &a, &err), -1);
  assert_string_equal(err.msg, "trainsim: error: --report takes no value");
  err = (ts_err){0};
  ARGV(missing, "--out");
  assert_int_equal(walk(missing, 1, &a, &err), -1);
  assert_string_equal(err.msg, "trainsim: error: --out: expected a value after the option");
}

/* A second walk with no struct only names the flags; is_output tells outputs apart. */
static void test_second_walk(void **state) {
  (void)state;
  ARGV(argv, "w.yaml", "--out", "d", "--tp", "2", "--quiet");
  ts_args cli = {&ts_run_command, 6, argv, 0, NULL, true};
  const ts_flag *flag = NULL;
  const char *value = NULL;
  ts_err err = {0};
  int outputs = 0, inputs = 0;
  for (int item; (item = ts_args_next(&cli, &flag, &value, &err)) > TS_ARGS_END;)
    if (item == TS_ARGS_OPTION)
      flag->is_output ? outputs++ : inputs++;
  assert_int_equal(outputs, 2);
  assert_int_equal(inputs, 1);
}

/* sweep's -j is --jobs. */
static void test_alias(void **state) {
  (void)state;
  const ts_command *sweep = ts_args_command("sweep");
  ARGV(argv, "-j", "3");
  ts_args cli = {sweep, 2, argv, 0, NULL, false};
  const ts_flag *flag = NULL;
  const char *value = NULL;
  ts_err err = {0};
  assert_int_equal(ts_args_next(&cli, &flag, &value, &err), TS_ARGS_OPTION);
  assert_string_equal(flag->name, "--jobs");
  assert_string_equal(value, "3");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table_is_well_formed), cmocka_unit_test(test_stores_each_kind),
      cmocka_unit_test(test_errors), cmocka_unit_test(test_second_walk),
      cmocka_unit_test(test_alias)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
