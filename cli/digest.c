/* digest: see digest.h. */
#include "digest.h"

#include <stdio.h>
#include <string.h>

void ts_digest_init(ts_digest *d) {
  d->h = 14695981039346656037ULL;
}

void ts_digest_bytes(ts_digest *d, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    d->h ^= p[i];
    d->h *= 1099511628211ULL;
  }
}

void ts_digest_str(ts_digest *d, const char *s) {
  ts_digest_bytes(d, s, strlen(s) + 1);
}

int ts_digest_file(ts_digest *d, const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    ts_digest_str(d, "unreadable:");
    ts_digest_str(d, path);
    return -1;
  }
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;)
    ts_digest_bytes(d, buf, n);
  fclose(f);
  return 0;
}
