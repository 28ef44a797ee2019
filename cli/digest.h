/* digest: a fingerprint of everything a study's result depends on (the input files' bytes, the
 * flags, the binary itself), so that a rerun reuses a finished point only when nothing it was
 * computed from has changed. 64-bit FNV-1a: a fingerprint, not a security measure. */
#ifndef TS_DIGEST_H
#define TS_DIGEST_H

#include <stddef.h>
#include <stdint.h>

typedef struct ts_digest {
  uint64_t h;
} ts_digest;

void ts_digest_init(ts_digest *d);
void ts_digest_bytes(ts_digest *d, const void *data, size_t n);
/* A string and its terminating NUL (so that "ab","c" and "a","bc" differ). */
void ts_digest_str(ts_digest *d, const char *s);
/* The bytes of a file; returns -1 (and digests a marker) when it cannot be read. */
int ts_digest_file(ts_digest *d, const char *path);

#endif
