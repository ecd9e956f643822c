// The GPU code of forms that Triton's TTIR brings and Tri's own examples did not use, checked on
// the PTX of small kernels (no GPU, no ptxas): a reduce written as a commutative combine region
// (every tt.reduce is one) reduces in its operand's layout like the builtin kind, with the same
// shuffles and no shared-memory exchange; an associative-only region still combines in order;
// approx=true math uses the approximate instructions; and a tile wrapped with signed remainders
// (`(pid_n * BN + arange) % N`, Triton's tutorial) loads 16 bytes at a time.
#include <memory>
#include <string>

#include "codegen/nvptx/lower.h"
#include "ir/text.h"
#include "passes/pipeline.h"
#include "test_main.h"

namespace {

std::string compile(const std::string& text, int warps = 4, std::vector<tri::passes::ArgFacts> facts = {},
                    int stages = 1, bool sm90a = false, uint32_t* shared_bytes = nullptr) {
  std::unique_ptr<tri::ir::Module> m, spec;
  tri::Status st = tri::ir::parse_text(text, "t.tri", &m);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  tri::passes::PipelineOptions popt;
  popt.num_stages = stages;
  st = tri::passes::prepare_kernel(*m, m->functions[0]->name, {}, facts, popt, &spec);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  tri::codegen::nvptx::GpuOptions opt;
  opt.sm = 90;
  opt.sm_a = sm90a;  // wgmma
  opt.num_warps = warps;
  std::string ptx;
  tri::codegen::nvptx::KernelInfo info;
  st = tri::codegen::nvptx::compile_ptx(*spec, *spec->functions[0], opt, &ptx, &info);
  if (!st.is_ok()) fail_msg("%s", st.message().c_str());
  if (shared_bytes) *shared_bytes = info.shared_bytes;
  return ptx;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// A 2-D block loaded row-major and reduced along its rows (axis 1), the combine given as `COMBINE`.
std::string row_reduce(const std::string& reduce) {
  return R"(
kernel @k(%x: ptr<f32> {align=16}, %out: ptr<f32> {align=16}) {
  %rows = arange[start=0, end=32] : <32 x i32>
  %cols = arange[start=0, end=128] : <128 x i32>
  %re = expand_dims[axis=1] %rows : <32 x 1 x i32>
  %c128 = const[value=128] : <32 x 1 x i32>
  %ro = mul %re, %c128 : <32 x 1 x i32>
  %rb = broadcast %ro : <32 x 128 x i32>
  %ce = expand_dims[axis=0] %cols : <1 x 128 x i32>
  %cb = broadcast %ce : <32 x 128 x i32>
  %off = add %rb, %cb : <32 x 128 x i32>
  %xb = splat %x : <32 x 128 x ptr<f32>>
  %xp = addptr %xb, %off : <32 x 128 x ptr<f32>>
  %v = load %xp : <32 x 128 x f32>
)" + reduce + R"(
  %ob = splat %out : <32 x ptr<f32>>
  %op = addptr %ob, %rows : <32 x ptr<f32>>
  store %op, %m
  return
}
)";
}

void commutative_region_reduces_like_the_builtin(void**) {
  const std::string builtin = compile(row_reduce("  %m = reduce[axis=1, kind=sum] %v : <32 x f32>"));
  const std::string region = compile(row_reduce(R"(  %m = reduce[axis=1] %v {
  ^(%a: f32, %b: f32):
    %s = add %b, %a : f32
    yield %s
  } : <32 x f32>)"));
  const int shfl = count(builtin, "shfl.sync.bfly");
  assert_true(shfl > 0);
  // Loaded once, 16 bytes at a time, as the builtin's operand is (not loaded again one element
  // at a time in an ordered layout).
  assert_true(count(builtin, "ld.global.v4") > 0);
  assert_int_equal(count(region, "ld.global.v4"), count(builtin, "ld.global.v4"));
  assert_int_equal(count(region, "shfl.sync.bfly"), shfl);
  assert_int_equal(count(region, "st.shared"), count(builtin, "st.shared"));
  assert_int_equal(count(region, "bar.sync"), count(builtin, "bar.sync"));
}

// A region that is associative but not commutative, "keep the first" (yield a), must combine in
// order: the result is element 0 of each row. The load's layout allows that (registers, then
// lanes, along the row), so the block is neither exchanged through shared memory nor loaded
// again in another layout.
void ordered_region_stays_in_order(void**) {
  const std::string region = compile(row_reduce(R"(  %m = reduce[axis=1] %v {
  ^(%a: f32, %b: f32):
    yield %a
  } : <32 x f32>)"));
  const std::string builtin = compile(row_reduce("  %m = reduce[axis=1, kind=sum] %v : <32 x f32>"));
  assert_int_equal(count(region, "st.shared"), count(builtin, "st.shared"));
  assert_int_equal(count(region, "ld.global.v4"), count(builtin, "ld.global.v4"));
}

void approx_math_uses_the_approximate_instructions(void**) {
  const std::string ptx = compile(R"(
kernel @k(%x: ptr<f32> {align=16}, %y: ptr<f32> {align=16}, %o: ptr<f32> {align=16}) {
  %r = arange[start=0, end=128] : <128 x i32>
  %xb = splat %x : <128 x ptr<f32>>
  %xp = addptr %xb, %r : <128 x ptr<f32>>
  %xv = load %xp : <128 x f32>
  %yb = splat %y : <128 x ptr<f32>>
  %yp = addptr %yb, %r : <128 x ptr<f32>>
  %yv = load %yp : <128 x f32>
  %q = fdiv[approx=true] %xv, %yv : <128 x f32>
  %s = sqrt[approx=true] %q : <128 x f32>
  %t = rsqrt[approx=true] %s : <128 x f32>
  %e = exp[approx=true] %t : <128 x f32>
  %ob = splat %o : <128 x ptr<f32>>
  %op = addptr %ob, %r : <128 x ptr<f32>>
  store %op, %e
  return
}
)");
  assert_true(count(ptx, "div.full.f32") > 0);
  assert_true(count(ptx, "sqrt.approx.ftz.f32") > 0);
  assert_true(count(ptx, "rsqrt.approx.ftz.f32") > 0);
  assert_true(count(ptx, "ex2.approx.f32") > 0);
  assert_int_equal(count(ptx, "div.rn.f32"), 0);
  assert_int_equal(count(ptx, "sqrt.rn.f32"), 0);
}

void signed_wrap_loads_vectors(void**) {
  const std::string ptx = compile(R"(
kernel @k(%b: ptr<f16> {align=16}, %o: ptr<f16> {align=16}, %N: i32 {divisible=16}, %g: i32, %s: i32) {
  %pid = program_id[axis=0] : i32
  %pg = srem %pid, %g : i32
  %pid_n = sdiv %pg, %s : i32
  %c128 = const[value=128] : i32
  %n0 = mul %pid_n, %c128 : i32
  %r = arange[start=0, end=128] : <128 x i32>
  %n0v = splat %n0 : <128 x i32>
  %rn = add %n0v, %r : <128 x i32>
  %Nv = splat %N : <128 x i32>
  %rw = srem %rn, %Nv : <128 x i32>
  %bb = splat %b : <128 x ptr<f16>>
  %bp = addptr %bb, %rw : <128 x ptr<f16>>
  %v = load %bp : <128 x f16>
  %ob = splat %o : <128 x ptr<f16>>
  %op = addptr %ob, %r : <128 x ptr<f16>>
  store %op, %v
  return
}
)", 1);
  // 128 halves on 32 threads: 4 per thread, 8 bytes, one ld.global.v2.b32 (not four loads of 2 bytes).
  assert_true(count(ptx, "ld.global.v2.b32") + count(ptx, "ld.global.nc.v2.b32") > 0);
  assert_int_equal(count(ptx, "ld.global.b16") + count(ptx, "ld.global.nc.b16"), 0);
}

// A row (a bias, a weight, rope's cos) loaded, then broadcast over a tile and multiplied with
// the tile: the row is loaded 16 bytes at a time in the layout whose registers the tile's layout
// takes as they are, so nothing goes through shared memory, and the tile keeps its own layout
// (not the broadcast's, which would hold its 32 rows in registers and load the tile again).
void row_broadcast_over_a_tile_moves_nothing(void**) {
  const std::string ptx = compile(R"(
kernel @k(%q: ptr<bf16> {align=16}, %c: ptr<bf16> {align=16}, %o: ptr<bf16> {align=16}) {
  %cols = arange[start=0, end=64] : <64 x i32>
  %cb = splat %c : <64 x ptr<bf16>>
  %cp = addptr %cb, %cols : <64 x ptr<bf16>>
  %row = load %cp : <64 x bf16>
  %rows = arange[start=0, end=32] : <32 x i32>
  %re = expand_dims[axis=1] %rows : <32 x 1 x i32>
  %c64 = const[value=64] : <32 x 1 x i32>
  %ro = mul %re, %c64 : <32 x 1 x i32>
  %rb = broadcast %ro : <32 x 64 x i32>
  %ce = expand_dims[axis=0] %cols : <1 x 64 x i32>
  %cb2 = broadcast %ce : <32 x 64 x i32>
  %off = add %rb, %cb2 : <32 x 64 x i32>
  %qb = splat %q : <32 x 64 x ptr<bf16>>
  %qp = addptr %qb, %off : <32 x 64 x ptr<bf16>>
  %tile = load %qp : <32 x 64 x bf16>
  %r1 = expand_dims[axis=0] %row : <1 x 64 x bf16>
  %rt = broadcast %r1 : <32 x 64 x bf16>
  %p = mul %tile, %rt : <32 x 64 x bf16>
  %ob = splat %o : <32 x 64 x ptr<bf16>>
  %op = addptr %ob, %off : <32 x 64 x ptr<bf16>>
  store %op, %p
  return
}
)");
  assert_int_equal(count(ptx, "st.shared"), 0);
  assert_int_equal(count(ptx, "bar.sync"), 0);
  assert_int_equal(count(ptx, "ld.global.b16"), 0);
  assert_true(count(ptx, "ld.global.v4.b32") >= 2);  // the row and the tile, 16 bytes at a time
}

// f16 and bf16 add/sub/mul are one instruction in the type on sm_90 (the same bits as widening,
// computing in f32 and rounding: f32 has more than twice their precision plus two bits).
void half_arithmetic_is_native_on_sm90(void**) {
  for (const char* t : {"f16", "bf16"}) {
    const std::string T = t;
    const std::string ptx = compile(R"(
kernel @k(%x: ptr<)" + T + R"(> {align=16}, %y: ptr<)" + T + R"(> {align=16}) {
  %r = arange[start=0, end=256] : <256 x i32>
  %xb = splat %x : <256 x ptr<)" + T + R"(>>
  %xp = addptr %xb, %r : <256 x ptr<)" + T + R"(>>
  %xv = load %xp : <256 x )" + T + R"(>
  %yb = splat %y : <256 x ptr<)" + T + R"(>>
  %yp = addptr %yb, %r : <256 x ptr<)" + T + R"(>>
  %yv = load %yp : <256 x )" + T + R"(>
  %m = mul %xv, %yv : <256 x )" + T + R"(>
  %s = add %m, %xv : <256 x )" + T + R"(>
  %d = sub %s, %yv : <256 x )" + T + R"(>
  store %xp, %d
  return
}
)");
    assert_true(count(ptx, "mul.rn." + T) > 0);
    assert_true(count(ptx, "add.rn." + T) > 0);
    assert_true(count(ptx, "sub.rn." + T) > 0);
    assert_int_equal(count(ptx, "cvt.rn." + T + ".f32") + count(ptx, "cvt.rn." + T + "x2.f32"), 0);
  }
}

}  // namespace

