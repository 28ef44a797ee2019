/* Every file in tests/data/bad/ is one bad input. Its first lines say how to run it and the
 * exact error line trainsim must print first on stderr, with exit status 2:
 *   # args: run {file} --gpus 64        ({file} = this file's path from the source tree)
 *   # expect: tests/data/bad/x.yaml:5:11: error: ...
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawn.h"

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The text after `tag` on its line, copied into out; 0 when the tag is absent. */
static int header(const char *text, const char *tag, char *out, size_t size) {
  const char *p = strstr(text, tag);
  if (p == NULL)
    return 0;
  p += strlen(tag);
  size_t n = strcspn(p, "\n");
  snprintf(out, size, "%.*s", (int)n, p);
  return 1;
}

static void replace_file(char *args, size_t size, const char *path) {
  char *at = strstr(args, "{file}");
  if (at == NULL)
    return;
  char rest[512];
  snprintf(rest, sizeof rest, "%s", at + strlen("{file}"));
  snprintf(at, size - (size_t)(at - args), "%s%s", path, rest);
}

static void test_bad_inputs(void **state) {
  (void)state;
  const char *dir_path = TS_SOURCE_DIR "/tests/data/bad";
  DIR *dir = opendir(dir_path);
  assert_non_null(dir);
  char *names[512];
  int n = 0;
  for (struct dirent *e; (e = readdir(dir)) != NULL && n < 512;)
    if (e->d_name[0] != '.')
      names[n++] = strdup(e->d_name);
  closedir(dir);
  qsort(names, (size_t)n, sizeof *names, by_name);
  assert_true(n >= 40);
  int failures = 0;
  for (int i = 0; i < n; i++) {
    char path[1024], rel[600], args[1024], expect[1024];
    snprintf(path, sizeof path, "%s/%s", dir_path, names[i]);
    snprintf(rel, sizeof rel, "tests/data/bad/%s", names[i]);
    char *text = read_file(path, NULL);
    assert_non_null(text);
    if (!header(text, "# args: ", args, sizeof args) ||
        !header(text, "# expect: ", expect, sizeof expect)) {
      fprintf(stderr, "%s: needs '# args:' and '# expect:' lines\n", rel);
      failures++;
      free(text);
      continue;
    }
    free(text);
    replace_file(args, sizeof args, rel);
    spawn_result r = spawn_trainsim(args);
    char first[1024];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(r.err ? r.err : "", "\n"),
             r.err ? r.err : "");
    if (r.status != 2 || strcmp(first, expect) != 0) {
      fprintf(stderr, "%s:\n  args:     %s\n  expected: %s (exit 2)\n  got:      %s (exit %d)\n",
              rel, args, expect, first, r.status);
      failures++;
    }
    spawn_free(&r);
    free(names[i]);
  }
  assert_int_equal(failures, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bad_inputs)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
