// The autotuner's rules, kept apart from the machinery that compiles and launches (issue 13).
//
// Layering: this folder sits above ir and cache and below capi. It holds what tuning decides and
// remembers: the configs of a space and their canonical text, the key of a problem (bucketed
// integer values and argument types), which pointer parameters a kernel writes (so trials can
// restore them), the median of a trial's repetitions, the deterministic choice among configs,
// and the JSON form of a result that is stored next to the disk cache and exported/imported.
// Compiling candidates and timing launches needs the compile cache, the kernel handles and the
// context's thread pool, which live in capi; so the driver of a tuning run is
// src/capi/tune.cpp, which calls this layer for every decision. Nothing here includes capi.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ir/ir.h"

namespace tri::tune {

// One point of a space: constexpr values (by name, in the order given), warps and stages.
struct Config {
  std::vector<std::pair<std::string, int64_t>> constexprs;
  int32_t num_warps = 4;
  int32_t num_stages = 0;  // 0: the target's default
};

// "BLOCK=64,warps=4,stages=1": the form `tri tune --config` reads and results print.
std::string config_text(const Config& c);
// Parses config_text's form (the warps= and stages= fields may be left out or come anywhere).
Status parse_config(const std::string& text, Config* out);

// The smallest power of two >= v, for v >= 1; values below 1 are kept as they are.
int64_t bucket_pow2(int64_t v);

// The median of `v` (the mean of the two middle values for an even count); 0 for none.
double median(std::vector<double> v);

// What one config gave: a status (TRI_OK, or the tri_result of the compile or launch that
// failed, with its message), and the time of each repetition in nanoseconds.
struct Trial {
  int32_t status = 0;
  std::string error;
  bool measured = false;  // false: not benchmarked (frozen mode, or a result kept from before)
  double median_ns = 0;
  std::vector<double> times_ns;
};

// The deterministic choice: among the measured trials with status 0, the fastest median wins;
// every trial within `tie` (a fraction: 0.01 is 1%) of that fastest median ties with it, and of
// the tied ones the lowest index wins. So two processes with the same measurements choose the
// same config, and noise below the tie band cannot make the choice flip between near-equal
// configs' order. -1 when no trial succeeded.
int choose(const std::vector<Trial>& trials, double tie = 0.01);

// Which runtime parameters of `kernel` (indices into kernel.params) the kernel may write: those
// from which a pointer used by a store, atomic or atomic_cas is derived, through any chain of
// ops, loop-carried values and branches. Values passed to a call or to inline_asm count as
// written (a conservative answer: saving a buffer that is not written costs only time).
std::vector<bool> written_params(const ir::Function& kernel);

// A tuning result: what was tuned, under which key, and every config's trial.
struct Result {
  std::string key;      // 32 hex digits (cache::Key::hex)
  // The key without the device: the same kernel, space, key values and Tri on any machine of
  // the target, so that a result made elsewhere can be recognized (and reported) here.
  std::string portable_key;
  std::string kernel;   // without '@'
  std::string target;   // "cpu", "interp", "cuda"
  std::string device;   // what the target runs on (its cache identity)
  std::string version;  // Tri's version, "0.2.0"
  std::vector<std::pair<std::string, int64_t>> key_values;  // the key parameters, bucketed
  std::vector<std::string> dtypes;                          // every runtime argument's type
  std::vector<Config> configs;
  std::vector<Trial> trials;  // one per config
  int best = 0;
};

// The result as one JSON object; `source` says where it came from this time ("benchmark",
// "stored", "imported", "default"). docs/tune.md describes the fields.
std::string to_json(const Result& r, const std::string& source);
// Reads to_json's form back (the "source" field is ignored). Code::CorruptBinary when it is not
// such an object.
Status from_json(const std::string& text, Result* out);
// Splits an export file ({"tri_tune": 1, "results": [...]}) into its results' JSON texts.
Status split_export(const std::string& text, std::vector<std::string>* out);
// Makes an export file from results' JSON texts.
std::string join_export(const std::vector<std::string>& results);

}  // namespace tri::tune