// A tile loaded row-major (columns on the low lane bits, rows on the next ones) and scanned down
// its columns (axis 0, fla's chunk-local cumsum): the scan runs in the load's layout, shuffling
// by multiples of the row's lane stride (16 lanes here) across the warp, and only the warps'
// totals go through shared memory (not the whole tile, as when it was moved to a layout whose
// low lane bits run along the axis).
void column_scan_in_the_load_layout(void**) {
  const std::string ptx = compile(R"(
kernel @k(%x: ptr<f32> {align=16}, %out: ptr<f32> {align=16}) {
  %rows = arange[start=0, end=32] : <32 x i32>
  %cols = arange[start=0, end=64] : <64 x i32>
  %re = expand_dims[axis=1] %rows : <32 x 1 x i32>
  %c64 = const[value=64] : <32 x 1 x i32>
  %ro = mul %re, %c64 : <32 x 1 x i32>
  %rb = broadcast %ro : <32 x 64 x i32>
  %ce = expand_dims[axis=0] %cols : <1 x 64 x i32>
  %cb = broadcast %ce : <32 x 64 x i32>
  %off = add %rb, %cb : <32 x 64 x i32>
  %xb = splat %x : <32 x 64 x ptr<f32>>
  %xp = addptr %xb, %off : <32 x 64 x ptr<f32>>
  %v = load %xp : <32 x 64 x f32>
  %s = scan[axis=0, kind=sum] %v : <32 x 64 x f32>
  %ob = splat %out : <32 x 64 x ptr<f32>>
  %op = addptr %ob, %off : <32 x 64 x ptr<f32>>
  store %op, %s
  return
}
)");
  assert_true(count(ptx, "shfl.sync.up.b32") > 0);
  assert_true(count(ptx, ", 16, 0, -1;") > 0);  // up by 16 lanes over the whole warp
  // 64 x 32 floats on 128 threads: 16 per thread, 4 vectors of 4; only the 4 totals per writer
  // thread of the warps' exchange are stored (the old path moved all 16 through shared memory).
  assert_true(count(ptx, "st.shared") <= 4);
  assert_true(count(ptx, "ld.global.v4") > 0);
}

