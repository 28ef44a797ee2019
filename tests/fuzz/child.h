/* What the harnesses that fork (fuzz_sim, fuzz_argv) share. The child's work runs in its own
 * address space, where libFuzzer does not see it; so, in a build with coverage, the child
 * copies its edge counters (clang's inline 8-bit counters, section __sancov_cntrs) into shared
 * memory before it exits and the parent folds them into its own, as if it had run the code.
 * And a sanitizer's report ends in abort(), not in exit status 1, which trainsim itself uses,
 * so that the parent can tell a finding from an exit. */
#ifndef TS_FUZZ_CHILD_H
#define TS_FUZZ_CHILD_H

/* Before the first fork. */
void fuzz_coverage_init(void);
/* In the child, first. */
void fuzz_child_init(void);
/* In the child, instead of _exit. */
void fuzz_child_exit(int status);
/* In the parent: waits for the child (through libFuzzer's timer signals) and folds its
 * coverage in; returns its wait status. */
int fuzz_wait_child(int pid);

#endif
