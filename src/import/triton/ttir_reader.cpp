// Reading TTIR into Tri's IR: the module and its functions, regions and scopes, value names,
// types, attributes and locations. What each op becomes is in ttir_ops.cpp.
#include "import/triton/ttir_reader.h"
#include "passes/contract_fma.h"
#include "passes/dce.h"

#include <algorithm>

#include "import/triton/ttir.h"
#include "ir/limits.h"
#include "passes/rewrite.h"

namespace tri::import {

using namespace tri::ir;

// ---------------------------------------------------------------- errors

std::string Reader::python_suffix(LocId loc) const {
  if (loc == kNoLoc) return std::string();
  FileLoc fl = locs_.resolve(loc, main_file_.empty() ? locs_.first_file() : main_file_);
  if (!fl.known()) return std::string();
  return " (from " + fl.file + ":" + std::to_string(fl.line) + ":" + std::to_string(fl.col) + ")";
}

// The location written after the op on its line, if any, without consuming anything.
static LocId peek_line_loc(Cursor& c, LocTable& locs) {
  std::string_view t = c.text();
  size_t p = c.pos();
  size_t eol = t.find('\n', p);
  if (eol == std::string_view::npos) eol = t.size();
  size_t at = t.rfind("loc(", eol);
  if (at == std::string_view::npos || at < p) return kNoLoc;
  // Parse it with a scratch cursor over the same text (line numbers do not matter here).
  Cursor scratch(t.substr(at, eol - at), c.source());
  try {
    return locs.parse_loc(scratch);
  } catch (const ImportError&) {
    return kNoLoc;
  }
}

void Reader::unsupported(const std::string& what) {
  LocId l = peek_line_loc(c_, locs_);
  throw ImportError{error_at(Code::Unsupported, source_, cur_.at, what + python_suffix(l))};
}

void Reader::unsupported_at(Loc at, const std::string& what) {
  throw ImportError{error_at(Code::Unsupported, source_, at, what)};
}

void Reader::malformed(const std::string& what) {
  LocId l = peek_line_loc(c_, locs_);
  throw ImportError{error_at(Code::Parse, source_, cur_.at, what + python_suffix(l))};
}

// ---------------------------------------------------------------- entry

bool looks_like_ttir(const void* data, size_t size) {
  const char* s = static_cast<const char*>(data);
  size_t i = 0;
  while (i < size) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '/' && i + 1 < size && s[i + 1] == '/') {
      while (i < size && s[i] != '\n') ++i;
    } else {
      break;
    }
  }
  if (i >= size) return false;
  std::string_view rest(s + i, size - i);
  auto starts_word = [&](std::string_view w) {
    return rest.substr(0, w.size()) == w && (rest.size() == w.size() || !is_ident_char(rest[w.size()]));
  };
  return rest.substr(0, 4) == "#loc" || starts_word("module") || starts_word("tt.func");
}

Status import_ttir(std::string_view text, const std::string& source_name, std::unique_ptr<ir::Module>* out) {
  if (text.size() > kMaxInputBytes)
    return error_at(Code::LimitExceeded, source_name, Loc{}, "the input is larger than kMaxInputBytes");
  Reader r(text, source_name);
  return r.run(out);
}

Status Reader::run(std::unique_ptr<ir::Module>* out) {
  try {
    m_ = std::make_unique<Module>();
    m_->source_name = source_;
    prescan_aliases();
    parse_top();
    std::string undefined;
    Loc undefined_at;
    if (locs_.undefined_alias(&undefined, &undefined_at))
      throw ImportError{error_at(Code::Parse, source_, undefined_at,
                                 "location alias #" + undefined + " is used but never defined")};
    if (m_->functions.empty())
      throw ImportError{error_at(Code::Parse, source_, Loc{}, "the TTIR module has no tt.func")};
    // Locations: Python lines when the text has them, else the TTIR's own lines.
    if (main_file_.empty()) main_file_ = locs_.first_file();
    bool python = !main_file_.empty();
    if (python) m_->source_name = main_file_;
    auto to_loc = [&](LocId id, Loc ttir) {
      if (!python) return ttir;
      FileLoc fl = locs_.resolve(id, main_file_);
      if (!fl.known() || fl.file != main_file_) return Loc{};
      return Loc{fl.line, fl.col};
    };
    for (const PendingLoc& p : pending_) p.f->ops[p.op].loc = to_loc(p.loc, p.ttir);
    for (const PendingFn& p : pending_fns_) {
      p.f->loc = to_loc(p.loc, p.ttir);
      for (size_t i = 0; i < p.params.size() && i < p.f->params.size(); ++i)
        p.f->params[i].loc = to_loc(p.params[i].first, p.params[i].second);
    }
    // Triton compiles with floating-point contraction on (enable_fp_fusion): the multiply-adds
    // it would fuse are fused here, so every Tri target computes what Triton's code computes.
    for (auto& fn : m_->functions)
      if (passes::contract_fma(*m_, *fn)) passes::dce(*fn);
    // Structuring left emptied blocks, replaced terminators and descriptor placeholders in the
    // tables; later stages expect none.
    for (Function* f : structured_) passes::compact(*f);
    *out = std::move(m_);
    return Status::ok();
  } catch (const ImportError& e) {
    return e.status;
  } catch (const std::bad_alloc&) {
    return Status(Code::OutOfMemory, source_ + ": out of memory while importing TTIR");
  }
}