// fla's chunked state update: per iteration a bf16 tile and an f32 tile of one shape, loaded one
// iteration ahead (two stages) and multiplied. Loaded at their own widest vectors (8 bf16, 4
// f32 to a thread) they meet in two layouts and one goes through shared memory at every
// iteration; both take 4 to a thread instead (the bf16 tile waits in the loop's shared-memory
// ring, copied there by cp.async, and is read back 8 bytes at a time in that layout).
void tiles_that_meet_load_in_one_layout(void**) {
  const std::string ptx = compile(R"(
kernel @k(%kp: ptr<bf16> {align=16}, %gp: ptr<f32> {align=16}, %vp: ptr<bf16> {align=16}, %o: ptr<f32> {align=16}, %n: i32) {
  %rows = arange[start=0, end=32] : <32 x i32>
  %cols = arange[start=0, end=64] : <64 x i32>
  %re = expand_dims[axis=1] %rows : <32 x 1 x i32>
  %c64 = const[value=64] : <32 x 1 x i32>
  %ro = mul %re, %c64 : <32 x 1 x i32>
  %rb = broadcast %ro : <32 x 64 x i32>
  %ce = expand_dims[axis=0] %cols : <1 x 64 x i32>
  %cb = broadcast %ce : <32 x 64 x i32>
  %off = add %rb, %cb : <32 x 64 x i32>
  %vr = expand_dims[axis=1] %cols : <64 x 1 x i32>
  %c32 = const[value=32] : <64 x 1 x i32>
  %vro = mul %vr, %c32 : <64 x 1 x i32>
  %vrb = broadcast %vro : <64 x 32 x i32>
  %vc = expand_dims[axis=0] %rows : <1 x 32 x i32>
  %vcb = broadcast %vc : <64 x 32 x i32>
  %voff = add %vrb, %vcb : <64 x 32 x i32>
  %acc0 = const[value=0.0] : <32 x 32 x f32>
  %c0 = const[value=0] : i32
  %c1 = const[value=1] : i32
  %acc = for %c0, %n, %c1, %acc0 {
  ^(%i: i32, %a: <32 x 32 x f32>):
    %step = const[value=2048] : i32
    %base = mul %i, %step : i32
    %bs = splat %base : <32 x 64 x i32>
    %o2 = add %off, %bs : <32 x 64 x i32>
    %kb = splat %kp : <32 x 64 x ptr<bf16>>
    %kq = addptr %kb, %o2 : <32 x 64 x ptr<bf16>>
    %k = load %kq : <32 x 64 x bf16>
    %gb = splat %gp : <32 x 64 x ptr<f32>>
    %gq = addptr %gb, %o2 : <32 x 64 x ptr<f32>>
    %g = load %gq : <32 x 64 x f32>
    %kf = fpext %k : <32 x 64 x f32>
    %e = exp2 %g : <32 x 64 x f32>
    %p = mul %kf, %e : <32 x 64 x f32>
    %pb = fptrunc %p : <32 x 64 x bf16>
    %vs = splat %base : <64 x 32 x i32>
    %vo2 = add %voff, %vs : <64 x 32 x i32>
    %vb = splat %vp : <64 x 32 x ptr<bf16>>
    %vq = addptr %vb, %vo2 : <64 x 32 x ptr<bf16>>
    %v = load %vq : <64 x 32 x bf16>
    %a2 = dot %pb, %v, %a : <32 x 32 x f32>
    yield %a2
  } : <32 x 32 x f32>
  %r32 = arange[start=0, end=32] : <32 x i32>
  %or = expand_dims[axis=1] %r32 : <32 x 1 x i32>
  %oc32 = const[value=32] : <32 x 1 x i32>
  %oro = mul %or, %oc32 : <32 x 1 x i32>
  %orb = broadcast %oro : <32 x 32 x i32>
  %oc = expand_dims[axis=0] %r32 : <1 x 32 x i32>
  %ocb = broadcast %oc : <32 x 32 x i32>
  %ooff = add %orb, %ocb : <32 x 32 x i32>
  %ob = splat %o : <32 x 32 x ptr<f32>>
  %op = addptr %ob, %ooff : <32 x 32 x ptr<f32>>
  store %op, %acc
  return
}
)", 1, {}, 2);
  assert_int_equal(count(ptx, "st.shared.v4.f32"), 0);
  assert_int_equal(count(ptx, "ld.shared.v4.f32"), 0);
  assert_true(count(ptx, "cp.async") > 0);          // the bf16 tile into the ring
  assert_true(count(ptx, "ld.shared.v4.u16") > 0);  // read back 4 elements per access
  assert_true(count(ptx, "ld.global.v4.b32") > 0);  // the f32 tile
  // One warp: its shared-memory exchanges (the dot's operands and accumulator) synchronize with
  // warp barriers, not the CTA barrier.
  assert_true(count(ptx, "bar.warp.sync") > 0);
  assert_int_equal(count(ptx, "bar.sync"), 0);
}

