// Axis info (src/passes/axis_info.h): the facts it derives for the patterns the GPU backend
// vectorizes, and a soundness check of every fact it claims: each kernel here stores the i32
// block under test (row-major) for every program, the reference interpreter runs it, and each
// claimed contiguity, divisibility and constancy is checked against the stored lanes. A rule
// that claims too much fails here instead of as a misaligned vector access on a GPU.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/text.h"
#include "passes/axis_info.h"
#include "passes/pipeline.h"
#include "test_main.h"

using tri::passes::AxisInfo;

namespace {

struct Prepared {
  std::unique_ptr<tri::ir::Module> m;
  const tri::ir::Function* f = nullptr;
};

Prepared prepare(const std::string& text) {
  std::unique_ptr<tri::ir::Module> parsed;
  tri::Status st = tri::ir::parse_text(text, "axis.tri", &parsed);
  if (!st.is_ok()) fail_msg("parse: %s", st.message().c_str());
  Prepared p;
  st = tri::passes::prepare_kernel(*parsed, "k", {}, {}, tri::passes::PipelineOptions{}, &p.m);
  if (!st.is_ok()) fail_msg("prepare: %s", st.message().c_str());
  p.f = p.m->functions[0].get();
  return p;
}

tri::ir::ValueId value(const Prepared& p, const std::string& name) {
  for (size_t v = 0; v < p.f->values.size(); ++v)
    if (p.f->values[v].name == name) return static_cast<tri::ir::ValueId>(v);
  fail_msg("no value %%%s (the canonicalizer may have renamed it)", name.c_str());
  return 0;
}

// Checks info's claims on the lanes of one program (shape s, row-major).
void check_claims(const AxisInfo& info, const std::vector<int64_t>& s, const int32_t* lanes, const char* what) {
  const size_t rank = s.size();
  std::vector<int64_t> strides(rank, 1);
  for (int d = static_cast<int>(rank) - 2; d >= 0; --d) strides[d] = strides[d + 1] * s[d + 1];
  int64_t n = 1;
  for (int64_t x : s) n *= x;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t c = info.contiguity[d], k = info.constancy[d], D = info.divisibility[d];
    for (int64_t i = 0; i < n; ++i) {
      int64_t id = (i / strides[d]) % s[d];
      if (id % c == 0) {
        if (int64_t(lanes[i]) % D != 0)
          fail_msg("%s: dim %zu: lane %lld = %d is not a multiple of the claimed divisibility %lld", what, d,
                   (long long)i, lanes[i], (long long)D);
        for (int64_t j = 1; j < c; ++j)
          if (int64_t(lanes[i + j * strides[d]]) != int64_t(lanes[i]) + j)
            fail_msg("%s: dim %zu: the claimed contiguity %lld breaks at lane %lld", what, d, (long long)c,
                     (long long)(i + j * strides[d]));
      }
      if (id % k == 0)
        for (int64_t j = 1; j < k; ++j)
          if (lanes[i + j * strides[d]] != lanes[i])
            fail_msg("%s: dim %zu: the claimed constancy %lld breaks at lane %lld", what, d, (long long)k,
                     (long long)(i + j * strides[d]));
    }
  }
}

// Runs kernel @k(%out: ptr<i32>, %n: i32, %stride: i32) over `grid` programs; each stores the
// value %probe (an i32 block of shape s, or an i1 block through %probe_i32) at out[pid * numel].
// Then checks the claims about `name`.
AxisInfo run_and_check(const std::string& text, const std::string& name, const std::vector<int64_t>& s, int grid,
                       int32_t n, int32_t stride) {
  Prepared p = prepare(text);
  tri::passes::AxisInfoAnalysis ax(*p.m, *p.f);
  const AxisInfo info = ax.get(value(p, name));
  int64_t numel = 1;
  for (int64_t x : s) numel *= x;
  std::vector<int32_t> out(static_cast<size_t>(numel * grid), 0x5a5a5a5a);
  tri::ArgValue args[3];
  args[0].bits = reinterpret_cast<uintptr_t>(out.data());
  args[0].extent = out.size() * 4;
  args[1].bits = static_cast<uint32_t>(n);
  args[2].bits = static_cast<uint32_t>(stride);
  tri::interp::Options opt;
  tri::Status st = tri::interp::run(*p.m, *p.f, tri::Grid{static_cast<uint32_t>(grid), 1, 1}, args, 3, opt);
  if (!st.is_ok()) fail_msg("run: %s", st.message().c_str());
  for (int g = 0; g < grid; ++g) check_claims(info, s, out.data() + g * numel, name.c_str());
  return info;
}

