// Built instead of starpu.cpp when StarPU is not installed: no StarPU columns in the tables.
#include "micro/systems.hpp"

namespace bench {
std::vector<System> starpu_systems() { return {}; }
}  // namespace bench
