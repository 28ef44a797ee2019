/* doc: positions, type errors, unknown and duplicate keys, refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../workloads/doc.h"

static const char *const keys[] = {"tensor", "pipeline", "bandwidth", NULL};

static void expect_parse_error(const char *text, const char *msg) {
  ts_doc *doc = NULL;
  ts_err err = {0};
  assert_int_equal(ts_doc_parse("x.yaml", text, strlen(text), &doc, &err), -1);
  assert_string_equal(err.msg, msg);
}

static void expect_map_error(const char *text, const char *msg) {
  ts_doc *doc = NULL;
  ts_err err = {0};
  assert_int_equal(ts_doc_parse("x.yaml", text, strlen(text), &doc, &err), 0);
  assert_int_equal(ts_doc_check_map(doc, ts_doc_root(doc), "parallelism", keys, &err), -1);
  assert_string_equal(err.msg, msg);
  ts_doc_free(doc);
}

static void test_keys(void **state) {
  (void)state;
  expect_map_error("tensor: 2\ntensr: 4\n",
                   "x.yaml:2:1: error: unknown key 'tensr' in 'parallelism' (did you mean "
                   "'tensor'?)");
  expect_map_error("tensor: 2\nzzzzzz: 4\n", "x.yaml:2:1: error: unknown key 'zzzzzz' in "
                                             "'parallelism'");
  expect_map_error("tensor: 2\npipeline: 1\ntensor: 4\n",
                   "x.yaml:3:1: error: duplicate key 'tensor' in 'parallelism' (first at line 1)");
  expect_map_error("- 1\n- 2\n", "x.yaml:1:1: error: 'parallelism': expected a mapping, found a "
                                 "list");
}

static void test_values(void **state) {
  (void)state;
  const char *text = "tensor: -3\npipeline: [1]\nbandwidth: 25 GBps\n";
  ts_doc *doc = NULL;
  ts_err err = {0};
  assert_int_equal(ts_doc_parse("x.yaml", text, strlen(text), &doc, &err), 0);
  int root = ts_doc_root(doc);
  long v = 7;
  assert_int_equal(ts_doc_get_long(doc, root, "tensor", 1, 100, &v, &err), -1);
  assert_string_equal(
      err.msg, "x.yaml:1:9: error: key 'tensor': expected an integer from 1 to 100, found '-3'");
  assert_int_equal(v, 7);
  assert_int_equal(ts_doc_get_long(doc, root, "pipeline", 1, 100, &v, &err), -1);
  assert_string_equal(err.msg, "x.yaml:2:11: error: key 'pipeline': expected an integer from 1 "
                               "to 100, found a list");
  double bw = 0;
  assert_int_equal(ts_doc_get_unit(doc, root, "bandwidth", TS_UNITS_BANDWIDTH, false, &bw, &err),
                   -1);
  assert_string_equal(err.msg, "x.yaml:3:12: error: key 'bandwidth': expected a bandwidth such as "
                               "'25GBps' or '200Gbps', found '25 GBps'");
  assert_int_equal(ts_doc_get_long(doc, root, "absent", 1, 100, &v, &err), 0);
  ts_doc_free(doc);
}

static void test_refusals(void **state) {
  (void)state;
  expect_parse_error("a: &x [1, 2]\nb: *x\n",
                     "x.yaml:2:4: error: YAML aliases ('*x') are not supported in trainsim files");
  expect_parse_error("a: [1, 2\n", "x.yaml:2:1: error: invalid YAML: did not find expected ',' or "
                                   "']' while parsing a flow sequence");
  expect_parse_error("a: 1\n---\nb: 2\n",
                     "x.yaml:2:1: error: expected one YAML document, found a second one");
  char deep[200] = "";
  for (int i = 0; i < 40; i++)
    strcat(deep, "[");
  expect_parse_error(deep, "x.yaml:1:33: error: nesting deeper than 32 levels");
  const char bin[] = {'a', ':', ' ', '\0', '1'};
  ts_doc *doc = NULL;
  ts_err err = {0};
  assert_int_equal(ts_doc_parse("x.yaml", bin, sizeof bin, &doc, &err), -1);
  assert_string_equal(err.msg,
                      "x.yaml: error: expected a YAML text file, found binary data (a NUL byte)");
}

static void test_unreadable_file(void **state) {
  (void)state;
  if (geteuid() == 0)
    skip(); /* root reads any file: permissions cannot be tested as root (CI runs as root) */
  char path[] = "/tmp/trainsim-unreadable-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  chmod(path, 0);
  ts_doc *doc = NULL;
  ts_err err = {0};
  assert_int_equal(ts_doc_load_file(path, &doc, &err), -1);
  char expect[256];
  snprintf(expect, sizeof expect, "trainsim: error: cannot open '%s': Permission denied", path);
  assert_string_equal(err.msg, expect);
  unlink(path);
}

