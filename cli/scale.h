/* scale: `trainsim scale WORKLOAD --gpus N1,N2,... --weak|--strong`, a scaling study.
 *
 * Weak scaling grows the global batch with the GPU count (batch x N / N1); strong scaling
 * keeps it. Each point is simulated in its own process; scale.csv in --out is rewritten whole
 * after each point, so an interrupted study keeps its finished points, and a rerun with the
 * same study reuses them. Progress goes to stderr when it is a terminal.
 */
#ifndef TS_SCALE_H
#define TS_SCALE_H

#include "args.h"

/* `scale` in the command table (args.h). */
extern const ts_command ts_scale_command;

/* Runs `trainsim scale ...` (argv after "scale"); returns the exit status. */
int ts_scale_main(int argc, char **argv);

#endif
