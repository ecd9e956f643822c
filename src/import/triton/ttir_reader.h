// The TTIR reader's state, shared by its source files: ttir_reader.cpp (module, functions,
// regions, values, types, attributes, locations), ttir_ops.cpp (the ops of the tt, arith, math,
// scf and ub dialects and what each becomes in Tri's IR), ttir_cfg.cpp (regions of several
// blocks joined by cf.br / cf.cond_br, made into structured control flow) and
// ttir_descriptors.cpp (tensor descriptors, lowered to pointer arithmetic with bounds masks).
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

// Triton's cache modifier or eviction policy (`eviction`), as words (3.x) or as the enum numbers
// of older printers (1 = none / evict_normal); "?" for anything else.
std::string modifier_word(const AttrVal& v, bool eviction);

// A region of several blocks (ttir_cfg.cpp): each block's ops are read into a Tri block of their
// own, and the branches between them are recorded here until the region's '}', when the blocks
// are arranged into structured control flow in the region's own block.
struct CfgEdge {
  int target = -1;                 // index into RegionCfg::blocks
  std::vector<ir::ValueId> args;   // the successor's block arguments
};
struct CfgBlock {
  std::string label;               // "bb1" (without '^'); "" for the entry block
  ir::BlockId block = ir::kNoBlock;  // its ops; kNoBlock while only referenced
  Loc at;                          // the label (or, for the entry, the region's first op)
  Loc ref_at;                      // the first branch to it (for "undefined block" errors)
  enum class Term { None, Branch, CondBranch } term = Term::None;
  ir::ValueId cond = ir::kNoValue;
  CfgEdge edges[2];
  Loc term_at;                     // the cf op's TTIR position and location
  int32_t term_loc = -1;
};
struct RegionCfg {
  ir::BlockId region = ir::kNoBlock;  // the region's block, which receives the structured result
  std::vector<CfgBlock> blocks;       // [0] is the entry block (its ops are read into `region`)
  std::unordered_map<std::string, int> by_label;
  int current = 0;                    // the block being read
};

// A tensor descriptor value (ttir_descriptors.cpp): a placeholder ValueId stands for it in the
// reader's scopes, and this says what it describes. Every access through it becomes pointer
// arithmetic on `base` masked by `shape`.
struct Desc {
  ir::ValueId base = ir::kNoValue;       // ptr<E>
  std::vector<ir::ValueId> shape;        // i32 scalars, one per dimension
  std::vector<ir::ValueId> strides;      // i64 scalars (the last is 1, as TMA's is: not read)
  std::vector<int64_t> block;            // the block shape of a load or store
  ir::TypeId elem = ir::kNoType;         // E
  bool is_unsigned = false;              // ui element type (min/max reductions compare unsigned)
  bool nan_padding = false;              // out-of-bounds elements read as NaN instead of 0
};

class CfgStructurer;

// The Tri scalar an MLIR scalar type name stands for (i32, f16, f8E4M3FN, ...).
bool mlir_scalar_type(const std::string& word, ir::Scalar* out);


class Reader {
 public:
  Reader(std::string_view text, const std::string& source) : c_(text, source), source_(source) {}
  Status run(std::unique_ptr<ir::Module>* out);

 private:
  friend class CfgStructurer;

