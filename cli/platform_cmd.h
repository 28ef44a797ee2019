/* platform_cmd: `trainsim platform check|show [FILE]`: validate a platform file, or print
 * what it describes (machine size, GPU, the node's link graph, NICs, the network with its
 * cable counts, injection and bisection bandwidth, diameter). */
#ifndef TS_PLATFORM_CMD_H
#define TS_PLATFORM_CMD_H

#include "args.h"

/* `platform` in the command table (args.h). */
extern const ts_command ts_platform_command;

/* Runs `trainsim platform ...` (argv after "platform"); returns the exit status. */
int ts_platform_main(int argc, char **argv);

#endif
