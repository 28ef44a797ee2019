/* text: names cut between characters, control characters and invalid UTF-8 replaced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../workloads/err.h"
#include "../../workloads/text.h"

static void test_copy(void **state) {
  (void)state;
  char name[64], src[200] = "";
  for (int i = 0; i < 40; i++)
    strcat(src, "\xc3\xa9"); /* "é" x 40: 80 bytes */
  ts_text_copy(name, sizeof name, src);
  assert_int_equal(strlen(name), 62); /* 31 whole characters; the 32nd would leave no NUL */
  assert_memory_equal(name, src, 62);
  ts_text_copy(name, sizeof name,
               "a\x01"
               "b\x7f"
               "c\n");
  assert_string_equal(name, "a?b?c?");
  ts_text_copy(name, sizeof name,
               "x\xc3"
               "y\xff"
               "z\xed\xa0\x80");
  assert_string_equal(name, "x?y?z???"); /* a cut sequence, a bad byte, a surrogate */
  ts_text_copy(name, 4, "ab\xe2\x82\xac"); /* "ab€": the euro sign does not fit in 1 byte */
  assert_string_equal(name, "ab");
  char in_place[] = "ok\x1b[31m\xc3\xa9";
  ts_text_clean(in_place);
  assert_string_equal(in_place, "ok?[31m\xc3\xa9");
}

/* Errors quote input: a terminal escape in a value reaches the message as '?'. */
/* CSV fields: quoted where needed (RFC 4180), and text a spreadsheet would take for a formula
 * shown as text; numbers, negative ones too, left as they are. */
static void test_csv_field(void **state) {
  (void)state;
  const char *cases[][2] = {{"tp", "tp"},
                            {"a,b", "\"a,b\""},
                            {"say \"x\"", "\"say \"\"x\"\"\""},
                            {"=1+2", "\"'=1+2\""},
                            {"@SUM(A1)", "\"'@SUM(A1)\""},
                            {"-3", "-3"},
                            {"+5e3", "+5e3"},
                            {"-x", "\"'-x\""},
                            {"", ""}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    ts_text_csv_field(f, cases[i][0], false);
    fclose(f);
    assert_string_equal(text, cases[i][1]);
    free(text);
  }
}

static void test_error_messages(void **state) {
  (void)state;
  ts_err err = {0};
  ts_loc loc = {"f.yaml", 3, 7, NULL, NULL};
  ts_err_at(&err, loc, "key 'name': found '%s'", "a\x1b[2Jb");
  assert_string_equal(err.msg, "f.yaml:3:7: error: key 'name': found 'a?[2Jb'");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_copy),
                                     cmocka_unit_test(test_error_messages),
                                     cmocka_unit_test(test_csv_field)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
