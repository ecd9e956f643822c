// Debugging ops and diagnostics of the CPU backend: print (the interpreter's line format, masks,
// every element type), assert (message with the op's location, lane and program; the failing
// instance stops there; asserts in device functions; masked lanes are not checked), a `for`
// with a step that is not positive, inline_asm refused at compile time with its location,
// unspecialized IR refused, debug_barrier as a no-op, and the LLVM IR text of a kernel.
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "ir_build.h"
#include "test_main.h"

using namespace tri_test;

namespace {
struct Capture {
  std::mutex mu;
  std::vector<std::string> texts;
  tri::PrintSink sink() {
    return [this](const std::string& s) {
      std::lock_guard<std::mutex> l(mu);
      texts.push_back(s);
    };
  }
};
}  // namespace

static void print_lines(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId xs = f.param(md.p(Scalar::F32)), n = f.param(md.s(Scalar::I32)), p = f.param(md.p(Scalar::I8));
  TypeId i32 = md.s(Scalar::I32), bi = md.blk({4}, Scalar::I32);
  ValueId lanes = f.arange(4);
  ValueId x = f.load(f.addptr(f.splat(xs, md.blk({4}, md.p(Scalar::F32))), lanes));
  ValueId mask = f.cmp("slt", lanes, f.splat(n, bi));
  // block values with a mask: one line per active lane
  f.op(Opcode::Print, {x, lanes, mask}, {}, attrs(Opcode::Print, {{"prefix", Attr::of_str("x=")}}));
  // scalars of several types, no mask
  ValueId h = f.cfloat(md.s(Scalar::F16), 0.5);
  ValueId b = f.cint(md.s(Scalar::I1), 1);
  ValueId big = f.cint(md.s(Scalar::I64), -(int64_t(1) << 40));
  ValueId d = f.cfloat(md.s(Scalar::F64), 0.1);
  f.op(Opcode::Print, {f.pid(), h, b, big, d, p, tri::ir::kNoValue}, {});
  // a print without values
  f.op(Opcode::Print, {tri::ir::kNoValue}, {}, attrs(Opcode::Print, {{"prefix", Attr::of_str("hello ")}}));
  (void)i32;
  f.op(Opcode::DebugBarrier, {}, {});
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  float xv[4] = {1.0f, -2.5f, 1e30f, 0.1f};
  Capture cap;
  tri::ArgValue args[] = {ptr_arg(xv), int_arg(3), ptr_arg(reinterpret_cast<void*>(0xabc0))};
  tri::ThreadPool pool(2);
  assert_true(k->run(tri::Grid{2, 1, 1}, args, 3, &pool, cap.sink()).is_ok());
  std::sort(cap.texts.begin(), cap.texts.end());
  std::vector<std::string> want = {
      "hello pid (0, 0, 0)",
      "hello pid (1, 0, 0)",
      "pid (0, 0, 0): 0, 0.5, 1, -1099511627776, 0.1, 0xabc0",
      "pid (1, 0, 0): 1, 0.5, 1, -1099511627776, 0.1, 0xabc0",
      "x=pid (0, 0, 0) idx (0): 1, 0\nx=pid (0, 0, 0) idx (1): -2.5, 1\nx=pid (0, 0, 0) idx (2): 1e+30, 2",
      "x=pid (1, 0, 0) idx (0): 1, 0\nx=pid (1, 0, 0) idx (1): -2.5, 1\nx=pid (1, 0, 0) idx (2): 1e+30, 2",
  };
  assert_int_equal(cap.texts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (cap.texts[i] != want[i]) fail_msg("print %zu: '%s', want '%s'", i, cap.texts[i].c_str(), want[i].c_str());
  }
  // No active lane: no call at all.
  Capture none;
  tri::ArgValue args0[] = {ptr_arg(xv), int_arg(0), ptr_arg(nullptr)};
  assert_true(k->run(tri::Grid{1, 1, 1}, args0, 3, &pool, none.sink()).is_ok());
  assert_int_equal(none.texts.size(), 2);  // the scalar print and the prefix-only print still run
}