const char* const kOffsets = R"(
kernel @k(%out: ptr<i32>, %n: i32 {divisible=16}, %stride: i32) {
  %pid = program_id[axis=0] : i32
  %bs = const[value=64] : i32
  %start = mul %pid, %bs : i32
  %range = arange[start=0, end=64] : <64 x i32>
  %startv = splat %start : <64 x i32>
  %offs = add %startv, %range : <64 x i32>
  %nv = splat %n : <64 x i32>
  %mask = cmp[pred=slt] %offs, %nv : <64 x i1>
  %probe = zext %mask : <64 x i32>
  %ob = splat %out : <64 x ptr<i32>>
  %op = addptr %ob, %offs : <64 x ptr<i32>>
  store %op, %probe
  return
}
)";

void test_offsets_and_mask(void** state) {
  // The vector-add pattern: pid * BLOCK + arange is contiguous over the block and aligned to it.
  Prepared p = prepare(kOffsets);
  tri::passes::AxisInfoAnalysis ax(*p.m, *p.f);
  const AxisInfo& offs = ax.get(value(p, "offs"));
  assert_int_equal(offs.contiguity[0], 64);
  assert_int_equal(offs.divisibility[0], 64);
  // A mask offs < n with n divisible by 16 is constant over aligned runs of 16.
  assert_int_equal(ax.get(value(p, "mask")).constancy[0], 16);
  // Its zero-extension keeps the runs; checked on the lanes the interpreter computes for
  // n = 80 (a multiple of 16) over 3 programs.
  AxisInfo probe = run_and_check(kOffsets, "probe", {64}, 3, 80, 0);
  assert_int_equal(probe.constancy[0], 16);
}

void test_mask_without_divisibility(void** state) {
  std::string text = kOffsets;
  text.replace(text.find(" {divisible=16}"), std::strlen(" {divisible=16}"), "");
  Prepared p = prepare(text);
  tri::passes::AxisInfoAnalysis ax(*p.m, *p.f);
  assert_int_equal(ax.get(value(p, "mask")).constancy[0], 1);
  run_and_check(text, "probe", {64}, 3, 77, 0);
}

void test_pointers(void** state) {
  const char* text = R"(
kernel @k(%x: ptr<f32> {align=16}, %n: i32, %stride: i32) {
  %pid = program_id[axis=0] : i32
  %bs = const[value=128] : i32
  %start = mul %pid, %bs : i32
  %range = arange[start=0, end=128] : <128 x i32>
  %startv = splat %start : <128 x i32>
  %offs = add %startv, %range : <128 x i32>
  %xb = splat %x : <128 x ptr<f32>>
  %xp = addptr %xb, %offs : <128 x ptr<f32>>
  %v = load %xp : <128 x f32>
  store %xp, %v
  return
}
)";
  Prepared p = prepare(text);
  tri::passes::AxisInfoAnalysis ax(*p.m, *p.f);
  const AxisInfo& xp = ax.get(value(p, "xp"));
  assert_int_equal(xp.contiguity[0], 128);
  assert_int_equal(xp.divisibility[0], 16);  // bytes: the pointer's alignment
  // Loaded values are unknown.
  assert_int_equal(ax.get(value(p, "v")).contiguity[0], 1);
}

