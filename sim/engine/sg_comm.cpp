// sg_comm: a rate-capped transfer; see sg_comm.h.
#include "sg_comm.h"

#include <cstdint>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Mailbox.hpp>

sg_comm_t ts_sg_put_async(sg_mailbox_t mailbox, void *payload, double bytes, double rate_Bps) {
  simgrid::s4u::CommPtr comm = mailbox->put_init(payload, static_cast<uint64_t>(bytes + 0.5));
  if (rate_Bps > 0)
    comm->set_rate(rate_Bps);
  comm->start();
  comm->add_ref(); // as sg_mailbox_put_async: the C caller holds a reference until it waits
  return comm.get();
}
