// Which memory nodes copy to each other directly (Device::has_peer_link), and where a replica
// that a node lacks is best copied from: the data mover fetches from there and placement counts
// that copy's cost, so both must choose alike.
#pragma once

#include <vector>

#include "data/replica.hpp"
#include "device/device.hpp"

namespace versa::detail {

class PeerLinks {
 public:
  // `nodes[n].device`: the device of memory node n, null for the host (node 0).
  template <class Nodes>
  explicit PeerLinks(const Nodes& nodes)
      : nodes_(static_cast<int>(nodes.size())), linked_(nodes.size() * nodes.size(), false) {
    for (int a = 1; a < nodes_; ++a)
      for (int b = 1; b < nodes_; ++b)
        linked_[static_cast<std::size_t>(a * nodes_ + b)] =
            a != b && nodes[a].device->has_peer_link(*nodes[b].device);
  }

  // Whether device nodes `a` and `b` copy to each other directly.
  bool linked(int a, int b) const { return linked_[static_cast<std::size_t>(a * nodes_ + b)]; }

  // The valid replica that `node` should copy from: one on a device it has a peer link to (no
  // host link crossed), else the one ReplicaSet::source_for chooses. Null when every valid copy
  // is still landing.
  Replica* source_for(ReplicaSet& replicas, int node) const VERSA_REQUIRES(replicas.mutex()) {
    if (node != 0)
      for (int n = 1; n < replicas.nodes(); ++n) {
        Replica& replica = replicas.at(n);
        if (linked(node, n) && is_valid(replica.state) && !replica.filling) return &replica;
      }
    return replicas.source_for(node);
  }

  // A replica landing on a device that `node` has a peer link to, or null. A device that would
  // copy from the host waits for it instead, then copies from there: data that several devices
  // read at once then crosses the host link once.
  Replica* landing_on_peer(ReplicaSet& replicas, int node) const VERSA_REQUIRES(replicas.mutex()) {
    if (node != 0)
      for (int n = 1; n < replicas.nodes(); ++n)
        if (linked(node, n) && replicas.at(n).filling) return &replicas.at(n);
    return nullptr;
  }

 private:
  int nodes_;
  std::vector<bool> linked_;  // nodes_ x nodes_
};

}  // namespace versa::detail
