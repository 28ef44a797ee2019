/* caching_allocator: see caching_allocator.h. Free blocks sit in one sorted array per pool and
 * stream, ordered as BlockComparatorSize orders its std::set (size, then address), so that best
 * fit is a binary search; segments are chains of blocks linked by prev/next. */
#include "caching_allocator.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

/* CUDACachingAllocator.cpp's constants (c10/core/AllocatorConfig.h in the newest copies) */
#define MIN_BLOCK_BYTES 512ULL /* kMinBlockSize: requests round to this */
#define SMALL_BYTES (1ULL << 20) /* kSmallSize: the small pool's largest */
#define SMALL_BUFFER_BYTES (2ULL << 20) /* kSmallBuffer: a small pool's segment */
#define LARGE_BUFFER_BYTES (20ULL << 20) /* kLargeBuffer: a mid-size request's */
#define MIN_LARGE_ALLOC_BYTES (10ULL << 20) /* kMinLargeAlloc */
#define ROUND_LARGE_BYTES (2ULL << 20) /* kRoundLarge */
#define POOLS (2 * TS_CACHING_ALLOCATOR_STREAMS) /* small and large, a pair per stream */

typedef struct block {
  uint64_t addr, size;
  long prev, next; /* neighbours in the segment, -1 at its ends */
  int pool; /* 2 x stream + (1 if large) */
  bool is_allocated, is_used;
} block;

typedef struct free_list {
  long *blocks; /* handles, by (size, address) */
  long n, cap;
} free_list;

struct ts_caching_allocator {
  /* Where the driver puts the next segment: below every segment before it (the newest lowest,
   * so best fit's tie between free blocks of one size goes to the newest segment). Measured:
   * the CUDA 13 driver on an H100, in a fresh process, placed each new segment below the last
   * once the process's first reservation (its first 2 GiB or so, packed upward) was full
   * (bench/device/h100_alloc_trace_fresh.csv.gz); that first reservation is not modelled. */
  uint64_t capacity_bytes, next_addr;
  uint64_t placed_addr; /* the next segment's address, given by a replay (0: none) */
  block *blocks;
  long n_blocks, cap_blocks;
  long *unused; /* slots of merged or released blocks, for reuse */
  long n_unused;
  free_list pools[POOLS];
  ts_caching_allocator_stats st;
};

ts_caching_allocator *ts_caching_allocator_new(uint64_t capacity_bytes) {
  ts_caching_allocator *a = ts_alloc(1, sizeof *a);
  a->capacity_bytes = capacity_bytes;
  a->next_addr = 1ULL << 47; /* the top of a 48-bit space: room below for any device */
  return a;
}

void ts_caching_allocator_delete(ts_caching_allocator *a) {
  if (a == NULL)
    return;
  for (int p = 0; p < POOLS; p++)
    free(a->pools[p].blocks);
  free(a->blocks);
  free(a->unused);
  free(a);
}

const ts_caching_allocator_stats *ts_caching_allocator_stats_of(const ts_caching_allocator *a) {
  return &a->st;
}

static long new_block(ts_caching_allocator *a, uint64_t addr, uint64_t size, int pool) {
  long h;
  if (a->n_unused > 0) {
    h = a->unused[--a->n_unused];
  } else {
    if (a->n_blocks == a->cap_blocks) {
      a->cap_blocks = a->cap_blocks ? 2 * a->cap_blocks : 1024;
      a->blocks = realloc(a->blocks, (size_t)a->cap_blocks * sizeof *a->blocks);
      a->unused = realloc(a->unused, (size_t)a->cap_blocks * sizeof *a->unused);
      TS_ASSERT(a->blocks != NULL && a->unused != NULL);
    }
    h = a->n_blocks++;
  }
  a->blocks[h] = (block){addr, size, -1, -1, pool, false, true};
  a->st.n_blocks++;
  return h;
}

static void drop_block(ts_caching_allocator *a, long h) {
  a->blocks[h].is_used = false;
  a->unused[a->n_unused++] = h;
  a->st.n_blocks--;
}

static bool is_split(const block *b) {
  return b->prev >= 0 || b->next >= 0;
}

static bool before(const block *x, uint64_t size, uint64_t addr) {
  return x->size < size || (x->size == size && x->addr < addr);
}

/* The first position in the list whose block is not before (size, addr). */
static long lower_bound(const ts_caching_allocator *a, const free_list *l, uint64_t size,
                        uint64_t addr) {
  long lo = 0, hi = l->n;
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    if (before(&a->blocks[l->blocks[mid]], size, addr))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void list_insert(ts_caching_allocator *a, long h) {
  block *b = &a->blocks[h];
  free_list *l = &a->pools[b->pool];
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->blocks = realloc(l->blocks, (size_t)l->cap * sizeof *l->blocks);
    TS_ASSERT(l->blocks != NULL);
  }
  long at = lower_bound(a, l, b->size, b->addr);
  memmove(l->blocks + at + 1, l->blocks + at, (size_t)(l->n - at) * sizeof *l->blocks);
  l->blocks[at] = h;
  l->n++;
  if (is_split(b))
    a->st.inactive_split_bytes += b->size;
}

static void list_remove(ts_caching_allocator *a, long h) {
  block *b = &a->blocks[h];
  free_list *l = &a->pools[b->pool];
  long at = lower_bound(a, l, b->size, b->addr);
  TS_ASSERT(at < l->n && l->blocks[at] == h);
  memmove(l->blocks + at, l->blocks + at + 1, (size_t)(l->n - at - 1) * sizeof *l->blocks);
  l->n--;
  if (is_split(b))
    a->st.inactive_split_bytes -= b->size;
}

