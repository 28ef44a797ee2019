/* search: `trainsim search WORKLOAD --gpus N [--top K]`, the layout search the Frontier study's
 * authors ran by hand.
 *
 * Enumerates every layout of N GPUs: tensor parallelism (a divisor of the GPUs per node that
 * divides the heads), pipeline parallelism (dividing the layers), data parallelism (the rest),
 * micro-batch 1, 2 or 4, virtual stages 1 or 2, recomputation none / selective / full, ZeRO 0
 * or 1 (2 and 3 without a pipeline), sequence parallelism off or on. Each candidate is checked
 * (the workload's rules), then for memory, then played with the analytic fidelity in this
 * process; the K fastest are simulated with the full engine (aggregate fidelity), each in its
 * own process. Prints the top K, counts of rejected candidates by reason, and writes every
 * candidate to search.csv in --out.
 */
#ifndef TS_CLI_SEARCH_H
#define TS_CLI_SEARCH_H

#include "args.h"

/* `search` in the command table (args.h). */
extern const ts_command ts_search_command;

/* Runs `trainsim search ...` (argv after "search"); returns the exit status. */
int ts_search_main(int argc, char **argv);

#endif
