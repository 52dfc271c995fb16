#include "data/coherence.hpp"

namespace versa::detail {

const char* to_string(ReplicaState state) {
  switch (state) {
    case ReplicaState::invalid:
      return "invalid";
    case ReplicaState::shared:
      return "shared";
    case ReplicaState::owned:
      return "owned";
  }
  return "forbidden";
}

const char* to_string(CoherenceEvent event) {
  switch (event) {
    case CoherenceEvent::read_here:
      return "read_here";
    case CoherenceEvent::write_here:
      return "write_here";
    case CoherenceEvent::overwrite_here:
      return "overwrite_here";
    case CoherenceEvent::read_elsewhere:
      return "read_elsewhere";
    case CoherenceEvent::write_elsewhere:
      return "write_elsewhere";
    case CoherenceEvent::evict:
      return "evict";
  }
  return "unknown";
}

}  // namespace versa::detail
