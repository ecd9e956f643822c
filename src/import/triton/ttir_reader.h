// The TTIR reader's state, shared by its two source files: ttir_reader.cpp (module, functions,
// regions, values, types, attributes, locations) and ttir_ops.cpp (the ops of the tt, arith,
// math, scf and ub dialects and what each becomes in Tri's IR).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "import/triton/ttir_lexer.h"
#include "import/triton/ttir_locations.h"
#include "ir/ir.h"

namespace tri::import {

// An attribute value as far as the importer needs it.
struct AttrVal {
  enum class Kind { Unit, Int, Float, Bool, Str, Ints, Word, Dict, Other } kind = Kind::Unit;
  int64_t i = 0;
  double f = 0;
  std::string s;               // Str, Word
  std::vector<int64_t> ints;   // Ints (array<i32: ...>)
  std::map<std::string, AttrVal> dict;  // Dict (#tt.cache_policy<k = v, ...>)
};
using AttrDict = std::map<std::string, AttrVal>;

class Reader {
 public:
  Reader(std::string_view text, const std::string& source) : c_(text, source), source_(source) {}
  Status run(std::unique_ptr<ir::Module>* out);

 private:
  // ---- module, functions, regions (ttir_reader.cpp)
  void prescan_aliases();
  void parse_top();
  void parse_module();
  void parse_func();
  // Parses ops up to and including the closing '}' of a region whose '{' was read, into `b`.
  // With `implicit_yield`, a region without a terminator gets an empty `yield` (MLIR leaves it
  // out when a loop or if yields nothing).
  void parse_ops_until_brace(ir::BlockId b, bool implicit_yield);
  // `^bb0(%a: T loc(...), ...):` at the start of a region; returns names and types.
  void parse_block_header(std::vector<std::string>* names, std::vector<ir::TypeId>* types);
  void parse_op();
  void push_scope();
  void pop_scope();

  // ---- values, types, attributes
  ir::ValueId use(const std::string& name, Loc at);
  ir::ValueId operand();  // `%name` with its location
  std::vector<ir::ValueId> operand_list();  // `%a, %b, ...` (possibly empty before ':' etc.)
  void define(const std::string& mlir_name, ir::ValueId v);
  std::string tri_value_name(const std::string& mlir_name);
  std::string tri_func_name(const std::string& mlir_name);
  ir::TypeId parse_type();
  std::vector<ir::TypeId> parse_type_list();  // `T, T` or `(T, T)` or `()`
  ir::TypeId scalar(ir::Scalar s) { return m_->types.scalar(s); }
  ir::TypeId elem_scalar_type(ir::TypeId t) const;  // the scalar type of a scalar or block type
  bool is_float_type(ir::TypeId t) const;
  void skip_type();
  AttrDict parse_dict(char open = '{', char close = '}');
  AttrVal parse_attr_value();
  void skip_trailing_attrs();  // `{...}`, `fastmath<...>`, `overflow<...>` before ':'
  LocId maybe_loc();

  // ---- ops (ttir_ops.cpp)
  using Handler = void (Reader::*)(const std::string& name);
  static const std::unordered_map<std::string, Handler>& handlers();
  bool approx_f32(ir::TypeId t) const;
  void op_binary(const std::string& name);
  void op_unary(const std::string& name);
  void op_fma(const std::string& name);
  void op_cmp(const std::string& name);
  void op_select(const std::string& name);
  void op_cast(const std::string& name);
  void op_constant(const std::string& name);
  void op_poison(const std::string& name);
  void op_program(const std::string& name);
  void op_make_range(const std::string& name);
  void op_shape(const std::string& name);  // splat broadcast reshape join cat split
  void op_expand_dims(const std::string& name);
  void op_trans(const std::string& name);
  void op_addptr(const std::string& name);
  void op_load(const std::string& name);
  void op_store(const std::string& name);
  void op_atomic_rmw(const std::string& name);
  void op_atomic_cas(const std::string& name);
  void op_dot(const std::string& name);
  void op_extern(const std::string& name);
  void op_fp_to_fp(const std::string& name);
  void op_call(const std::string& name);
  void op_return(const std::string& name);
  void op_assert(const std::string& name);
  void op_print(const std::string& name);
  void op_reduce_scan(const std::string& name);  // generic form "tt.reduce"(...) / "tt.scan"(...)
  void op_for(const std::string& name);
  void op_if(const std::string& name);
  void op_while(const std::string& name);
  void op_yield(const std::string& name);
  void op_condition(const std::string& name);
  void op_barrier(const std::string& name);  // ttg.barrier / gpu.barrier

  // Creates an op at the insertion point and notes it for the location of the TTIR op being read.
  ir::OpId make(ir::Opcode code, const std::vector<ir::ValueId>& operands, const std::vector<ir::TypeId>& types,
                std::vector<ir::Attr> attrs = {});
  ir::ValueId make1(ir::Opcode code, const std::vector<ir::ValueId>& operands, ir::TypeId type,
                    std::vector<ir::Attr> attrs = {});
  // The enum attribute `attr` of `code` with the value `word`, or an Unsupported error.
  ir::Attr enum_attr(ir::Opcode code, const char* attr, const std::string& word);
  // The result values of the TTIR op being read, in order.
  void set_results(const std::vector<ir::ValueId>& vals);

  // An error about the TTIR op being read (at its TTIR position, with its Python line if known).
  [[noreturn]] void unsupported(const std::string& what);
  [[noreturn]] void malformed(const std::string& what);
  std::string python_suffix(LocId loc) const;

  Cursor c_;
  std::string source_;
  LocTable locs_;
  std::unique_ptr<ir::Module> m_;
  std::string main_file_;
  ir::Function* f_ = nullptr;
  std::unique_ptr<ir::Builder> b_;
  std::vector<std::unordered_map<std::string, ir::ValueId>> scopes_;
  std::unordered_set<std::string> value_names_;  // Tri names given out in the function
  std::unordered_map<std::string, int> name_suffix_;  // next suffix to try per base name
  int type_depth_ = 0, attr_depth_ = 0;  // recursion guards for nested types and attributes
  std::unordered_map<std::string, std::string> func_names_;  // TTIR symbol -> Tri name
  std::unordered_set<std::string> used_func_names_;
  int depth_ = 0;

  // The TTIR op being read: its position, name, result names, and the Tri ops made for it.
  struct Current {
    Loc at;
    std::string name;
    std::vector<std::pair<std::string, uint32_t>> results;  // name, count (`%x:2`)
    std::vector<ir::OpId> made;
    bool results_set = false;
  };
  Current cur_;

  struct PendingLoc {
    ir::Function* f;
    ir::OpId op;
    LocId loc;
    Loc ttir;
  };
  std::vector<PendingLoc> pending_;
  struct PendingFn {
    ir::Function* f;
    LocId loc;
    Loc ttir;
    std::vector<std::pair<LocId, Loc>> params;
  };
  std::vector<PendingFn> pending_fns_;
};

}  // namespace tri::import
