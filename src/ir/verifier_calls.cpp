// The verifier's call graph (verifier_impl.h): which kernels run each device function (their
// constexprs resolve its names), no recursion, calls nested at most kMaxCallDepth deep, and the
// rule of `call` (the callee exists, arguments and results match its signature).
#include "ir/verifier_impl.h"

namespace tri::ir::verify_detail {

void Verifier::build_call_graph() {
  size_t n = m_.functions.size();
  callees_.assign(n, {});
  callers_.assign(n, {});
  // Only calls reachable from the body count: a pass may leave dead ops in the op table.
  const int callee_attr = op_info(Opcode::Call).attr_index("callee");
  for (size_t i = 0; i < n; ++i) {
    const Function& f = *m_.functions[i];
    if (f.body >= f.blocks.size()) continue;
    std::vector<uint8_t> visited(f.blocks.size(), 0);
    std::vector<BlockId> work{f.body};
    visited[f.body] = 1;
    while (!work.empty()) {
      BlockId b = work.back();
      work.pop_back();
      for (OpId o : f.blocks[b].ops) {
        if (o >= f.ops.size()) continue;
        const OpData& d = f.ops[o];
        for (BlockId r : d.regions)
          if (r < f.blocks.size() && !visited[r]) {
            visited[r] = 1;
            work.push_back(r);
          }
        if (static_cast<uint32_t>(d.code) >= kNumOpcodes || d.code != Opcode::Call) continue;
        if (d.attrs.size() <= static_cast<size_t>(callee_attr) || d.attrs[callee_attr].kind != Attr::Kind::Func)
          continue;
        auto it = fn_index_.find(d.attrs[callee_attr].s);
        if (it != fn_index_.end()) callees_[i].push_back({it->second, d.loc});
      }
    }
  }
  // Each kernel's reach: the device functions it runs, which take its constexprs.
  for (size_t k = 0; k < n; ++k) {
    if (!m_.functions[k]->is_kernel) continue;
    std::vector<uint8_t> seen(n, 0);
    std::vector<size_t> stack{k};
    seen[k] = 1;
    while (!stack.empty()) {
      size_t f = stack.back();
      stack.pop_back();
      for (const Edge& e : callees_[f]) {
        if (seen[e.callee] || m_.functions[e.callee]->is_kernel) continue;
        seen[e.callee] = 1;
        callers_[e.callee].push_back(k);
        stack.push_back(e.callee);
      }
    }
  }
}

Status Verifier::check_recursion() {
  size_t n = m_.functions.size();
  std::vector<uint8_t> color(n, 0);  // 0 new, 1 on the path, 2 done
  std::vector<size_t> path;
  for (size_t root = 0; root < n; ++root) {
    if (color[root]) continue;
    // Iterative DFS: (function, next edge index).
    std::vector<std::pair<size_t, size_t>> stack{{root, 0}};
    color[root] = 1;
    path.assign(1, root);
    while (!stack.empty()) {
      auto& [f, next] = stack.back();
      if (next == callees_[f].size()) {
        color[f] = 2;
        stack.pop_back();
        path.pop_back();
        continue;
      }
      const Edge& e = callees_[f][next++];
      if (color[e.callee] == 1) {
        std::string cycle;
        bool on = false;
        for (size_t p : path) {
          on = on || p == e.callee;
          if (on) cycle += "@" + m_.functions[p]->name + " -> ";
        }
        cycle += "@" + m_.functions[e.callee]->name;
        return err(e.loc, "'call' of @" + m_.functions[e.callee]->name + " is recursive: " + cycle);
      }
      if (color[e.callee] == 0) {
        color[e.callee] = 1;
        path.push_back(e.callee);
        stack.push_back({e.callee, 0});
      }
    }
  }
  return Status::ok();
}

Status Verifier::check_call_depth() {
  const size_t n = m_.functions.size();
  std::vector<int> depth(n, -1);  // calls in the longest chain starting at the function
  std::vector<size_t> next(n, 0);  // (the callee it goes through is kept for the message)
  std::vector<size_t> via(n, SIZE_MAX);
  for (size_t root = 0; root < n; ++root) {
    if (depth[root] >= 0) continue;
    std::vector<size_t> stack{root};
    while (!stack.empty()) {
      size_t f = stack.back();
      if (next[f] < callees_[f].size()) {
        size_t c = callees_[f][next[f]++].callee;
        if (depth[c] < 0) stack.push_back(c);
        continue;
      }
      int d = 0;
      for (const Edge& e : callees_[f])
        if (depth[e.callee] + 1 > d) {
          d = depth[e.callee] + 1;
          via[f] = e.callee;
        }
      depth[f] = d;
      stack.pop_back();
    }
    if (depth[root] > kMaxCallDepth) {
      std::string chain = "@" + m_.functions[root]->name;
      size_t f = root;
      for (int shown = 0; via[f] != SIZE_MAX && shown < 4; ++shown) {
        f = via[f];
        chain += " -> @" + m_.functions[f]->name;
      }
      if (via[f] != SIZE_MAX) chain += " -> ...";
      return error_at(Code::LimitExceeded, m_.source_name, m_.functions[root]->loc,
                      "calls from @" + m_.functions[root]->name + " nest " + std::to_string(depth[root]) +
                          " deep (" + chain + "), over the limit of " + std::to_string(kMaxCallDepth) +
                          " nested calls (kMaxCallDepth); inline some of the device functions");
    }
  }
  return Status::ok();
}

Status Verifier::check_call(OpId o) {
  const OpData& d = f_->op(o);
  const std::string& name = attr(o, "callee").s;
  const Function* g = m_.find(name);
  if (!g) return op_err(o, "callee @" + name + " is not defined");
  if (g->is_kernel) return op_err(o, "callee @" + name + " is a kernel; only device functions can be called");
  std::vector<ValueId> args = f_->variadic(o);
  if (args.size() != g->params.size())
    return op_err(o, "passes " + count_of(args.size(), "argument", "arguments") + ", @" + name + " takes " +
                         std::to_string(g->params.size()));
  for (size_t i = 0; i < args.size(); ++i)
    if (ty(args[i]) != g->params[i].type)
      return op_err(o, "argument " + std::to_string(i) + " has type " + ts(ty(args[i])) + ", expected " +
                           ts(g->params[i].type) + " (parameter %" + g->params[i].name + " of @" + name + ")");
  if (d.results.size() != g->results.size())
    return op_err(o, "has " + count_of(d.results.size(), "result", "results") + ", @" + name + " returns " +
                         std::to_string(g->results.size()));
  for (size_t i = 0; i < d.results.size(); ++i)
    if (res_ty(o, i) != g->results[i])
      return op_err(o, "result " + std::to_string(i) + " has type " + ts(res_ty(o, i)) + ", expected " +
                           ts(g->results[i]) + " (result " + std::to_string(i) + " of @" + name + ")");
  return Status::ok();
}

}  // namespace tri::ir::verify_detail
