/* alloc: the one allocation helper. trainsim treats running out of memory as fatal (a bug-class
 * failure, TS_ASSERT): no caller can do better than stop, and a NULL check at every site would
 * only hide the few that forget it. */
#ifndef TS_ALLOC_H
#define TS_ALLOC_H

#include <stddef.h>

/* A zeroed array of n elements of size bytes (at least one element, so that n = 0 still gives
 * a pointer to free()). Aborts when memory runs out. */
void *ts_alloc(size_t n, size_t size);

#endif
