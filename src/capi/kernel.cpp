// Compile options, kernels and launches: tri_compile_options_*, tri_kernel_* (but the compile,
// capi/compile.cpp), tri_launch and prepared launches. Part of the runtime (libtri_rt too): the
// options select a package's specialization there.
//
// A tri_kernel is a small handle on a Compiled object that its module caches by specialization
// key, so compiling the same thing twice is a map lookup and concurrent compiles of one key
// compile once (CompileCache). The launch path checks and encodes the arguments into a stack
// array and calls the backend; it takes no lock and compiles nothing.
#include <cstring>

#include "capi/compiled.h"
#include "capi/handles.h"
#include "ir/text.h"
#include "target/target.h"

using namespace tri;
using tri::capi::guard;
using tri::capi::set_error;

// A prepared launch: the encoded arguments and the variant they select, kept between launches.
struct tri_launch_plan {
  tri_module* module;  // holds a reference
  std::shared_ptr<capi::Compiled> compiled;
  std::vector<tri::ArgValue> args;
  tri::Grid grid;
  void* stream = nullptr;
  const capi::Compiled* variant = nullptr;  // re-picked when an argument changes
};

namespace {

// The grid limits of base/launch.h; `what` names the calling function.
tri_result check_grid(const char* what, uint32_t x, uint32_t y, uint32_t z) {
  if (x <= kMaxGridX && y <= kMaxGridYZ && z <= kMaxGridYZ) return TRI_OK;
  return set_error(Code::InvalidArgument, std::string(what) + ": grid (" + std::to_string(x) + ", " +
                                              std::to_string(y) + ", " + std::to_string(z) +
                                              ") is too large: x may be at most " + std::to_string(kMaxGridX) +
                                              " and y and z at most " + std::to_string(kMaxGridYZ) +
                                              " (program ids are i32); split the work over several launches");
}

bool grid_empty(const Grid& g) { return g.x == 0 || g.y == 0 || g.z == 0; }

}  // namespace

