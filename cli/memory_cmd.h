/* memory_cmd: `trainsim memory WORKLOAD [options]`: memory per GPU of each pipeline stage, the
 * model states in all, and the layout with the fewest GPUs that fits. No simulation. */
#ifndef TS_MEMORY_CMD_H
#define TS_MEMORY_CMD_H

#include "args.h"

/* `memory` in the command table (args.h). */
extern const ts_command ts_memory_command;

/* Runs `trainsim memory ...` (argv after "memory"); returns the exit status. */
int ts_memory_cmd_main(int argc, char **argv);

#endif