// An attention-like loop: a K tile loaded per iteration and used as k.T by a dot, then
// `qk * scale - max(qk)[:, None]` as Triton's contraction writes it (fma(qk, scale, neg(m))).
// With two_loops, a second copy of the loop follows the first (causal attention's two).
std::string attention_like(bool two_loops) {
  const std::string head = R"(
kernel @k(%qp: ptr<f16> {align=16}, %kp: ptr<f16> {align=16}, %o: ptr<f32> {align=16}, %n: i32 {divisible=64}) {
  %r = arange[start=0, end=64] : <64 x i32>
  %re = expand_dims[axis=1] %r : <64 x 1 x i32>
  %c64 = const[value=64] : <64 x 1 x i32>
  %ro = mul %re, %c64 : <64 x 1 x i32>
  %rb = broadcast %ro : <64 x 64 x i32>
  %ce = expand_dims[axis=0] %r : <1 x 64 x i32>
  %cb = broadcast %ce : <64 x 64 x i32>
  %off = add %rb, %cb : <64 x 64 x i32>
  %qb = splat %qp : <64 x 64 x ptr<f16>>
  %qq = addptr %qb, %off : <64 x 64 x ptr<f16>>
  %q = load %qq : <64 x 64 x f16>
  %acc0 = const[value=0.0] : <64 x 64 x f32>
  %z = const[value=0.0] : <64 x 64 x f32>
  %c0 = const[value=0] : i32
  %c64s = const[value=64] : i32
)";
  const std::string loop = R"(
  %ACC = for %c0, %n, %c64s, %INIT {
  ^(%i: i32, %a: <64 x 64 x f32>):
    %step = const[value=64] : i32
    %base = mul %i, %step : i32
    %bs = splat %base : <64 x 64 x i32>
    %o2 = add %off, %bs : <64 x 64 x i32>
    %kb = splat %kp : <64 x 64 x ptr<f16>>
    %kq = addptr %kb, %o2 : <64 x 64 x ptr<f16>>
    %kt0 = load %kq : <64 x 64 x f16>
    %kt = permute[order=[1, 0]] %kt0 : <64 x 64 x f16>
    %s = dot %q, %kt, %z : <64 x 64 x f32>
    %m = reduce[axis=1, kind=max] %s : <64 x f32>
    %me = expand_dims[axis=1] %m : <64 x 1 x f32>
    %mb = broadcast %me : <64 x 64 x f32>
    %nm = neg %mb : <64 x 64 x f32>
    %sc = const[value=0.125] : <64 x 64 x f32>
    %t = fma %s, %sc, %nm : <64 x 64 x f32>
    %a2 = add %a, %t : <64 x 64 x f32>
    yield %a2
  } : <64 x 64 x f32>
)";
  const std::string tail = R"(
  %ob = splat %o : <64 x 64 x ptr<f32>>
  %op = addptr %ob, %off : <64 x 64 x ptr<f32>>
  store %op, %OUT
  return
}
)";
  auto subst = [](std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
  };
  std::string text = head + subst(subst(loop, "%ACC", "%acc"), "%INIT", "%acc0");
  if (two_loops) text += subst(subst(loop, "%ACC", "%acc2"), "%INIT", "%acc");
  return text + subst(tail, "%OUT", two_loops ? "%acc2" : "%acc");
}

// Triton's attention writes `qk = tl.dot(q, k.T)` and `qk * scale - m[:, None]` (fma(qk, scale,
// neg(m[:, None])) after contraction). The loop-carried K tile is copied into its shared-memory
// ring by cp.async and its transpose read there as a view (it was loaded into registers and
// stored each iteration), and the negated broadcast stays a broadcast of the row, so the fma takes
// it in the accumulator's layout without moving the 64 x 64 block through shared memory.
void transposed_ring_tile_and_broadcast_arithmetic(void**) {
  const std::string ptx = compile(attention_like(false), 4, {}, 3, true);
  assert_true(count(ptx, "wgmma.mma_async") > 0);
  assert_true(count(ptx, "cp.async.cg.shared.global") > 0);
  assert_true(count(ptx, "ld.global.v4") <= 4);  // q only: 64 x 64 halves, 4 x 16 bytes a thread
  // The accumulator's one exchange into the store's layout after the loop (16 x 8 bytes).
  assert_true(count(ptx, "st.shared.v4.f32") + count(ptx, "st.shared.v2.f32") + count(ptx, "st.shared.f32") <= 16);
}