static void test_did_you_mean(void **state) {
  (void)state;
  static const char *const names[] = {"--tp", "--pp", "--global-batch-size", NULL};
  assert_string_equal(ts_did_you_mean("--global-batch", names), "--global-batch-size");
  assert_null(ts_did_you_mean("--zzzzzzzz", names));
}

/* --set KEY=VALUE: a value replaced, a key and a section added, a list item (or all) reached;
 * values read back as from the file, and messages at the flag. */
static void test_overrides(void **state) {
  (void)state;
  const char *text = "network:\n  link: {bandwidth: 25GBps}\nnode:\n  nics:\n"
                     "    - {bandwidth: 25GBps}\n    - {bandwidth: 25GBps}\n";
  ts_err err = {0};
  assert_int_equal(ts_doc_override_add("network.link.bandwidth=50GBps", &err), 0);
  assert_int_equal(ts_doc_override_add("node.nics[1].bandwidth=100Gbps", &err), 0);
  assert_int_equal(ts_doc_override_add("network.routing=minimal", &err), 0);
  assert_int_equal(ts_doc_override_add("collectives.library=nccl", &err), 0);
  assert_int_equal(ts_doc_override_add("model.num_layers=2", &err), 0); /* not this file's */
  assert_int_equal(ts_doc_overrides_count(TS_DOC_PLATFORM), 4);
  assert_string_equal(ts_doc_override(0), "network.link.bandwidth=50GBps");
  ts_doc *doc = NULL;
  assert_int_equal(ts_doc_parse("p.yaml", text, strlen(text), &doc, &err), 0);
  assert_int_equal(ts_doc_apply_overrides(doc, TS_DOC_PLATFORM, &err), 0);
  int root = ts_doc_root(doc), net = ts_doc_get(doc, root, "network");
  double bw = 0;
  assert_int_equal(ts_doc_get_unit(doc, ts_doc_get(doc, net, "link"), "bandwidth",
                                   TS_UNITS_BANDWIDTH, false, &bw, &err),
                   1);
  assert_true(bw == 50e9);
  int nics = ts_doc_get(doc, ts_doc_get(doc, root, "node"), "nics");
  assert_int_equal(ts_doc_get_unit(doc, ts_doc_seq_item(doc, nics, 1), "bandwidth",
                                   TS_UNITS_BANDWIDTH, false, &bw, &err),
                   1);
  assert_true(bw == 12.5e9);
  assert_string_equal(ts_doc_scalar(doc, ts_doc_get(doc, net, "routing")), "minimal");
  int ccl = ts_doc_get(doc, root, "collectives");
  assert_string_equal(ts_doc_scalar(doc, ts_doc_get(doc, ccl, "library")), "nccl");
  /* A bad value is reported at the flag. */
  static const char *const names[] = {"adaptive", "minimal", NULL};
  int choice = 0;
  ts_doc_free(doc);
  ts_doc_overrides_clear();
  assert_int_equal(ts_doc_override_add("network.routing=fastest", &err), 0);
  assert_int_equal(ts_doc_parse("p.yaml", text, strlen(text), &doc, &err), 0);
  assert_int_equal(ts_doc_apply_overrides(doc, TS_DOC_PLATFORM, &err), 0);
  net = ts_doc_get(doc, ts_doc_root(doc), "network");
  assert_int_equal(ts_doc_get_enum(doc, net, "routing", names, &choice, &err), -1);
  assert_non_null(strstr(err.msg, "--set network.routing=fastest: "));
  ts_doc_free(doc);
  ts_doc_overrides_clear();
  /* Paths that reach nothing. */
  const char *bad[][2] = {
      {"node.nics[2].bandwidth=1GBps", "'nics' has no item 2 (it has fewer)"},
      {"network.link=1", "'link' is a mapping: set its keys one by one"},
      {"network.link.bandwidth.x=1", "'x' sits under a value that is not a mapping"},
      {"network..link=1", "expected KEY.KEY... with a key before '.'"},
      {"network.link[*].bandwidth=1GBps", "'link' is not a list"},
      {"node.nics[*]=1GBps", "name the key to set in each"},
      {"node.nics[*]x=1GBps", "expected '.' after 'nics[*]'"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err = (ts_err){0};
    assert_int_equal(ts_doc_override_add(bad[i][0], &err), 0);
    assert_int_equal(ts_doc_parse("p.yaml", text, strlen(text), &doc, &err), 0);
    assert_int_equal(ts_doc_apply_overrides(doc, TS_DOC_PLATFORM, &err), -1);
    assert_non_null(strstr(err.msg, bad[i][1]));
    ts_doc_free(doc);
    ts_doc_overrides_clear();
  }
  /* [*]: the rest of the path in every item of the list. */
  assert_int_equal(ts_doc_override_add("node.nics[*].bandwidth=50GBps", &err), 0);
  assert_int_equal(ts_doc_parse("p.yaml", text, strlen(text), &doc, &err), 0);
  assert_int_equal(ts_doc_apply_overrides(doc, TS_DOC_PLATFORM, &err), 0);
  nics = ts_doc_get(doc, ts_doc_get(doc, ts_doc_root(doc), "node"), "nics");
  for (int k = 0; k < 2; k++) {
    bw = 0;
    assert_int_equal(ts_doc_get_unit(doc, ts_doc_seq_item(doc, nics, k), "bandwidth",
                                     TS_UNITS_BANDWIDTH, false, &bw, &err),
                     1);
    assert_true(bw == 50e9);
  }
  ts_doc_free(doc);
  ts_doc_overrides_clear();
  assert_int_equal(ts_doc_override_add("=3", &err), -1);
  assert_int_equal(ts_doc_override_add("links=3", &err), -1);
  assert_int_equal(ts_doc_override_add("platform.name=x", &err), 0);
  assert_int_equal(ts_doc_overrides_count(TS_DOC_PLATFORM), 1);
  ts_doc_overrides_clear();
}

/* An error's location carries the key's path in its document (bindings raise it as fields). */
static void test_key_paths(void **state) {
  (void)state;
  const char *text = "node:\n  nics:\n    - {bandwidth: 25GBps}\n    - {bandwidth: fast}\n"
                     "network: {routing: minimal}\n";
  ts_doc *doc = NULL;
  ts_err err = {0};
  assert_int_equal(ts_doc_parse("p.yaml", text, strlen(text), &doc, &err), 0);
  int nics = ts_doc_get(doc, ts_doc_get(doc, ts_doc_root(doc), "node"), "nics");
  double bw = 0;
  assert_int_equal(ts_doc_get_unit(doc, ts_doc_seq_item(doc, nics, 1), "bandwidth",
                                   TS_UNITS_BANDWIDTH, false, &bw, &err),
                   -1);
  assert_string_equal(err.key, "node.nics[1].bandwidth");
  assert_string_equal(err.file, "p.yaml");
  assert_int_equal(err.line, 4);
  assert_int_equal(err.col, 19);
  assert_string_equal(err.flag, "");
  int net = ts_doc_get(doc, ts_doc_root(doc), "network");
  ts_doc_missing(doc, net, "network", "link", &err);
  assert_string_equal(err.key, "network.link");
  static const char *const allowed[] = {"nics", NULL};
  err = (ts_err){0};
  assert_int_equal(ts_doc_check_map(doc, net, "network", allowed, &err), -1);
  assert_string_equal(err.key, "network.routing"); /* an unknown key: the key itself */
  assert_null(ts_doc_loc(doc, ts_doc_root(doc)).key);
  ts_doc_free(doc);
  /* A flag's error names the flag, and no file. */
  ts_loc at = {NULL, 0, 0, "--tp", NULL};
  ts_err_at(&err, at, "expected a positive integer");
  assert_string_equal(err.flag, "--tp");
  assert_string_equal(err.key, "");
  assert_string_equal(err.file, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_key_paths),       cmocka_unit_test(test_keys),
      cmocka_unit_test(test_values),          cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_unreadable_file), cmocka_unit_test(test_did_you_mean),
      cmocka_unit_test(test_overrides)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
