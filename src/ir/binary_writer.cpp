// The binary IR format's writer (docs/format.md is its specification; binary.cpp is the reader).
// It walks each function's body in definition order (the params, then each op, its regions and
// then its results, as the text parser creates them) and numbers blocks, ops and values in that
// order, so every operand refers back to a value the reader has already created.
#include <xxhash.h>

#include <cassert>
#include <cstring>
#include <unordered_map>

#include "ir/binary.h"
#include "ir/binary_format.h"
#include "ir/limits.h"

namespace tri::ir {
namespace {

using namespace binary_detail;

// Writer

class Writer {
 public:
  Writer(const Module& m, bool locations) : m_(m), locations_(locations) {}

  std::string write() {
    std::string body;
    out_ = &body;
    str(locations_ ? m_.source_name : std::string());
    u(m_.symbols.size());
    for (const std::string& s : m_.symbols) str(s);
    u(m_.types.size());
    for (TypeId t = 0; t < m_.types.size(); ++t) type_entry(m_.types.get(t));
    u(m_.functions.size());
    for (const auto& f : m_.functions) function(*f);

    std::string payload;
    out_ = &payload;
    u(strings_.size());
    for (const std::string& s : strings_) {
      u(s.size());
      payload += s;
    }
    payload += body;

    std::string file(reinterpret_cast<const char*>(kMagic), sizeof(kMagic));
    put_le(&file, kFormatVersion, 2);
    put_le(&file, 0, 2);  // flags: none are defined
    put_le(&file, payload.size(), 8);
    put_le(&file, XXH3_64bits(payload.data(), payload.size()), 8);
    file += payload;
    return file;
  }