// Location aliases (`#loc12 = loc(...)`) come after the module in Triton's output; reading them
// first lets every op's location resolve as soon as the op is read (for error messages).
void Reader::prescan_aliases() {
  std::string_view t = c_.text();
  size_t p = 0;
  uint32_t line = 1;
  while (p < t.size()) {
    size_t eol = t.find('\n', p);
    if (eol == std::string_view::npos) eol = t.size();
    if (t[p] == '#') {
      Cursor lc(t, source_);
      lc.seek_line(p, line);
      locs_.define_alias(lc);
    }
    p = eol + 1;
    ++line;
  }
  main_file_ = locs_.first_file();
}

void Reader::parse_top() {
  while (!c_.at_end()) {
    if (c_.peek() == '#') {
      // Already read by prescan_aliases; skip the definition.
      LocTable scratch;
      scratch.define_alias(c_);
    } else if (c_.peek_word("module")) {
      parse_module();
    } else if (c_.peek_word("tt.func")) {
      parse_func();
    } else {
      c_.fail_expected("'module', 'tt.func' or a location alias");
    }
  }
}

void Reader::parse_module() {
  c_.expect_word("module", "'module'");
  if (c_.peek() == '@') c_.symbol_ref("a module name");
  if (c_.eat_word("attributes")) parse_dict();
  c_.expect('{', "'{' opening the module");
  while (!c_.eat('}')) {
    if (c_.peek_word("tt.func")) {
      parse_func();
      continue;
    }
    if (c_.at_end()) c_.fail_expected("'}' closing the module");
    Loc at = c_.loc();
    std::string what = c_.peek_ident() ? c_.ident("an op") : std::string("?");
    throw ImportError{error_at(Code::Unsupported, source_, at,
                               "'" + what + "' at module level is not supported by the TTIR importer (only tt.func)")};
  }
  maybe_loc();
}

std::string Reader::tri_func_name(const std::string& mlir_name) {
  auto it = func_names_.find(mlir_name);
  if (it != func_names_.end()) return it->second;
  std::string base;
  for (char ch : mlir_name) base += (is_ident_char(ch) && ch != '$' && ch != '-') ? ch : '_';
  if (base.empty() || !is_ident_start(base[0])) base = "_" + base;
  std::string name = base;
  for (int k = 1; used_func_names_.count(name); ++k) name = base + "_" + std::to_string(k);
  used_func_names_.insert(name);
  func_names_.emplace(mlir_name, name);
  return name;
}

