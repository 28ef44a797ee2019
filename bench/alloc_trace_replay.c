/* Replays the caching-allocator traces that bench/device/alloc_trace.py recorded on a GPU
 * (PyTorch's own allocator, every request and free of a real run) through trainsim's model of
 * that allocator (workloads/caching_allocator.c), to check its rules apart from the requests
 * trainsim generates. Validation only: nothing here sets a parameter.
 *
 *   zcat bench/device/h100_alloc_trace.csv.gz | build/alloc_trace_replay [--addresses]
 *
 * With --addresses each segment the replay makes takes the device address the trace's segment
 * line gives (traces recorded since 2026-12-07 carry them), as the driver placed it: PyTorch's
 * best fit breaks ties between free blocks of one size by address. Without, the replay places
 * each segment below the ones it made before, as the driver does once a process's first
 * reservation is full (workloads/caching_allocator.c). Where the trace also gives each
 * block's address (recorded since 2026-12-07 18:45 UTC), --addresses reports on stderr, for each
 * configuration, the first request whose block the replay placed elsewhere than the real
 * allocator did (within a segment the trace made): where the two first part.
 * For each configuration (a C line) it prints, CSV: the configuration, what the real allocator
 * did (ran, or the size of the request that ran out of memory; its peak of reserved bytes and
 * the segments it cudaMalloc'ed) and what the replay did with the same requests in the same
 * memory (the free bytes the run began with, plus the segments already held then). "same" is
 * whether both ran, or both failed at the same request. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../workloads/caching_allocator.h"

#define MAX_LINE 512
/* Live segments compared by --addresses; the AMP trace's rungs make under 600. */
#define MAX_TRACED_SEGMENTS 4096

typedef struct run {
  char config[MAX_LINE];
  uint64_t free_bytes, held_bytes; /* cudaMemGetInfo's free at the start; segments held then */
  uint64_t held_total[8], held_used[8]; /* those segments: their size and what is in use */
  bool held_small[8];
  int n_held;
  long *handles; /* by trace id */
  long n_handles;
  ts_caching_allocator *a;
  /* the real allocator */
  uint64_t reserved, peak_reserved, real_failed;
  long real_segments;
  /* the replay */
  bool replay_failed;
  uint64_t replay_failed_at; /* the request that failed */
  long requests; /* requests seen (A lines) */
  long real_failed_after; /* requests before the real failure */
  long replay_failed_after; /* requests before the replay's failure */
  /* --addresses: the trace's live segments, and the first block placed apart */
  uint64_t seg_addr[MAX_TRACED_SEGMENTS], seg_size[MAX_TRACED_SEGMENTS];
  int n_segs;
  long parted_at; /* its request index + 1; 0: none */
  uint64_t parted_bytes, parted_real, parted_replay;
} run;

/* Whether addr lies in a segment the trace made (not one held before it began). */
static bool in_traced_segment(const run *r, uint64_t addr) {
  for (int i = 0; i < r->n_segs; i++)
    if (addr >= r->seg_addr[i] && addr < r->seg_addr[i] + r->seg_size[i])
      return true;
  return false;
}

static void flush(run *r) {
  if (r->config[0] == '\0')
    return;
  const ts_caching_allocator_stats *st = r->a != NULL ? ts_caching_allocator_stats_of(r->a) : NULL;
  bool real_oom = r->real_failed > 0;
  bool same =
      real_oom == r->replay_failed && (!real_oom || r->real_failed_after == r->replay_failed_after);
  printf("%s,%s,%" PRIu64 ",%" PRIu64 ",%ld,%s,%" PRIu64 ",%" PRIu64 ",%s\n", r->config,
         real_oom ? "oom" : "ran", r->real_failed, r->peak_reserved, r->real_segments,
         r->replay_failed ? "oom" : "ran", r->replay_failed_at,
         st != NULL ? st->peak_reserved_bytes : 0, same ? "same" : "DIFFERENT");
  if (r->parted_at > 0)
    fprintf(stderr,
            "alloc_trace_replay: %s: request %ld (%" PRIu64 " bytes) placed at %#" PRIx64
            ", the real allocator's at %#" PRIx64 "\n",
            r->config, r->parted_at - 1, r->parted_bytes, r->parted_replay, r->parted_real);
  if (r->a != NULL)
    ts_caching_allocator_delete(r->a);
  free(r->handles);
  memset(r, 0, sizeof *r);
}

static long *handle_slot(run *r, long id) {
  if (id >= r->n_handles) {
    long n = id * 2 + 1024;
    r->handles = realloc(r->handles, (size_t)n * sizeof *r->handles);
    if (r->handles == NULL) {
      fprintf(stderr, "alloc_trace_replay: out of memory\n");
      exit(1);
    }
    for (long i = r->n_handles; i < n; i++)
      r->handles[i] = -1;
    r->n_handles = n;
  }
  return &r->handles[id];
}

/* The replay's allocator, made at the first event after the held segments are known: each
 * held segment made again with its blocks in use at its start (the libraries' workspaces, and
 * what a segment holding one of them keeps free beside it), the rest of its size free. */