// Two loops one after the other (causal attention's off-band and on-band loops) use the same
// shared memory for their ring tiles: the first gives it back when it ends.
void sequential_loops_share_their_rings(void**) {
  uint32_t bytes_one = 0, bytes_two = 0;
  compile(attention_like(false), 4, {}, 3, true, &bytes_one);
  const std::string ptx = compile(attention_like(true), 4, {}, 3, true, &bytes_two);
  assert_true(bytes_one > 16384);  // q and two K tiles in flight at least
  assert_int_equal(bytes_two, bytes_one);
  assert_true(count(ptx, "cp.async.wait_all") + count(ptx, "cp.async.wait_group 0") > 0);
}

// Pointer tiles carried by a loop and advanced each iteration (`kT_ptrs += BN * stride_tok`,
// Triton's attention backward), whose addresses run down their columns: offs_k[:, None] with unit
// stride, offs_n[None, :] * stride_tok. Their registers follow axis info's contiguous dimension,
// so the copy through them in the loop moves 16 bytes at a time (in row-major order it moved 2).
void carried_pointer_tile_runs_along_its_contiguous_dimension(void**) {
  const std::string text = R"(
kernel @k(%kp: ptr<f16> {align=16}, %o: ptr<f16> {align=16}, %st: i32 {divisible=16}, %n: i32) {
  %rk = arange[start=0, end=64] : <64 x i32>
  %rn = arange[start=0, end=32] : <32 x i32>
  %ke = expand_dims[axis=1] %rk : <64 x 1 x i32>
  %kb = broadcast %ke : <64 x 32 x i32>
  %ne = expand_dims[axis=0] %rn : <1 x 32 x i32>
  %sts = splat %st : <1 x 32 x i32>
  %no = mul %ne, %sts : <1 x 32 x i32>
  %nb = broadcast %no : <64 x 32 x i32>
  %off = add %kb, %nb : <64 x 32 x i32>
  %pb = splat %kp : <64 x 32 x ptr<f16>>
  %p0 = addptr %pb, %off : <64 x 32 x ptr<f16>>
  %ob = splat %o : <64 x 32 x ptr<f16>>
  %q0 = addptr %ob, %off : <64 x 32 x ptr<f16>>
  %c0 = const[value=0] : i32
  %c1 = const[value=1] : i32
  %c32 = const[value=32] : i32
  %adv = mul %st, %c32 : i32
  %advs = splat %adv : <64 x 32 x i32>
  %pend, %qend = for %c0, %n, %c1, %p0, %q0 {
  ^(%i: i32, %p: <64 x 32 x ptr<f16>>, %q: <64 x 32 x ptr<f16>>):
    %x = load %p : <64 x 32 x f16>
    store %q, %x
    %p2 = addptr %p, %advs : <64 x 32 x ptr<f16>>
    %q2 = addptr %q, %advs : <64 x 32 x ptr<f16>>
    yield %p2, %q2
  } : <64 x 32 x ptr<f16>>, <64 x 32 x ptr<f16>>
  return
}
)";
  const std::string ptx = compile(text, 4);
  assert_int_equal(count(ptx, "ld.global.b16"), 0);
  assert_int_equal(count(ptx, "ld.global.v4.b32"), 2);  // 64 x 32 halves over 128 threads: 16 a thread
  assert_int_equal(count(ptx, "st.global.v4.b32"), 2);
  assert_int_equal(count(ptx, "st.shared"), 0);  // no layout conversion on the way
}

// A scalar atomic runs in thread 0, between its fences: a barrier before a release (so that
// thread 0's fence covers every thread's earlier stores) and one after (the old value, and an
// acquire, reach the others), and no fence in the other threads. Triton's layer-norm backward
// lock: every warp fenced at GPU scope twice per atomic, with a barrier more, before.
void scalar_atomic_fences_in_the_thread_that_performs_it(void**) {
  const std::string ptx = compile(R"(
kernel @k(%lock: ptr<i32>, %acc: ptr<i32>) {
  %zero = const[value=0] : i32
  %one = const[value=1] : i32
  %now = atomic_cas %lock, %zero, %one : i32
  %r = arange[start=0, end=256] : <256 x i32>
  %ab = splat %acc : <256 x ptr<i32>>
  %ap = addptr %ab, %r : <256 x ptr<i32>>
  %v = splat %now : <256 x i32>
  store %ap, %v
  %prev = atomic[kind=xchg] %lock, %zero : i32
  return
}
)");
  assert_int_equal(count(ptx, "fence.acq_rel.gpu"), 4);
  assert_int_equal(count(ptx, "bar.sync"), 4);  // two per atomic
  // Each fence pair encloses its atomic with no barrier between them.
  for (size_t at = ptx.find("fence.acq_rel.gpu"); at != std::string::npos;
       at = ptx.find("fence.acq_rel.gpu", ptx.find("fence.acq_rel.gpu", at + 1) + 1)) {
    const size_t atom = ptx.find("atom.", at), second = ptx.find("fence.acq_rel.gpu", at + 1);
    assert_true(atom != std::string::npos && second != std::string::npos && atom < second);
    assert_true(ptx.substr(at, second - at).find("bar.sync") == std::string::npos);
  }
}

