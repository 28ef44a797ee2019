/* alloc: see alloc.h. */
#include "alloc.h"

#include <stdlib.h>

#include "err.h"

void *ts_alloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  TS_ASSERT(p != NULL);
  return p;
}
