// The binary IR format (docs/format.md is its specification; keep the two in step).
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

#include "ir/limits.h"

namespace tri::ir {
namespace {

// PNG-style: the high first byte is not ASCII (and never starts UTF-8 text), "\r\n" and "\n"
// catch line-ending conversion, 0x1a stops DOS `type`.
constexpr unsigned char kMagic[8] = {0x89, 'T', 'R', 'I', '\r', '\n', 0x1a, '\n'};
// 1: the first. 2: the payload names the text the module was read from (after the strings).
constexpr uint16_t kFormatVersion = 2;
// magic(8) version(u16) flags(u16) payload size(u64) checksum(u64)
constexpr size_t kHeaderSize = 28;
constexpr size_t kChecksumOffset = 20;

// Attribute kind tags (docs/format.md, "Attributes"). Stable: never renumber.
enum AttrTag : uint8_t {
  kTagNone = 0, kTagInt = 1, kTagFloat = 2, kTagBool = 3, kTagStr = 4,
  kTagFunc = 5, kTagInts = 6, kTagEnum = 7, kTagSym = 8,
};

// Type entry tags.
enum TypeTag : uint8_t { kTypeScalar = 0, kTypePtr = 1, kTypeBlock = 2 };

// The least bytes each kind of record takes, so a count can be checked against the bytes left
// before anything is allocated (docs/format.md lists the same numbers).
constexpr size_t kMinString = 1, kMinSymbol = 1, kMinType = 2, kMinFunction = 10, kMinResultType = 1;
constexpr size_t kMinConstexpr = 5, kMinParam = 8, kMinArg = 2, kMinOp = 7, kMinOperand = 1;
constexpr size_t kMinAttr = 3, kMinBlock = 4, kMinInt = 1, kMinResult = 2;

// Scalar codes in the file. The current Scalar enum happens to match; the table keeps the file
// independent of that enum's order.
constexpr Scalar kScalarOfCode[] = {Scalar::I1,  Scalar::I8,   Scalar::I16, Scalar::I32,
                                    Scalar::I64, Scalar::F16,  Scalar::BF16, Scalar::F32,
                                    Scalar::F64, Scalar::F8E4M3, Scalar::F8E5M2};
constexpr uint64_t kNumScalarCodes = sizeof(kScalarOfCode) / sizeof(kScalarOfCode[0]);
static_assert(kNumScalarCodes == kNumScalars, "a new scalar needs a new code in the binary format");

uint64_t scalar_code(Scalar s) {
  for (uint64_t c = 0; c < kNumScalarCodes; ++c)
    if (kScalarOfCode[c] == s) return c;
  assert(!"scalar without a code");
  return kNumScalarCodes;
}

void put_le(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

bool is_name_start(unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_name_char(unsigned char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '.'; }

// NAME of docs/ir.md's grammar: function, constexpr and symbol names.
bool is_name(const std::string& s) {
  if (s.empty() || !is_name_start(s[0])) return false;
  for (unsigned char c : s)
    if (!is_name_char(c)) return false;
  return true;
}

// The part of a VALUE after '%'; empty means unnamed.
bool is_value_name(const std::string& s) {
  for (unsigned char c : s)
    if (!is_name_char(c)) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
// Reader

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
    uint64_t r;
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
    uint64_t i;
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
    uint64_t i;
    TRY(u(&i));
    if (i >= type_map_.size())
      return corrupt(start, "type " + std::to_string(i) + " is not in the table of " +
                                std::to_string(type_map_.size()));
    *t = type_map_[i];
    return Status::ok();
  }

  Status scalar(Scalar* out) {
    size_t start = pos_;
    uint64_t c;
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
      uint64_t len;
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
          uint64_t d;
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
        bool b;
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
    uint64_t r;
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

std::string write_binary(const Module& m, bool locations) { return Writer(m, locations).write(); }

}  // namespace tri::ir