static ts_caching_allocator *allocator(run *r) {
  if (r->a != NULL)
    return r->a;
  r->a = ts_caching_allocator_new(r->free_bytes + r->held_bytes);
  for (int i = 0; i < r->n_held; i++) {
    if (r->held_small[i]) { /* a small request makes its 2 MiB segment */
      ts_caching_allocator_malloc(r->a, r->held_used[i], 0);
      continue;
    }
    long whole = ts_caching_allocator_malloc(r->a, r->held_total[i], 0);
    if (r->held_used[i] < r->held_total[i]) { /* the segment, then its used part split off */
      ts_caching_allocator_free(r->a, whole);
      ts_caching_allocator_malloc(r->a, r->held_used[i], 0);
    }
  }
  return r->a;
}

int main(int argc, char **argv) {
  bool at_addresses = argc == 2 && strcmp(argv[1], "--addresses") == 0;
  if (argc > 2 || (argc == 2 && !at_addresses)) {
    fprintf(stderr, "usage: alloc_trace_replay [--addresses] < trace.csv\n");
    return 2;
  }
  char line[MAX_LINE];
  run r;
  memset(&r, 0, sizeof r);
  printf("kind,name,layers,hidden,heads,kv_heads,ffn,seq,micro_batch,microbatches,recompute,"
         "measured,measured_failed_request,measured_peak_reserved,measured_segments,replay,"
         "replay_failed_request,replay_peak_reserved,same\n");
  while (fgets(line, sizeof line, stdin) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    long id = 0, stream = 0;
    uint64_t bytes = 0, total = 0;
    if (line[0] == 'C') {
      flush(&r);
      char *free_at = strstr(line, ",free ");
      char *status = free_at;
      while (status > line && status[-1] != ',')
        status--;
      if (free_at == NULL || status <= line + 2) {
        fprintf(stderr, "alloc_trace_replay: a C line without its status and free bytes: %s\n",
                line);
        return 2;
      }
      r.free_bytes = strtoull(free_at + 6, NULL, 10);
      snprintf(r.config, sizeof r.config, "%.*s", (int)(status - 1 - (line + 2)), line + 2);
    } else if (sscanf(line, "I,%" SCNu64 ",%" SCNu64, &total, &bytes) == 2 && r.a == NULL &&
               r.n_held < 8) {
      r.held_total[r.n_held] = total;
      r.held_used[r.n_held] = bytes;
      r.held_small[r.n_held++] = strstr(line, ",small") != NULL;
      r.held_bytes += total;
      r.reserved += total;
      r.peak_reserved = r.reserved;
    } else if (sscanf(line, "A,%ld,%" SCNu64 ",%ld", &id, &bytes, &stream) == 3) {
      uint64_t real_addr = 0;
      if (r.real_failed > 0)
        continue;
      long seen = r.requests++;
      if (r.replay_failed)
        continue;
      long h = ts_caching_allocator_malloc(allocator(&r), bytes, (int)stream);
      if (h < 0) {
        r.replay_failed = true;
        r.replay_failed_at = bytes;
        r.replay_failed_after = seen;
        continue;
      }
      *handle_slot(&r, id) = h;
      if (at_addresses && r.parted_at == 0 &&
          sscanf(line, "A,%*[0-9],%*[0-9],%*[0-9],%" SCNu64, &real_addr) == 1 &&
          in_traced_segment(&r, real_addr) && ts_caching_allocator_address(r.a, h) != real_addr) {
        r.parted_at = seen + 1;
        r.parted_bytes = bytes;
        r.parted_real = real_addr;
        r.parted_replay = ts_caching_allocator_address(r.a, h);
      }
    } else if (sscanf(line, "F,%ld", &id) == 1) {
      if (r.replay_failed || id >= r.n_handles || r.handles[id] < 0)
        continue;
      ts_caching_allocator_free(allocator(&r), r.handles[id]);
      r.handles[id] = -1;
    } else if (sscanf(line, "S,%" SCNu64, &bytes) == 1) {
      uint64_t addr = 0;
      if (at_addresses && sscanf(line, "S,%*[0-9],%" SCNu64, &addr) == 1) {
        if (!r.replay_failed)
          ts_caching_allocator_place_next_segment(allocator(&r), addr);
        if (r.n_segs < MAX_TRACED_SEGMENTS) {
          r.seg_addr[r.n_segs] = addr;
          r.seg_size[r.n_segs++] = bytes;
        }
      }
      r.reserved += bytes;
      r.real_segments++;
      if (r.reserved > r.peak_reserved)
        r.peak_reserved = r.reserved;
    } else if (sscanf(line, "X,%" SCNu64, &bytes) == 1) {
      uint64_t addr = 0;
      r.reserved -= bytes;
      if (sscanf(line, "X,%*[0-9],%" SCNu64, &addr) == 1)
        for (int i = 0; i < r.n_segs; i++)
          if (r.seg_addr[i] == addr) {
            r.seg_addr[i] = r.seg_addr[--r.n_segs];
            r.seg_size[i] = r.seg_size[r.n_segs];
            break;
          }
    } else if (sscanf(line, "O,%" SCNu64, &bytes) == 1) {
      if (r.real_failed > 0)
        continue;
      r.real_failed = bytes;
      r.real_failed_after = r.requests;
      if (!r.replay_failed) { /* the same request in the replay */
        long h = ts_caching_allocator_malloc(allocator(&r), bytes, 0);
        if (h < 0) {
          r.replay_failed = true;
          r.replay_failed_at = bytes;
          r.replay_failed_after = r.requests;
        }
      }
    } else if (strcmp(line, "M,emptied") == 0) {
      ts_caching_allocator_empty_cache(allocator(&r));
    }
  }
  flush(&r);
  return 0;
}
