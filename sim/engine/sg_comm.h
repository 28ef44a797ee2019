/* sg_comm: a transfer with a rate ceiling. SimGrid 3.32's C API starts transfers only at the
 * links' pace (sg_mailbox_put_async); s4u::Comm::set_rate, which caps one transfer's rate
 * (for example a collective library's per-channel throughput), has no C binding, so this is
 * the one call made from C++ (sg_comm.cpp). */
#ifndef TS_SG_COMM_H
#define TS_SG_COMM_H

#include <simgrid/forward.h>

#ifdef __cplusplus
extern "C" {
#endif

/* As sg_mailbox_put_async, at no more than rate_Bps (bytes per second; <= 0: no ceiling). */
sg_comm_t ts_sg_put_async(sg_mailbox_t mailbox, void *payload, double bytes, double rate_Bps);

#ifdef __cplusplus
}
#endif

#endif
