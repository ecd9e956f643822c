// dot: every input type the verifier accepts (f16, bf16, f8e4m3, f8e5m2 and f32 accumulating in
// f32, f32 with precision=tf32, i8 accumulating in i32), 2-D and batched 3-D, with masked edges
// (other=0 pads K). The order of the K-sum is unspecified, so float results are compared within
// 2 * K * eps_f32 * sum|a*b| + eps_f32 * |acc|; i8 results are exact. The interpreter's f32 and
// i8 dots are also checked against C.
#include <cmath>

#include "harness.h"

namespace conf {

using namespace tri_tool;

namespace {

struct DotCase {
  int32_t in;
  bool tf32;  // precision=tf32 for f32 inputs, precision=fast for f8
  std::vector<int64_t> a_dims, b_dims;  // <M x K>, <K x N>, or with a batch dimension first
  std::vector<int64_t> a_ext, b_ext;
  // B stored N x K (k contiguous) and transposed in the kernel (2-D only): a K-major operand,
  // the only form f8 and tf32 wgmma read without a transposing store.
  bool b_t = false;
};

Group make_dot(uint64_t seed, const DotCase& dc) {
  const int32_t acc = dc.in == TRI_DTYPE_I8 ? TRI_DTYPE_I32 : TRI_DTYPE_F32;
  const bool batched = dc.a_dims.size() == 3;
  const int r = static_cast<int>(dc.a_dims.size());
  std::vector<int64_t> c_dims(dc.a_dims.begin(), dc.a_dims.end() - 1), c_ext(dc.a_ext.begin(), dc.a_ext.end() - 1);
  c_dims.push_back(dc.b_dims[r - 1]);
  c_ext.push_back(dc.b_ext[r - 1]);
  Tile ta{dc.a_dims, dc.a_ext, 1}, tc{c_dims, c_ext, 1};
  Tile tb = dc.b_t ? Tile{{dc.b_dims[1], dc.b_dims[0]}, {dc.b_ext[1], dc.b_ext[0]}, 1} : Tile{dc.b_dims, dc.b_ext, 1};
  const bool fast = dc.tf32 && dc.in != TRI_DTYPE_F32;
  const std::string prec = !dc.tf32 ? "" : fast ? "precision=fast" : "precision=tf32";
  std::string title = std::string("dot ") + dtype_name(dc.in) + (dc.tf32 ? " " + prec : "") + " a " +
                      ta.name() + " b " + (dc.b_t ? "transposed " : "") + tb.name();
  Builder b(title, seed);
  const bool fl = dtype_is_float(dc.in);
  Dist d = fl ? Dist::Unit : Dist::General;
  std::string pa = b.in_buf("a", gen_buffer(b.rng, dc.in, ta.count(), d));
  std::string pb = b.in_buf("b", gen_buffer(b.rng, dc.in, tb.count(), d));
  std::string pc = b.in_buf("acc", gen_buffer(b.rng, acc, tc.count(), fl ? Dist::Unit : Dist::General));
  std::string po = b.out_buf("out", acc, tc.count());
  TileIR ia = emit_tile(b, ta, "a_"), ib = emit_tile(b, tb, "b_"), ic = emit_tile(b, tc, "c_");
  std::string av = load_tile(b, ia, pa, dc.in, lit(dc.in, 0));
  std::string bv = load_tile(b, ib, pb, dc.in, lit(dc.in, 0));
  if (dc.b_t) bv = b.op("permute[order=[1, 0]] " + bv, blk(dc.b_dims, dc.in));
  std::string cv = load_tile(b, ic, pc, acc, lit(acc, 0));
  std::string dv = b.op(std::string("dot") + (dc.tf32 ? "[" + prec + "]" : "") + " " + av + ", " + bv + ", " + cv,
                        blk(c_dims, acc));
  store_tile(b, ic, po, acc, dv);

  // Host-side geometry for tolerances and the C reference.
  const HostBuffer& A = b.g.bufs[b.buf_index("a")];
  const HostBuffer& B = b.g.bufs[b.buf_index("b")];
  const HostBuffer& C = b.g.bufs[b.buf_index("acc")];
  const int64_t nb = batched ? dc.a_ext[0] : 1, M = dc.a_ext[r - 2], K = dc.a_ext[r - 1], N = dc.b_ext[r - 1];
  size_t cnt = tc.count();
  std::vector<double> tol(cnt + 8, 0.0);
  HostBuffer want = b.g.bufs[b.buf_index("out")];
  const double eps = float_epsilon(TRI_DTYPE_F32);
  auto val = [&](const HostBuffer& h, int32_t dt, size_t i) {
    return fl || dt == TRI_DTYPE_F32 ? float_bits_to_double(dt, h.get(i)) : double(bits_to_signed(dt, h.get(i)));
  };
  for (int64_t bi = 0; bi < nb; ++bi) {
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        size_t o = static_cast<size_t>((bi * M + i) * N + j);
        double s = val(C, acc, o), mag = 0;
        uint32_t si = static_cast<uint32_t>(C.get(o));
        for (int64_t k = 0; k < K; ++k) {
          size_t ai = static_cast<size_t>((bi * M + i) * K + k);
          size_t bj = static_cast<size_t>(dc.b_t ? (bi * N + j) * K + k : (bi * K + k) * N + j);
          double p = val(A, dc.in, ai) * val(B, dc.in, bj);
          s += p;
          mag += std::fabs(p);
          si += static_cast<uint32_t>(bits_to_signed(dc.in, A.get(ai)) * bits_to_signed(dc.in, B.get(bj)));
        }
        tol[o] = 2.0 * double(K + 1) * eps * mag + 2.0 * eps * std::fabs(val(C, acc, o));
        if (dc.tf32 && !fast) tol[o] += 2.0 * std::ldexp(1.0, -10) * mag;  // the reference does not round to tf32
        if (fast) tol[o] += std::ldexp(1.0, -10) * mag;  // wgmma's f8 accumulator: about 14 bits
        want.set(o, fl ? double_to_float_bits(TRI_DTYPE_F32, s) : uint64_t(si));
      }
    }
  }
  Check& c = b.check("dot", "out", fl ? Cmp::Tol : Cmp::Exact);
  if (fl) c.tol = tol;
  if ((dc.in == TRI_DTYPE_F32 && !dc.tf32) || dc.in == TRI_DTYPE_I8 || dc.in == TRI_DTYPE_F16) {
    RefCheck rc;
    rc.check = c;
    rc.check.what = "dot vs C";
    rc.expected = std::move(want);
    b.g.refs.push_back(std::move(rc));
  }
  return b.finish();
}

}  // namespace

