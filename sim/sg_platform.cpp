// sg_platform: the SimGrid platform construction that has no C API; see sg_platform.h.
#include "sg_platform.h"

#include <simgrid/s4u.hpp>
#include <vector>

namespace sg4 = simgrid::s4u;

void ts_sg_platform_build(long n_hosts, const char *const *host_names, double speed_flops_per_s,
                          long n_links, const ts_sg_link *links, long n_routes,
                          const ts_sg_route *routes) {
  sg4::NetZone *zone = sg4::create_full_zone("machine");
  std::vector<sg4::Host *> hosts;
  hosts.reserve(static_cast<size_t>(n_hosts));
  for (long i = 0; i < n_hosts; i++)
    hosts.push_back(zone->create_host(host_names[i], speed_flops_per_s)->seal());
  std::vector<sg4::Link *> made;
  made.reserve(static_cast<size_t>(n_links));
  for (long i = 0; i < n_links; i++)
    made.push_back(
        zone->create_link(links[i].name, links[i].bw_Bps)->set_latency(links[i].lat_s)->seal());
  std::vector<sg4::LinkInRoute> path;
  for (long r = 0; r < n_routes; r++) {
    path.clear();
    for (int k = 0; k < routes[r].n_links; k++)
      path.emplace_back(made[static_cast<size_t>(routes[r].links[k])]);
    zone->add_route(hosts[static_cast<size_t>(routes[r].src_host)]->get_netpoint(),
                    hosts[static_cast<size_t>(routes[r].dst_host)]->get_netpoint(), nullptr,
                    nullptr, path, false);
  }
  zone->seal();
}