void Reader::parse_func() {
  Loc fn_at = c_.loc();
  c_.expect_word("tt.func", "'tt.func'");
  bool is_public = true;
  if (c_.eat_word("public")) {
    is_public = true;
  } else if (c_.eat_word("private") || c_.eat_word("nested")) {
    is_public = false;
  }
  std::string mlir_name = c_.symbol_ref("a function name (@name)");
  if (m_->functions.size() >= kMaxFunctions)
    throw ImportError{error_at(Code::LimitExceeded, source_, fn_at, "more functions than kMaxFunctions")};
  auto fn = std::make_unique<Function>();
  fn->name = tri_func_name(mlir_name);
  if (m_->find(fn->name))
    throw ImportError{error_at(Code::Parse, source_, fn_at, "function @" + mlir_name + " is defined twice")};
  fn->is_kernel = is_public;
  f_ = fn.get();
  m_->functions.push_back(std::move(fn));
  b_ = std::make_unique<Builder>(m_.get(), f_);
  value_names_.clear();
  descs_.clear();  // value ids are the function's own
  name_suffix_.clear();
  scopes_.clear();
  PendingFn pf{f_, kNoLoc, fn_at, {}};

  // Arguments: %name: type {attrs} loc(...)
  std::vector<std::string> names;
  std::vector<int> desc_params;  // indices of !tt.tensordesc arguments
  std::vector<Desc> descs;
  c_.expect('(', "'(' opening the argument list");
  if (!c_.eat(')')) {
    do {
      Loc at = c_.loc();
      Param p;
      names.push_back(c_.value_ref("an argument (%name)"));
      c_.expect(':', "':' after an argument name");
      if (c_.peek() == '!' && c_.text().substr(c_.pos(), 14) == "!tt.tensordesc") {
        // A descriptor made on the host: its base pointer takes its place (bind_descriptor_params).
        c_.expect('!', "'!'");
        c_.ident("!tt.tensordesc");
        Desc d;
        parse_desc_type_body(&d);
        p.type = m_->types.ptr(d.elem);
        desc_params.push_back(static_cast<int>(f_->params.size()));
        descs.push_back(std::move(d));
      } else {
        p.type = parse_type();
      }
      if (c_.peek() == '{') {
        AttrDict attrs = parse_dict();
        auto div = attrs.find("tt.divisibility");
        if (div != attrs.end()) {
          if (div->second.kind != AttrVal::Kind::Int || div->second.i <= 0 || div->second.i > (int64_t(1) << 30))
            c_.fail(at, "tt.divisibility of %" + names.back() + " is not a positive integer");
          uint32_t d = static_cast<uint32_t>(div->second.i);
          if (m_->types.is_ptr(p.type)) {
            p.align = d;
          } else if (m_->types.is_scalar(p.type) && is_int(m_->types.get(p.type).scalar)) {
            p.divisible = d;
          }
        }
      }
      LocId l = maybe_loc();
      pf.params.emplace_back(l, at);
      p.loc = at;
      f_->params.push_back(std::move(p));
    } while (c_.eat(','));
    c_.expect(')', "')' closing the argument list");
  }
  if (c_.eat_punct("->")) {
    if (c_.eat('(')) {
      if (!c_.eat(')')) {
        do {
          f_->results.push_back(parse_type());
          if (c_.peek() == '{') parse_dict();
        } while (c_.eat(','));
        c_.expect(')', "')' closing the result types");
      }
    } else {
      f_->results.push_back(parse_type());
    }
  }
  if (c_.eat_word("attributes")) parse_dict();
  if (is_public && !f_->results.empty())
    c_.fail(fn_at, "kernel @" + mlir_name + " returns values (a public tt.func becomes a kernel, which cannot)");
  if (!is_public) {
    for (Param& p : f_->params) p.align = p.divisible = 0;
  }

  std::vector<TypeId> param_types;
  for (const Param& p : f_->params) param_types.push_back(p.type);
  f_->body = b_->create_block(param_types);
  f_->blocks[f_->body].loc = fn_at;
  push_scope();
  for (size_t i = 0; i < f_->params.size(); ++i) {
    f_->params[i].value = f_->blocks[f_->body].args[i];
    f_->params[i].name = tri_value_name(names[i]);
    f_->values[f_->params[i].value].name = f_->params[i].name;
    if (!scopes_.back().emplace(names[i], f_->params[i].value).second)
      c_.fail(fn_at, "argument %" + names[i] + " is declared twice");
  }
  if (!desc_params.empty()) bind_descriptor_params(names, desc_params, descs, fn_at);
  c_.expect('{', "'{' opening the function body");
  parse_ops_until_brace(f_->body, false);
  pop_scope();
  const BlockData& body = f_->blocks[f_->body];
  if (body.ops.empty() || !op_info(f_->ops[body.ops.back()].code).is_terminator())
    c_.fail(fn_at, "function @" + mlir_name + " does not end with tt.return");
  pf.loc = maybe_loc();
  pending_fns_.push_back(std::move(pf));
}

void Reader::push_scope() {
  // The function's body is the first scope; the regions of ops nest below it, and Tri's text,
  // binary form and verifier allow kMaxNesting of those.
  if (++depth_ > kMaxNesting + 1)
    throw ImportError{error_at(Code::LimitExceeded, source_, c_.loc(),
                               "regions nested more than " + std::to_string(kMaxNesting) + " deep (kMaxNesting)")};
  scopes_.emplace_back();
}

void Reader::pop_scope() {
  --depth_;
  scopes_.pop_back();
}

