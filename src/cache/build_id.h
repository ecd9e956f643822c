// The identity of the running Tri build, for cache keys: compiled code depends on the exact
// build of the compiler, not only on its version number, so a rebuilt library never reads an
// entry an older build wrote.
#pragma once

#include <string>

namespace tri::cache {

// The GNU build-id note (a hash the linker computes over the linked output) of the shared object
// or executable that holds this code, as hex; when there is none, a hash of that file's bytes;
// when it cannot be read either, "compiled <date> <time>". Computed once per process.
const std::string& build_id();

}  // namespace tri::cache