/* release_cached_blocks: every segment that is one free block goes back to the driver */
static void release_cached(ts_caching_allocator *a) {
  for (int p = 0; p < POOLS; p++) {
    free_list *l = &a->pools[p];
    long kept = 0;
    for (long i = 0; i < l->n; i++) {
      long h = l->blocks[i];
      if (is_split(&a->blocks[h])) {
        l->blocks[kept++] = h;
        continue;
      }
      a->st.reserved_bytes -= a->blocks[h].size;
      a->st.n_segments--;
      drop_block(a, h);
    }
    l->n = kept;
  }
}

void ts_caching_allocator_empty_cache(ts_caching_allocator *a) {
  release_cached(a);
}

static uint64_t round_up(uint64_t n, uint64_t to) {
  return (n + to - 1) / to * to;
}

/* get_allocation_size: the segment cudaMalloc'ed for a request of size (rounded) bytes */
static uint64_t segment_bytes(uint64_t size) {
  if (size <= SMALL_BYTES)
    return SMALL_BUFFER_BYTES;
  if (size < MIN_LARGE_ALLOC_BYTES)
    return LARGE_BUFFER_BYTES;
  return round_up(size, ROUND_LARGE_BYTES);
}

static void note_peaks(ts_caching_allocator_stats *st) {
  if (st->allocated_bytes > st->peak_allocated_bytes)
    st->peak_allocated_bytes = st->allocated_bytes;
  if (st->reserved_bytes > st->peak_reserved_bytes)
    st->peak_reserved_bytes = st->reserved_bytes;
}

long ts_caching_allocator_malloc(ts_caching_allocator *a, uint64_t bytes, int stream) {
  TS_ASSERT(stream >= 0 && stream < TS_CACHING_ALLOCATOR_STREAMS);
  uint64_t size = bytes < MIN_BLOCK_BYTES ? MIN_BLOCK_BYTES : round_up(bytes, MIN_BLOCK_BYTES);
  bool small = size <= SMALL_BYTES;
  int pool = 2 * stream + (small ? 0 : 1);
  free_list *l = &a->pools[pool];
  long at = lower_bound(a, l, size, 0), h;
  if (at < l->n) { /* best fit: the smallest cached block that holds it */
    h = l->blocks[at];
    list_remove(a, h);
  } else {
    uint64_t seg = segment_bytes(size);
    if (a->st.reserved_bytes + seg > a->capacity_bytes) { /* cudaMalloc fails: flush, retry */
      release_cached(a);
      a->st.n_retries++;
      if (a->st.reserved_bytes + seg > a->capacity_bytes) {
        if (!a->st.is_out_of_memory) {
          a->st.is_out_of_memory = true;
          a->st.failed_request_bytes = bytes;
          a->st.failed_reserved_bytes = a->st.reserved_bytes;
          a->st.failed_allocated_bytes = a->st.allocated_bytes;
        }
        return -1;
      }
    }
    if (a->placed_addr == 0)
      a->next_addr -= seg;
    h = new_block(a, a->placed_addr != 0 ? a->placed_addr : a->next_addr, seg, pool);
    a->placed_addr = 0;
    a->st.reserved_bytes += seg;
    a->st.n_segments++;
  }
  block *b = &a->blocks[h];
  uint64_t rest = b->size - size;
  if (small ? rest >= MIN_BLOCK_BYTES : rest > SMALL_BYTES) { /* should_split */
    long r = new_block(a, b->addr + size, rest, pool);
    b = &a->blocks[h]; /* new_block may move the array */
    block *rb = &a->blocks[r];
    rb->prev = h;
    rb->next = b->next;
    if (b->next >= 0)
      a->blocks[b->next].prev = r;
    b->next = r;
    b->size = size;
    list_insert(a, r);
  }
  b->is_allocated = true;
  a->st.allocated_bytes += b->size;
  note_peaks(&a->st);
  return h;
}

/* try_merge_blocks: absorbs a free neighbour into h; returns the surviving block */
static long merge(ts_caching_allocator *a, long h, long other) {
  if (other < 0 || a->blocks[other].is_allocated)
    return h;
  list_remove(a, other);
  block *b = &a->blocks[h], *o = &a->blocks[other];
  long first = b->addr < o->addr ? h : other, second = first == h ? other : h;
  block *f = &a->blocks[first], *s = &a->blocks[second];
  f->size += s->size;
  f->next = s->next;
  if (s->next >= 0)
    a->blocks[s->next].prev = first;
  drop_block(a, second);
  return first;
}

void ts_caching_allocator_free(ts_caching_allocator *a, long handle) {
  TS_ASSERT(handle >= 0 && handle < a->n_blocks && a->blocks[handle].is_used &&
            a->blocks[handle].is_allocated);
  block *b = &a->blocks[handle];
  b->is_allocated = false;
  a->st.allocated_bytes -= b->size;
  long h = merge(a, handle, b->prev);
  h = merge(a, h, a->blocks[h].next);
  list_insert(a, h);
  note_peaks(&a->st);
}

void ts_caching_allocator_place_next_segment(ts_caching_allocator *a, uint64_t addr) {
  a->placed_addr = addr;
}

uint64_t ts_caching_allocator_address(const ts_caching_allocator *a, long handle) {
  return a->blocks[handle].addr;
}
