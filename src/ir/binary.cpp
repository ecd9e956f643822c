// The binary IR format's reader (docs/format.md is its specification; keep the two in step;
// binary_writer.cpp is the writer).
//
// The writer walks each function's body in definition order (the params, then each op, its
// regions and then its results, as the text parser creates them) and numbers blocks, ops and
// values in that order, so every operand refers back to a value the reader has already created.
// The reader rebuilds the tables in the same order and trusts nothing: each count is checked
// against the bytes left before anything is allocated, each index against the tables read so far,
// each op against its row in ops.def (operand slot layout, attribute names and kinds), and region
// nesting against kMaxNesting. It accepts what the text parser accepts (values visible where
// used, names unique, required attributes present), so what it returns always prints as text
// that parses back; it is not verified: run verify() next.
#include "ir/binary.h"

#include <xxhash.h>

#include <cassert>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "ir/binary_format.h"
#include "ir/limits.h"

namespace tri::ir {
namespace {

using namespace binary_detail;

#define TRY(expr) TRI_RETURN_IF_ERROR(expr)

class Reader {
 public:
  Reader(const uint8_t* data, size_t size, const std::string& source) : data_(data), size_(size), source_(source) {}

  Status read(std::unique_ptr<Module>* out) {
    if (size_ < sizeof(kMagic) || std::memcmp(data_, kMagic, sizeof(kMagic)) != 0)
      return corrupt(0, "not a Tri binary module (bad magic)");
    if (size_ < 10) return corrupt(8, "truncated header");
    uint64_t version = get_le(data_ + 8, 2);
    version_ = version;
    if (version > kFormatVersion)
      return Status(Code::UnsupportedVersion,
                    format_diag(source_, {}, "format version " + std::to_string(version) +
                                                 " is newer than this library reads (" +
                                                 std::to_string(kFormatVersion) + "); upgrade Tri"));
    if (version == 0) return corrupt(8, "format version 0 does not exist");
    if (size_ > kMaxInputBytes)
      return Status(Code::LimitExceeded,
                    format_diag(source_, {}, "input of " + std::to_string(size_) + " bytes exceeds the " +
                                                 std::to_string(kMaxInputBytes) + "-byte limit (kMaxInputBytes)"));
    if (size_ < kHeaderSize)
      return corrupt(size_, "truncated header: " + std::to_string(size_) + " bytes, the header takes " +
                                std::to_string(kHeaderSize));
    uint64_t flags = get_le(data_ + 10, 2);
    if (flags != 0)
      return corrupt(10, "unknown flags 0x" + hex(flags) + " (version " + std::to_string(version) + " defines none)");
    uint64_t payload_size = get_le(data_ + 12, 8);
    uint64_t present = size_ - kHeaderSize;
    if (payload_size > present)
      return corrupt(12, "truncated: the header promises " + std::to_string(payload_size) + " payload bytes, " +
                             std::to_string(present) + " are present");
    if (payload_size < present)
      return corrupt(kHeaderSize + payload_size, std::to_string(present - payload_size) +
                                                     " bytes after the end of the payload");
    uint64_t stored = get_le(data_ + kChecksumOffset, 8);
    uint64_t computed = XXH3_64bits(data_ + kHeaderSize, payload_size);
    if (stored != computed)
      return corrupt(kChecksumOffset, "checksum mismatch (stored 0x" + hex(stored) + ", payload hashes to 0x" +
                                          hex(computed) + ")");
    pos_ = kHeaderSize;

    m_ = std::make_unique<Module>();
    m_->source_name = source_;
    TRY(read_strings());
    // From version 2 the file names the text it was made from: locations refer to that text, so
    // diagnostics name it (structural errors above and below name the file being read).
    if (version_ >= 2) {
      const std::string* origin;
      TRY(str(&origin));
      if (!origin->empty()) m_->source_name = *origin;
    }
    TRY(read_symbols());
    TRY(read_types());
    TRY(read_functions());
    if (pos_ != size_) return corrupt(pos_, std::to_string(size_ - pos_) + " bytes after the last function");
    *out = std::move(m_);
    return Status::ok();
  }