// A row of values loaded before a loop and used in it as `m[:, None]` against a dot's
// accumulator (attention backward's dq loop: `exp2(qk - m)`) is loaded again in the
// accumulator's row layout where it is needed, instead of crossing shared memory (a store,
// two barriers and a load each iteration). Not when the loop writes memory: an earlier
// iteration's store may have changed it, and the row crosses shared memory then.
std::string row_used_in_loop(bool loop_stores) {
  return std::string(R"(
kernel @k(%qp: ptr<f16> {align=16}, %kp: ptr<f16> {align=16}, %mp: ptr<f32> {align=16}, %o: ptr<f32> {align=16}, %n: i32 {divisible=64}) {
  %r = arange[start=0, end=64] : <64 x i32>
  %re = expand_dims[axis=1] %r : <64 x 1 x i32>
  %c64 = const[value=64] : <64 x 1 x i32>
  %ro = mul %re, %c64 : <64 x 1 x i32>
  %rb = broadcast %ro : <64 x 64 x i32>
  %ce = expand_dims[axis=0] %r : <1 x 64 x i32>
  %cb = broadcast %ce : <64 x 64 x i32>
  %off = add %rb, %cb : <64 x 64 x i32>
  %qb = splat %qp : <64 x 64 x ptr<f16>>
  %qq = addptr %qb, %off : <64 x 64 x ptr<f16>>
  %q = load %qq : <64 x 64 x f16>
  %mb = splat %mp : <64 x ptr<f32>>
  %mq = addptr %mb, %r : <64 x ptr<f32>>
  %m = load %mq : <64 x f32>
  %me = expand_dims[axis=1] %m : <64 x 1 x f32>
  %acc0 = const[value=0.0] : <64 x 64 x f32>
  %z = const[value=0.0] : <64 x 64 x f32>
  %c0 = const[value=0] : i32
  %c64s = const[value=64] : i32
  %acc = for %c0, %n, %c64s, %acc0 {
  ^(%i: i32, %a: <64 x 64 x f32>):
    %base = mul %i, %c64s : i32
    %bs = splat %base : <64 x 64 x i32>
    %o2 = add %off, %bs : <64 x 64 x i32>
    %kb = splat %kp : <64 x 64 x ptr<f16>>
    %kq = addptr %kb, %o2 : <64 x 64 x ptr<f16>>
    %k = load %kq : <64 x 64 x f16>
    %s = dot %q, %k, %z : <64 x 64 x f32>
    %mm = broadcast %me : <64 x 64 x f32>
    %d = sub %s, %mm : <64 x 64 x f32>
    %a2 = add %a, %d : <64 x 64 x f32>
)") + (loop_stores ? "    %ms = splat %i : <64 x i32>\n    %mf = sitofp %ms : <64 x f32>\n    store %mq, %mf\n" : "") + R"(
    yield %a2
  } : <64 x 64 x f32>
  %ob = splat %o : <64 x 64 x ptr<f32>>
  %op = addptr %ob, %off : <64 x 64 x ptr<f32>>
  store %op, %acc
  return
}
)";
}

void loop_invariant_row_loads_again_in_the_accumulator_layout(void**) {
  const std::string ptx = compile(row_used_in_loop(false), 4, {}, 1, true);
  assert_true(count(ptx, "wgmma.mma_async") > 0);
  assert_int_equal(count(ptx, "st.shared.f32") + count(ptx, "st.shared.u32") + count(ptx, "st.shared.b32"), 0);
  const std::string stores = compile(row_used_in_loop(true), 4, {}, 1, true);
  assert_true(count(stores, "st.shared.f32") + count(stores, "st.shared.u32") + count(stores, "st.shared.b32") > 0);
}

// A K loop whose A tile is masked along K by a bound of no known divisibility (`k < K`, K read
// at run time: a tensor descriptor's shape, as in the grouped GEMM tutorial): each thread's runs
// still go to the ring 16 bytes per cp.async, the source size 16 or 0 from the run's lanes, and
// a thread with a ragged run (some lanes in, some out) copies its elements through registers
// instead. The mask made each element a 2-byte load and store (48x Triton's time).
void ragged_mask_keeps_whole_copies(void**) {
  const std::string text = R"(
kernel @k(%a: ptr<f16> {align=16}, %b: ptr<f16> {align=16}, %o: ptr<f32> {align=16}, %K: i32) {
  %r = arange[start=0, end=64] : <64 x i32>
  %re = expand_dims[axis=1] %r : <64 x 1 x i32>
  %ce = expand_dims[axis=0] %r : <1 x 64 x i32>
  %cb = broadcast %ce : <64 x 64 x i32>
  %c64 = const[value=64] : <64 x 1 x i32>
  %ro = mul %re, %c64 : <64 x 1 x i32>
  %rb = broadcast %ro : <64 x 64 x i32>
  %off = add %rb, %cb : <64 x 64 x i32>
  %ab = splat %a : <64 x 64 x ptr<f16>>
  %bb = splat %b : <64 x 64 x ptr<f16>>
  %acc0 = const[value=0.0] : <64 x 64 x f32>
  %c0 = const[value=0] : i32
  %c64s = const[value=64] : i32
  %Ks = splat %K : <64 x 64 x i32>
  %zi = const[value=0] : <64 x 64 x i32>
  %zero = const[value=0.0] : <64 x 64 x f16>
  %acc = for %c0, %K, %c64s, %acc0 {
  ^(%k: i32, %c: <64 x 64 x f32>):
    %ks = splat %k : <64 x 64 x i32>
    %kc = add %ks, %cb : <64 x 64 x i32>
    %m = cmp[pred=slt] %kc, %Ks : <64 x 64 x i1>
    %ao = add %rb, %kc : <64 x 64 x i32>
    %ap = addptr %ab, %ao : <64 x 64 x ptr<f16>>
    %x = load %ap, mask=%m, other=%zero : <64 x 64 x f16>
    %kr = mul %ks, %c64s_b : <64 x 64 x i32>
    %bo = add %off, %kr : <64 x 64 x i32>
    %bp = addptr %bb, %bo : <64 x 64 x ptr<f16>>
    %y = load %bp : <64 x 64 x f16>
    %c2 = dot %x, %y, %c : <64 x 64 x f32>
    yield %c2
  } : <64 x 64 x f32>
  %ob = splat %o : <64 x 64 x ptr<f32>>
  %op = addptr %ob, %off : <64 x 64 x ptr<f32>>
  store %op, %acc
  return
}
)";
  std::string t = text;
  const std::string use = "%kr = mul %ks, %c64s_b";
  t.replace(t.find(use), use.size(), "%c64b = splat %c64s : <64 x 64 x i32>\n    %kr = mul %ks, %c64b");
  const std::string ptx = compile(t, 4, {}, 3, true);
  assert_true(count(ptx, "wgmma.mma_async") > 0);
  // A's runs: 16-byte copies whose source size (16 or 0) is a register; B's take the mask-free form.
  assert_true(count(ptx, "], 16, %r") >= 4);
  assert_true(count(ptx, "ld.global.b16") > 0);  // the ragged branch
  assert_int_equal(count(ptx, "ld.global.v4"), 0);            // no tile through registers
  // A descriptor's mask, `0 <= k < K` and `row < M` (an `and` of factors each constant over a
  // run or true on a prefix or suffix of it): a run's whole-or-none test reads each factor at the
  // run's two ends, not every element (grouped_matmul_tma: the K loop's SASS 2078 -> 1013
  // instructions). A factor of no such shape (`k % 3 == 0`) keeps the per-element test.
  auto with_mask = [&](const std::string& mask) {
    std::string v = t;
    const std::string m = "%m = cmp[pred=slt] %kc, %Ks : <64 x 64 x i1>";
    v.replace(v.find(m), m.size(), mask);
    return compile(v, 4, {}, 3, true);
  };
  auto desc_mask = [](const std::string& lo_pred) {
    return "%lo = cmp[pred=" + lo_pred + "] %kc, %zi : <64 x 64 x i1>\n    %hi = cmp[pred=slt] %kc, %Ks : <64 x 64 x i1>\n" +
           "    %rowb = broadcast %re : <64 x 64 x i32>\n    %rw = cmp[pred=slt] %rowb, %Ks : <64 x 64 x i1>\n" +
           "    %m0 = and %lo, %hi : <64 x 64 x i1>\n    %m = and %m0, %rw : <64 x 64 x i1>";
  };
  const std::string desc = with_mask(desc_mask("sge"));
  const std::string odd = with_mask(desc_mask("ne"));  // k != 0: true on no prefix or suffix
  assert_true(count(desc, "], 16, %r") >= 4);
  assert_true(count(odd, "], 16, %r") >= 4);
  // The same instructions but for the runs' tests: per element, each of the thread's 4 runs of 8
  // ands and ors its 8 masks; by factors, 2 ands a factor.
  const int by_factors = count(desc, "and.pred") + count(desc, "or.pred");
  const int per_element = count(odd, "and.pred") + count(odd, "or.pred");
  std::printf("predicate ands and ors: by factors %d, per element %d\n", by_factors, per_element);
  assert_true(by_factors + 40 <= per_element);
}

