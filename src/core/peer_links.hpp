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

 private:
  int nodes_;
  std::vector<bool> linked_;  // nodes_ x nodes_
};

}  // namespace versa::detail
