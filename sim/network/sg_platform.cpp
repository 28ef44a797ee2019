// sg_platform: the SimGrid platform construction that has no C API; see sg_platform.h.
#include "sg_platform.h"

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <vector>

namespace sg4 = simgrid::s4u;
namespace routing = simgrid::kernel::routing;
using simgrid::kernel::resource::StandardLinkImpl;

namespace {

// Every route reports this latency to SimGrid; the latency factor callback turns it into the
// route's own. CM02 weighs a flow's share of a link by 1 / (its route's latency), TCP's
// RTT-unfairness (Casanova & Marchal 2002; network_cm02.cpp: sharing_penalty_ = latency), which
// RDMA fabrics do not have: with one latency for all, every flow weighs the same and links are
// shared max-min fairly, as sg_platform.h says. 1 s: the penalty SimGrid gives a route of zero
// latency, so those weigh the same too.
constexpr double kSharingLatency = 1.0;

// A zone of explicit routes kept in a hash table by (source, destination) netpoint, so that its
// memory follows the routes the job uses; SimGrid's FullZone keeps an n x n table instead.
class SparseZone : public routing::NetZoneImpl {
  struct Stored {
    std::vector<StandardLinkImpl *> links;
    double lat_s;
    double sharing_lat_s; // kSharingLatency / the route's weight
  };
  std::unordered_map<unsigned long long, Stored> routes_;
  // Pairs with a second route for after their source's hand-over: kept here until then, and
  // their keys by source.
  std::unordered_map<unsigned long long, Stored> later_;
  std::unordered_map<unsigned long, std::vector<unsigned long long>> later_by_src_;

  static unsigned long long key(const routing::NetPoint *src, const routing::NetPoint *dst) {
    return (static_cast<unsigned long long>(src->id()) << 32) | dst->id();
  }

public:
  explicit SparseZone(const std::string &name) : NetZoneImpl(name) {}

  void add_explicit_route(const routing::NetPoint *src, const routing::NetPoint *dst,
                          const std::vector<sg4::LinkInRoute> &links, double lat_s, double weight,
                          bool is_after_handover) {
    Stored route{get_link_list_impl(links, false), lat_s, kSharingLatency / weight};
    unsigned long long k = key(src, dst);
    auto now = routes_.find(k);
    if (now == routes_.end()) {
      routes_[k] = route;
      return;
    }
    later_by_src_[src->id()].push_back(k); // the pair has two: the later waits for the hand-over
    if (is_after_handover) {
      later_[k] = route;
    } else {
      later_[k] = now->second;
      now->second = route;
    }
  }

  void hand_over(const routing::NetPoint *src) {
    auto it = later_by_src_.find(src->id());
    if (it == later_by_src_.end())
      return;
    for (unsigned long long k : it->second) {
      routes_[k] = later_[k];
      later_.erase(k);
    }
    later_by_src_.erase(it);
  }

  void get_local_route(const routing::NetPoint *src, const routing::NetPoint *dst,
                       routing::Route *into, double *latency) override {
    auto it = routes_.find(key(src, dst));
    xbt_assert(it != routes_.end(), "trainsim: no route from %s to %s", src->get_cname(),
               dst->get_cname());
    into->link_list_.insert(into->link_list_.end(), it->second.links.begin(),
                            it->second.links.end());
    if (latency != nullptr)
      *latency += it->second.sharing_lat_s;
  }

  // The factor that makes the reported latency the route's own.
  double latency_factor(const sg4::Host *src, const sg4::Host *dst) const {
    auto it = routes_.find(key(src->get_netpoint(), dst->get_netpoint()));
    xbt_assert(it != routes_.end(), "trainsim: no route from %s to %s", src->get_cname(),
               dst->get_cname());
    return it->second.lat_s / it->second.sharing_lat_s;
  }
};

SparseZone *the_zone; // one simulation per process
std::vector<sg4::Host *> the_hosts;

} // namespace

void ts_sg_platform_build(long n_hosts, const char *const *host_names, double speed_flops_per_s,
                          long n_links, const ts_sg_link *links, long n_routes,
                          const ts_sg_route *routes) {
  auto *impl = new SparseZone("machine"); // the first zone becomes the root; SimGrid owns it
  sg4::NetZone *zone = impl->get_iface();
  std::vector<sg4::Host *> &hosts = the_hosts;
  the_zone = impl;
  hosts.clear();
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
    impl->add_explicit_route(hosts[static_cast<size_t>(routes[r].src_host)]->get_netpoint(),
                             hosts[static_cast<size_t>(routes[r].dst_host)]->get_netpoint(), path,
                             routes[r].lat_s, routes[r].weight, routes[r].is_after_handover);
  }
  zone->seal();
  zone->get_network_model()->set_lat_factor_cb(
      [impl](double, const sg4::Host *src, const sg4::Host *dst, const std::vector<sg4::Link *> &,
             const std::unordered_set<sg4::NetZone *> &) {
        return impl->latency_factor(src, dst);
      });
}

void ts_sg_platform_hand_over(long src_host) {
  the_zone->hand_over(the_hosts[static_cast<size_t>(src_host)]->get_netpoint());
}
