#!/usr/bin/env python3
"""PyTorch + NCCL anchors of the distributed benchmarks (issue 14), one process per GPU.

AllGather+GEMM: every rank holds M/W rows of A (M x K) and its own column block of B (K x N/W);
it all-gathers A (all_gather_into_tensor) and multiplies: C_local = A @ B_local (M x N/W).
GEMM+ReduceScatter: every rank holds A_local (M x K/W) and B_local (K/W x N); it multiplies and
reduce-scatters the M x N partial products (reduce_scatter_tensor): each rank gets M/W rows.

Prints one line per row: "<name> <ms> (comm alone <ms>, gemm alone <ms>)" and, with --json,
writes {name: {"ms": ..., "comm_ms": ..., "gemm_ms": ...}} from rank 0. Times are medians over
--iters launches (CUDA events), after --warmup, each iteration starting from a barrier.
NVLink multicast stays off (NCCL_NVLS_ENABLE=0), as the GPU machine requires.
"""
import argparse
import json
import os
import statistics
import tempfile

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SHAPES = [
    # (M, N, K): AG+GEMM multiplies the gathered M x K by K x N/W; GEMM+RS multiplies M x K/W by K/W x N.
    (8192, 8192, 8192),
    (8192, 49152, 12288),  # GPT-3 175B's MLP up-projection (hidden 12288)
    (8192, 12288, 49152),  # its down-projection
]


def median_ms(fn, iters, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        dist.barrier()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    t = torch.tensor([statistics.median(times)], device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slowest rank's median
    return t.item()


def worker(rank, world, store, args, out):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="file://" + store, rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank))
    dt = getattr(torch, args.dtype)
    rows = {}
    torch.manual_seed(rank)
    for M, N, K in SHAPES:
        # AllGather + GEMM
        a_shard = torch.randn(M // world, K, device="cuda", dtype=dt)
        b = torch.randn(K, N // world, device="cuda", dtype=dt)
        a_full = torch.empty(M, K, device="cuda", dtype=dt)

        def ag():
            dist.all_gather_into_tensor(a_full, a_shard)

        def ag_gemm():
            ag()
            return a_full @ b

        name = f"ag+gemm {args.dtype_short} {M}x{N}x{K} w{world}"
        rows[name] = {"ms": median_ms(ag_gemm, args.iters, args.warmup),
                      "comm_ms": median_ms(ag, args.iters, args.warmup),
                      "gemm_ms": median_ms(lambda: a_full @ b, args.iters, args.warmup)}
        del a_shard, b, a_full
        # GEMM + ReduceScatter
        a = torch.randn(M, K // world, device="cuda", dtype=dt)
        b = torch.randn(K // world, N, device="cuda", dtype=dt)
        part = torch.empty(M, N, device="cuda", dtype=dt)
        out_rows = torch.empty(M // world, N, device="cuda", dtype=dt)

        def rs():
            dist.reduce_scatter_tensor(out_rows, part)

        def gemm_rs():
            torch.matmul(a, b, out=part)
            rs()

        name = f"gemm+rs {args.dtype_short} {M}x{N}x{K} w{world}"
        rows[name] = {"ms": median_ms(gemm_rs, args.iters, args.warmup),
                      "comm_ms": median_ms(rs, args.iters, args.warmup),
                      "gemm_ms": median_ms(lambda: torch.matmul(a, b, out=part), args.iters, args.warmup)}
        del a, b, part, out_rows
        torch.cuda.empty_cache()
    if rank == 0:
        for k, v in rows.items():
            print(f"{k}: {v['ms']:.3f} ms (comm alone {v['comm_ms']:.3f}, gemm alone {v['gemm_ms']:.3f})", flush=True)
        if out:
            with open(out, "w") as f:
                json.dump(rows, f, indent=1)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--world", type=int, default=torch.cuda.device_count())
    p.add_argument("--dtype", default="float16")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--json", default="")
    args = p.parse_args()
    args.dtype_short = {"float16": "f16", "bfloat16": "bf16"}[args.dtype]
    store = tempfile.mktemp(prefix="tri_dist_store_")
    mp.spawn(worker, args=(args.world, store, args, args.json), nprocs=args.world, join=True)


if __name__ == "__main__":
    main()
