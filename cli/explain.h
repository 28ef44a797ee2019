/* explain: `trainsim explain RESULT_DIR` (and `run --explain`): the front-end of the loss model
 * (analysis/explain.h). It reads result.json back (analysis/report.h), rebuilds the run from
 * the arguments it records (refusing when a file it read has changed), vets, estimates and
 * simulates the changes the model proposes through the study pool, and prints the model's
 * explanation. Every change is estimated with the analytic fidelity (one pipeline playing for
 * all: no contention), against the same estimate of the run's own layout; the best changes of
 * each loss are then simulated at the run's fidelity and compared with the run's iteration.
 */
#ifndef TS_CLI_EXPLAIN_H
#define TS_CLI_EXPLAIN_H

#include "args.h"

/* `explain` in the command table (args.h). */
extern const ts_command ts_explain_command;

/* Runs `trainsim explain ...` (argv after "explain"); returns the exit status. */
int ts_explain_main(int argc, char **argv);

#endif
