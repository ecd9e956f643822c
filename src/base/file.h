// Whole-file reads and all-or-nothing writes, for the files Tri keeps beside its cache (tuning
// results, request shortcuts, bundles). The cache's own entries are written by cache/store.cpp,
// which also syncs them to disk.
#pragma once

#include <string>

namespace tri {

// The whole file into *out; false (errno says why) when it cannot be opened or read.
bool read_file(const std::string& path, std::string* out);

// Writes `bytes` to a temporary file beside `path` (named after the process and the thread, so
// concurrent writers never share one) and renames it into place: readers see the old file or
// the whole new one. 0, or the errno of the step that failed (the temporary file is removed).
int write_file_atomic(const std::string& path, const std::string& bytes);

}  // namespace tri
