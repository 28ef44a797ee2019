/* child: see child.h. Built without coverage instrumentation (tests/fuzz/CMakeLists.txt): the
 * section bounds it declares would otherwise replace the ones clang's module constructor
 * registers with libFuzzer. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "child.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Present only in instrumented builds (compiler-rt, and the linker's section bounds). */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));
extern uint8_t __start___sancov_cntrs[] __attribute__((weak));
extern uint8_t __stop___sancov_cntrs[] __attribute__((weak));

static uint8_t *shared_counters;

static size_t n_counters(void) {
  return __start___sancov_cntrs == NULL ? 0
                                        : (size_t)(__stop___sancov_cntrs - __start___sancov_cntrs);
}

void fuzz_coverage_init(void) {
  size_t n = n_counters();
  if (n == 0 || shared_counters != NULL)
    return;
  void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  shared_counters = m == MAP_FAILED ? NULL : m;
}

void fuzz_child_init(void) {
  if (__sanitizer_set_death_callback != NULL)
    __sanitizer_set_death_callback(abort);
}

void fuzz_child_exit(int status) {
  if (shared_counters != NULL)
    memcpy(shared_counters, __start___sancov_cntrs, n_counters());
  _exit(status);
}

static void fuzz_coverage_merge(void) {
  if (shared_counters == NULL)
    return;
  size_t n = n_counters();
  for (size_t i = 0; i < n; i++)
    if (shared_counters[i] > __start___sancov_cntrs[i])
      __start___sancov_cntrs[i] = shared_counters[i];
  memset(shared_counters, 0, n);
}

int fuzz_wait_child(int pid) {
  int status = 0;
  pid_t got;
  while ((got = waitpid((pid_t)pid, &status, 0)) < 0 && errno == EINTR) /* libFuzzer's SIGALRM */
    ;
  if (got != (pid_t)pid) {
    fprintf(stderr, "fuzz: waiting for process %d: %s\n", pid, strerror(errno));
    abort();
  }
  fuzz_coverage_merge();
  return status;
}
