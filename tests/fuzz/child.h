/* What the harnesses that fork (fuzz_sim, fuzz_argv) do in the child: a sanitizer's report
 * ends in abort(), not in exit status 1, which trainsim itself uses, so that the parent can
 * tell a finding from an exit. */
#ifndef TS_FUZZ_CHILD_H
#define TS_FUZZ_CHILD_H

#include <stdlib.h>

/* Present only in sanitized builds (compiler-rt's common interface). */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static inline void fuzz_child_init(void) {
  if (__sanitizer_set_death_callback != NULL)
    __sanitizer_set_death_callback(abort);
}

#endif