// A K loop of `ty` tiles (Triton's fp8 matmul: A row-major, B given k-contiguous and read as its
// transpose), 4 warps, 3 stages, `dot_attr` on the dot.
std::string kmajor_matmul(const std::string& ty, const std::string& dot_attr) {
  std::string t = R"(
kernel @k(%ap: ptr<TY> {align=16}, %bp: ptr<TY> {align=16}, %o: ptr<f32> {align=16}, %n: i32 {divisible=64}) {
  %r = arange[start=0, end=64] : <64 x i32>
  %re = expand_dims[axis=1] %r : <64 x 1 x i32>
  %ns = splat %n : <64 x 1 x i32>
  %ro = mul %re, %ns : <64 x 1 x i32>
  %rb = broadcast %ro : <64 x 64 x i32>
  %ce = expand_dims[axis=0] %r : <1 x 64 x i32>
  %cb = broadcast %ce : <64 x 64 x i32>
  %off = add %rb, %cb : <64 x 64 x i32>
  %acc0 = const[value=0.0] : <64 x 64 x f32>
  %c0 = const[value=0] : i32
  %c64s = const[value=64] : i32
  %acc = for %c0, %n, %c64s, %acc0 {
  ^(%i: i32, %a: <64 x 64 x f32>):
    %bs = splat %i : <64 x 64 x i32>
    %o2 = add %off, %bs : <64 x 64 x i32>
    %ab = splat %ap : <64 x 64 x ptr<TY>>
    %aq = addptr %ab, %o2 : <64 x 64 x ptr<TY>>
    %x = load %aq : <64 x 64 x TY>
    %bb = splat %bp : <64 x 64 x ptr<TY>>
    %bq = addptr %bb, %o2 : <64 x 64 x ptr<TY>>
    %y0 = load %bq : <64 x 64 x TY>
    %y = permute[order=[1, 0]] %y0 : <64 x 64 x TY>
    %a2 = dotATTR %x, %y, %a : <64 x 64 x f32>
    yield %a2
  } : <64 x 64 x f32>
  %ob = splat %o : <64 x 64 x ptr<f32>>
  %op = addptr %ob, %off : <64 x 64 x ptr<f32>>
  store %op, %acc
  return
}
)";
  for (size_t at = t.find("TY"); at != std::string::npos; at = t.find("TY", at)) t.replace(at, 2, ty);
  t.replace(t.find("ATTR"), 4, dot_attr);
  return t;
}