const char* const k2D = R"(
kernel @k(%out: ptr<i32>, %n: i32, %stride: i32 {divisible=16}) {
  %rows = arange[start=0, end=8] : <8 x i32>
  %cols = arange[start=0, end=32] : <32 x i32>
  %r2 = expand_dims[axis=1] %rows : <8 x 1 x i32>
  %rb = broadcast %r2 : <8 x 32 x i32>
  %sv = splat %stride : <8 x 32 x i32>
  %rs = mul %rb, %sv : <8 x 32 x i32>
  %c2 = expand_dims[axis=0] %cols : <1 x 32 x i32>
  %cb = broadcast %c2 : <8 x 32 x i32>
  %probe = add %rs, %cb : <8 x 32 x i32>
  %lin_r = const[value=32] : <8 x 32 x i32>
  %lr = mul %rb, %lin_r : <8 x 32 x i32>
  %lin = add %lr, %cb : <8 x 32 x i32>
  %ob = splat %out : <8 x 32 x ptr<i32>>
  %op = addptr %ob, %lin : <8 x 32 x ptr<i32>>
  store %op, %probe
  return
}
)";

void test_2d_rows_and_columns(void** state) {
  // rows * stride + cols: contiguous along the columns, every row start a multiple of 16.
  AxisInfo info = run_and_check(k2D, "probe", {8, 32}, 1, 0, 48);
  assert_int_equal(info.contiguity[1], 32);
  assert_int_equal(info.divisibility[1], 16);
  assert_int_equal(info.contiguity[0], 1);
}

void test_loop_pointer_increment(void** state) {
  // The carried offset of a loop that steps by BLOCK keeps its contiguity and alignment.
  const char* text = R"(
kernel @k(%out: ptr<i32>, %n: i32, %stride: i32) {
  %c0 = const[value=0] : i32
  %c3 = const[value=3] : i32
  %c1 = const[value=1] : i32
  %range = arange[start=0, end=32] : <32 x i32>
  %step = const[value=32] : <32 x i32>
  %last = for %c0, %c3, %c1, %range {
  ^(%i: i32, %offs: <32 x i32>):
    %next = add %offs, %step : <32 x i32>
    yield %next
  } : <32 x i32>
  %probe = multiple_of[values=[32]] %last : <32 x i32>
  %ob = splat %out : <32 x ptr<i32>>
  %op = addptr %ob, %range : <32 x ptr<i32>>
  store %op, %probe
  return
}
)";
  AxisInfo info = run_and_check(text, "probe", {32}, 1, 0, 0);
  assert_int_equal(info.contiguity[0], 32);
  assert_int_equal(info.divisibility[0], 32);
  Prepared p = prepare(text);
  tri::passes::AxisInfoAnalysis ax(*p.m, *p.f);
  assert_int_equal(ax.get(value(p, "last")).contiguity[0], 32);
  assert_int_equal(ax.get(value(p, "last")).divisibility[0], 32);
}

void test_sub_select_and_unknowns_are_sound(void** state) {
  // A mix of rules whose claims are only checked against the lanes: whatever they claim must hold.
  const char* text = R"(
kernel @k(%out: ptr<i32>, %n: i32 {divisible=8}, %stride: i32) {
  %pid = program_id[axis=0] : i32
  %range = arange[start=4, end=68] : <64 x i32>
  %nv = splat %n : <64 x i32>
  %d = sub %range, %nv : <64 x i32>
  %two = const[value=2] : <64 x i32>
  %m = mul %d, %two : <64 x i32>
  %lt = cmp[pred=sge] %range, %nv : <64 x i1>
  %probe = select %lt, %d, %m : <64 x i32>
  %zero = arange[start=0, end=64] : <64 x i32>
  %pv = splat %pid : <64 x i32>
  %k64 = const[value=64] : <64 x i32>
  %base = mul %pv, %k64 : <64 x i32>
  %lin = add %base, %zero : <64 x i32>
  %ob = splat %out : <64 x ptr<i32>>
  %op = addptr %ob, %lin : <64 x ptr<i32>>
  store %op, %probe
  return
}
)";
  run_and_check(text, "probe", {64}, 2, 40, 0);
  run_and_check(text, "probe", {64}, 2, 16, 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_offsets_and_mask),     cmocka_unit_test(test_mask_without_divisibility),
      cmocka_unit_test(test_pointers),             cmocka_unit_test(test_2d_rows_and_columns),
      cmocka_unit_test(test_loop_pointer_increment), cmocka_unit_test(test_sub_select_and_unknowns_are_sound),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
