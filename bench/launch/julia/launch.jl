# Host cost of one launch from Julia (bench/launch/run.py runs it next to the other languages,
# where `julia` is on PATH): a 4-argument vector add of 1024 elements on one program
# (examples/vector_add.tri), in batches of --batch launches, the methods taking turns for --rounds
# rounds, each reporting its median round per launch. On "cuda" the GPU drains between batches,
# untimed. NOT EXECUTED YET: no Julia toolchain where it was written.
#
# Methods: launch(k, 1, x, y, out, Int32(n)) (DevicePtrs on "cuda", Arrays on "cpu"), launch(plan),
# tri_launch by ccall with its arguments built once (the floor under the module), an empty ccall
# (tri_version), and on "cuda" a raw cuLaunchKernel of the kernel's own PTX by ccall (the driver
# opened with Libdl: TRI_LIBCUDA, as libtri finds it, else libcuda.so.1).
#
#   TRI_LIBRARY=build/src/libtri.so julia --project=bindings/julia bench/launch/julia/launch.jl [--target cuda|cpu]
# Prints one JSON object {"language": "julia", "target": ..., "rows": [...]}.

using Libdl
using Printf
using Tri

const N = 1024

function option(name, default)
    i = findfirst(==(name), ARGS)
    return i === nothing || i == length(ARGS) ? default : ARGS[i + 1]
end

# One batch, timed; a function barrier, so the loop is compiled for `f` itself.
function timed(f::F, batch) where {F}
    t0 = time_ns()
    for _ in 1:batch
        f()
    end
    return (time_ns() - t0) / 1e3 / batch
end

function measure(methods, batch, rounds, sync)
    for (_, f) in methods
        timed(f, batch)
    end
    sync()
    t = [Float64[] for _ in methods]
    for _ in 1:rounds
        for (i, (_, f)) in enumerate(methods)
            push!(t[i], timed(f, batch))
            sync()
        end
    end
    return Dict(name => sort(t[i])[div(rounds, 2) + 1] for (i, (name, _)) in enumerate(methods))
end

function main()
    target = option("--target", "cuda")
    kernel_path = option("--kernel", "examples/vector_add.tri")
    batch = parse(Int, option("--batch", "1000"))
    rounds = parse(Int, option("--rounds", "31"))
    cuda = target == "cuda"
    cu = nothing
    if cuda
        cu = Libdl.dlopen(get(ENV, "TRI_LIBCUDA", "libcuda.so.1"); throw_error = false)
        if cu === nothing
            println("skipped: no CUDA device")
            return
        end
        dev, ctx = Ref{Cint}(0), Ref{Ptr{Cvoid}}(C_NULL)
        ok = ccall(Libdl.dlsym(cu, :cuInit), Cint, (Cuint,), 0) == 0 &&
             ccall(Libdl.dlsym(cu, :cuDeviceGet), Cint, (Ref{Cint}, Cint), dev, 0) == 0 &&
             ccall(Libdl.dlsym(cu, :cuDevicePrimaryCtxRetain), Cint, (Ref{Ptr{Cvoid}}, Cint), ctx, dev[]) == 0 &&
             ccall(Libdl.dlsym(cu, :cuCtxSetCurrent), Cint, (Ptr{Cvoid},), ctx[]) == 0
        if !ok
            println("skipped: no CUDA device")
            return
        end
    end
    tctx = Context(cache_dir = "")
    k = compile(load_module(tctx, kernel_path), "vector_add"; target = target, constexprs = Dict{String,Any}("BLOCK" => N))
    sync = cuda ? (() -> ccall(Libdl.dlsym(cu, :cuCtxSynchronize), Cint, ())) : (() -> nothing)
    methods = Pair{String,Function}[]
    if cuda
        base = Ref{UInt64}(0)
        ccall(Libdl.dlsym(cu, :cuMemAlloc_v2), Cint, (Ref{UInt64}, Csize_t), base, 3 * 4 * N) == 0 || error("cuMemAlloc")
        ptrs = [base[] + UInt64(4 * N * i) for i in 0:2]
        x, y, out = (DevicePtr(p, UInt64(4 * N), Tri.F32) for p in ptrs)
        ptx = kernel_code(k, "ptx")
        meta = kernel_code(k, "metadata")
        block = parse(Cuint, match(r"\"block\": \[(\d+)", meta).captures[1])
        mod, fn = Ref{Ptr{Cvoid}}(C_NULL), Ref{Ptr{Cvoid}}(C_NULL)
        ccall(Libdl.dlsym(cu, :cuModuleLoadDataEx), Cint, (Ref{Ptr{Cvoid}}, Cstring, Cuint, Ptr{Cvoid}, Ptr{Cvoid}),
              mod, ptx, 0, C_NULL, C_NULL) == 0 || error("cuModuleLoadDataEx")
        ccall(Libdl.dlsym(cu, :cuModuleGetFunction), Cint, (Ref{Ptr{Cvoid}}, Ptr{Cvoid}, Cstring), fn, mod[],
              "vector_add") == 0 || error("cuModuleGetFunction")
        bits = UInt64[ptrs[1], ptrs[2], ptrs[3], N]
        params = Ptr{Cvoid}[pointer(bits, i) for i in 1:4]
        launch_kernel = Libdl.dlsym(cu, :cuLaunchKernel)
        f = fn[]
        push!(methods, "raw" => () -> ccall(launch_kernel, Cint,
                                            (Ptr{Cvoid}, Cuint, Cuint, Cuint, Cuint, Cuint, Cuint, Cuint, Ptr{Cvoid},
                                             Ptr{Ptr{Cvoid}}, Ptr{Ptr{Cvoid}}),
                                            f, 1, 1, 1, block, 1, 1, 0, C_NULL, params, C_NULL))
        keep = (bits, params)
    else
        x = ones(Float32, N)
        y = ones(Float32, N)
        out = zeros(Float32, N)
        keep = nothing
    end
    launch(k, 1, x, y, out, Int32(N))
    cuda || out == 2 .* x || error("vector_add gave a wrong result")
    p = plan(k, 1, x, y, out, Int32(N))
    raw_args = Tri.encode_all(k, (x, y, out, Int32(N)))
    push!(methods, "floor" => () -> ccall((:tri_launch, Tri.libtri), Int32,
                                          (Ptr{Cvoid}, UInt32, UInt32, UInt32, Ptr{Cvoid}, Ptr{Tri.TriArg}, UInt32),
                                          k.ptr, 1, 1, 1, C_NULL, raw_args, 4))
    push!(methods, "call" => () -> launch(k, 1, x, y, out, Int32(N)))
    push!(methods, "plan" => () -> launch(p))
    push!(methods, "ffi" => () -> ccall((:tri_version, Tri.libtri), UInt32, ()))
    t = GC.@preserve keep x y out raw_args measure(methods, batch, rounds, sync)
    raw = cuda ? t["raw"] : t["floor"]
    row(what, us) = @sprintf("{\"workload\": \"launch julia %s\", \"unit\": \"us\", \"higher_is_better\": false, \"tri\": %.3f, \"raw\": %.3f, \"floor\": %.3f, \"ffi_call\": %.3f}",
                             what, us, raw, t["floor"], t["ffi"])
    println("{\"language\": \"julia\", \"target\": \"$target\", \"rows\": [\n ", row("call", t["call"]), ",\n ",
            row("plan", t["plan"]), "\n]}")
end

main()