// assert(x[i] < limit) over lanes with a mask; the store after it must not happen in a failing
// instance; the reported instance is the lowest failing one.
static void assert_fails_with_location(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId xs = f.param(md.p(Scalar::I32)), out = f.param(md.p(Scalar::I32)), limit = f.param(md.s(Scalar::I32));
  TypeId i32 = md.s(Scalar::I32), bi = md.blk({8}, Scalar::I32);
  ValueId base = f.bin(Opcode::Mul, f.pid(), f.cint(i32, 8));
  ValueId offs = f.bin(Opcode::Add, f.splat(base, bi), f.arange(8));
  ValueId x = f.load(f.addptr(f.splat(xs, md.blk({8}, md.p(Scalar::I32))), offs));
  ValueId mask = f.cmp("ne", f.arange(8), f.splat(f.cint(i32, 7), bi));  // lane 7 is never checked
  f.op(Opcode::Assert, {f.cmp("slt", x, f.splat(limit, bi)), mask}, {},
       attrs(Opcode::Assert, {{"msg", Attr::of_str("x out of range")}}));  // the 16th op: line 16
  f.store(f.addptr(out, f.pid()), f.cint(i32, 1));
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  std::vector<int32_t> xv(64);
  for (int i = 0; i < 64; ++i) xv[i] = i;
  xv[7] = 1000;   // masked lane of program 0: ignored
  xv[43] = 500;   // program 5, lane 3
  xv[61] = 900;   // program 7, lane 5
  std::vector<int32_t> o(8, 0);
  tri::ArgValue args[] = {ptr_arg(xv.data()), ptr_arg(o.data()), int_arg(100)};
  tri::ThreadPool pool(1);
  tri::Status st = k->run(tri::Grid{8, 1, 1}, args, 3, &pool, {});
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(tri::Code::Runtime));
  const char* want = "test.tri:16:3: error: 'assert' lane [3] of <8 x i1> failed: x out of range; program (5, 0, 0)";
  if (st.message() != want) fail_msg("message '%s'", st.message().c_str());
  assert_int_equal(o[5], 0);  // stopped before its store
  for (int i = 0; i < 5; ++i) assert_int_equal(o[i], 1);
  // With a larger limit every assert holds.
  std::fill(o.begin(), o.end(), 0);
  tri::ArgValue ok_args[] = {ptr_arg(xv.data()), ptr_arg(o.data()), int_arg(999)};
  assert_true(k->run(tri::Grid{8, 1, 1}, ok_args, 3, &pool, {}).is_ok());
  for (int v : o) assert_int_equal(v, 1);
}

// An assert inside a device function fails the launch through the call, with the callee's
// location; a scalar assert has no lane in its message.
static void assert_in_device_function(void** state) {
  Mod md;
  TypeId i32 = md.s(Scalar::I32);
  {
    Fn g(&md.m, "check", false);
    ValueId v = g.param(i32);
    g.fn()->results = {i32};
    g.op(Opcode::Assert, {g.cmp("sge", v, g.cint(i32, 0)), tri::ir::kNoValue}, {});
    g.ret({g.bin(Opcode::Add, v, g.cint(i32, 1))});
  }
  Fn f(&md.m, "k", true);
  ValueId out = f.param(md.p(Scalar::I32)), v = f.param(i32);
  ValueId r = f.op1(Opcode::Call, {v}, i32, attrs(Opcode::Call, {{"callee", Attr::of_func("check")}}));
  f.store(out, r);
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  int32_t o = 0;
  tri::ArgValue good[] = {ptr_arg(&o), int_arg(4)};
  assert_true(k->run(tri::Grid{}, good, 2, nullptr, {}).is_ok());
  assert_int_equal(o, 5);
  o = 0;
  tri::ArgValue bad[] = {ptr_arg(&o), int_arg(-3)};
  tri::Status st = k->run(tri::Grid{}, bad, 2, nullptr, {});
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(tri::Code::Runtime));
  if (st.message() != "test.tri:3:3: error: 'assert' failed; program (0, 0, 0)") fail_msg("'%s'", st.message().c_str());
  assert_int_equal(o, 0);
}

static void for_step_not_positive(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId out = f.param(md.p(Scalar::I32)), lo = f.param(md.s(Scalar::I32)), step = f.param(md.s(Scalar::I32));
  TypeId i32 = md.s(Scalar::I32);
  OpId loop = f.op(Opcode::For, {lo, f.cint(i32, 10), step, f.cint(i32, 0)}, {i32});
  BlockId b = f.begin_region(loop, {i32, i32});
  f.yield({f.bin(Opcode::Add, f.arg(b, 1), f.cint(i32, 1))});
  f.end_region();
  f.store(out, f.res(loop, 0));
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  int32_t o = -1;
  tri::ArgValue a1[] = {ptr_arg(&o), int_arg(0), int_arg(0)};
  tri::Status st = k->run(tri::Grid{}, a1, 3, nullptr, {});
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(tri::Code::Runtime));
  if (st.message() != "test.tri:3:3: error: 'for' step is 0, but it must be positive; program (0, 0, 0)")
    fail_msg("'%s'", st.message().c_str());
  // A loop that does not run may have any step.
  tri::ArgValue a2[] = {ptr_arg(&o), int_arg(20), int_arg(-1)};
  assert_true(k->run(tri::Grid{}, a2, 3, nullptr, {}).is_ok());
  assert_int_equal(o, 0);
}

