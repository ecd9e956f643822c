#!/usr/bin/env python3
"""Checks the Julia module's exports without a Julia toolchain (issue 30: after `using Tri, CUDA`
the README's `devices(ctx)` was ambiguous, both packages exporting it):

- no name Tri exports is one CUDA.jl exports (CUDA_EXPORTS below: every `export` of CUDA.jl's
  CUDACore and CUDATools, which `using CUDA` re-exports, at JuliaGPU/CUDA.jl fd1008d, August 2026);
- the README's and the example's Julia code calls a function of Tri that is not exported only as
  `Tri.name` (or after naming it in `using Tri: name`), so what the pages show works after
  `using Tri, CUDA`.

Run by CTest as bindings/julia, with check_ccalls.py.

    python3 bindings/julia/check_exports.py
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CUDA_EXPORTS = frozenset((
    '@captured', '@cuDynamicSharedMem', '@cuStaticSharedMem', '@cuassert', '@cuda', '@cuprint', '@cuprintf',
    '@cuprintln', '@cushow', '@device_code', '@device_code_llvm', '@device_code_lowered', '@device_code_ptx',
    '@device_code_sass', '@device_code_typed', '@device_code_warntype', '@public', '@sm_str', 'AS',
    'Accumulator', 'AnyCuArray', 'AnyCuMatrix', 'AnyCuVecOrMat', 'AnyCuVector', 'CG', 'CUDABackend', 'CUPTI',
    'CU_NULL', 'ColMajor', 'Config', 'CuArray', 'CuArrayPtr', 'CuContext', 'CuDevice', 'CuDeviceArray',
    'CuDeviceMatrix', 'CuDeviceStream', 'CuDeviceTexture', 'CuDeviceVector', 'CuDim', 'CuDim3',
    'CuDistributedSharedArray', 'CuDynamicSharedArray', 'CuError', 'CuEvent', 'CuFunction', 'CuGlobal',
    'CuGraph', 'CuGraphExec', 'CuIterator', 'CuLink', 'CuLinkImage', 'CuMatrix', 'CuMemoryPool', 'CuModule',
    'CuModuleFile', 'CuPrimaryContext', 'CuPtr', 'CuRef', 'CuStaticSharedArray', 'CuStream', 'CuTexture',
    'CuTextureArray', 'CuVecOrMat', 'CuVector', 'DEVICE_CPU', 'DEVICE_INVALID', 'DenseCuArray',
    'DenseCuMatrix', 'DenseCuVecOrMat', 'DenseCuVector', 'Fragment', 'FragmentLayout', 'HandleCache',
    'MatrixA', 'MatrixB', 'NVML', 'OutOfGPUMemoryError', 'PtrOrCuPtr', 'RowMajor', 'SMVersion',
    'StridedCuArray', 'StridedCuMatrix', 'StridedCuVecOrMat', 'StridedCuVector', 'Unspecified', 'WMMA',
    'access!', 'activate', 'active_blocks', 'add_data!', 'add_file!', 'api_version', 'attribute',
    'attribute!', 'attributes', 'barrier_arrive', 'barrier_sync', 'barrier_wait', 'bitonic_sort!',
    'block_index', 'block_rank', 'cache_config', 'cache_config!', 'can_access_peer', 'capability', 'capture',
    'capture_status', 'clock', 'cluster_arrive', 'cluster_arrive_relaxed', 'cluster_wait', 'coalesced_group',
    'coalesced_threads', 'complete', 'compute_capability', 'context', 'context!', 'cu', 'cuBLAS', 'cuFFT',
    'cuRAND', 'cuSOLVER', 'cuSPARSE', 'cudacall', 'cudaconvert', 'cufunction', 'current_context',
    'current_device', 'default_memory_pool', 'default_stream', 'device', 'device!', 'device_reset!',
    'device_synchronize', 'deviceid', 'devices', 'dim_blocks', 'dim_threads', 'disable_peer_access',
    'dynamic_cufunction', 'elapsed', 'enable_peer_access', 'fill_c', 'flags', 'grid_dependency_synchronize',
    'grid_group', 'group_index', 'has_context', 'has_cuda', 'has_cuda_gpu', 'has_device', 'has_nvml',
    'instantiate', 'is_capturing', 'is_device', 'is_host', 'is_managed', 'is_unified', 'is_valid',
    'isactive', 'launch', 'launch_configuration', 'ldg', 'legacy_stream', 'limit', 'limit!',
    'llvm_wmma_load', 'llvm_wmma_mma', 'llvm_wmma_store', 'load_a', 'load_b', 'load_c', 'malloc',
    'memcpy_async', 'memory_pool', 'memory_pool!', 'memory_pools_supported', 'memory_type',
    'meta_group_rank', 'meta_group_size', 'mma', 'name', 'nanosleep', 'ndevices', 'nextwarp', 'num_blocks',
    'num_threads', 'occupancy', 'p2p_attribute', 'parent_uuid', 'per_thread_stream', 'prevwarp', 'priority',
    'priority_range', 'ptx_isa_version', 'quicksort!', 'record', 'setflags!', 'shmem_config',
    'shmem_config!', 'store_d', 'stream', 'stream!', 'struct_size', 'sync', 'sync_grid', 'sync_threads',
    'sync_threads_and', 'sync_threads_count', 'sync_threads_or', 'sync_warp', 'synchronize',
    'target_feature_set', 'this_grid', 'this_thread_block', 'thread_block', 'thread_index', 'thread_rank',
    'threadfence', 'threadfence_block', 'threadfence_system', 'totalmem',
    'trigger_programmatic_launch_completion', 'trim', 'unified_addressing', 'unique_id',
    'unsafe_cached_load', 'unsafe_reset!', 'update', 'uuid', 'wait', 'wait_prior', 'warpsize',
    'with_workspace', 'with_workspaces',
))


def tri_exports(source):
    m = re.search(r"^export\s+((?:[^\n]*,\s*\n)*[^\n]*)", source, re.M)
    return {n for n in re.split(r"[,\s]+", m.group(1)) if n} if m else set()


def tri_functions(source):
    """Names Tri defines as functions (`function f(`, `f(...) =`) or types (`struct T`)."""
    names = set(re.findall(r"^function\s+([A-Za-z_][A-Za-z0-9_!]*)\s*\(", source, re.M))
    names |= set(re.findall(r"^([A-Za-z_][A-Za-z0-9_!]*)\(.*?\)\s*=", source, re.M))
    names |= set(re.findall(r"^(?:(?:Base\.)?@kwdef\s+)?(?:mutable\s+)?struct\s+([A-Za-z_][A-Za-z0-9_]*)", source, re.M))
    return names - {"Base"}


def julia_code(path):
    text = open(path, encoding="utf-8").read()
    if path.endswith(".md"):
        return "\n".join(re.findall(r"```julia\n(.*?)```", text, re.S))
    return text


def unqualified_uses(code, names, exported):
    """Calls of `names` not written `Tri.name`, not exported, not imported by `using Tri: ...`."""
    imported = set()
    for m in re.finditer(r"using\s+Tri\s*:\s*((?:[^\n]*,[ \t]*\n)*[^\n]+)", code):
        imported |= {n for n in re.split(r"[,\s]+", m.group(1)) if n}
    code = re.sub(r"#[^\n]*", "", code)
    code = re.sub(r'"(?:\\.|[^"\\])*"', '""', code)
    bad = set()
    for m in re.finditer(r"(?<![.\w!])([A-Za-z_][A-Za-z0-9_!]*)\(", code):
        n = m.group(1)
        if n in names and n not in exported and n not in imported:
            bad.add(n)
    return bad


def main():
    source = open(os.path.join(HERE, "src", "Tri.jl"), encoding="utf-8").read()
    exported = tri_exports(source)
    problems = []
    if not exported:
        problems.append("src/Tri.jl has no export list")
    for n in sorted(exported & CUDA_EXPORTS):
        problems.append(f"src/Tri.jl exports {n}, which CUDA.jl exports too: after `using Tri, CUDA` it is "
                        f"ambiguous; leave it unexported (callers write Tri.{n})")
    names = tri_functions(source)
    for n in sorted(exported - names):
        problems.append(f"src/Tri.jl exports {n}, which it does not define")
    for rel in ("README.md", os.path.join("examples", "vector_add_softmax.jl"), os.path.join("test", "runtests.jl")):
        for n in sorted(unqualified_uses(julia_code(os.path.join(HERE, rel)), names, exported)):
            problems.append(f"bindings/julia/{rel} calls {n}(...), which Tri does not export: write Tri.{n}")
    for p in problems:
        print("julia exports:", p, file=sys.stderr)
    if problems:
        return 1
    print(f"julia exports: {len(exported)} names, none of CUDA.jl's {len(CUDA_EXPORTS)}; the README, the example "
          "and the tests qualify the rest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
