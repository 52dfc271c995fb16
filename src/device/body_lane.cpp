#include "device/body_lane.hpp"

namespace versa::detail {

namespace {
// The lane the calling thread serves; set by BodyLaneScope for the life of the lane's loop.
thread_local BodyLane* this_thread_lane = nullptr;
}  // namespace

BodyLane* current_body_lane() { return this_thread_lane; }

BodyLaneScope::BodyLaneScope(BodyLane& lane) : enclosing_(this_thread_lane) {
  this_thread_lane = &lane;
}

BodyLaneScope::~BodyLaneScope() { this_thread_lane = enclosing_; }

}  // namespace versa::detail