static void iv_does_not_wrap(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId out = f.param(md.p(Scalar::I32)), hi = f.param(md.s(Scalar::I32)), step = f.param(md.s(Scalar::I32));
  TypeId i32 = md.s(Scalar::I32);
  OpId loop = f.op(Opcode::For, {f.cint(i32, 0), hi, step, f.cint(i32, 0)}, {i32});
  BlockId b = f.begin_region(loop, {i32, i32});
  f.yield({f.bin(Opcode::Add, f.arg(b, 1), f.cint(i32, 1))});
  f.end_region();
  f.store(out, f.res(loop, 0));
  f.ret();
  auto k = compile_or_die(md.m, "k");
  assert_non_null(k.get());
  int32_t o = -1;
  // iv = 0 and 2^30 run; 2^31 does not fit in i32, so the loop ends there instead of wrapping.
  tri::ArgValue a[] = {ptr_arg(&o), int_arg(INT32_MAX), int_arg(1 << 30)};
  assert_true(k->run(tri::Grid{}, a, 3, nullptr, {}).is_ok());
  assert_int_equal(o, 2);
}

static void inline_asm_is_unsupported(void** state) {
  Mod md;
  Fn f(&md.m, "k", true);
  ValueId x = f.param(md.s(Scalar::I32));
  f.op(Opcode::InlineAsm, {x}, {md.s(Scalar::I32)},
       attrs(Opcode::InlineAsm, {{"asm", Attr::of_str("mov.b32 $0, $1;")}, {"constraints", Attr::of_str("=r,r")}}));
  f.ret();
  std::unique_ptr<tri::cpu::CpuKernel> k;
  tri::Status st = tri::cpu::compile_cpu(md.m, *md.m.find("k"), tri::cpu::CpuCompileOptions{}, &k);
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(tri::Code::Unsupported));
  if (st.message() != "test.tri:1:3: error: 'inline_asm' runs only on the GPU backend") fail_msg("'%s'", st.message().c_str());
  assert_null(k.get());
}

static void unspecialized_ir_is_refused(void** state) {
  Mod md;
  tri::ir::SymId sym = md.m.intern("BLOCK");
  Fn f(&md.m, "k", true);
  ValueId p = f.param(md.p(Scalar::F32));
  TypeId t = md.m.types.block({tri::ir::Dim::name(sym)}, md.m.types.ptr(md.s(Scalar::F32)));
  f.store(f.op1(Opcode::Splat, {p}, t), f.cfloat(md.s(Scalar::F32), 1.0));
  f.ret();
  std::unique_ptr<tri::cpu::CpuKernel> k;
  tri::Status st = tri::cpu::compile_cpu(md.m, *md.m.find("k"), tri::cpu::CpuCompileOptions{}, &k);
  assert_int_equal(static_cast<int>(st.code()), static_cast<int>(tri::Code::Compile));
  assert_non_null(std::strstr(st.message().c_str(), "symbolic dimension"));
}

// The kernel's optimized LLVM IR is kept on request: a vector add over a block is vectorized.
static void llvm_ir_text(void** state) {
  Mod md;
  Fn f(&md.m, "vadd", true);
  ValueId x = f.param(md.p(Scalar::F32)), y = f.param(md.p(Scalar::F32)), n = f.param(md.s(Scalar::I32));
  auto [xp, mask] = f.block_ptr(x, 256, n);
  auto yp = f.block_ptr(y, 256, n).first;
  f.store(yp, f.bin(Opcode::Add, f.load(xp, mask), f.load(yp, mask)), mask);
  f.ret();
  auto k = compile_or_die(md.m, "vadd", true);
  assert_non_null(k.get());
  const std::string& ir = k->llvm_ir();
  assert_non_null(std::strstr(ir.c_str(), "@tri.entry(ptr"));
  assert_non_null(std::strstr(ir.c_str(), " x float>"));  // vector code
  std::string text;
  assert_true(tri::cpu::cpu_llvm_ir(md.m, *md.m.find("vadd"), tri::cpu::CpuCompileOptions{}, &text).is_ok());
  assert_true(text == ir);
  tri::cpu::CpuCompileOptions o0;
  o0.opt_level = 0;
  assert_true(tri::cpu::cpu_llvm_ir(md.m, *md.m.find("vadd"), o0, &text).is_ok());
  assert_null(std::strstr(text.c_str(), " x float>"));  // O0 keeps the scalar loops
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(print_lines),           cmocka_unit_test(assert_fails_with_location),
      cmocka_unit_test(assert_in_device_function), cmocka_unit_test(for_step_not_positive),
      cmocka_unit_test(iv_does_not_wrap),      cmocka_unit_test(inline_asm_is_unsupported),
      cmocka_unit_test(unspecialized_ir_is_refused), cmocka_unit_test(llvm_ir_text),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