void Reader::parse_ops_until_brace(BlockId b, bool implicit_yield) {
  BlockId saved = b_->insertion_block();
  b_->set_insertion_block(b);
  regions_.push_back(RegionState{b, c_.loc(), nullptr});  // no CFG unless a branch appears
  while (!c_.eat('}')) {
    if (c_.at_end()) c_.fail_expected("'}' closing a region");
    if (c_.peek() == '^') {
      parse_cfg_label();
      continue;
    }
    const RegionCfg* cfg = regions_.back().cfg.get();
    if (cfg && cfg->blocks[cfg->current].term != CfgBlock::Term::None)
      c_.fail(c_.loc(), "an op after the branch that ends block " +
                            (cfg->current ? "^" + cfg->blocks[cfg->current].label : std::string("0")) +
                            " (a block ends with its terminator)");
    parse_op();
  }
  std::unique_ptr<RegionCfg> cfg = std::move(regions_.back().cfg);
  regions_.pop_back();
  if (cfg) {
    structure(*cfg);
  } else {
    const BlockData& blk = f_->blocks[b];
    bool terminated = !blk.ops.empty() && op_info(f_->ops[blk.ops.back()].code).is_terminator();
    if (!terminated && implicit_yield) b_->create(Opcode::Yield, {}, {}, {}, Loc{});
  }
  b_->set_insertion_block(saved);
}

void Reader::parse_block_header(std::vector<std::string>* names, std::vector<TypeId>* types, std::string* label) {
  c_.expect('^', "a block label (^bb0)");
  std::string l = c_.ident("a block label");
  if (label) *label = l;
  if (c_.eat('(')) {
    if (!c_.eat(')')) {
      do {
        names->push_back(c_.value_ref("a block argument (%name)"));
        c_.expect(':', "':' after a block argument");
        types->push_back(parse_type());
        maybe_loc();
      } while (c_.eat(','));
      c_.expect(')', "')' closing the block arguments");
    }
  }
  c_.expect(':', "':' after the block arguments");
}

void Reader::parse_op() {
  Current saved = std::move(cur_);
  cur_ = Current{};
  cur_.at = c_.loc();
  if (c_.peek_value()) {
    do {
      std::string n = c_.value_ref("a result name");
      uint32_t count = 1;
      if (c_.eat(':')) {
        uint64_t k = c_.uint("a result count");
        if (k == 0 || k > 4096) c_.fail(cur_.at, "a result count of " + std::to_string(k));
        count = static_cast<uint32_t>(k);
      }
      cur_.results.emplace_back(n, count);
    } while (c_.eat(','));
    c_.expect('=', "'=' after the result names");
  }
  std::string name;
  bool generic = c_.peek_string();
  if (generic) {
    name = c_.string_lit("an op name");
  } else {
    name = c_.ident("an op name");
  }
  cur_.name = name;
  if (generic && name != "tt.reduce" && name != "tt.scan")
    unsupported("'" + name + "' in MLIR's generic form is not supported by the TTIR importer");
  if (!generic && (name == "tt.reduce" || name == "tt.scan"))
    malformed("'" + name + "' is printed in MLIR's generic form (\"" + name + "\"(...)) by Triton");
  const auto& table = handlers();
  auto it = table.find(name);
  if (it == table.end()) {
    static const std::unordered_map<std::string, std::string> gaps = {
        {"tt.histogram", "Tri has no histogram op (count with tl.atomic_add into a bins buffer instead)"},
        {"tt.make_tensor_ptr", "block pointers (tl.make_block_ptr) have no Tri counterpart; use pointer blocks or tensor descriptors"},
        {"tt.advance", "block pointers (tl.advance) have no Tri counterpart; use pointer blocks or tensor descriptors"},
        {"tt.dot_scaled", "scaled dots (microscaling formats) have no Tri counterpart"},
        {"tt.map_elementwise", "tl.map_elementwise is not imported yet"},
        {"cf.switch", "multi-way branches are not imported (Triton's frontend writes cf.cond_br)"},
        {"arith.index_cast", "the index type has no Tri counterpart"},
    };
    auto gap = gaps.find(name);
    unsupported("op '" + name + "' is not supported by the TTIR importer" +
                (gap != gaps.end() ? ": " + gap->second : std::string(" (docs/import.md lists the ops it reads)")));
  }
  try {
    (this->*(it->second))(name);
    if (!cur_.results_set && !cur_.results.empty()) malformed("'" + name + "' has no results to name");
  } catch (ImportError& e) {
    // Say which op a type or an operand belongs to, once (the innermost op names it).
    if (!e.op_named) {
      e.op_named = true;
      const std::string& msg = e.status.message();
      if (msg.find("'" + name + "'") == std::string::npos && msg.find(name + " ") == std::string::npos) {
        std::string add = " (in '" + name + "')";
        if (msg.find(" (from ") == std::string::npos) add += python_suffix(peek_line_loc(c_, locs_));
        e.status = Status(e.status.code(), msg + add);
      }
    }
    throw;
  }
  LocId l = maybe_loc();
  if (cur_.branch_block >= 0) {
    CfgBlock& blk = regions_.back().cfg->blocks[cur_.branch_block];
    blk.term_at = cur_.at;
    blk.term_loc = l;
  }
  for (OpId o : cur_.made) pending_.push_back(PendingLoc{f_, o, l, cur_.at});
  cur_ = std::move(saved);
}