extern "C" {

TRI_API tri_result tri_compile_options_create(tri_compile_options** out_options) {
  return guard([&] {
    TRI_CHECK_ARG(out_options);
    *out_options = new tri_compile_options();
    return TRI_OK;
  });
}

TRI_API void tri_compile_options_destroy(tri_compile_options* options) { delete options; }

TRI_API tri_result tri_compile_options_set_target(tri_compile_options* options, const char* target) {
  TRI_CHECK_ARG(options);
  TRI_CHECK_ARG(target);
  return guard([&] {
    if (!target::find(target))
      return set_error(Code::InvalidArgument, std::string("tri_compile_options_set_target: unknown target '") + target +
                                                  "' (this build has " + target::names() + ")");
    options->req.target = target;
    return TRI_OK;
  });
}

TRI_API tri_result tri_compile_options_set_checked(tri_compile_options* options, int32_t on) {
  TRI_CHECK_ARG(options);
  options->req.options.checked = on != 0;
  return TRI_OK;
}

TRI_API tri_result tri_compile_options_set_num_stages(tri_compile_options* options, int32_t num_stages) {
  TRI_CHECK_ARG(options);
  if (num_stages < 0 || num_stages > 8)
    return set_error(Code::InvalidArgument, "tri_compile_options_set_num_stages: " + std::to_string(num_stages) +
                                                " stages; 0 (the target's default) and 1 to 8 are supported");
  options->req.options.num_stages = num_stages;
  return TRI_OK;
}

TRI_API tri_result tri_compile_options_set_num_warps(tri_compile_options* options, int32_t num_warps) {
  TRI_CHECK_ARG(options);
  if (num_warps < 1 || num_warps > 32 || (num_warps & (num_warps - 1)))
    return set_error(Code::InvalidArgument, "tri_compile_options_set_num_warps: " + std::to_string(num_warps) +
                                                " warps; use 1, 2, 4, 8, 16 or 32");
  options->req.options.num_warps = num_warps;
  return TRI_OK;
}

TRI_API tri_result tri_compile_options_set_launch_specialization(tri_compile_options* options, int32_t on,
                                                                  uint32_t max_variants) {
  TRI_CHECK_ARG(options);
  if (max_variants > 16)
    return set_error(Code::InvalidArgument,
                     "tri_compile_options_set_launch_specialization: at most 16 variants, not " +
                         (max_variants > 0x7fffffffu ? std::to_string(static_cast<int32_t>(max_variants)) +
                                                           " (a negative count passed as max_variants)"
                                                     : std::to_string(max_variants)));
  options->req.specialize_at_launch = on ? capi::CompileRequest::Spec::On : capi::CompileRequest::Spec::Off;
  options->req.max_variants = max_variants;
  return TRI_OK;
}

TRI_API tri_result tri_compile_options_set_arg_specialization(tri_compile_options* options, uint32_t param,
                                                              int32_t on) {
  TRI_CHECK_ARG(options);
  if (param >= 32)
    return set_error(Code::InvalidArgument, "tri_compile_options_set_arg_specialization: parameter " +
                                                std::to_string(param) +
                                                " is past the first 32, which are the only ones classed at launch");
  if (on) options->req.unclassed &= ~(uint32_t(1) << param);
  else options->req.unclassed |= uint32_t(1) << param;
  return TRI_OK;
}

TRI_API tri_result tri_kernel_variants(const tri_kernel* kernel, tri_blob** out_json) {
  TRI_CHECK_ARG(kernel);
  TRI_CHECK_ARG(out_json);
  return guard([&] {
    return capi::make_blob(kernel->module->context, kernel->compiled->variants_json(), "tri_kernel_variants", out_json);
  });
}

TRI_API tri_result tri_compile_options_set_arch(tri_compile_options* options, const char* arch) {
  TRI_CHECK_ARG(options);
  return guard([&] {
    options->req.options.arch = arch ? arch : "";
    return TRI_OK;
  });
}

TRI_API tri_result tri_compile_options_set_constexpr_int(tri_compile_options* options, const char* name,
                                                         int64_t value) {
  TRI_CHECK_ARG(options);
  TRI_CHECK_ARG(name);
  return guard([&] {
    options->req.constexprs[name] = ir::Attr::of_int(value);
    return TRI_OK;
  });
}

TRI_API tri_result tri_compile_options_set_constexpr_float(tri_compile_options* options, const char* name,
                                                           double value) {
  TRI_CHECK_ARG(options);
  TRI_CHECK_ARG(name);
  return guard([&] {
    options->req.constexprs[name] = ir::Attr::of_float(value);
    return TRI_OK;
  });
}

static tri_result set_fact(tri_compile_options* options, uint32_t param, uint32_t align, uint32_t divisible,
                           bool is_align) {
  return guard([&] {
    auto& f = options->req.facts[param];
    (is_align ? f.first : f.second) = is_align ? align : divisible;
    if (f.first == 0 && f.second == 0) options->req.facts.erase(param);
    return TRI_OK;
  });
}

TRI_API tri_result tri_compile_options_set_arg_align(tri_compile_options* options, uint32_t param, uint32_t align) {
  TRI_CHECK_ARG(options);
  if (align & (align - 1))
    return set_error(Code::InvalidArgument,
                     "tri_compile_options_set_arg_align: alignment " + std::to_string(align) + " is not a power of two");
  return set_fact(options, param, align, 0, true);
}

TRI_API tri_result tri_compile_options_set_arg_divisible(tri_compile_options* options, uint32_t param,
                                                         uint32_t divisible) {
  TRI_CHECK_ARG(options);
  return set_fact(options, param, 0, divisible, false);
}

TRI_API void tri_kernel_destroy(tri_kernel* kernel) {
  if (!kernel) return;
  tri_module* m = kernel->module;
  delete kernel;
  capi::module_release(m);
}

TRI_API tri_result tri_kernel_arg_count(const tri_kernel* kernel, uint32_t* out_count) {
  TRI_CHECK_ARG(kernel);
  TRI_CHECK_ARG(out_count);
  *out_count = static_cast<uint32_t>(kernel->compiled->params.size());
  return TRI_OK;
}

TRI_API tri_result tri_launch(const tri_kernel* kernel, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                              void* stream, const tri_arg* args, uint32_t num_args) {
  TRI_CHECK_ARG(kernel);
  return guard([&] {
    const capi::Compiled& c = *kernel->compiled;
    if (tri_result r = check_grid("tri_launch", grid_x, grid_y, grid_z)) return r;
    if (stream && !c.target->uses_stream())
      return set_error(Code::InvalidArgument, "tri_launch: a stream was given, but this kernel's target (\"" +
                                                  std::string(c.target->name()) + "\") runs on the host; pass NULL");
    // The count first: nothing is allocated for arguments the kernel does not take.
    if (num_args != c.params.size()) {
      ArgValue unused;
      return set_error(capi::encode_args(c, args, num_args, &unused));
    }
    constexpr uint32_t kInline = 32;
    ArgValue inline_args[kInline];
    std::vector<ArgValue> heap_args;
    ArgValue* av = inline_args;
    if (num_args > kInline) {
      heap_args.resize(num_args);
      av = heap_args.data();
    }
    // One pass encodes and classes the arguments; a mismatch is explained by encode_args.
    uint64_t key = 0;
    if (num_args && !args) return set_error(capi::encode_args(c, args, num_args, av));
    if (!c.encode_and_classify(args, num_args, av, &key)) return set_error(capi::encode_args(c, args, num_args, av));
    Grid grid{grid_x, grid_y, grid_z};
    if (grid_empty(grid)) return TRI_OK;  // an empty launch: nothing runs, on any target
    tri_context* ctx = kernel->module->context;
    target::LaunchEnv env;
    env.stream = stream;
    env.print = &ctx->print_sink;
    env.pool = [](void* c, ThreadPool** out) { return capi::context_pool(static_cast<tri_context*>(c), out); };
    env.pool_user = ctx;
    env.cancel = capi::cancel_token(ctx);
    env.interp_memory_limit = ctx->options.interp_memory_limit;
    // The variant for these arguments' classes (capi/variants.cpp).
    const capi::Compiled* v = c.find_variant(key);
    if (!v) v = c.variant(key, [ctx](const std::string& m) { ctx->log(TRI_LOG_INFO, m); });
    Status st = v->exe->launch(grid, av, num_args, env);
    if (!st.is_ok()) ctx->log(TRI_LOG_ERROR, st.message());
    return set_error(st);
  });
}

TRI_API tri_result tri_launch_plan_create(const tri_kernel* kernel, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z,
                                          void* stream, const tri_arg* args, uint32_t num_args,
                                          tri_launch_plan** out_plan) {
  TRI_CHECK_ARG(kernel);
  TRI_CHECK_ARG(out_plan);
  return guard([&] {
    const capi::Compiled& c = *kernel->compiled;
    if (tri_result r = check_grid("tri_launch_plan_create", grid_x, grid_y, grid_z)) return r;
    if (stream && !c.target->uses_stream())
      return set_error(Code::InvalidArgument, "tri_launch_plan_create: a stream was given, but this kernel's target runs "
                                              "on the host; pass NULL");
    if (num_args != c.params.size()) {
      ArgValue dummy;
      return set_error(capi::encode_args(c, args, num_args, &dummy));
    }
    auto plan = std::make_unique<tri_launch_plan>();
    plan->args.resize(num_args);
    Status st = capi::encode_args(c, args, num_args, plan->args.data());
    if (!st.is_ok()) return set_error(st);
    tri_context* ctx = kernel->module->context;
    plan->module = kernel->module;
    plan->compiled = kernel->compiled;
    plan->grid = Grid{grid_x, grid_y, grid_z};
    plan->stream = stream;
    plan->variant = c.variant(c.classify(plan->args.data(), num_args), [ctx](const std::string& m) { ctx->log(TRI_LOG_INFO, m); });
    capi::module_retain(kernel->module);
    *out_plan = plan.release();
    return TRI_OK;
  });
}

TRI_API tri_result tri_launch_plan_set_arg(tri_launch_plan* plan, uint32_t index, const tri_arg* arg) {
  TRI_CHECK_ARG(plan);
  TRI_CHECK_ARG(arg);
  return guard([&] {
    const capi::Compiled& c = *plan->compiled;
    if (index >= plan->args.size())
      return set_error(Code::LaunchArgs, "tri_launch_plan_set_arg: kernel @" + c.name + " has " +
                                             std::to_string(plan->args.size()) + " runtime arguments, not " +
                                             std::to_string(index + 1));
    // Check and encode the one argument as it would be in its place.
    std::vector<tri_arg> probe(plan->args.size());
    std::vector<ArgValue> enc(plan->args.size());
    for (size_t i = 0; i < probe.size(); ++i) {
      std::memset(&probe[i], 0, sizeof probe[i]);
      probe[i].kind = c.params[i].is_ptr ? TRI_TYPE_POINTER : TRI_TYPE_SCALAR;
      probe[i].dtype = static_cast<int32_t>(c.params[i].dtype);
    }
    probe[index] = *arg;
    Status st = capi::encode_args(c, probe.data(), static_cast<uint32_t>(probe.size()), enc.data());
    if (!st.is_ok()) return set_error(st);
    const uint64_t before = c.classify(plan->args.data(), plan->args.size());
    plan->args[index] = enc[index];
    const uint64_t after = c.classify(plan->args.data(), plan->args.size());
    if (after != before) {
      tri_context* ctx = plan->module->context;
      plan->variant = c.variant(after, [ctx](const std::string& m) { ctx->log(TRI_LOG_INFO, m); });
    }
    return TRI_OK;
  });
}

TRI_API tri_result tri_launch_plan_set_grid(tri_launch_plan* plan, uint32_t grid_x, uint32_t grid_y, uint32_t grid_z) {
  TRI_CHECK_ARG(plan);
  if (tri_result r = check_grid("tri_launch_plan_set_grid", grid_x, grid_y, grid_z)) return r;
  plan->grid = Grid{grid_x, grid_y, grid_z};
  return TRI_OK;
}

TRI_API tri_result tri_launch_plan_set_stream(tri_launch_plan* plan, void* stream) {
  TRI_CHECK_ARG(plan);
  if (stream && !plan->compiled->target->uses_stream())
    return set_error(Code::InvalidArgument, "tri_launch_plan_set_stream: this kernel's target runs on the host");
  plan->stream = stream;
  return TRI_OK;
}

TRI_API tri_result tri_launch_plan_launch(tri_launch_plan* plan) {
  TRI_CHECK_ARG(plan);
  return guard([&] {
    if (grid_empty(plan->grid)) return TRI_OK;
    target::LaunchEnv env;
    env.stream = plan->stream;
    env.print = &plan->module->context->print_sink;
    env.pool = [](void* c, ThreadPool** out) { return capi::context_pool(static_cast<tri_context*>(c), out); };
    env.pool_user = plan->module->context;
    env.cancel = capi::cancel_token(plan->module->context);
    env.interp_memory_limit = plan->module->context->options.interp_memory_limit;
    Status st = plan->variant->exe->launch(plan->grid, plan->args.data(), plan->args.size(), env);
    if (!st.is_ok()) plan->module->context->log(TRI_LOG_ERROR, st.message());
    return set_error(st);
  });
}

TRI_API void tri_launch_plan_destroy(tri_launch_plan* plan) {
  if (!plan) return;
  tri_module* m = plan->module;
  delete plan;
  capi::module_release(m);
}

}  // extern "C"