// f8 (precision=fast) and tf32 dots run on wgmma reading K-major tiles from shared memory (k32
// and k8 per instruction), both operands copied into the loop's ring by cp.async; they ran on
// mma.sync with each operand converted byte by byte through shared memory every iteration
// (Triton's fp8 matmul tutorial: 4832 SASS instructions and 2004 bytes of spills; 968 and none
// now, Triton's 872). An ieee f8 dot stays on mma.sync (wgmma's f8 sum keeps about 14 bits).
void f8_and_tf32_dots_take_wgmma_from_kmajor_rings(void**) {
  for (const char* ty : {"f8e4m3", "f8e5m2"}) {
    const std::string ptx = compile(kmajor_matmul(ty, "[precision=fast]"), 4, {}, 3, true);
    const std::string t = std::string(ty) == "f8e4m3" ? "e4m3" : "e5m2";
    assert_true(count(ptx, "wgmma.mma_async.sync.aligned.m64n64k32.f32." + t + "." + t) == 2);  // k 64: two steps
    assert_int_equal(count(ptx, "mma.sync"), 0);
    assert_true(count(ptx, "cp.async.cg.shared.global") >= 4);  // 64 x 64 bytes = 4 x 16 bytes a thread, per operand
    assert_int_equal(count(ptx, "st.shared.u8") + count(ptx, "st.shared.b8"), 0);
  }
  const std::string ptx = compile(kmajor_matmul("f32", "[precision=tf32]"), 4, {}, 3, true);
  assert_true(count(ptx, "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32") == 8);
  assert_int_equal(count(ptx, "mma.sync"), 0);
  assert_true(count(ptx, "cp.async.cg.shared.global") >= 16);
  // Without sm_90a the same dots stay on mma.sync from registers, and so does an ieee f8 dot.
  assert_true(count(compile(kmajor_matmul("f8e4m3", "[precision=fast]"), 4, {}, 3, false), "mma.sync.aligned.m16n8k32") > 0);
  const std::string ieee = compile(kmajor_matmul("f8e4m3", ""), 4, {}, 3, true);
  assert_true(count(ieee, "mma.sync.aligned.m16n8k32") > 0);
  assert_int_equal(count(ieee, "wgmma.mma_async"), 0);
}

// a @ b.T with both tiles from the loop's ring (the grouped GEMM tutorial's descriptor loads):
// the wgmma group stays in flight into the next iteration (wait_group 1), as with an untransposed
// B; the transpose hid the ring slot and every iteration waited for its group (wait_group 0).
void transposed_ring_b_keeps_the_group_in_flight(void**) {
  const std::string ptx = compile(kmajor_matmul("f16", ""), 4, {}, 3, true);
  assert_true(count(ptx, "wgmma.mma_async") > 0);
  assert_true(count(ptx, "wgmma.wait_group.sync.aligned 1;") >= 1);
}

// Below wgmma (2 warps, or no sm_90a), tf32, f8 and i8 dots read their K-major tiles from the
// loop's shared-memory ring with ldmatrix, as f16 does, and run mma.sync on them (k 8 for tf32,
// 32 for 8-bit types); they converted both operands through shared memory every iteration and
// took no cp.async ring (fla's tf32 kkt_solve kernel: 4440 -> 2848 SASS instructions, Triton's
// 2408).
void narrow_and_wide_types_take_mma_sync_from_rings(void**) {
  struct Case {
    const char* ty;
    const char* attr;
    const char* mma;
  };
  for (const Case& c : {Case{"f32", "[precision=tf32]", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"},
                        Case{"f8e4m3", "", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"}}) {
    const std::string ptx = compile(kmajor_matmul(c.ty, c.attr), 2, {}, 3, true);
    assert_true(count(ptx, c.mma) > 0);
    assert_true(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") > 0);
    assert_int_equal(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans"), 0);  // K-major: never transposed
    assert_true(count(ptx, "cp.async.cg.shared.global") >= 4);
    assert_int_equal(count(ptx, "wgmma"), 0);
  }
}

// A tile that the K loop scales before its dot (fla's chunk kernels: `b_q * scale` in f32, back
// to bf16) is prefetched into the loop's shared-memory ring by cp.async like the dot's direct
// operands and read back with 16-byte loads where it is used, as Triton's pipeliner does; it was
// loaded a stage ahead into registers and held there across the iteration (chunk_bwd_kernel_dh
// at 1 warp: 182 registers, Triton's 104; 144 now).
void scaled_tile_waits_in_shared_memory(void**) {
  std::string t = kmajor_matmul("bf16", "");
  const std::string x = "%x = load %aq : <64 x 64 x bf16>";
  t.replace(t.find(x), x.size(),
            "%x0 = load %aq : <64 x 64 x bf16>\n    %xf = fpext %x0 : <64 x 64 x f32>\n"
            "    %sc = const[value=0.125] : <64 x 64 x f32>\n    %xs = mul %xf, %sc : <64 x 64 x f32>\n"
            "    %x = fptrunc %xs : <64 x 64 x bf16>");
  const std::string ptx = compile(t, 1, {}, 2, false);
  assert_true(count(ptx, "mma.sync.aligned.m16n8k16") > 0);
  // Both tiles by cp.async: 64 x 64 x 2 bytes over 32 threads is 16 copies of 16 bytes each.
  assert_true(count(ptx, "cp.async.cg.shared.global") >= 32);
  assert_int_equal(count(ptx, "ld.global"), 0);
  assert_true(count(ptx, "ld.shared.v4") >= 16);  // the scaled tile read back, 16 bytes at a time
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ragged_mask_keeps_whole_copies),
      cmocka_unit_test(loop_invariant_row_loads_again_in_the_accumulator_layout),
      cmocka_unit_test(scalar_atomic_fences_in_the_thread_that_performs_it),
      cmocka_unit_test(carried_pointer_tile_runs_along_its_contiguous_dimension),
      cmocka_unit_test(commutative_region_reduces_like_the_builtin),
      cmocka_unit_test(ordered_region_stays_in_order),
      cmocka_unit_test(approx_math_uses_the_approximate_instructions),
      cmocka_unit_test(signed_wrap_loads_vectors),
      cmocka_unit_test(row_broadcast_over_a_tile_moves_nothing),
      cmocka_unit_test(half_arithmetic_is_native_on_sm90),
      cmocka_unit_test(column_scan_in_the_load_layout),
      cmocka_unit_test(tiles_that_meet_load_in_one_layout),
      cmocka_unit_test(transposed_ring_tile_and_broadcast_arithmetic),
      cmocka_unit_test(sequential_loops_share_their_rings),
      cmocka_unit_test(f8_and_tf32_dots_take_wgmma_from_kmajor_rings),
      cmocka_unit_test(transposed_ring_b_keeps_the_group_in_flight),
      cmocka_unit_test(narrow_and_wide_types_take_mma_sync_from_rings),
      cmocka_unit_test(scaled_tile_waits_in_shared_memory),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
