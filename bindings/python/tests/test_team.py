"""Teams (tri.Team, docs/distributed.md): host teams of 2 and 4 ranks on "cpu" and "interp" run a
kernel in which every rank puts its block to its neighbour with a signal and waits for its own;
each rank's result is read back through the symmetric heap. Then the errors (the library's, with
its message, and the package's own), wait timeouts, and the GPU-team functions, which need
NVSHMEM and GPUs: here they must fail with a TriError, not crash."""

import ctypes
import gc
import re

import numpy as np
import pytest

import tri

# Rank r sends x[0:n] to rank (r+1) % R's %recv with a signal, waits for its own signal (sent by
# rank r-1), then reads what arrived and stores twice it into %out; %info gets rank, num_ranks.
RING = """
kernel @ring(%x: ptr<f32>, %recv: ptr<f32>, %sig: ptr<i32>, %out: ptr<f32>, %info: ptr<i32>, %n: i32)
    constexpr(BLOCK: i32 = 16) {
  %me = rank : i32
  %nr = num_ranks : i32
  %c1 = const[value=1] : i32
  %ip1 = addptr %info, %c1 : ptr<i32>
  store %info, %me
  store %ip1, %nr
  %mp1 = add %me, %c1 : i32
  %next = srem %mp1, %nr : i32
  %r = arange[start=0, end=BLOCK] : <BLOCK x i32>
  %nv = splat %n : <BLOCK x i32>
  %m = cmp[pred=slt] %r, %nv : <BLOCK x i1>
  %xb = splat %x : <BLOCK x ptr<f32>>
  %xp = addptr %xb, %r : <BLOCK x ptr<f32>>
  %v = load %xp, mask=%m : <BLOCK x f32>
  %rb = splat %recv : <BLOCK x ptr<f32>>
  %rp = addptr %rb, %r : <BLOCK x ptr<f32>>
  put %rp, %v, %next, mask=%m, signal=%sig, signal_value=%c1
  %tok = wait %sig, %c1 : i32
  %ready = consume_token %rp, %tok : <BLOCK x ptr<f32>>
  %zero = const[value=0.0] : <BLOCK x f32>
  %got = load %ready, mask=%m, other=%zero : <BLOCK x f32>
  %twice = add %got, %got : <BLOCK x f32>
  %ob = splat %out : <BLOCK x ptr<f32>>
  %op = addptr %ob, %r : <BLOCK x ptr<f32>>
  store %op, %twice, mask=%m
  return
}

kernel @stuck(%sig: ptr<i32>) {
  %c1 = const[value=1] : i32
  %t = wait %sig, %c1 : i32
  return
}

kernel @symm(%p: ptr<f32>, %to: i32) {
  %q = symm_at %p, %to : ptr<f32>
  %x = const[value=1.0] : f32
  store %q, %x
  return
}
"""

BLOCK, N = 16, 13  # 13 of 16 lanes: the masked-off ones must stay untouched


def raises(call, code, fragment=""):
    with pytest.raises(tri.TriError) as e:
        call()
    assert e.value.code == code, e.value
    assert fragment in e.value.message, e.value
    return e.value


@pytest.fixture
def module(ctx):
    return ctx.module(RING, "team.tri")