// ---------------------------------------------------------------- values

std::string Reader::tri_value_name(const std::string& mlir_name) {
  std::string base;
  for (char ch : mlir_name) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.';
    base += ok ? ch : '_';
  }
  if (base.empty()) base = "v";
  std::string name = base;
  if (value_names_.count(name)) {
    int& k = name_suffix_[base];
    do {
      name = base + "_" + std::to_string(++k);
    } while (value_names_.count(name));
  }
  value_names_.insert(name);
  return name;
}

void Reader::define(const std::string& mlir_name, ValueId v) {
  if (f_->values.size() > kMaxValuesPerFunction)
    throw ImportError{error_at(Code::LimitExceeded, source_, cur_.at, "more values than kMaxValuesPerFunction")};
  auto& scope = scopes_.back();
  if (scope.count(mlir_name)) malformed("%" + mlir_name + " is defined twice in one region");
  scope.emplace(mlir_name, v);
  f_->values[v].name = tri_value_name(mlir_name);
}

void Reader::set_results(const std::vector<ValueId>& given) {
  std::vector<ValueId> vals = given;
  if (vals.size() == 1 && (cur_.hint_divisibility || cur_.hint_contiguity)) {
    // The op's hints, kept as ops (docs/import.md): each dimension gets the splat value. Not
    // checked: Triton's idiom `max_contiguous(multiple_of(offs % M, BM), BM)` states them of
    // edge tiles whose wrapped lanes are masked off later.
    const TypeId t = f_->type_of(vals[0]);
    const TypeId et = m_->types.elem_of(t);
    const ir::TypeData& ed = m_->types.get(et);
    const bool ok = ed.kind == ir::TypeKind::Ptr ||
                    (ed.kind == ir::TypeKind::Scalar && ir::is_int(ed.scalar) && ed.scalar != ir::Scalar::I1);
    const size_t rank = m_->types.is_block(t) ? m_->types.get(t).dims.size() : 1;
    if (ok && cur_.hint_divisibility)
      vals[0] = make1(Opcode::MultipleOf, {vals[0]}, t,
                      {Attr::of_ints(std::vector<int64_t>(rank, cur_.hint_divisibility)), Attr::of_bool(false)});
    if (ok && cur_.hint_contiguity && m_->types.is_block(t))
      vals[0] = make1(Opcode::MaxContiguous, {vals[0]}, t,
                      {Attr::of_ints(std::vector<int64_t>(rank, cur_.hint_contiguity)), Attr::of_bool(false)});
  }
  size_t declared = 0;
  for (const auto& r : cur_.results) declared += r.second;
  if (declared != vals.size())
    malformed("'" + cur_.name + "' has " + std::to_string(vals.size()) + " result(s) but " + std::to_string(declared) +
              " are named");
  size_t k = 0;
  for (const auto& [n, count] : cur_.results) {
    if (count == 1) {
      define(n, vals[k++]);
    } else {
      for (uint32_t j = 0; j < count; ++j) define(n + "#" + std::to_string(j), vals[k++]);
    }
  }
  cur_.results_set = true;
}

ValueId Reader::use(const std::string& name, Loc at) {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto v = it->find(name);
    if (v == it->end()) continue;
    if (!desc_use_ && !descs_.empty() && descs_.count(v->second))
      throw ImportError{error_at(Code::Unsupported, source_, at,
                                 "tensor descriptor %" + name + " used by '" + cur_.name +
                                     "': the importer lowers descriptors to pointer arithmetic, so they may only be "
                                     "used by tt.descriptor_load/store/gather/scatter/reduce (not passed to calls, "
                                     "carried by loops or chosen between)")};
    return v->second;
  }
  throw ImportError{error_at(Code::Parse, source_, at, "use of undefined value %" + name)};
}