void gen_dot(uint64_t seed, const GroupSink& sink) {
  struct In {
    int32_t dt;
    bool tf32;
  };
  const In ins[] = {{TRI_DTYPE_F16, false}, {TRI_DTYPE_BF16, false}, {TRI_DTYPE_F32, false}, {TRI_DTYPE_F32, true},
                    {TRI_DTYPE_I8, false},  {TRI_DTYPE_F8E4M3, false}, {TRI_DTYPE_F8E5M2, false}};
  for (const In& in : ins) {
    sink(make_dot(seed, {in.dt, in.tf32, {16, 16}, {16, 16}, {13, 9}, {9, 11}}));
    if (in.dt == TRI_DTYPE_F16 || in.dt == TRI_DTYPE_F32 || in.dt == TRI_DTYPE_I8) {
      sink(make_dot(seed, {in.dt, in.tf32, {32, 64}, {64, 16}, {32, 64}, {64, 16}}));
      sink(make_dot(seed, {in.dt, in.tf32, {2, 16, 16}, {2, 16, 32}, {2, 15, 16}, {2, 16, 27}}));
    }
    // Tiles with k of 32, one m16n8k32 instruction of i8 and f8 (and the tensor-core paths of the
    // other types): 2-D with masked edges, and batched.
    if (in.dt == TRI_DTYPE_I8 || in.dt == TRI_DTYPE_F8E4M3 || in.dt == TRI_DTYPE_F8E5M2 || in.tf32 ||
        in.dt == TRI_DTYPE_BF16) {
      sink(make_dot(seed, {in.dt, in.tf32, {32, 32}, {32, 16}, {29, 27}, {27, 13}}));
      sink(make_dot(seed, {in.dt, in.tf32, {2, 16, 32}, {2, 32, 16}, {2, 15, 32}, {2, 32, 13}}));
    }
    // Blocks of 64 rows, wgmma's on sm_90a, with B both ways round (f8 and tf32 wgmma read
    // K-major operands only: an N-contiguous B is stored transposed into shared memory).
    // f8 both ieee (mma.sync) and fast (wgmma).
    if (in.dt != TRI_DTYPE_I8 && (in.dt != TRI_DTYPE_F32 || in.tf32)) {
      const bool f8 = in.dt == TRI_DTYPE_F8E4M3 || in.dt == TRI_DTYPE_F8E5M2;
      for (bool t : f8 ? std::vector<bool>{false, true} : std::vector<bool>{in.tf32}) {
        sink(make_dot(seed, {in.dt, t, {64, 64}, {64, 32}, {61, 60}, {60, 27}}));
        sink(make_dot(seed, {in.dt, t, {64, 64}, {64, 32}, {64, 64}, {64, 32}, true}));
      }
    }
  }
}

}  // namespace conf