@pytest.mark.parametrize("target", ["cpu", "interp"])
@pytest.mark.parametrize("ranks", [2, 4])
def test_each_rank_receives_its_neighbours_block(module, ctx, target, ranks):
    kernel = module.compile("ring", target=target)
    with tri.Team(ctx, ranks, 4000) as team:
        assert (team.num_ranks, team.rank, team.is_gpu, team.heap_bytes) == (ranks, 0, False, 4032)
        offs = {name: team.alloc(nbytes) for name, nbytes in
                (("x", BLOCK * 4), ("recv", BLOCK * 4), ("sig", 4), ("out", BLOCK * 4), ("info", 8))}
        assert len(set(offs.values())) == 5 and all(o % 64 == 0 for o in offs.values())
        args, outs, recvs, sigs, infos = [], [], [], [], []
        for r in range(ranks):
            # Each rank's input written through the pointer tri_team_ptr gives (raw ctypes),
            # the rest through NumPy views of the same heap.
            x = (ctypes.c_float * BLOCK).from_address(team.ptr(r, offs["x"]))
            assert list(x) == [0.0] * BLOCK  # alloc zero-fills every rank's copy
            for i in range(BLOCK):
                x[i] = 100.0 * r + i
            xv = team.view(r, offs["x"], np.float32, BLOCK)
            assert xv.ctypes.data == team.ptr(r, offs["x"]) and xv[5] == 100.0 * r + 5
            out = team.view(r, offs["out"], np.float32, BLOCK)
            out[:] = -1.0
            recvs.append(team.view(r, offs["recv"], np.float32, BLOCK))
            sigs.append(team.view(r, offs["sig"], np.int32, 1))
            infos.append(team.view(r, offs["info"], np.int32, 2))
            outs.append(out)
            args.append([xv, recvs[r], sigs[r], out, infos[r], N])
        team.set_wait_timeout(20000)
        team.launch(kernel, 1, args)
        lanes = np.arange(BLOCK, dtype=np.float32)
        for r in range(ranks):
            src = (r - 1) % ranks
            want_recv = np.where(lanes < N, 100.0 * src + lanes, 0.0)
            np.testing.assert_array_equal(recvs[r], want_recv, err_msg=f"rank {r} recv")
            np.testing.assert_array_equal(outs[r], np.where(lanes < N, 2 * want_recv, -1.0), err_msg=f"rank {r} out")
            assert sigs[r][0] == 1 and list(infos[r]) == [r, ranks]
        # Freed ranges are found again (first fit), zeroed on every rank.
        for name in ("recv", "out"):
            team.free(offs[name])
        assert team.alloc(BLOCK * 4) == offs["recv"]
        assert not team.view(ranks - 1, offs["recv"], np.float32, BLOCK).any()
        team.barrier()  # a host team's barrier returns at once
    assert team.closed
    raises(lambda: team.alloc(64), tri.ErrorCode.INVALID_ARGUMENT, "team is closed")
    raises(lambda: team.launch(kernel, 1, args), tri.ErrorCode.INVALID_ARGUMENT, "team is closed")


def test_heap_and_ptr_errors_carry_the_librarys_message(ctx):
    with tri.Team(ctx, 2, 256) as team:
        off = team.alloc(64)
        raises(lambda: team.ptr(2, off), tri.ErrorCode.INVALID_ARGUMENT, "rank 2, but the team has 2 ranks")
        raises(lambda: team.ptr(0, 256), tri.ErrorCode.INVALID_ARGUMENT, "offset 256 is past the heap of 256 bytes")
        raises(lambda: team.view(0, 200, np.float32, 16), tri.ErrorCode.INVALID_ARGUMENT, "run past the heap")
        raises(lambda: team.alloc(0), tri.ErrorCode.INVALID_ARGUMENT)
        raises(lambda: team.alloc(1024), tri.ErrorCode.OUT_OF_MEMORY, "bytes free")
        team.free(off)
        raises(lambda: team.free(off), tri.ErrorCode.INVALID_ARGUMENT, "is not the start of an allocation")
        raises(lambda: team.ptr(-1, 0), tri.ErrorCode.INVALID_ARGUMENT, "rank must be an int")
        raises(lambda: team.set_wait_timeout(-5), tri.ErrorCode.INVALID_ARGUMENT, "timeout_ms")
    raises(lambda: tri.Team(ctx, 0, 256), tri.ErrorCode.INVALID_ARGUMENT)
    raises(lambda: tri.Team(ctx, 2, 0), tri.ErrorCode.INVALID_ARGUMENT)
    raises(lambda: tri.Team(ctx, 1025, 256), tri.ErrorCode.LIMIT_EXCEEDED)


def test_launch_argument_errors(module, ctx):
    kernel = module.compile("ring")
    with tri.Team(ctx, 2, 1024) as team:
        off = team.alloc(BLOCK * 4)
        sig = team.alloc(4)
        info = team.alloc(8)

        def rank_args(r):
            buf = team.view(r, off, np.float32, BLOCK)
            return [buf, buf, team.view(r, sig, np.int32, 1), buf, team.view(r, info, np.int32, 2), N]
        good = [rank_args(0), rank_args(1)]
        # One rank's argument count is wrong: refused, naming the rank.
        raises(lambda: team.launch(kernel, 1, [good[0], good[1][:5]]), tri.ErrorCode.LAUNCH_ARGS,
               "rank 1: kernel @ring takes 6 arguments")
        # Not one argument list per rank.
        raises(lambda: team.launch(kernel, 1, [good[0]]), tri.ErrorCode.LAUNCH_ARGS,
               "takes 2 argument lists (one per rank), but 1 were given")
        raises(lambda: team.launch(kernel, 1, good[0]), tri.ErrorCode.LAUNCH_ARGS, "but 6 were given")
        # A wrong pointee type names the rank and the argument.
        bad = list(good[1])
        bad[4] = team.view(1, info, np.float32, 2)
        raises(lambda: team.launch(kernel, 1, [good[0], bad]), tri.ErrorCode.LAUNCH_ARGS,
               "rank 1: argument 4 (%info) of kernel @ring is ptr<i32>")
        # launch_async is for GPU teams: the library refuses it on a host team.
        raises(lambda: team.launch_async(kernel, 1, *good[0]), tri.ErrorCode.INVALID_ARGUMENT,
               "this team runs on the host")
        # Nothing ran: the signals are still 0.
        assert team.view(0, sig, np.int32, 1)[0] == 0 and team.view(1, sig, np.int32, 1)[0] == 0
        team.launch(kernel, 1, good)  # and the good arguments run
        assert list(team.view(1, info, np.int32, 2)) == [1, 2]


