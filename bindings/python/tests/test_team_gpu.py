"""GPU teams from Python (tri.Team.make_id / join / launch / launch_async / barrier): the ring of
test_team.py on 2 and 4 GPUs, one process per GPU, each rank's device buffers from PyTorch and
its symmetric buffers from the team's heap (tri.DevicePtr over team.ptr). Every rank puts its
block to its neighbour with a signal, waits for its own, and doubles what arrived; then the same
through launch_async on a torch stream, and barrier. Skips with "skipped: no CUDA device" without
PyTorch and enough GPUs, and with "skipped: no NVSHMEM" where NVSHMEM cannot be loaded.

    TRI_LIBRARY=build/src/libtri.so.0 TRI_NVSHMEM_LIB=.../libnvshmem_host.so.3 \\
        python3 -m pytest -q bindings/python/tests/test_team_gpu.py
"""

import os
import subprocess
import sys
import textwrap

import pytest

import tri
from conftest import HERE

# One rank: joins the team (rank 0 makes the id and hands it over through a file), runs the ring
# twice and prints "rank R ok" when every lane checks.
WORKER = textwrap.dedent("""
    import os, sys, time
    sys.path[:0] = [sys.argv[4], os.path.join(os.path.dirname(sys.argv[4]), "src")]  # tests/, the package
    import numpy as np
    import torch
    import tri
    from test_team import RING, BLOCK, N

    r, R, idfile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    ctx = tri.Context()
    if r == 0:
        ident = tri.Team.make_id(ctx)
        with open(idfile + ".part", "wb") as f:
            f.write(ident)
        os.rename(idfile + ".part", idfile)
    else:
        deadline = time.time() + 60
        while not os.path.exists(idfile):
            if time.time() > deadline:
                sys.exit(f"rank {r}: no team id after 60 s")
            time.sleep(0.05)
        ident = open(idfile, "rb").read()
    team = tri.Team.join(ctx, ident, r, R, r, 1 << 20)
    assert (team.rank, team.num_ranks, team.is_gpu) == (r, R, True)
    team.set_wait_timeout(20000)
    kernel = ctx.module(RING, "team.tri").compile("ring", target="cuda")
    dev = torch.device("cuda", r)
    torch.cuda.set_device(dev)
    lanes = torch.arange(BLOCK, dtype=torch.float32, device=dev)
    src = (r - 1) % R
    want = torch.where(lanes < N, 100.0 * src + lanes, torch.zeros_like(lanes))
    for round_ in ("launch", "launch_async"):
        recv_off, sig_off = team.alloc(BLOCK * 4), team.alloc(4)  # collective, zeroed
        recv = tri.DevicePtr(team.ptr(r, recv_off), BLOCK * 4, tri.DType.F32)
        sig = tri.DevicePtr(team.ptr(r, sig_off), 4, tri.DType.I32)
        x = lanes + 100.0 * r
        out = torch.full((BLOCK,), -1.0, device=dev)
        info = torch.zeros(2, dtype=torch.int32, device=dev)
        if round_ == "launch":
            team.launch(kernel, 1, [[x, recv, sig, out, info, N]])
        else:
            stream = torch.cuda.Stream(device=dev)
            with torch.cuda.stream(stream):
                team.launch_async(kernel, 1, x, recv, sig, out, info, N, stream=stream)
            team.barrier()
        got = out.cpu()
        expect = torch.where(lanes.cpu() < N, 2 * want.cpu(), torch.full((BLOCK,), -1.0))
        if not torch.equal(got, expect) or info.cpu().tolist() != [r, R]:
            sys.exit(f"rank {r} ({round_}): out {got.tolist()}, info {info.cpu().tolist()}, want {expect.tolist()}")
        team.barrier()
        team.free(sig_off)
        team.free(recv_off)
    team.close()
    print(f"rank {r} ok", flush=True)
""")


def gpus_or_skip(ranks):
    try:
        import torch
    except ImportError:
        pytest.skip("skipped: no CUDA device (PyTorch is not installed)")
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count < ranks:
        pytest.skip(f"skipped: no CUDA device ({ranks} ranks need {ranks} GPUs, this machine has {count})")
    with tri.Context() as c:
        try:
            tri.Team.make_id(c)
        except tri.TriError as e:
            pytest.skip(f"skipped: no NVSHMEM ({e.message})")


@pytest.mark.parametrize("ranks", [2, 4])
def test_ring_on_a_gpu_team(tmp_path, ranks):
    gpus_or_skip(ranks)
    script = tmp_path / "rank.py"
    script.write_text(WORKER)
    idfile = str(tmp_path / "team.id")
    procs = [subprocess.Popen([sys.executable, str(script), str(r), str(ranks), idfile, str(HERE)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(ranks)]
    outs = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("a rank did not finish in 240 s")
        outs.append((p.returncode, out))
    for r, (rc, out) in enumerate(outs):
        assert rc == 0 and f"rank {r} ok" in out, f"rank {r} (exit {rc}):\n{out[-3000:]}"