  // ---- module, functions, regions (ttir_reader.cpp)
  void prescan_aliases();
  void parse_top();
  void parse_module();
  void parse_func();
  // Parses ops up to and including the closing '}' of a region whose '{' was read, into `b`.
  // With `implicit_yield`, a region without a terminator gets an empty `yield` (MLIR leaves it
  // out when a loop or if yields nothing).
  void parse_ops_until_brace(ir::BlockId b, bool implicit_yield);
  // `^bb0(%a: T loc(...), ...):` at the start of a region; returns names and types (and the
  // label without '^').
  void parse_block_header(std::vector<std::string>* names, std::vector<ir::TypeId>* types,
                          std::string* label = nullptr);
  void parse_op();
  // A block label `^bb1(%a: T):` inside a region: starts the next block of the region's CFG.
  void parse_cfg_label();
  // The CFG of the region being read, created (with the blocks read so far as its entry) if
  // it has none yet.
  RegionCfg& current_cfg();
  // Arranges the region's blocks into structured control flow in `cfg.region` (ttir_cfg.cpp).
  void structure(RegionCfg& cfg);
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
  void op_assume(const std::string& name);
  void op_print(const std::string& name);
  void op_reduce_scan(const std::string& name);  // generic form "tt.reduce"(...) / "tt.scan"(...)
  void op_for(const std::string& name);
  void op_if(const std::string& name);
  void op_while(const std::string& name);
  void op_yield(const std::string& name);
  void op_condition(const std::string& name);
  void op_barrier(const std::string& name);  // ttg.barrier / gpu.barrier
  void op_branch(const std::string& name);   // cf.br / cf.cond_br (ttir_cfg.cpp)
  void op_clampf(const std::string& name);
  void op_gather(const std::string& name);
  void op_unsplat(const std::string& name);
  void op_inline_asm(const std::string& name);
  void op_atomic_load_store(const std::string& name);  // tt.atomic_load / tt.atomic_store (3.9)
  void op_grid_dependency(const std::string& name);    // tt.grid_dependency_* (3.9): no-ops here
  // Tensor descriptors (ttir_descriptors.cpp).
  void op_make_descriptor(const std::string& name);
  void op_descriptor_load(const std::string& name);
  void op_descriptor_store(const std::string& name);   // descriptor_store / descriptor_reduce
  void op_descriptor_gather(const std::string& name);
  void op_descriptor_scatter(const std::string& name);
  // `!tt.tensordesc<tensor<8x32xf32>>` (3.6) or `!tt.tensordesc<8x32xf32>` (3.9) after the '!'
  // and the dialect name were read; fills block, elem and is_unsigned.
  void parse_desc_type_body(Desc* d);
  // The descriptor an operand names (an error if it names another value).
  const Desc& desc_operand();
  // `[%a, %b, ...]`: the offsets of a descriptor access, or a descriptor's shape or strides.
  std::vector<ir::ValueId> bracketed_operands(const char* what);
  // `!tt.tensordesc<...>` in an op's list of types (the descriptor operand already says it).
  void skip_desc_type();
  // Addresses and in-bounds mask of a descriptor access: element [i0, i1, ...] of the result is
  // at base + sum_d (coord_d[i_d]) * stride_d, in bounds where 0 <= coord_d < shape_d. `coords`
  // holds one 1-D i32 block (or scalar, for a dimension of one element) per dimension.
  void desc_addresses(const Desc& d, const std::vector<ir::ValueId>& coords, const std::vector<int64_t>& shape,
                      ir::ValueId* ptrs, ir::ValueId* mask);
  // The coordinates of the block at scalar offsets `offs`: offs[k] + arange(block[k]) per dimension.
  std::vector<ir::ValueId> desc_block_coords(const Desc& d, const std::vector<ir::ValueId>& offs);
  // The descriptor parameters of a kernel (`%d: !tt.tensordesc<...>` followed by its shape and
  // strides, as Triton's frontend writes them): records each as a descriptor over the pointer
  // parameter that replaces it.
  void bind_descriptor_params(const std::vector<std::string>& names, const std::vector<int>& desc_params,
                              const std::vector<Desc>& descs, Loc fn_at);
  // A value of type `t` for the lanes or paths where none is used (zero, or a null pointer).
  ir::ValueId filler(ir::TypeId t);
  ir::ValueId const_i32(int64_t v);
  ir::ValueId cst_int(ir::TypeId t, int64_t v);  // a constant of integer type t (scalar or block)
  ir::ValueId cst_float(ir::TypeId t, double v);
  // The value of a libdevice call (ttir_libdevice.cpp; `entry` is its row of the table there).
  ir::ValueId libdevice_value(const void* entry, const std::string& symbol, const std::vector<ir::ValueId>& args,
                              ir::TypeId t);

  // Runs `fn` as if reading an op at `at` with location `loc`: the ops it makes get them.
  template <class Fn>
  void with_loc(Loc at, LocId loc, Fn&& fn) {
    Current saved = std::move(cur_);
    cur_ = Current{};
    cur_.at = at;
    fn();
    for (ir::OpId o : cur_.made) pending_.push_back(PendingLoc{f_, o, loc, at});
    cur_ = std::move(saved);
  }
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
  // An Unsupported error at `at` (a position other than the current op's).
  [[noreturn]] void unsupported_at(Loc at, const std::string& what);

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
  // One entry per region being read: its block, where its first op is, and its CFG once it
  // has a branch or a second block (else null).
  struct RegionState {
    ir::BlockId region;
    Loc first;
    std::unique_ptr<RegionCfg> cfg;
  };
  std::vector<RegionState> regions_;
  // Functions that had a CFG or descriptors: compacted after locations are applied (the blocks
  // emptied by structuring, the terminators replaced and the descriptor placeholders stay in the
  // tables until then).
  std::vector<ir::Function*> structured_;
  // Tensor descriptors of the function being read, by their placeholder value; `desc_use_` allows
  // a use of one.
  std::unordered_map<ir::ValueId, Desc> descs_;
  bool desc_use_ = false;

  // The TTIR op being read: its position, name, result names, and the Tri ops made for it.
  struct Current {
    Loc at;
    std::string name;
    std::vector<std::pair<std::string, uint32_t>> results;  // name, count (`%x:2`)
    std::vector<ir::OpId> made;
    bool results_set = false;
    int branch_block = -1;  // a cf op: the index of its block in regions_.back().cfg (for its location)
    // tl.multiple_of / tl.max_contiguous hints on the op (`{tt.divisibility = dense<128> :
    // tensor<1xi32>, tt.contiguity = ...}`): its one result becomes multiple_of / max_contiguous
    // of what the op makes (set_results).
    int64_t hint_divisibility = 0, hint_contiguity = 0;
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
