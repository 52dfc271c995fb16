// Versa: a task runtime for CPU+GPU machines. Include this header to use it.
#pragma once

#include "versa/access.hpp"
#include "versa/access_mode.hpp"
#include "versa/completion.hpp"
#include "versa/config.hpp"
#include "versa/error.hpp"
#include "versa/handle.hpp"
#include "versa/placement.hpp"
#include "versa/reduction.hpp"
#include "versa/runtime.hpp"
#include "versa/statistics.hpp"
#include "versa/task_type.hpp"
#include "versa/tiled_matrix.hpp"
#include "versa/view.hpp"
#include "versa/work.hpp"
