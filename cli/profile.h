/* profile: `trainsim profile WORKLOAD [options]`: every kernel of one transformer layer with
 * its shape, predicted time, what priced it (kernel table, interpolation or roofline) and its
 * share of the layer, and whether the host or the GPU bounds each pass. No simulation. */
#ifndef TS_PROFILE_H
#define TS_PROFILE_H

#include "args.h"

/* `profile` in the command table (args.h). */
extern const ts_command ts_profile_command;

/* Runs `trainsim profile ...` (argv after "profile"); returns the exit status. */
int ts_profile_main(int argc, char **argv);

#endif
