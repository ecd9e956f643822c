// The conformance harness: a case group is one kernel in IR text with its input buffers and the
// outputs to compare. The harness runs it on the interpreter (the oracle, in checked mode) and on
// every other target present, through the public C API only, and compares each output lane by
// the rule its check names (exact, ulp bound, per-lane tolerance). It also compares the oracle
// with C reference results where a generator provides them, so the oracle is not taken on faith.
//
// Generators (gen_*.cpp) build groups with Builder, which keeps the kernel's parameters and the
// launch arguments in step, and with the tile helpers, which emit the index arithmetic, masks,
// loads and stores of a 1-D, 2-D or 3-D block over a dense row-major buffer.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "host_data.h"
#include "tri/tri.h"

namespace conf {

using tri_tool::HostBuffer;

// ---- random numbers and input values

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  uint64_t bits() { return g_(); }
  // Uniform in [0, n).
  uint64_t below(uint64_t n) { return n ? g_() % n : 0; }
  // Uniform in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(below(uint64_t(hi - lo) + 1)); }
  double uniform() { return std::ldexp(double(g_() >> 11), -53); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  bool chance(double p) { return uniform() < p; }

 private:
  std::mt19937_64 g_;
};

uint64_t mix_seed(uint64_t seed, const std::string& salt);

// Kinds of input data. Every kind mixes in the type's edge values.
enum class Dist {
  General,   // anything: random bit patterns, small values, edges
  Shift,     // shift amounts: 0..width-1 mostly, and amounts at or past the width
  NonZero,   // General without 0 (divisors); INT_MIN and -1 included
  Small,     // small integers (floats: small integer values), exact in every sum
  Unit,      // floats: uniform in [-1, 1) with a few edges (no NaN/inf)
  Near1,     // floats in [0.5, 2) and [-2, -0.5) (products stay in range)
  Positive,  // floats: mostly in (0, 10), some tiny, huge, 0, inf
  NoNaN,     // General without NaN (argmax, atomics min/max)
  Cast,      // floats: General plus the limits of every integer and float type
};

uint64_t gen_value(Rng& rng, int32_t dtype, Dist dist);
// The type's edge values (bit patterns): 0, -0.0, ±1, ±inf, NaN, denormals, limits, ties.
std::vector<uint64_t> edge_values(int32_t dtype, Dist dist = Dist::General);
HostBuffer gen_buffer(Rng& rng, int32_t dtype, size_t count, Dist dist);

// Text of a constant of `dtype` for IR attributes: "1", "-0.0", "nan", "true".
std::string lit(int32_t dtype, double v);
std::string lit_bits(int32_t dtype, uint64_t bits);

// ---- groups

enum class Cmp {
  Exact,        // bits equal (NaN matches NaN); -0.0 and 0.0 differ
  ExactAnyZero, // as Exact, but -0.0 matches 0.0 (fmin/fmax with nan=ignore)
  Ulp,          // within `ulps` units in the last place; zero signs must agree
  Tol,          // |got - want| <= tol[lane]; NaN matches NaN; zero signs ignored
};

struct Check {
  std::string what;            // "add", "reduce[axis=1, kind=sum]"
  int buf = -1;                // the output buffer
  Cmp cmp = Cmp::Exact;
  uint64_t ulps = 0;
  // Cmp::Ulp: a lane whose first input is below `abs_input_below` may instead be within
  // `abs_tol` of the oracle: a bound docs/ir.md states in absolute terms (f64 lgamma near its
  // zeros below -2).
  double abs_input_below = 0;
  double abs_tol = 0;
  std::vector<double> tol;     // Cmp::Tol: one per lane
  std::vector<uint8_t> skip;   // lanes whose value is unspecified (1 = not compared); may be empty
  std::vector<int> inputs;     // buffers whose lane i is printed for a failing lane i
  std::function<std::string(size_t)> describe;  // or: a description of lane i's inputs
  // For outputs made by Builder::out_buf: the elements before the guard. The oracle must have
  // written at least one of them, so that a kernel that stores nothing (a mask that is never
  // true) cannot pass by leaving the same initial bytes on every target.
  size_t written = 0;
};

// The oracle against a value computed in C: `expected` has the output buffer's layout.
struct RefCheck {
  Check check;
  HostBuffer expected;
};

struct Arg {
  bool scalar = false;
  int buf = -1;
  int32_t dtype = TRI_DTYPE_I32;
  uint64_t bits = 0;
};

struct Group {
  std::string title;
  std::string ir;
  std::string kernel = "k";
  uint32_t grid[3] = {1, 1, 1};
  std::vector<HostBuffer> bufs;
  std::vector<std::string> names;  // one per buffer
  std::vector<Arg> args;
  std::vector<Check> checks;
  std::vector<RefCheck> refs;
  uint64_t seed = 0;
  // When the batched kernel fails to compile or run on a target, these one-op groups are run
  // instead to say which op fails.
  std::function<std::vector<Group>()> split;
  // Instead of outputs: every target must fail the launch with this code (assert).
  tri_result expect_error = TRI_OK;
  // Every target's log must contain this text (print).
  std::string log_contains;
};

// ---- building kernels

// The IR text of one kernel (plus optional device functions) and its launch, kept in step.
class Builder {
 public:
  // Inputs are drawn from a generator seeded by (seed, salt); the salt defaults to the title, so
  // the one-op groups of a split can share their batch's data by passing its title.
  Builder(std::string title, uint64_t seed, const std::string& salt = "");

