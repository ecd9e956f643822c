// Distributed ops outside a team (docs/distributed.md): a launch is rank 0 of 1, so put, get and
// symm_at address this rank's own memory, and notify/wait signal between the programs of one
// launch (which the host targets run all at once). Every lane's result is deterministic: each
// program writes its own tile and its own signal. On every target, "cuda" included.
#include "harness.h"

namespace conf {

using namespace tri_tool;

namespace {

std::string ptr_t(int32_t dt) { return std::string("ptr<") + dtype_name(dt) + ">"; }

// Each program puts its tile of `x` into `buf` (masked) with a counting signal on its own slot,
// waits for the signal, reads the tile back through the token with get (masked, `other` 0), and
// stores it to `out`; it also stores rank and num_ranks.
Group put_wait_get(uint64_t seed, int32_t dt, const Tile& tile, const char* signal_kind) {
  Builder b(std::string("put/wait/get ") + dtype_name(dt) + " " + tile.name() + " signal_kind=" + signal_kind, seed);
  const size_t n = tile.count();
  std::string x = b.in_buf("x", gen_buffer(b.rng, dt, n, Dist::General));
  std::string buf = b.out_buf("buf", dt, n);
  std::string sig = b.in_buf("sig", HostBuffer(TRI_DTYPE_I32, {static_cast<int64_t>(tile.grid)}));
  std::string out = b.out_buf("out", dt, n);
  std::string ranks = b.out_buf("ranks", TRI_DTYPE_I32, 2 * tile.grid);
  TileIR t = emit_tile(b, tile);
  const std::string pt = blk(t.dims, ptr_t(dt)), vt = blk(t.dims, dt);
  std::string xv = load_tile(b, t, x, dt, lit(dt, 0));
  std::string pid = b.op("program_id[axis=0]", "i32");
  std::string me = b.op("rank", "i32");
  std::string nr = b.op("num_ranks", "i32");
  std::string one = b.op("const[value=1]", "i32");
  std::string two = b.op("const[value=2]", "i32");
  std::string sigp = b.op("addptr " + sig + ", " + pid, "ptr<i32>");
  std::string dst = b.op("addptr " + b.op("splat " + buf, pt) + ", " + t.offs, pt);
  b.stmt(std::string("put[signal_kind=") + signal_kind + "] " + dst + ", " + xv + ", " + me + ", mask=" + t.mask +
         ", signal=" + sigp + ", signal_value=" + one);
  std::string tok = b.op("wait[cmp=ge] " + sigp + ", " + one, "i32");
  std::string ready = b.op("consume_token " + dst + ", " + tok, pt);
  std::string peer = b.op("symm_at " + ready + ", " + me, pt);
  std::string zero = b.op("const[value=" + lit(dt, 0) + "]", vt);
  std::string y = b.op("get " + peer + ", " + me + ", mask=" + t.mask + ", other=" + zero, vt);
  store_tile(b, t, out, dt, y);
  std::string slot = b.op("mul " + pid + ", " + two, "i32");
  std::string rp = b.op("addptr " + ranks + ", " + slot, "ptr<i32>");
  b.stmt("store " + rp + ", " + me);
  b.stmt("store " + b.op("addptr " + rp + ", " + one, "ptr<i32>") + ", " + nr);
  b.check("put", "buf", Cmp::Exact, {"x"});
  b.check("get after wait", "out", Cmp::Exact, {"x"});
  b.check("rank, num_ranks", "ranks");
  b.check("signals", "sig");
  return b.finish();
}

}  // namespace

void gen_distributed(uint64_t seed, const GroupSink& sink) {
  for (int32_t dt : {TRI_DTYPE_F32, TRI_DTYPE_I8, TRI_DTYPE_F16, TRI_DTYPE_I64}) {
    sink(put_wait_get(seed, dt, Tile{{64}, {200}, 4}, "add"));
    sink(put_wait_get(seed, dt, Tile{{8, 16}, {5, 11}, 1}, "set"));
  }
}

}  // namespace conf
