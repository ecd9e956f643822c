// The GPU code of the forms behind the FlagGems rows that ran slower than Triton on an H200
// (issue 25; bench/results/sass-flaggems-2026-11-28.md has each row's SASS against Triton's),
// checked on the PTX of small kernels, no GPU: an f32 atomic add is the hardware's flushing
// atom.add.f32, not a compare-and-swap loop (scatter_add); the compare-and-swap step of Triton's
// bitonic sort meets its operand in registers (topk, sort); a histogram's one-hot compare added
// into a loop-carried accumulator is computed in the accumulator's layout (sort_histogram); a
// masked load whose mask has no known constancy keeps the pointer's elements per thread, so a
// scan over it runs its lane steps once per run, not once per element (cummax); a reduce with an
// associative, not commutative region keeps a layout that repeats its warps along the axis
// (var_mean, cummax).
#include <memory>
#include <string>

#include "codegen/nvptx/lower.h"
#include "ir/text.h"
#include "passes/pipeline.h"
#include "test_main.h"

namespace {

// The PTX of the module's first kernel for sm_90 at `warps` warps.
std::string ptx_of(const std::string& text, int warps = 4) {
  std::unique_ptr<tri::ir::Module> m, spec;
  tri::Status st = tri::ir::parse_text(text, "t.tri", &m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  st = tri::passes::prepare_kernel(*m, m->functions[0]->name, {}, {}, tri::passes::PipelineOptions(), &spec);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  tri::codegen::nvptx::GpuOptions opt;
  opt.sm = 90;
  opt.num_warps = warps;
  std::string ptx;
  tri::codegen::nvptx::KernelInfo info;
  st = tri::codegen::nvptx::compile_ptx(*spec, *spec->functions[0], opt, &ptx, &info);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  return ptx;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// An f32 atomic add over a block of scattered addresses (too few lanes to combine in shared
// memory): the hardware instruction, which flushes subnormals as the op's semantics say, one per
// lane. It was a compare-and-swap loop (ATOMG.E.CAS and a reload per lane in FlagGems'
// scatter_add, 1.50x Triton's time on an H200).
void f32_atomic_add_is_the_hardware_instruction(void**) {
  const std::string ptx = ptx_of(R"(
kernel @k(%x: ptr<f32> {align=16}, %idx: ptr<i32> {align=16}, %out: ptr<f32> {align=16}, %n: i32) {
  %pid = program_id[axis=0] : i32
  %c128 = const[value=128] : i32
  %base = mul %pid, %c128 : i32
  %r = arange[start=0, end=128] : <128 x i32>
  %b = splat %base : <128 x i32>
  %o = add %b, %r : <128 x i32>
  %nb = splat %n : <128 x i32>
  %m = cmp[pred=slt] %o, %nb : <128 x i1>
  %xb = splat %x : <128 x ptr<f32>>
  %xp = addptr %xb, %o : <128 x ptr<f32>>
  %v = load %xp, mask=%m : <128 x f32>
  %ib = splat %idx : <128 x ptr<i32>>
  %ip = addptr %ib, %o : <128 x ptr<i32>>
  %i = load %ip, mask=%m : <128 x i32>
  %ob = splat %out : <128 x ptr<f32>>
  %op = addptr %ob, %i : <128 x ptr<f32>>
  %old = atomic[kind=add, order=relaxed] %op, %v, mask=%m : <128 x f32>
  return
}
)");
  assert_int_equal(count(ptx, "atom.global.add.f32") + count(ptx, "red.global.add.f32"), 1);
  assert_int_equal(count(ptx, "atom.global.cas"), 0);
}

// Two compare-and-swap steps of Triton's bitonic sort (tl.sort; FlagGems' topk and sort): the
// block reshaped to [n, 2, m] with the pair's axis on the lanes, reduced over it, broadcast back
// and reshaped, then combined with the block itself, whose layout the second step takes. The
// broadcast of the reduction's result takes the reduced operand's layout, so the reshaped result
// is in the block's own layout: shuffles only. It stacked the pair in registers, a layout that
// went through shared memory at each step (topk_stage2: 136 barriers against Triton's 35).
void bitonic_step_meets_its_operand_in_registers(void**) {
  const std::string ptx = ptx_of(R"(
kernel @k(%x: ptr<f32> {align=16}, %out: ptr<f32> {align=16}) {
  %r = arange[start=0, end=256] : <256 x i32>
  %xb = splat %x : <256 x ptr<f32>>
  %xp = addptr %xb, %r : <256 x ptr<f32>>
  %v = load %xp : <256 x f32>
  %y = reshape %v : <64 x 2 x 2 x f32>
  %s = reduce[axis=1, kind=sum] %y : <64 x 2 x f32>
  %e = expand_dims[axis=1] %s : <64 x 1 x 2 x f32>
  %b = broadcast %e : <64 x 2 x 2 x f32>
  %f = reshape %b : <256 x f32>
  %v2 = sub %f, %v : <256 x f32>
  %y2 = reshape %v2 : <32 x 2 x 4 x f32>
  %s2 = reduce[axis=1, kind=max] %y2 : <32 x 4 x f32>
  %e2 = expand_dims[axis=1] %s2 : <32 x 1 x 4 x f32>
  %b2 = broadcast %e2 : <32 x 2 x 4 x f32>
  %f2 = reshape %b2 : <256 x f32>
  %w = sub %v2, %f2 : <256 x f32>
  %ob = splat %out : <256 x ptr<f32>>
  %op = addptr %ob, %r : <256 x ptr<f32>>
  store %op, %w
  return
}
)");
  assert_true(count(ptx, "shfl.sync.bfly") >= 2);  // one lane step per reduction
  assert_int_equal(count(ptx, "bar.sync") + count(ptx, "barrier.sync"), 0);
  assert_int_equal(count(ptx, "st.shared"), 0);
}

// The PTX of the loop whose body issues the first global load: from the label before that load
// to the branch back to it.
std::string loop_body(const std::string& ptx) {
  const size_t ld = ptx.find("ld.global");
  if (ld == std::string::npos) return "";
  const size_t at = ptx.rfind("$L__BB", ld);
  const size_t end = ptx.find(':', at);
  if (at == std::string::npos || end == std::string::npos) return "";
  const std::string label = ptx.substr(at, end - at);
  const size_t back = ptx.find("bra \t" + label + ";", end);
  const size_t back_uni = ptx.find("bra.uni \t" + label + ";", end);
  const size_t stop = std::min(back, back_uni);
  return stop == std::string::npos ? "" : ptx.substr(at, stop - at);
}

// Radix sort's digit histogram (FlagGems' sort_histogram): each iteration compares a row of keys
// with the bins, `bins[:, None] == key[None, :]`, and adds the one-hot block into a [16 x 256]
// accumulator carried by the loop. The compare is computed again in the accumulator's layout
// from the keys (a broadcast is made again from its source), so the loop moves nothing through
// shared memory; it exchanged the whole one-hot block there every iteration (the fixture's
// [16 x 1024] i64: 128 KB of shared memory, 144 STS.64 and 64 LDS.128 per iteration).
void histogram_compare_is_computed_in_the_accumulator_layout(void**) {
  const std::string ptx = ptx_of(R"(
kernel @k(%x: ptr<i32> {align=16}, %out: ptr<i32> {align=16}, %n: i32) {
  %c0 = const[value=0] : i32
  %c256 = const[value=256] : i32
  %zero = const[value=0] : <16 x 256 x i32>
  %bins = arange[start=0, end=16] : <16 x i32>
  %cols = arange[start=0, end=256] : <256 x i32>
  %acc = for %c0, %n, %c256, %zero {
  ^(%i: i32, %a: <16 x 256 x i32>):
    %ib = splat %i : <256 x i32>
    %o = add %ib, %cols : <256 x i32>
    %xb = splat %x : <256 x ptr<i32>>
    %xp = addptr %xb, %o : <256 x ptr<i32>>
    %v = load %xp : <256 x i32>
    %c15 = const[value=15] : <256 x i32>
    %key = and %v, %c15 : <256 x i32>
    %be = expand_dims[axis=1] %bins : <16 x 1 x i32>
    %bb = broadcast %be : <16 x 256 x i32>
    %ke = expand_dims[axis=0] %key : <1 x 256 x i32>
    %kb = broadcast %ke : <16 x 256 x i32>
    %eq = cmp[pred=eq] %bb, %kb : <16 x 256 x i1>
    %one = zext %eq : <16 x 256 x i32>
    %a2 = add %a, %one : <16 x 256 x i32>
    yield %a2
  } : <16 x 256 x i32>
  %s = reduce[axis=1, kind=sum] %acc : <16 x i32>
  %ob = splat %out : <16 x ptr<i32>>
  %op = addptr %ob, %bins : <16 x ptr<i32>>
  store %op, %s
  return
}
)");
  const std::string body = loop_body(ptx);
  assert_true(body.find("ld.global") != std::string::npos);
  assert_int_equal(count(body, ".shared"), 0);
  assert_int_equal(count(body, "bar.sync"), 0);
}

// A scan over a block loaded under `offs < n` with n of no known divisibility (FlagGems' cummax):
// the mask has constancy 1, so each access moves one element, but each thread still holds 4
// consecutive elements (the pointer's contiguity and alignment decide the layout, as in Triton's
// coalescing), combined in the thread before the lane steps: 2 runs a thread (1024 elements,
// 128 threads), each with 5 lane steps and one shift for the exclusive prefix. The layout of one
// element a thread scanned 8 runs: 48 shuffles.
void masked_load_keeps_the_pointer_layout_for_a_scan(void**) {
  const std::string ptx = ptx_of(R"(
kernel @k(%x: ptr<f32> {align=16}, %out: ptr<f32> {align=16}, %n: i32) {
  %r = arange[start=0, end=1024] : <1024 x i32>
  %nb = splat %n : <1024 x i32>
  %m = cmp[pred=slt] %r, %nb : <1024 x i1>
  %xb = splat %x : <1024 x ptr<f32>>
  %xp = addptr %xb, %r : <1024 x ptr<f32>>
  %v = load %xp, mask=%m : <1024 x f32>
  %c = scan[axis=0, kind=sum] %v : <1024 x f32>
  %ob = splat %out : <1024 x ptr<f32>>
  %op = addptr %ob, %r : <1024 x ptr<f32>>
  store %op, %c, mask=%m
  return
}
)");
  assert_int_equal(count(ptx, "ld.global.b32"), 8);  // one element per access, 8 a thread
  assert_int_equal(count(ptx, "ld.global.v"), 0);
  assert_true(count(ptx, "shfl.sync.up") <= 12);
}

// A reduce whose region is associative and not commutative (FlagGems' var_mean: a Welford
// combine; here the composition of affine maps) over a loop-carried block of 2048 columns, 8
// warps: each thread holds 4 consecutive elements, then the lanes, then the warps, and a
// register bit above the warps (2 repetitions). Reduced in that layout: the lanes halve the
// repetitions between them (a halving step, then the usual butterflies: 5 shuffles per
// operand), and every repetition's warp partials go through shared memory in one exchange
// (2 barriers, one store per operand: each lane writes the repetition it kept). The operands went to the ordered layout through
// shared memory first (one exchange each, 6 barriers in all); lane steps per repetition would
// take 10 shuffles per operand.
void ordered_reduce_keeps_repetitions_above_the_warps(void**) {
  const std::string ptx = ptx_of(R"(
kernel @k(%x: ptr<f32> {align=16}, %out: ptr<f32> {align=16}, %n: i32) {
  %c0 = const[value=0] : i32
  %c2048 = const[value=2048] : i32
  %one = const[value=1.0] : <2048 x f32>
  %zero = const[value=0.0] : <2048 x f32>
  %cols = arange[start=0, end=2048] : <2048 x i32>
  %a, %b = for %c0, %n, %c2048, %one, %zero {
  ^(%i: i32, %pa: <2048 x f32>, %pb: <2048 x f32>):
    %ib = splat %i : <2048 x i32>
    %o = add %ib, %cols : <2048 x i32>
    %xb = splat %x : <2048 x ptr<f32>>
    %xp = addptr %xb, %o : <2048 x ptr<f32>>
    %v = load %xp : <2048 x f32>
    %na = mul %pa, %v : <2048 x f32>
    %nb = add %pb, %v : <2048 x f32>
    yield %na, %nb
  } : <2048 x f32>, <2048 x f32>
  %ra, %rb = reduce[axis=0] %a, %b {
  ^(%a1: f32, %b1: f32, %a2: f32, %b2: f32):
    %m = mul %a1, %a2 : f32
    %t = mul %b1, %a2 : f32
    %s = add %t, %b2 : f32
    yield %m, %s
  } : f32, f32
  %r = add %ra, %rb : f32
  store %out, %r
  return
}
)",
                                 8);
  assert_int_equal(count(ptx, "bar.sync") + count(ptx, "barrier.sync"), 2);
  assert_int_equal(count(ptx, "shfl.sync.bfly"), 10);
  assert_int_equal(count(ptx, "st.shared"), 2);
}

// An argmax over bf16 data widened to f32 first (FlagGems' argmax: `inp.to(tl.float32)`, then
// the (value, index) region's `>` and `==`): widening is exact, so sm_90 compares the bf16
// values themselves (setp.bf16, which ptxas pairs into HSETP2.BF16_V2, as in Triton's code).
// Every compare was on f32 (FSETP, one at a time).
void widened_bf16_compares_in_bf16(void**) {
  const std::string ptx = ptx_of(R"(
kernel @k(%x: ptr<bf16> {align=16}, %out: ptr<i32> {align=16}) {
  %r = arange[start=0, end=1024] : <1024 x i32>
  %xb = splat %x : <1024 x ptr<bf16>>
  %xp = addptr %xb, %r : <1024 x ptr<bf16>>
  %v = load %xp : <1024 x bf16>
  %w = fpext %v : <1024 x f32>
  %m, %mi = reduce[axis=0] %w, %r {
  ^(%a: f32, %ai: i32, %b: f32, %bi: i32):
    %gt = fcmp[pred=ogt] %a, %b : i1
    %eq = fcmp[pred=oeq] %a, %b : i1
    %lt = cmp[pred=slt] %ai, %bi : i1
    %tie = and %eq, %lt : i1
    %take = or %gt, %tie : i1
    %v2 = select %take, %a, %b : f32
    %i2 = select %take, %ai, %bi : i32
    yield %v2, %i2
  } : f32, i32
  store %out, %mi
  return
}
)");
  int bf16 = 0;
  for (const char* p : {"gt", "ge", "lt", "le", "eq", "ne", "gtu", "geu", "ltu", "leu", "equ", "neu"})
    bf16 += count(ptx, std::string("setp.") + p + ".bf16");
  assert_true(bf16 >= 3);  // the combines of elements unpacked from their pairs
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(f32_atomic_add_is_the_hardware_instruction),
      cmocka_unit_test(bitonic_step_meets_its_operand_in_registers),
      cmocka_unit_test(histogram_compare_is_computed_in_the_accumulator_layout),
      cmocka_unit_test(masked_load_keeps_the_pointer_layout_for_a_scan),
      cmocka_unit_test(ordered_reduce_keeps_repetitions_above_the_warps),
      cmocka_unit_test(widened_bf16_compares_in_bf16),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
