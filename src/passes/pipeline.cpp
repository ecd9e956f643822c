#include "passes/pipeline.h"

#include <chrono>

#include "base/clock.h"
#include "ir/verifier.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/fold.h"
#include "passes/pipeline_loads.h"
#include "passes/rewrite.h"

namespace tri::passes {
namespace {

using namespace ir;
using Clock = std::chrono::steady_clock;

// Describes the bindings, so a verify error after specialization says what it was specialized with.
std::string bound_values(const Function& k) {
  std::string s;
  for (const Constexpr& c : k.constexprs) {
    const Attr& a = c.default_value;
    std::string v = a.kind == Attr::Kind::Float ? std::to_string(a.f)
                    : a.kind == Attr::Kind::Bool ? (a.i ? "true" : "false")
                                                 : std::to_string(a.i);
    s += (s.empty() ? "" : ", ") + c.name + "=" + v;
  }
  return s;
}

// Runs one pass over every function of the module and records its time.
template <typename Pass>
Status run_pass(const char* name, Module& m, const PipelineOptions& opt, std::vector<PassTiming>* timings, Pass pass) {
  if (opt.cancel.requested()) return Status(Code::Cancelled, std::string("the compile was cancelled before pass '") + name + "'");
  auto t0 = Clock::now();
  bool changed = false;
  for (auto& f : m.functions) changed |= pass(m, *f);
  double ms = ms_since(t0);
  if (timings) timings->push_back({name, ms, changed});
  if (changed && opt.dump) opt.dump(name, m);
  if (changed && opt.verify_each) {
    Status st = verify(m);
    if (!st.is_ok())
      return Status(Code::Internal, std::string("pass '") + name + "' produced invalid IR (a bug in Tri): " + st.message());
  }
  return Status::ok();
}

}  // namespace

Status prepare_kernel(const Module& m, std::string_view kernel, const std::vector<ConstexprBinding>& values,
                      const std::vector<ArgFacts>& facts, const PipelineOptions& opt, std::unique_ptr<Module>* out,
                      std::vector<PassTiming>* timings) {
  std::unique_ptr<Module> s;
  auto t0 = Clock::now();
  TRI_RETURN_IF_ERROR(specialize(m, kernel, values, facts, &s));
  if (timings) timings->push_back({"specialize", ms_since(t0), true});
  if (opt.dump) opt.dump("specialize", *s);

  Status st = verify(*s);
  if (!st.is_ok())
    return Status(Code::Verify, st.message() + " (in kernel @" + std::string(kernel) + " specialized with " +
                                    bound_values(*s->functions[0]) + ")");

  TRI_RETURN_IF_ERROR(run_pass("fold", *s, opt, timings, [](Module& mm, Function& f) { return fold(mm, f); }));
  TRI_RETURN_IF_ERROR(run_pass("cse", *s, opt, timings, [](Module&, Function& f) { return cse(f); }));
  TRI_RETURN_IF_ERROR(run_pass("dce", *s, opt, timings, [](Module&, Function& f) { return dce(f); }));
  if (opt.num_stages >= 2) {
    bool piped = false;
    TRI_RETURN_IF_ERROR(run_pass("pipeline_loads", *s, opt, timings, [&](Module& mm, Function& f) {
      return piped |= pipeline_loads(mm, f, opt.num_stages);
    }));
    if (piped) {
      TRI_RETURN_IF_ERROR(run_pass("cse", *s, opt, timings, [](Module&, Function& f) { return cse(f); }));
      TRI_RETURN_IF_ERROR(run_pass("dce", *s, opt, timings, [](Module&, Function& f) { return dce(f); }));
    }
  }
  for (auto& f : s->functions) compact(*f);

  st = verify(*s);
  if (!st.is_ok()) return Status(Code::Internal, "canonicalization produced invalid IR (a bug in Tri): " + st.message());
  *out = std::move(s);
  return Status::ok();
}

}  // namespace tri::passes
