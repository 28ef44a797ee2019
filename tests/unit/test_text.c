/* text: names cut between characters, control characters and invalid UTF-8 replaced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
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
static void test_error_messages(void **state) {
  (void)state;
  ts_err err = {0};
  ts_loc loc = {"f.yaml", 3, 7, NULL, NULL};
  ts_err_at(&err, loc, "key 'name': found '%s'", "a\x1b[2Jb");
  assert_string_equal(err.msg, "f.yaml:3:7: error: key 'name': found 'a?[2Jb'");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_copy),
                                     cmocka_unit_test(test_error_messages)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