  Rng rng;
  Group g;

  // Parameters, in order. Each returns the value name ("%x").
  std::string in_buf(const std::string& name, HostBuffer data, std::string facts = "");
  // An output buffer of count + guard elements, prefilled with a pattern that no target should
  // change outside the lanes it stores.
  std::string out_buf(const std::string& name, int32_t dtype, size_t count, size_t guard = 8);
  std::string scalar(const std::string& name, int32_t dtype, uint64_t bits);
  int buf_index(const std::string& name) const;
  int last_buf() const { return static_cast<int>(g.bufs.size()) - 1; }

  // Body. op() emits `%tN = rhs : type` and returns %tN; ops() emits several results.
  std::string op(const std::string& rhs, const std::string& type);
  std::vector<std::string> ops(const std::string& rhs, const std::vector<std::string>& types);
  void stmt(const std::string& s);
  // A line that opens a region ("... {") and one that closes it ("} : types"); the caller
  // writes the result names itself with fresh().
  void open(const std::string& line);
  void close(const std::string& line);
  // A line between two regions of one op ("} {").
  void mid(const std::string& line);
  std::string fresh(const std::string& hint = "t");
  // Text placed before the kernel (device functions).
  std::string prelude;
  std::string constexprs;  // e.g. "constexpr(BLOCK: i32 = 64)"

  // Adds a check of output `buf` (by name) comparing lane by lane.
  Check& check(const std::string& what, const std::string& out, Cmp cmp = Cmp::Exact,
               std::vector<std::string> inputs = {});
  Group finish();