 private:
  void u(uint64_t v) {
    while (v >= 0x80) {
      out_->push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_->push_back(static_cast<char>(v));
  }
  void s(int64_t v) { u((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }

  void str(const std::string& v) {
    auto it = string_index_.find(v);
    if (it == string_index_.end()) {
      it = string_index_.emplace(v, strings_.size()).first;
      strings_.push_back(v);
    }
    u(it->second);
  }

  void loc(Loc l) {
    u(locations_ ? l.line : 0);
    u(locations_ ? l.col : 0);
  }

  // An id past the end of its table is written for an id the module does not have; the reader
  // rejects it (write_binary's input is meant to be verified; this keeps a bad one detectable).
  void type_ref(TypeId t) { u(t < m_.types.size() ? t : m_.types.size()); }

  void type_entry(const TypeData& d) {
    switch (d.kind) {
      case TypeKind::Scalar:
        u(kTypeScalar);
        u(scalar_code(d.scalar));
        break;
      case TypeKind::Ptr:
        u(kTypePtr);
        type_ref(d.pointee);
        break;
      case TypeKind::Block:
        u(kTypeBlock);
        u(d.dims.size());
        for (const Dim& dim : d.dims) u(dim.symbolic ? (uint64_t(dim.sym) << 1 | 1) : (uint64_t(dim.value) << 1));
        type_ref(d.elem);
        break;
    }
  }

  void attr(const Attr& a, const AttrSpec* spec) {
    switch (a.kind) {
      case Attr::Kind::None: u(kTagNone); break;
      case Attr::Kind::Int: u(kTagInt); s(a.i); break;
      case Attr::Kind::Float: {
        u(kTagFloat);
        uint64_t bits;
        std::memcpy(&bits, &a.f, 8);
        put_le(out_, bits, 8);
        break;
      }
      case Attr::Kind::Bool: u(kTagBool); u(a.i ? 1 : 0); break;
      case Attr::Kind::Str: u(kTagStr); str(a.s); break;
      case Attr::Kind::Func: u(kTagFunc); str(a.s); break;
      case Attr::Kind::Ints:
        u(kTagInts);
        u(a.ints.size());
        for (int64_t v : a.ints) s(v);
        break;
      case Attr::Kind::Enum: {
        u(kTagEnum);
        // By name, so that values may be added to an enum without breaking old files. An index
        // out of range is written as "" (no enum has that value) so the reader rejects it.
        bool ok = spec && a.i >= 0 && static_cast<uint64_t>(a.i) < spec->enum_values.size();
        str(ok ? spec->enum_values[a.i] : std::string());
        break;
      }
      case Attr::Kind::Sym: u(kTagSym); str(a.s); break;
    }
  }

  // Numbers a function's reachable blocks, ops and values in the order the reader creates them:
  // the body's arguments (one per param), then block by block, an op before the ops of its
  // regions, a region's arguments before its ops, and an op's results after its regions (as the
  // text parser does). Every value the reader will create consumes a number, even from a
  // malformed module, so the numbers never drift from the reader's.
  void number_block(const Function& f, BlockId b, bool numbered_args) {
    assert(b < f.blocks.size() && new_block_[b] == kNoBlock && "regions must form a tree");
    if (b >= f.blocks.size() || new_block_[b] != kNoBlock) return;
    new_block_[b] = next_block_++;
    if (!numbered_args)
      for (ValueId v : f.blocks[b].args) number_value(f, v);
    for (OpId o : f.blocks[b].ops) {
      assert(o < f.ops.size() && new_op_[o] == kNoOp && "each op sits in one block");
      if (o >= f.ops.size() || new_op_[o] != kNoOp) continue;
      new_op_[o] = next_op_++;
      for (BlockId r : f.ops[o].regions) number_block(f, r, false);
      for (ValueId v : f.ops[o].results) number_value(f, v);
    }
  }
  void number_value(const Function& f, ValueId v) {
    if (v < f.values.size() && new_value_[v] == kNoValue) new_value_[v] = next_value_;
    ++next_value_;
  }

  // 0 is "no value"; k + 1 is value k. A value that is not reachable is written as one past the
  // last, which the reader rejects.
  void value_ref(ValueId v) {
    if (v == kNoValue) return u(0);
    ValueId n = v < new_value_.size() && new_value_[v] != kNoValue ? new_value_[v] : next_value_;
    u(uint64_t(n) + 1);
  }

  void function(const Function& f) {
    new_block_.assign(f.blocks.size(), kNoBlock);
    new_op_.assign(f.ops.size(), kNoOp);
    new_value_.assign(f.values.size(), kNoValue);
    next_block_ = next_op_ = next_value_ = 0;
    assert(f.body < f.blocks.size());
    const std::vector<ValueId> no_args;
    const std::vector<ValueId>& args = f.body < f.blocks.size() ? f.blocks[f.body].args : no_args;
    // The body's arguments are the params (the verifier checks it; the file relies on it).
    assert(args.size() == f.params.size());
    for (size_t i = 0; i < f.params.size(); ++i) {
      assert(f.params[i].value == args[i]);
      i < args.size() ? number_value(f, args[i]) : void(++next_value_);
    }
    number_block(f, f.body, true);

    str(f.name);
    u(f.is_kernel ? 1 : 0);
    loc(f.loc);
    u(f.results.size());
    for (TypeId t : f.results) type_ref(t);
    u(f.constexprs.size());
    for (const Constexpr& c : f.constexprs) {
      str(c.name);
      u(scalar_code(c.type));
      attr(c.default_value, nullptr);
      loc(c.loc);
    }
    u(f.params.size());
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Param& p = f.params[i];
      str(p.name);
      type_ref(p.type);
      u(p.align);
      u(p.divisible);
      u(p.noalias ? 1 : 0);
      loc(p.loc);
      str(i < args.size() && args[i] < f.values.size() ? f.values[args[i]].name : std::string());
    }
    if (f.body < f.blocks.size()) {
      loc(f.blocks[f.body].loc);
      ops(f, f.blocks[f.body].ops);
    } else {
      loc(Loc{});
      u(0);
    }
  }

  void value_def(const Function& f, ValueId v) {
    type_ref(v < f.values.size() ? f.values[v].type : kNoType);
    str(v < f.values.size() ? f.values[v].name : std::string());
  }

  void ops(const Function& f, const std::vector<OpId>& list) {
    u(list.size());
    for (OpId o : list) op(f, o);
  }

  void region(const Function& f, BlockId b) {
    const BlockData& bd = f.blocks[b];
    loc(bd.loc);
    u(bd.args.size());
    for (ValueId v : bd.args) value_def(f, v);
    ops(f, bd.ops);
  }

  void op(const Function& f, OpId o) {
    const OpData& d = f.ops[o];
    const OpInfo& info = op_info(d.code);
    str(info.name);
    loc(d.loc);
    u(d.operands.size());
    for (ValueId v : d.operands) value_ref(v);
    assert(d.attrs.size() == info.attrs.size() && "attrs follow the op's spec");
    size_t n = std::min(d.attrs.size(), info.attrs.size());
    size_t present = 0;
    for (size_t i = 0; i < n; ++i) present += d.attrs[i].present();
    u(present);
    for (size_t i = 0; i < n; ++i) {
      if (!d.attrs[i].present()) continue;
      str(info.attrs[i].name);
      attr(d.attrs[i], &info.attrs[i]);
    }
    u(d.regions.size());
    for (BlockId r : d.regions) region(f, r);
    u(d.results.size());
    for (ValueId v : d.results) value_def(f, v);
  }

  const Module& m_;
  const bool locations_;
  std::string* out_ = nullptr;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint64_t> string_index_;
  std::vector<BlockId> new_block_;
  std::vector<OpId> new_op_;
  std::vector<ValueId> new_value_;
  uint32_t next_block_ = 0, next_op_ = 0, next_value_ = 0;
};


}  // namespace

std::string write_binary(const Module& m, bool locations) { return Writer(m, locations).write(); }

}  // namespace tri::ir