 private:
  static std::string hex(uint64_t v) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    do {
      s.insert(s.begin(), digits[v & 15]);
      v >>= 4;
    } while (v);
    return s;
  }

  Status corrupt(size_t at, const std::string& what) const {
    return Status(Code::CorruptBinary,
                  format_diag(source_, {}, "corrupt binary at byte " + std::to_string(at) + ": " + what));
  }
  Status limit(const std::string& what) const { return Status(Code::LimitExceeded, format_diag(source_, {}, what)); }

  size_t left() const { return size_ - pos_; }

  Status u(uint64_t* v) {
    size_t start = pos_;
    uint64_t r = 0;
    for (int shift = 0;; shift += 7) {
      if (pos_ >= size_) return corrupt(start, "truncated varint");
      uint8_t b = data_[pos_++];
      if (shift == 63 && b > 1) return corrupt(start, "varint does not fit 64 bits");
      r |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        if (b == 0 && shift > 0) return corrupt(start, "varint with a redundant trailing zero byte");
        break;
      }
    }
    *v = r;
    return Status::ok();
  }

  Status u32(uint32_t* v, const char* what) {
    size_t start = pos_;
    uint64_t r = 0;
    TRY(u(&r));
    if (r > UINT32_MAX) return corrupt(start, std::string(what) + " " + std::to_string(r) + " does not fit 32 bits");
    *v = static_cast<uint32_t>(r);
    return Status::ok();
  }

  Status s(int64_t* v) {
    uint64_t r;
    TRY(u(&r));
    *v = static_cast<int64_t>((r >> 1) ^ (~(r & 1) + 1));
    return Status::ok();
  }

  // A count of records of at least `min_bytes` each, checked against the bytes left.
  Status count(uint64_t* n, size_t min_bytes, const char* what) {
    size_t start = pos_;
    TRY(u(n));
    uint64_t room = left() / min_bytes;
    if (*n > room)
      return corrupt(start, std::string(what) + " count " + std::to_string(*n) + " exceeds the " +
                                std::to_string(room) + " " + what + "s left in the input");
    return Status::ok();
  }

  Status flag(bool* b, const char* what) {
    size_t start = pos_;
    uint64_t v;
    TRY(u(&v));
    if (v > 1) return corrupt(start, std::string(what) + " " + std::to_string(v) + " is not 0 or 1");
    *b = v == 1;
    return Status::ok();
  }

  Status loc(Loc* l) {
    TRY(u32(&l->line, "line"));
    return u32(&l->col, "column");
  }

  Status str(const std::string** v) {
    size_t start = pos_;
    uint64_t i = 0;
    TRY(u(&i));
    if (i >= strings_.size())
      return corrupt(start, "string " + std::to_string(i) + " is not in the table of " +
                                std::to_string(strings_.size()));
    *v = &strings_[i];
    return Status::ok();
  }
  Status name(std::string* v, const char* what) {
    size_t start = pos_;
    const std::string* s;
    TRY(str(&s));
    if (!is_name(*s)) return corrupt(start, std::string(what) + " '" + *s + "' is not a NAME");
    *v = *s;
    return Status::ok();
  }
  Status value_name(std::string* v) {
    size_t start = pos_;
    const std::string* s;
    TRY(str(&s));
    if (!is_value_name(*s)) return corrupt(start, "value name '" + *s + "' has a character outside [A-Za-z0-9_.]");
    *v = *s;
    return Status::ok();
  }

  Status type_ref(TypeId* t) {
    size_t start = pos_;
    uint64_t i = 0;
    TRY(u(&i));
    if (i >= type_map_.size())
      return corrupt(start, "type " + std::to_string(i) + " is not in the table of " +
                                std::to_string(type_map_.size()));
    *t = type_map_[i];
    return Status::ok();
  }

  Status scalar(Scalar* out) {
    size_t start = pos_;
    uint64_t c = 0;
    TRY(u(&c));
    if (c >= kNumScalarCodes) return corrupt(start, "scalar code " + std::to_string(c) + " is out of range");
    *out = kScalarOfCode[c];
    return Status::ok();
  }