ValueId Reader::operand() {
  Loc at = c_.loc();
  return use(c_.value_ref("an operand (%name)"), at);
}

std::vector<ValueId> Reader::operand_list() {
  std::vector<ValueId> out;
  if (!c_.peek_value()) return out;
  out.push_back(operand());
  while (c_.eat(',')) {
    if (!c_.peek_value()) c_.fail_expected("an operand after ','");
    out.push_back(operand());
  }
  return out;
}

OpId Reader::make(Opcode code, const std::vector<ValueId>& operands, const std::vector<TypeId>& types,
                  std::vector<Attr> attrs) {
  if (f_->ops.size() >= kMaxOpsPerFunction)
    throw ImportError{error_at(Code::LimitExceeded, source_, cur_.at, "more ops than kMaxOpsPerFunction")};
  OpId o = b_->create(code, operands, types, std::move(attrs), cur_.at);
  cur_.made.push_back(o);
  return o;
}

ValueId Reader::make1(Opcode code, const std::vector<ValueId>& operands, TypeId type, std::vector<Attr> attrs) {
  OpId o = make(code, operands, {type}, std::move(attrs));
  return f_->ops[o].results[0];
}

Attr Reader::enum_attr(Opcode code, const char* attr, const std::string& word) {
  const OpInfo& info = op_info(code);
  int ai = info.attr_index(attr);
  if (ai >= 0) {
    const auto& vals = info.attrs[ai].enum_values;
    for (size_t k = 0; k < vals.size(); ++k)
      if (vals[k] == word) return Attr::of_enum(static_cast<int64_t>(k));
  }
  unsupported("'" + cur_.name + "' with " + attr + " '" + word + "': Tri's '" + info.name + "' has no such " + attr);
}

// ---------------------------------------------------------------- types

namespace {
// Counts a level of recursion for as long as it lives.
struct DepthGuard {
  DepthGuard(int* d, Cursor& c, const char* what) : d_(d) {
    if (++*d_ > 16) {
      --*d_;
      c.fail(c.loc(), std::string(what) + " nested more than 16 deep");
    }
  }
  ~DepthGuard() { --*d_; }
  int* d_;
};
}  // namespace

void Reader::skip_type() {
  DepthGuard guard(&type_depth_, c_, "types");
  if (c_.eat('!')) {
    c_.ident("a dialect type");
  } else if (c_.peek() == '(') {
    c_.skip_balanced();
    if (c_.eat_punct("->")) skip_type();
    return;
  } else {
    c_.ident("a type");
  }
  if (c_.peek() == '<') c_.skip_balanced();
}

bool mlir_scalar_type(const std::string& w, Scalar* out) {
  static const std::pair<const char*, Scalar> kScalars[] = {
      {"i1", Scalar::I1},   {"i8", Scalar::I8},         {"i16", Scalar::I16},         {"i32", Scalar::I32},
      {"i64", Scalar::I64}, {"f16", Scalar::F16},       {"bf16", Scalar::BF16},       {"f32", Scalar::F32},
      {"f64", Scalar::F64}, {"f8E4M3FN", Scalar::F8E4M3}, {"f8E5M2", Scalar::F8E5M2},
  };
  for (const auto& [n, s] : kScalars)
    if (w == n) {
      *out = s;
      return true;
    }
  return false;
}

TypeId Reader::elem_scalar_type(TypeId t) const {
  return m_->types.is_block(t) ? m_->types.get(t).elem : t;
}

bool Reader::is_float_type(TypeId t) const {
  Scalar s;
  return m_->types.elem_scalar(t, &s) && is_float(s);
}


