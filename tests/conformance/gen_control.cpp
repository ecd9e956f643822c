// Control flow, calls and program geometry: `for` with block, scalar and pointer carried values
// (runtime bounds, negative start, step > 1, zero trips, i64 bounds, nesting), `if` with and
// without results and else regions, `while` with scalar and block state, device functions
// (several results, calls between functions, a kernel constexpr used in a function),
// program_id/num_programs on a 3-D grid, and the debugging ops: `assert` that holds, one that
// fails (every target must fail the launch), and `print`, whose text must reach the log.
#include "harness.h"

namespace conf {

using namespace tri_tool;

namespace {

const std::string kF = "f32", kI = "i32";

Group loops(uint64_t seed) {
  Tile tile{{64}, {200}, 4};
  Builder b("for loops: carried block, scalar and pointers; zero trips; i64 bounds; nesting " + tile.name(), seed);
  b.g.grid[0] = tile.grid;
  size_t n = tile.count();
  std::string x = b.in_buf("x", gen_buffer(b.rng, TRI_DTYPE_F32, n * 3, Dist::Small));
  std::string o_acc = b.out_buf("acc", TRI_DTYPE_F32, n);
  std::string o_ptr = b.out_buf("ptr_walk", TRI_DTYPE_F32, n);
  std::string o_s = b.out_buf("scalars", TRI_DTYPE_I64, 4 * 4);
  std::string hi = b.scalar("hi", TRI_DTYPE_I32, 7);
  TileIR t = emit_tile(b, tile);
  const std::string bf = blk(t.dims, kF), bi = blk(t.dims, kI), pf = blk(t.dims, "ptr<f32>");
  std::string xv = load_tile(b, t, x, TRI_DTYPE_F32, "0.0");
  // acc = sum over i in [-3, hi) step 2 of x * i; s = sum of i.
  std::string lo = b.op("const[value=-3]", kI), step = b.op("const[value=2]", kI);
  std::string zero_b = const_tile(b, t, TRI_DTYPE_F32, "0.0"), zero_s = b.op("const[value=0]", kI);
  std::string acc = b.fresh("acc"), s = b.fresh("s");
  std::string iv = b.fresh("i"), ca = b.fresh("ca"), cs = b.fresh("cs");
  b.open(acc + ", " + s + " = for " + lo + ", " + hi + ", " + step + ", " + zero_b + ", " + zero_s + " {");
  b.stmt("^(" + iv + ": i32, " + ca + ": " + bf + ", " + cs + ": i32):");
  std::string ivf = b.op("sitofp " + iv, kF);
  std::string prod = b.op("mul " + xv + ", " + b.op("splat " + ivf, bf), bf);
  b.stmt("yield " + b.op("add " + ca + ", " + prod, bf) + ", " + b.op("add " + cs + ", " + iv, kI));
  b.close("} : " + bf + ", i32");
  store_tile(b, t, o_acc, TRI_DTYPE_F32, acc);
  // Pointers carried through a loop: walk x in steps of n, summing three slices.
  const std::string& nstep = t.ext[0];  // the runtime n
  std::string p0 = b.op("addptr " + b.op("splat " + x, pf) + ", " + t.offs, pf);
  std::string walk = b.fresh("w"), wp = b.fresh("wp");
  std::string j = b.fresh("j"), cw = b.fresh("cw"), cp = b.fresh("cp");
  std::string c0 = b.op("const[value=0]", kI), c3 = b.op("const[value=3]", kI), c1 = b.op("const[value=1]", kI);
  b.open(walk + ", " + wp + " = for " + c0 + ", " + c3 + ", " + c1 + ", " + zero_b + ", " + p0 + " {");
  b.stmt("^(" + j + ": i32, " + cw + ": " + bf + ", " + cp + ": " + pf + "):");
  std::string lv = b.op("load " + cp + ", mask=" + t.mask + ", other=" + zero_b, bf);
  std::string next = b.op("addptr " + cp + ", " + b.op("splat " + nstep, bi), pf);
  b.stmt("yield " + b.op("add " + cw + ", " + lv, bf) + ", " + next);
  b.close("} : " + bf + ", " + pf);
  store_tile(b, t, o_ptr, TRI_DTYPE_F32, walk);
  // Scalars, stored by program p at scalars[4p..4p+3]: the sum of i above, a zero-trip loop's
  // result (its initial value), a loop over i64 bounds, and a nested loop's count.
  std::string z = b.fresh("z"), zi = b.fresh("zi"), zc = b.fresh("zc");
  std::string c5 = b.op("const[value=5]", kI), c2 = b.op("const[value=2]", kI), c42 = b.op("const[value=42]", kI);
  b.open(z + " = for " + c5 + ", " + c2 + ", " + c1 + ", " + c42 + " {");
  b.stmt("^(" + zi + ": i32, " + zc + ": i32):");
  b.stmt("yield " + b.op("add " + zc + ", " + zi, kI));
  b.close("} : i32");
  std::string l = b.fresh("l"), li = b.fresh("li"), lc = b.fresh("lc");
  std::string lo64 = b.op("const[value=4294967290]", "i64"), hi64 = b.op("const[value=4294967300]", "i64");
  std::string st64 = b.op("const[value=3]", "i64"), z64 = b.op("const[value=0]", "i64");
  b.open(l + " = for " + lo64 + ", " + hi64 + ", " + st64 + ", " + z64 + " {");
  b.stmt("^(" + li + ": i64, " + lc + ": i64):");
  b.stmt("yield " + b.op("add " + lc + ", " + li, "i64"));
  b.close("} : i64");
  std::string pid = b.op("program_id[axis=0]", kI);
  std::string nest = b.fresh("nest"), oi = b.fresh("oi"), oc = b.fresh("oc");
  std::string pid1 = b.op("add " + pid + ", " + c1, kI);
  b.open(nest + " = for " + c0 + ", " + pid1 + ", " + c1 + ", " + zero_s + " {");
  b.stmt("^(" + oi + ": i32, " + oc + ": i32):");
  std::string inner = b.fresh("inner"), ii = b.fresh("ii"), ic = b.fresh("ic");
  b.open(inner + " = for " + oi + ", " + c5 + ", " + c1 + ", " + oc + " {");
  b.stmt("^(" + ii + ": i32, " + ic + ": i32):");
  b.stmt("yield " + b.op("add " + ic + ", " + c1, kI));
  b.close("} : i32");
  b.stmt("yield " + inner);
  b.close("} : i32");
  std::string base = b.op("mul " + pid + ", " + b.op("const[value=4]", kI), kI);
  const std::string p64 = "ptr<i64>";
  std::vector<std::string> vals = {b.op("sext " + s, "i64"), b.op("sext " + z, "i64"), l, b.op("sext " + nest, "i64")};
  for (int k = 0; k < 4; ++k) {
    std::string at = b.op("add " + base + ", " + b.op("const[value=" + std::to_string(k) + "]", kI), kI);
    b.stmt("store " + b.op("addptr " + o_s + ", " + at, p64) + ", " + vals[k]);
  }
  b.check("for: carried block and scalar, runtime bound, negative start, step 2", "acc", Cmp::Exact, {"x"});
  b.check("for: carried pointers", "ptr_walk");
  b.check("for: scalar results (sum of i, zero trips, i64 bounds, nested)", "scalars");
  return b.finish();
}

Group branches(uint64_t seed) {
  Tile tile{{64}, {200}, 4};
  Builder b("if with and without else, nested in for; while with scalar and block state " + tile.name(), seed);
  b.g.grid[0] = tile.grid;
  size_t n = tile.count();
  std::string x = b.in_buf("x", gen_buffer(b.rng, TRI_DTYPE_F32, n, Dist::Positive));
  // Finite values, so that halving ends.
  HostBuffer w(TRI_DTYPE_F32, {static_cast<int64_t>(n)});
  for (size_t i = 0; i < n; ++i) w.set(i, double_to_float_bits(TRI_DTYPE_F32, b.rng.uniform(0, 1000)));
  std::string w_in = b.in_buf("w", std::move(w));
  std::string o_if = b.out_buf("if_result", TRI_DTYPE_F32, n);
  std::string o_side = b.out_buf("if_side_effect", TRI_DTYPE_F32, n);
  std::string o_w = b.out_buf("while_scalar", TRI_DTYPE_I32, 8);
  std::string o_wb = b.out_buf("while_block", TRI_DTYPE_F32, n);
  std::string flag = b.scalar("flag", TRI_DTYPE_I32, 1);
  TileIR t = emit_tile(b, tile);
  const std::string bf = blk(t.dims, kF);
  std::string xv = load_tile(b, t, x, TRI_DTYPE_F32, "1.0");
  std::string pid = b.op("program_id[axis=0]", kI);
  std::string c1 = b.op("const[value=1]", kI), c2 = b.op("const[value=2]", kI), c0 = b.op("const[value=0]", kI);
  // Odd programs negate, even ones double; the flag (1) adds one more branch level.
  std::string odd = b.op("cmp[pred=eq] " + b.op("and " + pid + ", " + c1, kI) + ", " + c1, "i1");
  std::string r = b.fresh("r");
  b.open(r + " = if " + odd + " {");
  b.stmt("yield " + b.op("neg " + xv, bf));
  b.mid("} {");
  std::string on = b.op("cmp[pred=ne] " + flag + ", " + c0, "i1");
  std::string r2 = b.fresh("r");
  b.open(r2 + " = if " + on + " {");
  b.stmt("yield " + b.op("add " + xv + ", " + xv, bf));
  b.mid("} {");
  b.stmt("yield " + xv);
  b.close("} : " + bf);
  b.stmt("yield " + r2);
  b.close("} : " + bf);
  store_tile(b, t, o_if, TRI_DTYPE_F32, r);
  // An if without results or else, inside a loop: only program 2 stores, on iteration 1.
  std::string c3 = b.op("const[value=3]", kI);
  std::string it = b.fresh("it");
  b.open("for " + c0 + ", " + c3 + ", " + c1 + " {");
  b.stmt("^(" + it + ": i32):");
  std::string both = b.op("and " + b.op("cmp[pred=eq] " + pid + ", " + c2, "i1") + ", " +
                              b.op("cmp[pred=eq] " + it + ", " + c1, "i1"),
                          "i1");
  b.open("if " + both + " {");
  store_tile(b, t, o_side, TRI_DTYPE_F32, xv);
  b.stmt("yield");
  b.close("}");
  b.stmt("yield");
  b.close("}");
  // Collatz steps from 27 + pid, as a while with scalar state.
  std::string start = b.op("add " + pid + ", " + b.op("const[value=27]", kI), kI);
  std::string wv = b.fresh("wv"), wc = b.fresh("wc");
  std::string a0 = b.fresh("a"), a1 = b.fresh("a"), b0 = b.fresh("b"), b1 = b.fresh("b");
  b.open(wv + ", " + wc + " = while " + start + ", " + c0 + " {");
  b.stmt("^(" + a0 + ": i32, " + a1 + ": i32):");
  b.stmt("condition " + b.op("cmp[pred=ne] " + a0 + ", " + c1, "i1") + ", " + a0 + ", " + a1);
  b.mid("} {");
  b.stmt("^(" + b0 + ": i32, " + b1 + ": i32):");
  std::string even = b.op("cmp[pred=eq] " + b.op("and " + b0 + ", " + c1, kI) + ", " + c0, "i1");
  std::string half = b.op("ashr " + b0 + ", " + c1, kI);
  std::string up = b.op("add " + b.op("mul " + b0 + ", " + c3, kI) + ", " + c1, kI);
  b.stmt("yield " + b.op("select " + even + ", " + half + ", " + up, kI) + ", " + b.op("add " + b1 + ", " + c1, kI));
  b.close("} : i32, i32");
  b.stmt("store " + b.op("addptr " + o_w + ", " + pid, "ptr<i32>") + ", " + wc);
  // Block state: halve x until its largest element is below 1 (the condition reduces).
  std::string hv = b.fresh("hv"), h0 = b.fresh("h"), h1 = b.fresh("h");
  std::string wb = load_tile(b, t, w_in, TRI_DTYPE_F32, "0.0");
  std::string onef = b.op("const[value=1.0]", kF);
  b.open(hv + " = while " + wb + " {");
  b.stmt("^(" + h0 + ": " + bf + "):");
  std::string mx = b.op("reduce[axis=0, kind=max] " + h0, kF);
  b.stmt("condition " + b.op("fcmp[pred=oge] " + mx + ", " + onef, "i1") + ", " + h0);
  b.mid("} {");
  b.stmt("^(" + h1 + ": " + bf + "):");
  b.stmt("yield " + b.op("mul " + h1 + ", " + const_tile(b, t, TRI_DTYPE_F32, "0.5"), bf));
  b.close("} : " + bf);
  store_tile(b, t, o_wb, TRI_DTYPE_F32, hv);
  b.check("if with results, nested if", "if_result", Cmp::Exact, {"x"});
  b.check("if without results or else, in a for", "if_side_effect");
  b.check("while with scalar state", "while_scalar");
  b.check("while with block state and a reduce in the condition", "while_block", Cmp::Exact, {"w"});
  return b.finish();
}

Group calls(uint64_t seed) {
  Tile tile{{64}, {200}, 4};
  Builder b("calls: several results, nested calls, a kernel constexpr in a function " + tile.name(), seed);
  b.g.grid[0] = tile.grid;
  b.constexprs = "constexpr(BLOCK: i32 = 64)";
  b.prelude =
      "func @axpy(%a: f32, %x: <64 x f32>, %y: <64 x f32>) -> (<64 x f32>) {\n"
      "  %av = splat %a : <64 x f32>\n"
      "  %m = mul %av, %x : <64 x f32>\n"
      "  %r = add %m, %y : <64 x f32>\n"
      "  return %r\n"
      "}\n\n"
      "func @divmod(%a: i32, %b: i32) -> (i32, i32) {\n"
      "  %q = sdiv %a, %b : i32\n"
      "  %r = srem %a, %b : i32\n"
      "  return %q, %r\n"
      "}\n\n"
      "func @lanes() -> (<BLOCK x i32>) {\n"
      "  %r = arange[start=0, end=BLOCK] : <BLOCK x i32>\n"
      "  return %r\n"
      "}\n\n"
      "func @twice_axpy(%a: f32, %x: <64 x f32>, %y: <64 x f32>) -> (<64 x f32>, <BLOCK x i32>) {\n"
      "  %t = call[callee=@axpy] %a, %x, %y : <64 x f32>\n"
      "  %u = call[callee=@axpy] %a, %x, %t : <64 x f32>\n"
      "  %l = call[callee=@lanes] : <BLOCK x i32>\n"
      "  return %u, %l\n"
      "}\n\n";
  size_t n = tile.count();
  std::string x = b.in_buf("x", gen_buffer(b.rng, TRI_DTYPE_F32, n, Dist::Small));
  std::string y = b.in_buf("y", gen_buffer(b.rng, TRI_DTYPE_F32, n, Dist::Small));
  std::string o = b.out_buf("axpy2", TRI_DTYPE_F32, n);
  std::string ol = b.out_buf("lanes", TRI_DTYPE_I32, 64);
  std::string od = b.out_buf("divmod", TRI_DTYPE_I32, 8 * 2);
  std::string a = b.scalar("a", TRI_DTYPE_F32, double_to_float_bits(TRI_DTYPE_F32, 1.5));
  TileIR t = emit_tile(b, tile);
  const std::string bf = blk(t.dims, kF);
  std::string xv = load_tile(b, t, x, TRI_DTYPE_F32, "0.0");
  std::string yv = load_tile(b, t, y, TRI_DTYPE_F32, "0.0");
  std::vector<std::string> r = b.ops("call[callee=@twice_axpy] " + a + ", " + xv + ", " + yv, {bf, "<BLOCK x i32>"});
  store_tile(b, t, o, TRI_DTYPE_F32, r[0]);
  // The <BLOCK x i32> result is stored by program 0 only, through BLOCK-shaped pointers.
  std::string pid = b.op("program_id[axis=0]", kI);
  std::string first = b.op("cmp[pred=eq] " + pid + ", " + b.op("const[value=0]", kI), "i1");
  std::string fm = b.op("splat " + first, "<BLOCK x i1>");
  std::string lp = b.op("addptr " + b.op("splat " + ol, "<BLOCK x ptr<i32>>") + ", " + r[1], "<BLOCK x ptr<i32>>");
  b.stmt("store " + lp + ", " + r[1] + ", mask=" + fm);
  std::string num = b.op("add " + b.op("mul " + pid + ", " + b.op("const[value=-37]", kI), kI) + ", " +
                             b.op("const[value=5]", kI),
                         kI);
  std::vector<std::string> qr = b.ops("call[callee=@divmod] " + num + ", " + b.op("const[value=7]", kI), {kI, kI});
  std::string two = b.op("mul " + pid + ", " + b.op("const[value=2]", kI), kI);
  b.stmt("store " + b.op("addptr " + od + ", " + two, "ptr<i32>") + ", " + qr[0]);
  std::string two1 = b.op("add " + two + ", " + b.op("const[value=1]", kI), kI);
  b.stmt("store " + b.op("addptr " + od + ", " + two1, "ptr<i32>") + ", " + qr[1]);
  b.check("call: axpy twice through a function", "axpy2", Cmp::Exact, {"x", "y"});
  b.check("call: a function using the kernel's constexpr", "lanes");
  b.check("call: two results", "divmod");
  return b.finish();
}

Group program_ids(uint64_t seed) {
  Builder b("program_id and num_programs on a 3x2x2 grid", seed);
  b.g.grid[0] = 3;
  b.g.grid[1] = 2;
  b.g.grid[2] = 2;
  std::string o = b.out_buf("ids", TRI_DTYPE_I32, 12 * 6);
  std::vector<std::string> v;
  for (const char* op : {"program_id", "num_programs"})
    for (int a = 0; a < 3; ++a) v.push_back(b.op(std::string(op) + "[axis=" + std::to_string(a) + "]", kI));
  // linear = x + 3 * (y + 2 * z), from the num_programs values.
  std::string lin = b.op("add " + v[0] + ", " + b.op("mul " + v[3] + ", " +
                                                         b.op("add " + v[1] + ", " + b.op("mul " + v[4] + ", " + v[2], kI), kI),
                                                     kI),
                         kI);
  std::string base = b.op("mul " + lin + ", " + b.op("const[value=6]", kI), kI);
  for (int k = 0; k < 6; ++k) {
    std::string at = b.op("add " + base + ", " + b.op("const[value=" + std::to_string(k) + "]", kI), kI);
    b.stmt("store " + b.op("addptr " + o + ", " + at, "ptr<i32>") + ", " + v[k]);
  }
  b.check("program_id x y z, num_programs x y z per program", "ids");
  return b.finish();
}

// assert that holds on every active lane (it is false on masked-off lanes), and print.
Group assert_holds_and_print(uint64_t seed) {
  Tile tile{{64}, {100}, 2};
  Builder b("assert that holds; print", seed);
  b.g.grid[0] = tile.grid;
  std::string x = b.in_buf("x", gen_buffer(b.rng, TRI_DTYPE_I32, tile.count(), Dist::Small));
  std::string o = b.out_buf("out", TRI_DTYPE_I32, tile.count());
  TileIR t = emit_tile(b, tile);
  std::string xv = load_tile(b, t, x, TRI_DTYPE_I32, "0");
  b.stmt("assert " + t.mask + ", mask=" + t.mask);
  std::string v42 = b.op("const[value=42]", kI);
  b.stmt("print[prefix=\"conformance-print \"] " + v42);
  store_tile(b, t, o, TRI_DTYPE_I32, xv);
  b.check("store after a holding assert", "out");
  Group g = b.finish();
  g.log_contains = "conformance-print";
  return g;
}

Group assert_fails(uint64_t seed) {
  Tile tile{{64}, {100}, 2};
  Builder b("assert that fails on lane 70 (program 1)", seed);
  b.g.grid[0] = tile.grid;
  TileIR t = emit_tile(b, tile);
  std::string c70 = const_tile(b, t, TRI_DTYPE_I32, "70");
  std::string ok = b.op("cmp[pred=ne] " + t.offs + ", " + c70, blk(t.dims, "i1"));
  b.stmt("assert[msg=\"lane 70\"] " + ok + ", mask=" + t.mask);
  Group g = b.finish();
  g.expect_error = TRI_ERROR_RUNTIME;
  return g;
}

}  // namespace

void gen_control(uint64_t seed, const GroupSink& sink) {
  sink(loops(seed));
  sink(branches(seed));
  sink(calls(seed));
  sink(program_ids(seed));
  sink(assert_holds_and_print(seed));
  sink(assert_fails(seed));
}

}  // namespace conf