 private:
  std::vector<size_t> out_count_;  // per buffer: elements before the guard (0: an input)
  std::string params_;
  std::string body_;
  int indent_ = 1;
  int counter_ = 0;
};

std::string blk(const std::vector<int64_t>& dims, const std::string& elem);
std::string blk(const std::vector<int64_t>& dims, int32_t dtype);

// A block of `dims` over a dense row-major buffer. 1-D tiles may span several programs (grid
// along axis 0, `n` valid elements in all); N-D tiles are one program with `ext` valid
// elements per axis. Extents are runtime arguments, so masks are computed at run time.
struct Tile {
  std::vector<int64_t> dims;
  std::vector<int64_t> ext;  // 1-D: {n}
  uint32_t grid = 1;
  size_t count() const;      // elements of the dense buffer
  std::string name() const;  // "<64> n=250 grid=4"
  // For N-D tiles: the row-major index into the dense buffer of each block lane (or -1 when the
  // lane is masked off); for 1-D, lane l of program p is p*dims[0]+l.
};

struct TileIR {
  std::string offs, mask;  // <dims x i32>, <dims x i1>
  std::vector<std::string> idx;  // per axis: the lane's index along it, <dims x i32>
  std::vector<std::string> ext;  // per axis: the extent as an i32 scalar value
  std::vector<int64_t> dims;
};

// Emits program_id/arange/expand_dims/broadcast arithmetic for the tile, adding the extent
// parameters (%n, or %e0 %e1 ..., after `prefix`) to the builder.
TileIR emit_tile(Builder& b, const Tile& t, const std::string& prefix = "");
// Masked load of the tile from pointer parameter `ptr` (a ptr<dtype>), with `other` in
// masked-off lanes.
std::string load_tile(Builder& b, const TileIR& t, const std::string& ptr, int32_t dtype, const std::string& other);
void store_tile(Builder& b, const TileIR& t, const std::string& ptr, int32_t dtype, const std::string& value);
// A splat constant of the tile's shape.
std::string const_tile(Builder& b, const TileIR& t, int32_t dtype, const std::string& value_text);

// The standard tiles: a 1-D tile over several programs, a 2-D and a 3-D tile with partial
// extents. Blocks are small on purpose: the CPU backend's compile time grows with the lanes of
// ops it has to scalarize (integer division, for one), and the suite compiles over a hundred
// kernels.
std::vector<Tile> standard_tiles();

// ---- running

struct Totals {
  int passed = 0, failed = 0;
};

// Runs groups on one context (one per thread: the log of `print` is captured per context) and
// returns the report lines of each: one line per group, and details for failures.
class Runner {
 public:
  Runner(uint64_t seed, std::vector<std::string> targets, bool checked_oracle);
  ~Runner();
  bool ok() const { return ctx_ != nullptr; }
  std::vector<std::string> run(const Group& g);
  const Totals& totals() const { return totals_; }
  const std::vector<std::string>& targets() const { return targets_; }

 private:
  struct Result {
    // Not run: a GPU target cannot take this group (a failing assert stops the whole CUDA
    // context; print output goes to the process's stdout, not the log).
    bool skipped = false;
    bool ok = false;
    tri_result code = TRI_OK;
    std::string stage, message;
    std::vector<HostBuffer> bufs;
    std::vector<std::string> log;
  };
  Result run_on(tri_module* m, const Group& g, const std::string& target);
  // Compares one check; appends failure lines; returns the number of failing lanes.
  size_t compare(const Group& g, const Check& c, const HostBuffer& want, const HostBuffer& got, const char* want_name,
                 const char* got_name, std::vector<std::string>* details);
  bool run_one(const Group& g, bool allow_split, std::vector<std::string>* lines);

  static void on_log(void* user, int32_t level, const char* msg);

  uint64_t seed_;
  std::vector<std::string> targets_;  // oracle first
  bool checked_;
  tri_context* ctx_ = nullptr;
  std::vector<std::string> log_;
  Totals totals_;
};

// ---- the generators (one per file)

using GroupSink = std::function<void(Group)>;
void gen_elementwise(uint64_t seed, const GroupSink& sink);
void gen_casts(uint64_t seed, const GroupSink& sink);
void gen_memory(uint64_t seed, const GroupSink& sink);
void gen_atomics(uint64_t seed, const GroupSink& sink);
void gen_reduce(uint64_t seed, const GroupSink& sink);
void gen_dot(uint64_t seed, const GroupSink& sink);
void gen_control(uint64_t seed, const GroupSink& sink);
void gen_distributed(uint64_t seed, const GroupSink& sink);

// Runs `groups` on `jobs` threads, printing each group's lines in order; returns the totals.
Totals run_all(const std::vector<Group>& groups, uint64_t seed, const std::vector<std::string>& targets,
               bool checked_oracle, unsigned jobs);

}  // namespace conf