TypeId Reader::parse_type() {
  DepthGuard guard(&type_depth_, c_, "types");
  if (m_->types.size() > kMaxTypes)
    throw ImportError{error_at(Code::LimitExceeded, source_, c_.loc(), "more types than kMaxTypes")};
  Loc at = c_.loc();
  if (c_.eat('!')) {
    std::string d = c_.ident("a dialect type (!tt.ptr)");
    if (d != "tt.ptr")
      throw ImportError{error_at(Code::Unsupported, source_, at, "type '!" + d + "' has no Tri counterpart")};
    c_.expect('<', "'<' after !tt.ptr");
    Loc pat = c_.loc();
    if (c_.peek_word("tensor"))
      throw ImportError{error_at(Code::Unsupported, source_, pat,
                                 "a pointer to a tensor (a block pointer, tl.make_block_ptr) has no Tri counterpart")};
    TypeId pointee = parse_type();
    if (!m_->types.is_scalar(pointee))
      throw ImportError{error_at(Code::Unsupported, source_, pat, "a pointer to a pointer has no Tri counterpart")};
    if (c_.eat(',')) {
      uint64_t space = c_.uint("an address space");
      if (space != 1)
        throw ImportError{error_at(Code::Unsupported, source_, pat,
                                   "pointers into address space " + std::to_string(space) +
                                       " have no Tri counterpart (only global memory, 1)")};
    }
    c_.expect('>', "'>' closing !tt.ptr<");
    return m_->types.ptr(pointee);
  }
  std::string w = c_.ident("a type");
  if (w == "tensor") {
    c_.expect('<', "'<' after tensor");
    std::vector<Dim> dims;
    while (c_.peek_number() || c_.peek() == '?') {
      Loc dat = c_.loc();
      if (c_.peek() == '?')
        throw ImportError{error_at(Code::Unsupported, source_, dat, "a tensor of dynamic shape has no Tri counterpart")};
      uint64_t d = c_.uint("a dimension");
      if (d == 0 || d > static_cast<uint64_t>(kMaxDim))
        throw ImportError{error_at(Code::Unsupported, source_, dat,
                                   "a tensor dimension of " + std::to_string(d) + " (Tri's blocks take 1 to " +
                                       std::to_string(kMaxDim) + ")")};
      dims.push_back(Dim::lit(static_cast<int64_t>(d)));
      // The 'x' is glued to the next dimension or the element type: `16x16xf32`.
      if (c_.peek() != 'x') c_.fail_expected("'x' after a tensor dimension");
      c_.eat('x');
      // `16xf32`: the ident reader would swallow "xf32" if 'x' were not consumed alone.
    }
    if (dims.empty())
      throw ImportError{error_at(Code::Unsupported, source_, at, "a tensor of rank 0 has no Tri counterpart")};
    if (dims.size() > static_cast<size_t>(kMaxBlockRank))
      throw ImportError{error_at(Code::Unsupported, source_, at,
                                 "a tensor of rank " + std::to_string(dims.size()) + " (Tri's blocks have rank 1 to 4)")};
    TypeId elem = parse_type();
    if (m_->types.is_block(elem)) c_.fail(at, "a tensor of tensors");
    if (c_.peek() == ',')
      throw ImportError{error_at(Code::Unsupported, source_, c_.loc(), "a tensor with an encoding (TTGIR, not TTIR)")};
    c_.expect('>', "'>' closing tensor<");
    return m_->types.block(dims, elem);
  }
  Scalar s;
  if (mlir_scalar_type(w, &s)) return m_->types.scalar(s);
  throw ImportError{error_at(Code::Unsupported, source_, at,
                             "type '" + w + "' has no Tri counterpart (Tri has i1 i8 i16 i32 i64 f16 bf16 f32 f64 "
                             "f8E4M3FN f8E5M2)")};
}

std::vector<TypeId> Reader::parse_type_list() {
  std::vector<TypeId> out;
  if (c_.eat('(')) {
    if (c_.eat(')')) return out;
    do {
      out.push_back(parse_type());
    } while (c_.eat(','));
    c_.expect(')', "')' closing a type list");
    return out;
  }
  do {
    out.push_back(parse_type());
  } while (c_.eat(','));
  return out;
}

// ---------------------------------------------------------------- attributes

