// Running one kernel of an IR file on host buffers through the public C API: what `tri run` and
// `tri test` share. Arguments are given by name and bound to the kernel's parameters through
// reflection, so a mistake (a missing argument, a buffer of the wrong element type, an unknown
// constexpr) is reported by name before anything is compiled.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "host_data.h"
#include "tri/tri.h"

namespace tri_tool {

// Targets whose kernels read and write host memory, in the order tests run them. The first is
// the oracle. The "cuda" target runs when named (--target cuda): the runner then copies the
// buffers to device memory and back (device_memory.h).
extern const char* const kHostTargets[];
extern const int kNumHostTargets;

// One runtime argument: a scalar (its type and bits) or a host buffer for a pointer parameter.
struct ArgInput {
  std::string name;  // without '%'
  bool is_scalar = false;
  int32_t dtype = TRI_DTYPE_F32;
  uint64_t scalar_bits = 0;
  HostBuffer buffer;
};

struct ConstInput {
  std::string name;
  std::string text;  // parsed with the constexpr's declared type
};

struct LaunchRequest {
  std::string kernel;  // without '@'
  uint32_t grid[3] = {1, 1, 1};
  std::vector<ConstInput> consts;
  std::vector<ArgInput> args;  // any order; bound by name
  std::string target = "cpu";
  bool checked = false;
  int repeat = 1;  // launches of the compiled kernel (buffers are not reset between them)
};

struct LaunchOutcome {
  tri_result code = TRI_OK;  // of the first failing call
  std::string stage;         // "compile" or "launch" when code != TRI_OK
  std::string message;       // the library's message, or the binding error
  std::vector<HostBuffer> buffers;  // each argument's buffer after the launch (request order)
  double compile_seconds = 0;
  double launch_seconds = 0;            // the first launch
  std::vector<double> launch_times;     // every launch, in order
};

// A context whose log sink collects messages (`print` output arrives here), and the module
// loaded from a file or a string.
class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool ok() const { return ctx_ != nullptr; }
  tri_context* context() const { return ctx_; }
  // Called for each log message; by default messages are collected (see take_log).
  void set_log_handler(std::function<void(int32_t, const std::string&)> fn) { handler_ = std::move(fn); }
  std::vector<std::string> take_log();

  // Loads IR text or binary into a new module; the caller owns it.
  tri_module* load(const std::string& bytes, const std::string& source_name, std::string* error) const;

 private:
  static void on_log(void* user, int32_t level, const char* message);
  tri_context* ctx_ = nullptr;
  std::mutex mu_;
  std::vector<std::string> log_;
  std::function<void(int32_t, const std::string&)> handler_;
};

// A parameter as reflection reports it.
struct ParamInfo {
  std::string name;
  bool constexpr_param = false;
  int32_t type_kind = TRI_TYPE_SCALAR;
  int32_t dtype = TRI_DTYPE_F32;
  std::string type_text;
};

bool kernel_params(const tri_module* module, const std::string& kernel, std::vector<ParamInfo>* out,
                   std::string* error);

// Whether `target` can compile here: its name is known and a trivial kernel compiles (only
// TRI_ERROR_UNSUPPORTED counts as absent, so other failures still surface in tests).
bool target_present(tri_context* ctx, const std::string& target);

// Binds, compiles and launches. Input buffers are copied, so one request can run on several
// targets. Returns false when something failed (outcome->code says what, and where).
bool launch_kernel(tri_module* module, const LaunchRequest& req, LaunchOutcome* outcome);

// Reads a whole file; false with a message naming it.
bool read_file(const std::string& path, std::string* out, std::string* error);

// Sets constexpr `p` of a kernel on `opts` from its text, read as the type the kernel declares.
bool set_constexpr(tri_compile_options* opts, const ParamInfo& p, const std::string& text, std::string* error);
// The same for each of `consts` by name among `params` (kernel @kernel's): false with a message
// for a name that is no constexpr of it, or a value its type does not read.
bool set_constexprs(tri_compile_options* opts, const std::vector<ParamInfo>& params, const std::string& kernel,
                    const std::vector<ConstInput>& consts, std::string* error);

}  // namespace tri_tool
