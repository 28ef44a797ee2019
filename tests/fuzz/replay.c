/* Runs a fuzz harness over files, without libFuzzer: the regular build replays the seed
 * corpus and every kept crasher (tests/fuzz/crashers/) as a regression test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 1;
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  for (size_t got; (got = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap)
      buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int failures = 0, n_files = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0)
      continue; /* an absent crasher directory is fine */
    if (!S_ISDIR(st.st_mode)) {
      failures += replay_file(argv[i]);
      n_files++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
      if (e->d_name[0] == '.')
        continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      failures += replay_file(path);
      n_files++;
    }
    if (d != NULL)
      closedir(d);
  }
  printf("replayed %d inputs\n", n_files);
  return failures != 0 || n_files == 0;
}