AttrVal Reader::parse_attr_value() {
  DepthGuard guard(&attr_depth_, c_, "attributes");
  AttrVal v;
  if (c_.peek_string()) {
    v.kind = AttrVal::Kind::Str;
    v.s = c_.string_lit("a string");
    return v;
  }
  if (c_.eat_word("true") || c_.eat_word("false")) {
    // eat_word consumed one of them; look back at which.
    v.kind = AttrVal::Kind::Bool;
    std::string_view t = c_.text();
    size_t p = c_.pos();
    v.i = (p >= 4 && t.substr(p - 4, 4) == "true") ? 1 : 0;
    if (c_.eat(':')) skip_type();
    return v;
  }
  if (c_.peek_number()) {
    NumLit n = c_.number("a number");
    if (n.kind == NumLit::Kind::Float) {
      v.kind = AttrVal::Kind::Float;
      v.f = n.f;
    } else {
      v.kind = AttrVal::Kind::Int;
      v.i = n.kind == NumLit::Kind::Int ? n.i : static_cast<int64_t>(n.bits);
    }
    if (c_.eat(':')) skip_type();
    return v;
  }
  if (c_.eat_word("array")) {
    c_.expect('<', "'<' after array");
    skip_type();
    v.kind = AttrVal::Kind::Ints;
    if (c_.eat(':')) {
      do {
        NumLit n = c_.number("an array element");
        if (n.kind != NumLit::Kind::Int) malformed("a non-integer array element");
        v.ints.push_back(n.i);
        if (v.ints.size() > 64) malformed("an array of more than 64 elements");
      } while (c_.eat(','));
    }
    c_.expect('>', "'>' closing array<");
    return v;
  }
  if (c_.eat_word("dense")) {
    // dense<16> : tensor<1xi32> (tl.multiple_of hints): read a splat integer when there is one.
    c_.expect('<', "'<' after dense");
    v.kind = AttrVal::Kind::Other;
    if (c_.peek_number()) {
      NumLit n = c_.number("a number");
      if (n.kind == NumLit::Kind::Int) {
        v.kind = AttrVal::Kind::Int;
        v.i = n.i;
      }
      c_.expect('>', "'>' closing dense<");
    } else {
      while (c_.peek() != '>') {
        if (c_.at_end()) c_.fail_expected("'>' closing dense<");
        if (c_.peek() == '[' || c_.peek() == '(' || c_.peek() == '{') {
          c_.skip_balanced();
        } else if (c_.peek_string()) {
          c_.string_lit("a string");
        } else if (c_.peek_number()) {
          c_.number("a number");
        } else if (c_.peek_ident()) {
          c_.ident("a word");
        } else if (!c_.eat(',') && !c_.eat(':')) {
          c_.fail_expected("a dense element");
        }
      }
      c_.expect('>', "'>' closing dense<");
    }
    if (c_.eat(':')) skip_type();
    return v;
  }
  if (c_.peek() == '[' || c_.peek() == '(') {
    c_.skip_balanced();
    v.kind = AttrVal::Kind::Other;
    return v;
  }
  if (c_.peek() == '@') {
    v.kind = AttrVal::Kind::Str;
    v.s = c_.symbol_ref("a symbol");
    return v;
  }
  if (c_.peek() == '#') {
    c_.hash_ref("an attribute alias");
    v.kind = AttrVal::Kind::Other;
    if (c_.peek() == '<') {
      v.kind = AttrVal::Kind::Dict;
      v.dict = parse_dict('<', '>');
    }
    return v;
  }
  if (c_.peek_ident()) {
    v.kind = AttrVal::Kind::Word;
    v.s = c_.ident("a word");
    if (c_.peek() == '<') {
      c_.skip_balanced();
      v.kind = AttrVal::Kind::Other;
    }
    return v;
  }
  c_.fail_expected("an attribute value");
}

AttrDict Reader::parse_dict(char open, char close) {
  AttrDict out;
  std::string o(1, open), cl(1, close);
  c_.expect(open, ("'" + o + "'").c_str());
  if (c_.eat(close)) return out;
  do {
    std::string key = c_.peek_string() ? c_.string_lit("an attribute name") : c_.ident("an attribute name");
    AttrVal v;
    if (c_.eat('=')) v = parse_attr_value();
    out[key] = std::move(v);
    if (out.size() > 256) malformed("more than 256 attributes");
  } while (c_.eat(','));
  if (!c_.eat(close)) c_.fail_expected(("'" + cl + "' closing an attribute dictionary").c_str());
  return out;
}

void Reader::skip_trailing_attrs() {
  while (true) {
    if (c_.peek() == '{') {
      const AttrDict d = parse_dict();
      auto hint = [&](const char* key, int64_t* out) {
        auto it = d.find(key);
        if (it != d.end() && it->second.kind == AttrVal::Kind::Int && it->second.i > 0) *out = it->second.i;
      };
      hint("tt.divisibility", &cur_.hint_divisibility);
      hint("tt.contiguity", &cur_.hint_contiguity);
    } else if (c_.peek_word("fastmath") || c_.peek_word("overflow") || c_.peek_word("exact") ||
               c_.peek_word("nneg")) {
      c_.ident("a flag");
      if (c_.peek() == '<') c_.skip_balanced();
    } else {
      return;
    }
  }
}

LocId Reader::maybe_loc() {
  if (!c_.peek_word("loc")) return kNoLoc;
  return locs_.parse_loc(c_);
}

}  // namespace tri::import
