// Milliseconds since a steady-clock time point: the unit of every compile-stage time Tri
// reports (the TRI_LOG_DEBUG timing lines, pass timings).
#pragma once

#include <chrono>

namespace tri {

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tri
