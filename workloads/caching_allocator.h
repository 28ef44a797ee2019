/* caching_allocator: PyTorch's CUDA caching allocator replayed request by request, under its
 * default configuration, to decide whether a step that fits in bytes also finds its blocks.
 *
 * The rules are c10/cuda/CUDACachingAllocator.cpp's (DeviceCachingAllocator, read at PyTorch
 * 2.4-2.5 and unchanged in the newer copies read; PYTORCH_CUDA_ALLOC_CONF unset):
 *  - a request is rounded up to 512 bytes (round_size; roundup_power2_divisions off) and served
 *    from the small pool (<= 1 MiB) or the large one, by best fit among the cached free blocks
 *    of its own stream (get_free_block: the smallest block at least as large, ties by address);
 *  - on a miss a segment is cudaMalloc'ed (get_allocation_size: 2 MiB for a small request, 20 MiB
 *    below 10 MiB, else the request rounded up to 2 MiB); the block taken from a cached block or
 *    a new segment is split when the rest is worth keeping (should_split: >= 512 bytes in the
 *    small pool, > 1 MiB in the large one), the request at the low address;
 *  - a freed block merges with free neighbours of its own segment (try_merge_blocks) and goes
 *    back to its pool: the driver gets nothing back until a cudaMalloc fails;
 *  - then every cached segment that is one free block is cudaFree'd (release_cached_blocks) and
 *    the cudaMalloc retried once; if that fails too, out of memory.
 * max_split_size_mb, garbage collection and memory fractions are off by default and not modelled;
 * nor are record_stream's deferred frees (a free here returns the block at once). cudaMalloc is
 * modelled as succeeding while the segments' bytes stay within the capacity given (the device's
 * free memory less what the process holds outside the allocator).
 *
 * Blocks are named by handles (>= 0) that stay valid until freed. Deterministic: the same
 * requests give the same blocks, segments and verdict. */
#ifndef TS_CACHING_ALLOCATOR_H
#define TS_CACHING_ALLOCATOR_H

#include <stdbool.h>
#include <stdint.h>

#define TS_CACHING_ALLOCATOR_STREAMS 4 /* streams a replay may name: 0 .. this - 1 */

typedef struct ts_caching_allocator ts_caching_allocator;

/* What the allocator's memory_stats would say: bytes of blocks handed out (their rounded sizes
 * with any unsplit rest, as allocated_bytes counts them), of segments held (reserved_bytes), of
 * free blocks inside segments that also hold a live block (inactive_split_bytes), the first two
 * with peaks; the cache flushes made to satisfy a request (num_alloc_retries); and the request that
 * failed. */
typedef struct ts_caching_allocator_stats {
  uint64_t allocated_bytes, reserved_bytes, inactive_split_bytes;
  uint64_t peak_allocated_bytes, peak_reserved_bytes;
  long n_retries, n_segments, n_blocks;
  bool is_out_of_memory;
  uint64_t failed_request_bytes; /* the first request that ran out of memory */
  /* reserved and allocated when it failed (the error's "reserved but unallocated" is the
   * difference: the fragmentation) */
  uint64_t failed_reserved_bytes, failed_allocated_bytes;
} ts_caching_allocator_stats;

/* A new, empty allocator whose segments may total capacity_bytes. Never NULL (aborts when the
 * host runs out of memory, as ts_alloc does). */
ts_caching_allocator *ts_caching_allocator_new(uint64_t capacity_bytes);
void ts_caching_allocator_delete(ts_caching_allocator *a);

/* A block of at least bytes on stream (0 .. TS_CACHING_ALLOCATOR_STREAMS - 1): its handle, or
 * -1 when the allocator runs out of memory (recorded in the stats; the state is left as the
 * allocator leaves it, its cache flushed). */
long ts_caching_allocator_malloc(ts_caching_allocator *a, uint64_t bytes, int stream);
/* Returns a live block to its pool; handle must be one malloc returned and not yet freed. */
void ts_caching_allocator_free(ts_caching_allocator *a, long handle);
/* torch.cuda.empty_cache(): every segment that is one free block goes back to the driver. */
void ts_caching_allocator_empty_cache(ts_caching_allocator *a);
/* The device address of the next segment the allocator makes (a replay of a real trace, whose
 * driver chose it: best fit breaks ties between free blocks of one size by address); without
 * it each segment takes an address below every segment made before it, as the CUDA driver placed
 * them (caching_allocator.c). */
void ts_caching_allocator_place_next_segment(ts_caching_allocator *a, uint64_t addr);
/* The device address of a live block (its segment's, placed or not, plus its offset there). */
uint64_t ts_caching_allocator_address(const ts_caching_allocator *a, long handle);

const ts_caching_allocator_stats *ts_caching_allocator_stats_of(const ts_caching_allocator *a);

#endif
