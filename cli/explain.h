/* explain: `trainsim explain RESULT_DIR` (and `run --explain`): what limits a simulated
 * iteration and what would help.
 *
 * It rebuilds the run from result.json's recorded inputs (refusing when a file it read has
 * changed), ranks the iteration's losses (pipeline bubble, exposed TP, PP, DP, EP and CP
 * communication, recomputation, idle time, the optimizer step, and unused memory), says for
 * each the mechanism with its numbers, and tries the changes that address it: layout,
 * micro-batch, schedule, virtual stages, overlap options and a faster NIC. Every change is
 * estimated with the analytic fidelity (one pipeline playing for all: no contention), against
 * the same estimate of the run's own layout; the best change of each loss is then simulated at
 * the run's fidelity and compared with the run's iteration time. Changes that break a layout
 * rule are not shown; those that do not fit in memory are, with what they would need.
 */
#ifndef TS_EXPLAIN_H
#define TS_EXPLAIN_H

/* Runs `trainsim explain ...` (argv after "explain"); returns the exit status. */
int ts_explain_main(int argc, char **argv);

#endif