  Status read_strings() {
    uint64_t n;
    TRY(count(&n, kMinString, "string"));
    strings_.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      size_t start = pos_;
      uint64_t len = 0;
      TRY(u(&len));
      if (len > left())
        return corrupt(start, "string of " + std::to_string(len) + " bytes runs past the end (" +
                                  std::to_string(left()) + " left)");
      if (len > kMaxStringBytes)
        return limit("string of " + std::to_string(len) + " bytes at byte " + std::to_string(start) +
                     " exceeds the " + std::to_string(kMaxStringBytes) + "-byte limit (kMaxStringBytes)");
      strings_.emplace_back(reinterpret_cast<const char*>(data_ + pos_), len);
      pos_ += len;
    }
    return Status::ok();
  }

  Status read_symbols() {
    uint64_t n;
    TRY(count(&n, kMinSymbol, "symbol"));
    std::unordered_set<std::string> seen;
    for (uint64_t i = 0; i < n; ++i) {
      size_t start = pos_;
      std::string s;
      TRY(name(&s, "symbol"));
      if (!seen.insert(s).second) return corrupt(start, "symbol '" + s + "' appears twice");
      Scalar sc;
      if (s == "ptr" || scalar_from_name(s, &sc)) return corrupt(start, "symbol '" + s + "' is a type's name");
      m_->symbols.push_back(std::move(s));
    }
    return Status::ok();
  }

  Status read_types() {
    uint64_t n;
    TRY(count(&n, kMinType, "type"));
    if (n > kMaxTypes)
      return limit(std::to_string(n) + " types exceed the limit of " + std::to_string(kMaxTypes) + " (kMaxTypes)");
    type_map_.reserve(n);
    bool seen_scalar[kNumScalarCodes] = {};
    TypeTable& types = m_->types;
    for (uint64_t i = 0; i < n; ++i) {
      size_t start = pos_;
      uint64_t tag;
      TRY(u(&tag));
      TypeId id;
      if (tag == kTypeScalar) {
        size_t at = pos_;
        Scalar sc;
        TRY(scalar(&sc));
        uint64_t code = scalar_code(sc);
        if (seen_scalar[code]) return corrupt(at, "scalar type " + std::string(scalar_name(sc)) + " appears twice");
        seen_scalar[code] = true;
        id = types.scalar(sc);
      } else if (tag == kTypePtr) {
        size_t at = pos_;
        TypeId pointee;
        TRY(type_ref(&pointee));
        if (!types.is_scalar(pointee)) return corrupt(at, "pointer to " + m_->type_str(pointee) + ", not a scalar");
        size_t before = types.size();
        id = types.ptr(pointee);
        if (types.size() == before) return corrupt(start, "type " + m_->type_str(id) + " appears twice");
      } else if (tag == kTypeBlock) {
        size_t at = pos_;
        uint64_t rank;
        TRY(u(&rank));
        if (rank < 1 || rank > kMaxBlockRank)
          return corrupt(at, "block rank " + std::to_string(rank) + " is not 1 to " + std::to_string(kMaxBlockRank));
        std::vector<Dim> dims;
        for (uint64_t k = 0; k < rank; ++k) {
          at = pos_;
          uint64_t d = 0;
          TRY(u(&d));
          if (d & 1) {
            if ((d >> 1) >= m_->symbols.size())
              return corrupt(at, "dimension names symbol " + std::to_string(d >> 1) + " of " +
                                     std::to_string(m_->symbols.size()));
            dims.push_back(Dim::name(static_cast<SymId>(d >> 1)));
          } else {
            if ((d >> 1) > static_cast<uint64_t>(kMaxDim))
              return limit("dimension " + std::to_string(d >> 1) + " at byte " + std::to_string(at) +
                           " exceeds the limit of " + std::to_string(kMaxDim) + " (kMaxDim)");
            dims.push_back(Dim::lit(static_cast<int64_t>(d >> 1)));
          }
        }
        at = pos_;
        TypeId elem;
        TRY(type_ref(&elem));
        if (types.is_block(elem)) return corrupt(at, "block of blocks (element " + m_->type_str(elem) + ")");
        size_t before = types.size();
        id = types.block(dims, elem);
        if (types.size() == before) return corrupt(start, "type " + m_->type_str(id) + " appears twice");
      } else {
        return corrupt(start, "type tag " + std::to_string(tag) + " is out of range");
      }
      type_map_.push_back(id);
    }
    return Status::ok();
  }

  Status attr(Attr* a, const AttrSpec* spec, const std::string& op_name) {
    size_t start = pos_;
    uint64_t tag;
    TRY(u(&tag));
    auto wrong_kind = [&](const char* kind) {
      return corrupt(start, std::string(kind) + " value for " +
                                (spec ? "attribute '" + spec->name + "' of '" + op_name + "'" : "a constexpr default"));
    };
    // The kinds each spec kind admits (the same as the text parser's).
    AttrKind k = spec ? spec->kind : AttrKind::Num;
    bool numeric = k == AttrKind::Num;
    switch (tag) {
      case kTagNone:
        if (spec) return corrupt(start, "absent attribute '" + spec->name + "' of '" + op_name + "' is written");
        *a = Attr::none();
        return Status::ok();
      case kTagInt: {
        if (k != AttrKind::Int && !numeric) return wrong_kind("an int");
        int64_t v;
        TRY(s(&v));
        *a = Attr::of_int(v);
        return Status::ok();
      }
      case kTagFloat: {
        if (!numeric) return wrong_kind("a float");
        if (left() < 8) return corrupt(pos_, "truncated float");
        uint64_t bits = get_le(data_ + pos_, 8);
        pos_ += 8;
        double f;
        std::memcpy(&f, &bits, 8);
        *a = Attr::of_float(f);
        return Status::ok();
      }
      case kTagBool: {
        if (k != AttrKind::Bool && !numeric) return wrong_kind("a bool");
        bool b = false;
        TRY(flag(&b, "bool"));
        *a = Attr::of_bool(b);
        return Status::ok();
      }
      case kTagStr: {
        if (!spec || k != AttrKind::Str) return wrong_kind("a string");
        const std::string* v;
        TRY(str(&v));
        *a = Attr::of_str(*v);
        return Status::ok();
      }
      case kTagFunc: {
        if (!spec || k != AttrKind::Func) return wrong_kind("a function");
        std::string v;
        TRY(name(&v, "function"));
        *a = Attr::of_func(std::move(v));
        return Status::ok();
      }
      case kTagInts: {
        if (!spec || k != AttrKind::Ints) return wrong_kind("an integer list");
        uint64_t n;
        TRY(count(&n, kMinInt, "integer"));
        std::vector<int64_t> v(n);
        for (uint64_t i = 0; i < n; ++i) TRY(s(&v[i]));
        *a = Attr::of_ints(std::move(v));
        return Status::ok();
      }
      case kTagEnum: {
        if (!spec || k != AttrKind::Enum) return wrong_kind("an enum");
        size_t at = pos_;
        const std::string* v;
        TRY(str(&v));
        for (size_t i = 0; i < spec->enum_values.size(); ++i)
          if (spec->enum_values[i] == *v) {
            *a = Attr::of_enum(static_cast<int64_t>(i));
            return Status::ok();
          }
        return corrupt(at, "'" + *v + "' is not a value of attribute '" + spec->name + "' of '" + op_name + "'");
      }
      case kTagSym: {
        if (!spec || (k != AttrKind::Int && !numeric)) return wrong_kind("a constexpr name");
        size_t at = pos_;
        std::string v;
        TRY(name(&v, "constexpr"));
        // These words are literals where a constexpr name could stand.
        if (v == "true" || v == "false" || v == "inf" || v == "nan")
          return corrupt(at, "'" + v + "' cannot name a constexpr");
        *a = Attr::of_sym(std::move(v));
        return Status::ok();
      }
    }
    return corrupt(start, "attribute kind " + std::to_string(tag) + " is out of range");
  }

  Status read_functions() {
    uint64_t n;
    TRY(count(&n, kMinFunction, "function"));
    if (n > kMaxFunctions)
      return limit(std::to_string(n) + " functions exceed the limit of " + std::to_string(kMaxFunctions) +
                   " (kMaxFunctions)");
    m_->functions.reserve(n);
    std::unordered_set<std::string> names;
    for (uint64_t i = 0; i < n; ++i) {
      m_->functions.push_back(std::make_unique<Function>());
      Function& f = *m_->functions.back();
      size_t at = pos_;
      TRY(name(&f.name, "function"));
      if (!names.insert(f.name).second) return corrupt(at, "function '@" + f.name + "' appears twice");
      TRY(read_function(f));
    }
    return Status::ok();
  }

  // The default's kind must be the one the text gives a constexpr of this type.
  Status constexpr_default(Constexpr* c) {
    size_t at = pos_;
    TRY(attr(&c->default_value, nullptr, ""));
    Attr::Kind k = c->default_value.kind;
    Attr::Kind want = c->type == Scalar::I1 ? Attr::Kind::Bool : is_int(c->type) ? Attr::Kind::Int : Attr::Kind::Float;
    if (k != Attr::Kind::None && k != want)
      return corrupt(at, "the default of constexpr '" + c->name + "' (" + scalar_name(c->type) + ") is not " +
                             (want == Attr::Kind::Bool ? "a bool" : want == Attr::Kind::Int ? "an int" : "a float"));
    return Status::ok();
  }

  Status read_function(Function& f) {
    size_t at = pos_;
    uint64_t flags;
    TRY(u(&flags));
    if (flags > 1) return corrupt(at, "function flags " + std::to_string(flags) + " have unknown bits");
    f.is_kernel = flags == 1;
    TRY(loc(&f.loc));
    at = pos_;
    uint64_t n;
    TRY(count(&n, kMinResultType, "result type"));
    if (n && f.is_kernel) return corrupt(at, "kernel '@" + f.name + "' has results");
    f.results.resize(n);
    for (uint64_t i = 0; i < n; ++i) TRY(type_ref(&f.results[i]));
    at = pos_;
    TRY(count(&n, kMinConstexpr, "constexpr"));
    if (n && !f.is_kernel) return corrupt(at, "device function '@" + f.name + "' has constexprs");
    f.constexprs.resize(n);
    for (size_t i = 0; i < n; ++i) {
      Constexpr& c = f.constexprs[i];
      at = pos_;
      TRY(name(&c.name, "constexpr"));
      Scalar sc;
      if (c.name == "true" || c.name == "false" || c.name == "inf" || c.name == "nan" || c.name == "ptr" ||
          scalar_from_name(c.name, &sc))
        return corrupt(at, "'" + c.name + "' cannot name a constexpr (it is a literal or a type)");
      if (f.constexpr_index(c.name) != static_cast<int>(i))
        return corrupt(at, "constexpr '" + c.name + "' appears twice");
      TRY(scalar(&c.type));
      TRY(constexpr_default(&c));
      TRY(loc(&c.loc));
    }

    // The params, which are also the body's arguments.
    value_names_.clear();
    visible_.clear();
    f.body = 0;
    f.blocks.emplace_back();
    f.blocks[0].parent_op = kNoOp;
    at = pos_;
    TRY(count(&n, kMinParam, "param"));
    TRY(new_values(f, n, at));
    f.params.resize(n);
    for (size_t i = 0; i < n; ++i) {
      Param& p = f.params[i];
      TRY(value_name(&p.name));
      TRY(type_ref(&p.type));
      TRY(u32(&p.align, "align"));
      TRY(u32(&p.divisible, "divisible"));
      at = pos_;
      uint64_t pflags;
      TRY(u(&pflags));
      if (pflags > 1) return corrupt(at, "param flags " + std::to_string(pflags) + " have unknown bits");
      p.noalias = pflags == 1;
      TRY(loc(&p.loc));
      TRY(define(f, p.type, kNoOp, 0, static_cast<uint32_t>(i), &p.value));
      f.blocks[0].args.push_back(p.value);
    }
    TRY(loc(&f.blocks[0].loc));
    return read_ops(f, 0, 0);
  }

  // An operand: a value defined earlier and visible here (in this block or an enclosing one,
  // not inside a region that has ended), as in the text.
  Status value_ref(const Function& f, ValueId* v, bool may_be_none) {
    size_t start = pos_;
    uint64_t r = 0;
    TRY(u(&r));
    if (r == 0) {
      if (!may_be_none) return corrupt(start, "a required operand is absent");
      *v = kNoValue;
      return Status::ok();
    }
    if (r - 1 >= f.values.size())
      return corrupt(start, "value " + std::to_string(r - 1) + " is used before it is defined (" +
                                std::to_string(f.values.size()) + " values so far)");
    if (!visible_[r - 1])
      return corrupt(start, "value " + std::to_string(r - 1) + " is used outside the region that defines it");
    *v = static_cast<ValueId>(r - 1);
    return Status::ok();
  }

  Status new_values(Function& f, uint64_t n, size_t at) {
    if (n > kMaxValuesPerFunction - f.values.size())
      return limit("function @" + f.name + " has more than " + std::to_string(kMaxValuesPerFunction) +
                   " values (kMaxValuesPerFunction) at byte " + std::to_string(at));
    return Status::ok();
  }

  // Reads a value's name and defines it as result or argument `index` of its definer. Names
  // are scoped by region as in the text: unique among the values visible (empty means unnamed).
  Status define(Function& f, TypeId type, OpId def_op, BlockId def_block, uint32_t index, ValueId* out) {
    size_t at = pos_;
    ValueData v;
    TRY(value_name(&v.name));
    if (!v.name.empty()) {
      auto [it, fresh] = value_names_.emplace(v.name, static_cast<ValueId>(f.values.size()));
      if (!fresh && visible_[it->second])
        return corrupt(at, "value '%" + v.name + "' is defined twice in '@" + f.name + "'");
      it->second = static_cast<ValueId>(f.values.size());
    }
    v.type = type;
    v.def_op = def_op;
    v.def_block = def_block;
    v.index = index;
    *out = static_cast<ValueId>(f.values.size());
    f.values.push_back(std::move(v));
    visible_.push_back(1);
    return Status::ok();
  }

  Status read_region(Function& f, OpId parent_op, int depth, BlockId* out) {
    BlockId b = static_cast<BlockId>(f.blocks.size());
    f.blocks.emplace_back();
    f.blocks[b].parent_op = parent_op;
    TRY(loc(&f.blocks[b].loc));
    size_t at = pos_;
    uint64_t n;
    TRY(count(&n, kMinArg, "block argument"));
    TRY(new_values(f, n, at));
    f.blocks[b].args.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      TypeId t;
      TRY(type_ref(&t));
      ValueId v;
      TRY(define(f, t, kNoOp, b, static_cast<uint32_t>(i), &v));
      f.blocks[b].args.push_back(v);
    }
    TRY(read_ops(f, b, depth));
    *out = b;
    return Status::ok();
  }

  // The ops of block b; at its end, the values it defined go out of scope.
  Status read_ops(Function& f, BlockId b, int depth) {
    size_t at = pos_;
    uint64_t n;
    TRY(count(&n, kMinOp, "op"));
    if (n > kMaxOpsPerFunction - f.ops.size())
      return limit("function @" + f.name + " has more than " + std::to_string(kMaxOpsPerFunction) +
                   " ops (kMaxOpsPerFunction) at byte " + std::to_string(at));
    f.blocks[b].ops.reserve(n);
    for (uint64_t i = 0; i < n; ++i) TRY(read_op(f, b, depth));
    for (ValueId v : f.blocks[b].args) visible_[v] = 0;
    for (OpId o : f.blocks[b].ops)
      for (ValueId v : f.ops[o].results) visible_[v] = 0;
    return Status::ok();
  }

  Status opcode(Opcode* code) {
    size_t start = pos_;
    const std::string* s;
    TRY(str(&s));
    if (!opcode_from_name(*s, code)) return corrupt(start, "unknown op '" + *s + "'");
    return Status::ok();
  }

  Status read_op(Function& f, BlockId b, int depth) {
    size_t op_start = pos_;
    Opcode code;
    TRY(opcode(&code));
    const OpInfo& info = op_info(code);
    OpId o = static_cast<OpId>(f.ops.size());
    f.ops.emplace_back();
    f.ops[o].code = code;
    f.ops[o].parent = b;
    f.blocks[b].ops.push_back(o);
    TRY(loc(&f.ops[o].loc));

    // Operands in slot layout (OpData::operands): required, variadic, then optional ones.
    size_t at = pos_;
    uint64_t n;
    TRY(count(&n, kMinOperand, "operand"));
    uint64_t required = info.num_required(), optional = 0, at_least = 0;
    for (const OperandSlot& slot : info.operands) {
      optional += slot.kind == SlotKind::Optional;
      at_least += slot.kind == SlotKind::Variadic1;
    }
    bool variadic = info.has_variadic();
    if (variadic ? n < required + optional + at_least : n != required + optional)
      return corrupt(at, "'" + info.name + "' has " + std::to_string(n) + " operand entries, its slots need " +
                             (variadic ? "at least " + std::to_string(required + optional + at_least)
                                       : std::to_string(required + optional)));
    f.ops[o].operands.resize(n);
    for (uint64_t i = 0; i < n; ++i) TRY(value_ref(f, &f.ops[o].operands[i], i >= n - optional));

    // Attributes by name; the required ones must be there.
    at = pos_;
    TRY(count(&n, kMinAttr, "attribute"));
    if (n > info.attrs.size())
      return corrupt(at, "'" + info.name + "' has " + std::to_string(n) + " attributes, its spec has " +
                             std::to_string(info.attrs.size()));
    f.ops[o].attrs.resize(info.attrs.size());
    for (uint64_t i = 0; i < n; ++i) {
      size_t aat = pos_;
      const std::string* aname;
      TRY(str(&aname));
      int k = info.attr_index(*aname);
      if (k < 0) return corrupt(aat, "'" + info.name + "' has no attribute '" + *aname + "'");
      if (f.ops[o].attrs[k].present()) return corrupt(aat, "attribute '" + *aname + "' appears twice");
      TRY(attr(&f.ops[o].attrs[k], &info.attrs[k], info.name));
    }
    for (size_t k = 0; k < info.attrs.size(); ++k)
      if (!info.attrs[k].optional && !f.ops[o].attrs[k].present())
        return corrupt(at, "'" + info.name + "' lacks its attribute '" + info.attrs[k].name + "'");

    // Regions (their count is the verifier's business, as in the text), then the results, which
    // the regions cannot see.
    at = pos_;
    TRY(count(&n, kMinBlock, "region"));
    if (n > 0 && depth + 1 > kMaxNesting)
      return limit("regions nested deeper than " + std::to_string(kMaxNesting) + " (kMaxNesting) at byte " +
                   std::to_string(op_start));
    for (uint64_t i = 0; i < n; ++i) {
      BlockId r;
      TRY(read_region(f, o, depth + 1, &r));
      f.ops[o].regions.push_back(r);
    }
    at = pos_;
    TRY(count(&n, kMinResult, "result"));
    TRY(new_values(f, n, at));
    f.ops[o].results.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      TypeId t;
      TRY(type_ref(&t));
      ValueId v;
      TRY(define(f, t, o, kNoBlock, static_cast<uint32_t>(i), &v));
      f.ops[o].results.push_back(v);
    }
    return Status::ok();
  }

  const uint8_t* data_;
  size_t size_;
  const std::string& source_;
  size_t pos_ = 0;
  uint64_t version_ = 0;  // the format version in the header
  std::unique_ptr<Module> m_;
  std::vector<std::string> strings_;
  std::vector<TypeId> type_map_;  // file type index -> TypeId
  // Per function being read:
  std::unordered_map<std::string, ValueId> value_names_;  // the last value given each name
  std::vector<uint8_t> visible_;  // per value: defined in a block that is still open
};

#undef TRY


}  // namespace

bool is_binary(const void* data, size_t size) {
  return data && size >= sizeof(kMagic) && std::memcmp(data, kMagic, sizeof(kMagic)) == 0;
}

Status read_binary(const void* data, size_t size, const std::string& source_name, std::unique_ptr<Module>* out) {
  if (!data && size) return Status(Code::InvalidArgument, "read_binary: null data");
  static const uint8_t kEmpty = 0;
  Reader r(data ? static_cast<const uint8_t*>(data) : &kEmpty, size, source_name);
  return r.read(out);
}

}  // namespace tri::ir