def test_a_wait_that_times_out_and_a_bad_rank_fail_the_launch(module, ctx):
    stuck = module.compile("stuck", target="cpu")
    symm = module.compile("symm", target="interp")
    with tri.Team(ctx, 2, 256) as team:
        sig = team.alloc(4)
        team.set_wait_timeout(100)
        e = raises(lambda: team.launch(stuck, 1, [[team.view(r, sig, np.int32, 1)] for r in range(2)]),
                   tri.ErrorCode.RUNTIME, "'wait' timed out after 100 ms")
        assert re.match(r"rank [01]: team\.tri:\d+:\d+: error: ", e.message), e.message  # both ranks wait
        # Each rank writes its peer's copy through symm_at; then a rank past the team.
        p = team.alloc(16)
        views = [team.view(r, p, np.float32, 4) for r in range(2)]
        team.launch(symm, 1, [[views[0], 1], [views[1], 0]])
        assert views[0][0] == 1.0 and views[1][0] == 1.0
        raises(lambda: team.launch(symm, 1, [[views[0], 1], [views[1], 2]]), tri.ErrorCode.RUNTIME,
               "names rank 2, but the team has 2 ranks")


def test_views_keep_the_team_object_alive(ctx):
    team = tri.Team(ctx, 3, 128)
    off = team.alloc(16)
    view = team.view(2, off, np.int32, (2, 2))
    view[:] = [[1, 2], [3, 4]]
    del team
    gc.collect()  # the view's base holds the team: its heaps are still there
    np.ones(1 << 16, np.float32)
    assert view.tolist() == [[1, 2], [3, 4]]


def test_a_cuda_kernel_is_refused_by_a_host_team(module, ctx):
    kernel = module.compile("symm", target="cuda", arch="sm_90")
    with tri.Team(ctx, 2, 256) as team:
        p = team.ptr(0, team.alloc(16))
        raises(lambda: team.launch(kernel, 1, [[tri.DevicePtr(p, 16, tri.DType.F32), 0]] * 2),
               tri.ErrorCode.INVALID_ARGUMENT, "GPU kernels run in GPU teams")


def test_gpu_team_functions_fail_with_a_tri_error_here(ctx):
    # No NVSHMEM (and no GPU) on the machines that run this: make_id says so with UNSUPPORTED.
    try:
        team_id = tri.Team.make_id(ctx)
    except tri.TriError as e:
        assert e.code == tri.ErrorCode.UNSUPPORTED and e.message, e
        team_id = None
    else:
        assert isinstance(team_id, bytes) and len(team_id) == tri.TEAM_ID_BYTES
    # An id of another size is refused before anything is loaded.
    raises(lambda: tri.Team.join(ctx, b"\0" * 16, 0, 1, 0, 1 << 20), tri.ErrorCode.INVALID_ARGUMENT)
    raises(lambda: tri.Team.join(ctx, b"\0" * tri.TEAM_ID_BYTES, 1, 1, 0, 1 << 20), tri.ErrorCode.INVALID_ARGUMENT)
    if team_id is None:
        # A well-formed join without NVSHMEM (or a driver): a TriError, not a crash.
        with pytest.raises(tri.TriError) as e:
            tri.Team.join(ctx, b"\0" * tri.TEAM_ID_BYTES, 0, 1, 0, 1 << 20)
        assert e.value.code in (tri.ErrorCode.UNSUPPORTED, tri.ErrorCode.INVALID_ARGUMENT, tri.ErrorCode.RUNTIME)
        assert e.value.message
