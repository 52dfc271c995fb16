// Files a machine keeps between runs so that only its first start pays for what they record
// (the costs of its links, the times of its tasks), as StarPU keeps its calibrations in
// ~/.starpu.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace versa::detail {

// $XDG_CACHE_HOME/versa, else $HOME/.cache/versa; "" when neither variable is set.
std::string cache_directory();

// Writes `path` whole with `write`: into a file aside, of this process's own, then renamed over
// `path` in one step, so that processes ending together on one machine (the ranks of an MPI job)
// never leave, nor read, a half-written file. Makes the missing parent directories. Returns ""
// or why it could not (then `path` is as it was).
std::string replace_file(const std::string& path, const std::function<void(std::ostream&)>& write);

}  // namespace versa::detail
