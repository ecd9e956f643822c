# Tri from Julia: ccall wrappers over the C API (include/tri/tri.h) with Julia types, finalizers
# and exceptions. Arrays are host buffers; "cuda" kernels take device memory (DevicePtr, or an
# array whose `pointer` is a device pointer, such as CUDA.jl's CuArray) on a stream; launch
# arguments are checked against the kernel's reflected signature before the call. NOT EXECUTED
# YET: no Julia toolchain was available where this was written; bindings/julia/check_ccalls.py
# checks every ccall here (symbol, argument count, C types) and the constants and tri_arg's
# layout against tri.h.
module Tri

# Exported: only names no other GPU package uses, so `using Tri, CUDA` leaves nothing ambiguous
# (CUDA.jl exports launch, device, devices, context, synchronize, ...; check_exports.py holds its
# list). The verbs are called qualified: Tri.Context(), Tri.compile, Tri.launch, Tri.devices.
export TriError, IRModule, load_module, load_package, package_info, CompileOptions, LaunchPlan, DevicePtr, CacheEntry, kernel_code,
       kernel_variants, to_text_with_comments, TuneConfig, TuneProduct, TuneProgress, TuneTrial, TuneResult,
       make_team_id, join_team

# The library: TRI_LIBRARY names the file, otherwise the system's "libtri" (read when the module
# loads). It may name libtri_rt, the runtime without a compiler (docs/aot.md): packages
# (load_package, Tri.kernel) load and launch, and a call of a function it lacks fails in ccall.
const libtri = get(ENV, "TRI_LIBRARY", "libtri")

# ---- Constants (the header's values; check_ccalls.py compares them)
const TRI_VERSION_MAJOR = 0
const TRI_VERSION_MINOR = 2
const TRI_VERSION_PATCH = 0
const TRI_VERSION_NUMBER = TRI_VERSION_MAJOR * 10000 + TRI_VERSION_MINOR * 100 + TRI_VERSION_PATCH

const TRI_OK = 0
const TRI_ERROR_INVALID_ARGUMENT = 1
const TRI_ERROR_PARSE = 2
const TRI_ERROR_VERIFY = 3
const TRI_ERROR_CORRUPT_BINARY = 4
const TRI_ERROR_UNSUPPORTED_VERSION = 5
const TRI_ERROR_NOT_FOUND = 6
const TRI_ERROR_LIMIT_EXCEEDED = 7
const TRI_ERROR_OUT_OF_MEMORY = 8
const TRI_ERROR_SPECIALIZE = 9
const TRI_ERROR_LAUNCH_ARGS = 10
const TRI_ERROR_UNSUPPORTED = 11
const TRI_ERROR_COMPILE = 12
const TRI_ERROR_RUNTIME = 13
const TRI_ERROR_IO = 14
const TRI_ERROR_INTERNAL = 15
const TRI_ERROR_CANCELLED = 16
const TRI_ERROR_UNTRUSTED = 17

const TRI_FUNCTION_KERNEL = 0
const TRI_FUNCTION_DEVICE = 1
const TRI_PARAM_VALUE = 0
const TRI_PARAM_CONSTEXPR = 1
const TRI_TYPE_SCALAR = 0
const TRI_TYPE_POINTER = 1
const TRI_TYPE_BLOCK = 2

const TRI_DTYPE_I1 = 0
const TRI_DTYPE_I8 = 1
const TRI_DTYPE_I16 = 2
const TRI_DTYPE_I32 = 3
const TRI_DTYPE_I64 = 4
const TRI_DTYPE_F16 = 5
const TRI_DTYPE_BF16 = 6
const TRI_DTYPE_F32 = 7
const TRI_DTYPE_F64 = 8
const TRI_DTYPE_F8E4M3 = 9
const TRI_DTYPE_F8E5M2 = 10

const TRI_CACHE_STAT_HITS = 0
const TRI_CACHE_STAT_MISSES = 1
const TRI_CACHE_STAT_STORES = 2
const TRI_CACHE_STAT_BYTES_READ = 3
const TRI_CACHE_STAT_BYTES_WRITTEN = 4
const TRI_CACHE_STAT_EVICTIONS = 5
const TRI_CACHE_STAT_CORRUPT = 6
const TRI_CACHE_STAT_WRITE_FAILURES = 7
const TRI_CACHE_STAT_LOCK_WAITS = 8
const TRI_CACHE_STAT_ENTRIES = 9
const TRI_CACHE_STAT_BYTES = 10
const TRI_CACHE_STAT_MAX_BYTES = 11
const TRI_CACHE_STAT_ENABLED = 12

const TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MAJOR = 0
const TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MINOR = 1
const TRI_DEVICE_ATTR_SM_COUNT = 2
const TRI_DEVICE_ATTR_SHARED_PER_BLOCK = 3
const TRI_DEVICE_ATTR_SHARED_PER_BLOCK_OPTIN = 4
const TRI_DEVICE_ATTR_SHARED_PER_SM = 5
const TRI_DEVICE_ATTR_L2_SIZE = 6
const TRI_DEVICE_ATTR_MAX_THREADS_PER_BLOCK = 7
const TRI_DEVICE_ATTR_WARP_SIZE = 8
const TRI_DEVICE_ATTR_DRIVER_VERSION = 9
const TRI_DEVICE_ATTR_MAX_PTX_VERSION = 10

const TRI_TUNE_STAGE_COMPILE = 0
const TRI_TUNE_STAGE_BENCHMARK = 1
const TRI_TUNE_FROZEN = 1
const TRI_TUNE_RETUNE = 2
const TRI_TUNE_USE_OTHER_DEVICE = 4
const TRI_TUNE_STAT_TRIALS = 0
const TRI_TUNE_STAT_STORED = 1
const TRI_TUNE_STAT_DEFAULTS = 2
const TRI_TUNE_STAT_PRUNED = 3
const TRI_TUNE_STAT_OTHER_DEVICE = 4

const TRI_TEAM_ID_BYTES = 128

# tri_arg: the union is carried as its 8 bytes.
struct TriArg
    value::UInt64
    extent::UInt64
    kind::Int32
    dtype::Int32
end

# ---- Errors

"""A failed Tri call: the result code (`TRI_ERROR_*`) and the message, which names the place."""
struct TriError <: Exception
    code::Int32
    message::String
end

result_name(code::Integer) = unsafe_string(ccall((:tri_result_name, libtri), Cstring, (Int32,), code))

Base.showerror(io::IO, e::TriError) = print(io, result_name(e.code), ": ", e.message)

"""The calling thread's last error message ("" when nothing failed on it)."""
function last_error_message()
    size = ccall((:tri_last_error_message, libtri), Csize_t, (Ptr{UInt8}, Csize_t), C_NULL, 0)
    buf = Vector{UInt8}(undef, size)
    ccall((:tri_last_error_message, libtri), Csize_t, (Ptr{UInt8}, Csize_t), buf, size)
    return String(buf[1:end-1])
end

# Julia tasks may move between threads only at yield points; none lies between a call and
# reading its message here.
check(r::Integer) = r == TRI_OK ? nothing : throw(TriError(r, last_error_message()))

"""The running library's version as (major, minor, patch)."""
function version()
    v = Int(ccall((:tri_version, libtri), UInt32, ()))
    return (div(v, 10000), div(v, 100) % 100, v % 100)
end

# ---- Element types

"""Element types (`TRI_DTYPE_*`)."""
@enum DType::Int32 I1 = 0 I8 = 1 I16 = 2 I32 = 3 I64 = 4 F16 = 5 BF16 = 6 F32 = 7 F64 = 8 F8E4M3 = 9 F8E5M2 = 10

# Julia element types that match a Tri dtype bit for bit (Tri's integers are signless).
const JULIA_DTYPES = Dict{DataType,DType}(Int8 => I8, UInt8 => I8, Int16 => I16, UInt16 => I16, Int32 => I32,
                                           UInt32 => I32, Int64 => I64, UInt64 => I64, Float16 => F16,
                                           Float32 => F32, Float64 => F64)
isfloat(d::DType) = !(d in (I1, I8, I16, I32, I64))
irname(d::DType) = lowercase(string(d))

# ---- Handles: each wraps a pointer, released by `close` or by the finalizer. A closed handle
# refuses use with a TriError.

function live(p::Ptr{Cvoid}, what::String)
    p == C_NULL && throw(TriError(TRI_ERROR_INVALID_ARGUMENT, "$what is closed (close was called); make a new one"))
    return p
end

"""A Tri context: the root of modules and kernels. `cache_dir` is the disk cache of compiled
kernels ("" turns it off; nothing: \$TRI_CACHE_DIR, else \$XDG_CACHE_HOME/tri, else ~/.cache/tri)
and `cache_max_bytes` its bound (0: none); `interp_memory_limit` is the "interp" target's
working-memory budget per launch (0: none); `kernel_cache_capacity` how many compiled
specializations each module keeps in memory (default 64)."""
mutable struct Context
    ptr::Ptr{Cvoid}
    function Context(; cache_dir::Union{Nothing,AbstractString} = nothing,
                     cache_max_bytes::Union{Nothing,Integer} = nothing,
                     interp_memory_limit::Union{Nothing,Integer} = nothing,
                     kernel_cache_capacity::Union{Nothing,Integer} = nothing)
        opts = Ref{Ptr{Cvoid}}(C_NULL)
        check(ccall((:tri_context_options_create, libtri), Int32, (Ref{Ptr{Cvoid}},), opts))
        ctx = Ref{Ptr{Cvoid}}(C_NULL)
        try
            if cache_dir !== nothing
                check(ccall((:tri_context_options_set_cache_dir, libtri), Int32, (Ptr{Cvoid}, Cstring), opts[],
                            cache_dir))
            end
            if cache_max_bytes !== nothing
                check(ccall((:tri_context_options_set_cache_max_bytes, libtri), Int32, (Ptr{Cvoid}, UInt64), opts[],
                            cache_max_bytes))
            end
            if interp_memory_limit !== nothing
                check(ccall((:tri_context_options_set_interp_memory_limit, libtri), Int32, (Ptr{Cvoid}, UInt64),
                            opts[], interp_memory_limit))
            end
            if kernel_cache_capacity !== nothing
                check(ccall((:tri_context_options_set_kernel_cache_capacity, libtri), Int32, (Ptr{Cvoid}, UInt32),
                            opts[], kernel_cache_capacity))
            end
            check(ccall((:tri_context_create, libtri), Int32, (Ptr{Cvoid}, UInt32, Ref{Ptr{Cvoid}}), opts[],
                        TRI_VERSION_NUMBER, ctx))
        finally
            ccall((:tri_context_options_destroy, libtri), Cvoid, (Ptr{Cvoid},), opts[])
        end
        return finalizer(close, new(ctx[]))
    end
end

function Base.close(c::Context)
    p, c.ptr = c.ptr, C_NULL
    ccall((:tri_context_destroy, libtri), Cvoid, (Ptr{Cvoid},), p)
    return nothing
end

"""Stops every launch of the context on a host target ("cpu", "interp") running now: each throws
a TriError with TRI_ERROR_CANCELLED. Later launches run normally; GPU launches are not stopped."""
cancel(c::Context) = check(ccall((:tri_context_cancel, libtri), Int32, (Ptr{Cvoid},), live(c.ptr, "the context")))

# ---- CUDA devices: a TriError with TRI_ERROR_UNSUPPORTED (saying why) without a CUDA driver.

"""How many CUDA devices the driver sees (0 with a driver and no GPU)."""
function device_count(c::Context)
    n = Ref{UInt32}(0)
    check(ccall((:tri_device_count, libtri), Int32, (Ptr{Cvoid}, Ref{UInt32}), live(c.ptr, "the context"), n))
    return Int(n[])
end

"""One attribute (TRI_DEVICE_ATTR_*) of device `index` (0-based, as the driver numbers them)."""
function device_attribute(c::Context, index::Integer, attr::Integer)
    v = Ref{Int64}(0)
    check(ccall((:tri_device_attribute, libtri), Int32, (Ptr{Cvoid}, UInt32, Int32, Ref{Int64}),
                live(c.ptr, "the context"), index, attr, v))
    return v[]
end

function device_name(c::Context, index::Integer)
    size = Ref{Csize_t}(0)
    check(ccall((:tri_device_name, libtri), Int32, (Ptr{Cvoid}, UInt32, Ptr{UInt8}, Csize_t, Ref{Csize_t}),
                live(c.ptr, "the context"), index, C_NULL, 0, size))
    buf = Vector{UInt8}(undef, size[])
    check(ccall((:tri_device_name, libtri), Int32, (Ptr{Cvoid}, UInt32, Ptr{UInt8}, Csize_t, Ref{Csize_t}),
                live(c.ptr, "the context"), index, buf, length(buf), size))
    return String(buf[1:findfirst(==(0x00), buf)-1])
end

"""A CUDA device with its attributes (sizes in bytes)."""
struct Device
    index::Int
    name::String
    compute_capability::Tuple{Int,Int}
    sm_count::Int
    shared_per_block::Int
    shared_per_block_optin::Int
    shared_per_sm::Int
    l2_size::Int
    max_threads_per_block::Int
    warp_size::Int
    driver_version::Int   # 1000 * major + 10 * minor
    max_ptx_version::Int  # 10 * major + minor
end

"""The architecture's name for CompileOptions(arch = ...), "sm_90"."""
arch(d::Device) = "sm_$(d.compute_capability[1])$(d.compute_capability[2])"

function device(c::Context, index::Integer)
    a(attr) = Int(device_attribute(c, index, attr))
    return Device(index, device_name(c, index),
                  (a(TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MAJOR), a(TRI_DEVICE_ATTR_COMPUTE_CAPABILITY_MINOR)),
                  a(TRI_DEVICE_ATTR_SM_COUNT), a(TRI_DEVICE_ATTR_SHARED_PER_BLOCK),
                  a(TRI_DEVICE_ATTR_SHARED_PER_BLOCK_OPTIN), a(TRI_DEVICE_ATTR_SHARED_PER_SM), a(TRI_DEVICE_ATTR_L2_SIZE),
                  a(TRI_DEVICE_ATTR_MAX_THREADS_PER_BLOCK), a(TRI_DEVICE_ATTR_WARP_SIZE),
                  a(TRI_DEVICE_ATTR_DRIVER_VERSION), a(TRI_DEVICE_ATTR_MAX_PTX_VERSION))
end

"""Every CUDA device (empty with a driver and no GPU)."""
devices(c::Context) = [device(c, i) for i in 0:device_count(c)-1]

# ---- The disk cache of compiled kernels (docs/cache.md)

"""The directory the disk cache uses, or "" when it is off."""
function cache_dir(c::Context)
    p = Ref{Ptr{UInt8}}(C_NULL)
    check(ccall((:tri_cache_dir, libtri), Int32, (Ptr{Cvoid}, Ref{Ptr{UInt8}}), live(c.ptr, "the context"), p))
    return p[] == C_NULL ? "" : unsafe_string(p[])
end

"""One statistic (TRI_CACHE_STAT_*); it works with the cache off."""
function cache_stat(c::Context, stat::Integer)
    v = Ref{UInt64}(0)
    check(ccall((:tri_cache_stat, libtri), Int32, (Ptr{Cvoid}, Int32, Ref{UInt64}), live(c.ptr, "the context"), stat,
                v))
    return v[]
end

"""Every statistic, as a NamedTuple (hits, misses, stores, ..., max_bytes, enabled)."""
function cache_stats(c::Context)
    s(stat) = cache_stat(c, stat)
    return (hits = s(TRI_CACHE_STAT_HITS), misses = s(TRI_CACHE_STAT_MISSES), stores = s(TRI_CACHE_STAT_STORES),
            bytes_read = s(TRI_CACHE_STAT_BYTES_READ), bytes_written = s(TRI_CACHE_STAT_BYTES_WRITTEN),
            evictions = s(TRI_CACHE_STAT_EVICTIONS), corrupt = s(TRI_CACHE_STAT_CORRUPT),
            write_failures = s(TRI_CACHE_STAT_WRITE_FAILURES), lock_waits = s(TRI_CACHE_STAT_LOCK_WAITS),
            entries = s(TRI_CACHE_STAT_ENTRIES), bytes = s(TRI_CACHE_STAT_BYTES),
            max_bytes = s(TRI_CACHE_STAT_MAX_BYTES), enabled = s(TRI_CACHE_STAT_ENABLED) != 0)
end

"""One entry of the cache directory (cache_list)."""
struct CacheEntry
    key::String
    bytes::UInt64
    last_use::Int64   # seconds since 1970
    status::String    # "ok", "ok (another build)", "bad: <why>", "removed: <why>"
    kind::String      # "obj", "ptx", "ptx+cubin"
    target::String
    kernel::String
    made_for::String
    specialized::String  # constexprs, warps and stages ("cuda"), a launch variant's facts
end

"""The entries, each read and checked in full; with `verify`, bad ones are removed. A TriError
with TRI_ERROR_UNSUPPORTED when the cache is off."""
function cache_list(c::Context; verify::Bool = false)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_cache_list, libtri), Int32, (Ptr{Cvoid}, Int32, Ref{Ptr{Cvoid}}), live(c.ptr, "the context"),
                verify ? 1 : 0, out))
    entries = CacheEntry[]
    for line in split(String(blob_bytes(out[])), '\n'; keepempty = false)
        f = split(line, '\t'; limit = 9)
        length(f) == 9 || throw(TriError(TRI_ERROR_INTERNAL, "tri_cache_list gave a line of $(length(f)) fields"))
        push!(entries, CacheEntry(f[1], parse(UInt64, f[2]), parse(Int64, f[3]), f[4], f[5], f[6], f[7], f[8], f[9]))
    end
    return entries
end

"""Removes least recently used entries until the rest take at most `max_bytes` (the default: the
context's bound; 0 empties the cache), stale temporary files and abandoned locks. Returns how
many entries it removed."""
function cache_prune(c::Context, max_bytes::Integer = typemax(UInt64))
    removed = Ref{UInt64}(0)
    check(ccall((:tri_cache_prune, libtri), Int32, (Ptr{Cvoid}, UInt64, Ref{UInt64}), live(c.ptr, "the context"),
                max_bytes, removed))
    return Int(removed[])
end

"""Writes every valid entry to a bundle file (to ship a warm cache); returns how many."""
function cache_export(c::Context, path::AbstractString)
    n = Ref{UInt32}(0)
    check(ccall((:tri_cache_export, libtri), Int32, (Ptr{Cvoid}, Cstring, Ref{UInt32}), live(c.ptr, "the context"),
                path, n))
    return Int(n[])
end

"""Adds a bundle's entries to the cache, each validated; returns how many were added."""
function cache_import(c::Context, path::AbstractString)
    n = Ref{UInt32}(0)
    check(ccall((:tri_cache_import, libtri), Int32, (Ptr{Cvoid}, Cstring, Ref{UInt32}), live(c.ptr, "the context"),
                path, n))
    return Int(n[])
end

"""Verified IR: kernels and device functions. (`Module` is Julia's own word, hence IRModule.)"""
mutable struct IRModule
    ptr::Ptr{Cvoid}
    context::Context
end

"""A module from IR text or binary IR; `name` labels it in messages ("softmax.tri")."""
function IRModule(ctx::Context, data::AbstractVector{UInt8}, name::AbstractString = "<input>")
    isempty(data) && throw(TriError(TRI_ERROR_INVALID_ARGUMENT, "$name: the IR is empty"))
    bytes = Vector{UInt8}(data)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_module_create, libtri), Int32, (Ptr{Cvoid}, Ptr{UInt8}, Csize_t, Cstring, Ref{Ptr{Cvoid}}),
                live(ctx.ptr, "the context"), bytes, length(bytes), name, out))
    return finalizer(close, IRModule(out[], ctx))
end
IRModule(ctx::Context, text::AbstractString, name::AbstractString = "<input>") =
    IRModule(ctx, Vector{UInt8}(codeunits(text)), name)

"""A module read from a file."""
function load_module(ctx::Context, path::AbstractString)
    data = try
        read(path)
    catch e
        throw(TriError(TRI_ERROR_IO, "cannot read $path: $(sprint(showerror, e))"))
    end
    return IRModule(ctx, data, path)
end

"""A module of a package made by `tri aot` (docs/aot.md), from the file's bytes or its path.
Nothing is compiled: `Tri.kernel(m, name; ...)` gives its kernels, through libtri or libtri_rt."""
function load_package(ctx::Context, data::AbstractVector{UInt8}, name::AbstractString = "<package>")
    isempty(data) && throw(TriError(TRI_ERROR_CORRUPT_BINARY, "$name: the package is empty"))
    bytes = Vector{UInt8}(data)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_module_load_package, libtri), Int32,
                (Ptr{Cvoid}, Ptr{UInt8}, Csize_t, Cstring, Ref{Ptr{Cvoid}}),
                live(ctx.ptr, "the context"), bytes, length(bytes), name, out))
    return finalizer(close, IRModule(out[], ctx))
end
function load_package(ctx::Context, path::AbstractString)
    data = try
        read(path)
    catch e
        throw(TriError(TRI_ERROR_IO, "cannot read $path: $(sprint(showerror, e))"))
    end
    return load_package(ctx, data, path)
end

"""What the package of a module from `load_package` holds, as JSON text."""
function package_info(m::IRModule)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_module_package_info, libtri), Int32, (Ptr{Cvoid}, Ref{Ptr{Cvoid}}),
                live(m.ptr, "the module"), out))
    return String(blob_bytes(out[]))
end

function Base.close(m::IRModule)
    p, m.ptr = m.ptr, C_NULL
    ccall((:tri_module_destroy, libtri), Cvoid, (Ptr{Cvoid},), p)
    return nothing
end

function blob_bytes(blob::Ptr{Cvoid})
    try
        n = ccall((:tri_blob_size, libtri), Csize_t, (Ptr{Cvoid},), blob)
        data = ccall((:tri_blob_data, libtri), Ptr{Cvoid}, (Ptr{Cvoid},), blob)
        return n == 0 ? UInt8[] : copy(unsafe_wrap(Array, Ptr{UInt8}(data), Int(n)))
    finally
        ccall((:tri_blob_destroy, libtri), Cvoid, (Ptr{Cvoid},), blob)
    end
end

"""The module as canonical IR text."""
function to_text(m::IRModule)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_module_to_text, libtri), Int32, (Ptr{Cvoid}, Ref{Ptr{Cvoid}}), live(m.ptr, "the module"), out))
    return String(blob_bytes(out[]))
end

"""What `tri fmt` writes: the canonical text with the `//` comments of the text the module was
read from (the same as to_text for binary IR)."""
function to_text_with_comments(m::IRModule)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_module_to_text_with_comments, libtri), Int32, (Ptr{Cvoid}, Ref{Ptr{Cvoid}}),
                live(m.ptr, "the module"), out))
    return String(blob_bytes(out[]))
end

"""The module as binary IR."""
function to_binary(m::IRModule)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_module_to_binary, libtri), Int32, (Ptr{Cvoid}, Ref{Ptr{Cvoid}}), live(m.ptr, "the module"),
                out))
    return blob_bytes(out[])
end

# ---- Reflection

struct Param
    name::String
    constexpr::Bool
    type_kind::Int32   # TRI_TYPE_*
    dtype::DType
    type_text::String
    align::UInt32
    divisible::UInt32
    noalias::Bool
    default::Union{Nothing,String}
end

struct FunctionInfo
    index::UInt32
    name::String
    device::Bool
    params::Vector{Param}
end

runtime_params(f::FunctionInfo) = filter(p -> !p.constexpr, f.params)

function function_info(m::IRModule, index::Integer)
    p = live(m.ptr, "the module")
    name = Ref{Ptr{UInt8}}(C_NULL)
    kind = Ref{Int32}(0)
    count = Ref{UInt32}(0)
    check(ccall((:tri_module_function_name, libtri), Int32, (Ptr{Cvoid}, UInt32, Ref{Ptr{UInt8}}), p, index, name))
    check(ccall((:tri_module_function_kind, libtri), Int32, (Ptr{Cvoid}, UInt32, Ref{Int32}), p, index, kind))
    check(ccall((:tri_module_param_count, libtri), Int32, (Ptr{Cvoid}, UInt32, Ref{UInt32}), p, index, count))
    params = Param[]
    for i in 0:Int(count[])-1
        pname = Ref{Ptr{UInt8}}(C_NULL)
        pkind = Ref{Int32}(0)
        tkind = Ref{Int32}(0)
        dtype = Ref{Int32}(0)
        text = Ref{Ptr{UInt8}}(C_NULL)
        align = Ref{UInt32}(0)
        divisible = Ref{UInt32}(0)
        noalias = Ref{Int32}(0)
        default = Ref{Ptr{UInt8}}(C_NULL)
        check(ccall((:tri_module_param_name, libtri), Int32, (Ptr{Cvoid}, UInt32, UInt32, Ref{Ptr{UInt8}}), p,
                    index, i, pname))
        check(ccall((:tri_module_param_kind, libtri), Int32, (Ptr{Cvoid}, UInt32, UInt32, Ref{Int32}), p, index, i,
                    pkind))
        check(ccall((:tri_module_param_type, libtri), Int32,
                    (Ptr{Cvoid}, UInt32, UInt32, Ref{Int32}, Ref{Int32}, Ref{Ptr{UInt8}}), p, index, i, tkind, dtype,
                    text))
        check(ccall((:tri_module_param_facts, libtri), Int32,
                    (Ptr{Cvoid}, UInt32, UInt32, Ref{UInt32}, Ref{UInt32}, Ref{Int32}), p, index, i, align, divisible,
                    noalias))
        if pkind[] == TRI_PARAM_CONSTEXPR
            check(ccall((:tri_module_param_default, libtri), Int32, (Ptr{Cvoid}, UInt32, UInt32, Ref{Ptr{UInt8}}),
                        p, index, i, default))
        end
        push!(params, Param(unsafe_string(pname[]), pkind[] == TRI_PARAM_CONSTEXPR, tkind[], DType(dtype[]),
                            unsafe_string(text[]), align[], divisible[], noalias[] != 0,
                            default[] == C_NULL ? nothing : unsafe_string(default[])))
    end
    return FunctionInfo(index, unsafe_string(name[]), kind[] == TRI_FUNCTION_DEVICE, params)
end

"""The function called `name` (without '@'); a TriError with TRI_ERROR_NOT_FOUND if none."""
function function_info(m::IRModule, name::AbstractString)
    index = Ref{UInt32}(0)
    check(ccall((:tri_module_find_function, libtri), Int32, (Ptr{Cvoid}, Cstring, Ref{UInt32}),
                live(m.ptr, "the module"), name, index))
    return function_info(m, index[])
end

"""Every kernel and device function, in module order."""
function functions(m::IRModule)
    count = Ref{UInt32}(0)
    check(ccall((:tri_module_function_count, libtri), Int32, (Ptr{Cvoid}, Ref{UInt32}), live(m.ptr, "the module"),
                count))
    return [function_info(m, i) for i in 0:Int(count[])-1]
end

# ---- Compiling

"""How to compile: target ("cpu", "interp" or "cuda"), checked mode (interp only), constexprs by
name, alignment/divisibility promises by runtime parameter index (0-based), and for GPU targets
the warps per program and the architecture ("sm_90"; nothing: the current device's, which needs
a driver). `launch_specialization` (nothing: the target's default, on for "cuda") with
`max_variants`, and `arg_specialization` (index => false takes a parameter out of it)."""
Base.@kwdef struct CompileOptions
    target::String = "cpu"
    checked::Bool = false
    constexprs::Dict{String,Any} = Dict{String,Any}()
    arg_align::Dict{Int,Int} = Dict{Int,Int}()
    arg_divisible::Dict{Int,Int} = Dict{Int,Int}()
    num_warps::Union{Nothing,Int} = nothing
    num_stages::Union{Nothing,Int} = nothing
    arch::Union{Nothing,String} = nothing
    launch_specialization::Union{Nothing,Bool} = nothing
    max_variants::Int = 8
    arg_specialization::Dict{Int,Bool} = Dict{Int,Bool}()
end

function make_options(o::CompileOptions)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_compile_options_create, libtri), Int32, (Ref{Ptr{Cvoid}},), out))
    p = out[]
    try
        check(ccall((:tri_compile_options_set_target, libtri), Int32, (Ptr{Cvoid}, Cstring), p, o.target))
        check(ccall((:tri_compile_options_set_checked, libtri), Int32, (Ptr{Cvoid}, Int32), p, o.checked ? 1 : 0))
        for (name, value) in o.constexprs
            if value isa Integer
                check(ccall((:tri_compile_options_set_constexpr_int, libtri), Int32, (Ptr{Cvoid}, Cstring, Int64), p,
                            name, value))
            elseif value isa AbstractFloat
                check(ccall((:tri_compile_options_set_constexpr_float, libtri), Int32, (Ptr{Cvoid}, Cstring, Float64),
                            p, name, value))
            else
                throw(TriError(TRI_ERROR_INVALID_ARGUMENT,
                               "constexpr '$name' is a $(typeof(value)); give an integer, a float or a Bool"))
            end
        end
        for (param, align) in o.arg_align
            check(ccall((:tri_compile_options_set_arg_align, libtri), Int32, (Ptr{Cvoid}, UInt32, UInt32), p, param,
                        align))
        end
        for (param, divisible) in o.arg_divisible
            check(ccall((:tri_compile_options_set_arg_divisible, libtri), Int32, (Ptr{Cvoid}, UInt32, UInt32), p,
                        param, divisible))
        end
        if o.num_warps !== nothing
            check(ccall((:tri_compile_options_set_num_warps, libtri), Int32, (Ptr{Cvoid}, Int32), p, o.num_warps))
        end
        if o.num_stages !== nothing
            check(ccall((:tri_compile_options_set_num_stages, libtri), Int32, (Ptr{Cvoid}, Int32), p, o.num_stages))
        end
        if o.arch !== nothing
            check(ccall((:tri_compile_options_set_arch, libtri), Int32, (Ptr{Cvoid}, Cstring), p, o.arch))
        end
        if o.launch_specialization !== nothing
            check(ccall((:tri_compile_options_set_launch_specialization, libtri), Int32, (Ptr{Cvoid}, Int32, UInt32),
                        p, o.launch_specialization ? 1 : 0, o.max_variants))
        end
        for (param, on) in o.arg_specialization
            check(ccall((:tri_compile_options_set_arg_specialization, libtri), Int32, (Ptr{Cvoid}, UInt32, Int32), p,
                        param, on ? 1 : 0))
        end
    catch
        ccall((:tri_compile_options_destroy, libtri), Cvoid, (Ptr{Cvoid},), p)
        rethrow()
    end
    return p
end

"""A compiled kernel. It keeps its module and context alive, and may be launched from several
threads at once."""
mutable struct Kernel
    ptr::Ptr{Cvoid}
    name::String
    target::String
    params::Vector{Param}
    context::Context
end

"""Compiles kernel `name` of the module, with a CompileOptions or its fields as keywords
(`compile(m, "softmax"; target = "interp", constexprs = Dict{String,Any}("BLOCK" => 256))`)."""
function compile(m::IRModule, name::AbstractString, options::CompileOptions)
    opts = make_options(options)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    try
        check(ccall((:tri_kernel_compile, libtri), Int32, (Ptr{Cvoid}, Cstring, Ptr{Cvoid}, Ref{Ptr{Cvoid}}),
                    live(m.ptr, "the module"), name, opts, out))
    finally
        ccall((:tri_compile_options_destroy, libtri), Cvoid, (Ptr{Cvoid},), opts)
    end
    return adopt(m, name, options, out[])
end
compile(m::IRModule, name::AbstractString; kwargs...) = compile(m, name, CompileOptions(; kwargs...))

"""The kernel `name` that the package of `m` (from `load_package`) holds for the options, with
its code for this machine; compiles nothing (TRI_ERROR_NOT_FOUND says what the package holds)."""
function kernel(m::IRModule, name::AbstractString, options::CompileOptions)
    opts = make_options(options)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    try
        check(ccall((:tri_module_kernel, libtri), Int32, (Ptr{Cvoid}, Cstring, Ptr{Cvoid}, Ref{Ptr{Cvoid}}),
                    live(m.ptr, "the module"), name, opts, out))
    finally
        ccall((:tri_compile_options_destroy, libtri), Cvoid, (Ptr{Cvoid},), opts)
    end
    return adopt(m, name, options, out[])
end
kernel(m::IRModule, name::AbstractString; kwargs...) = kernel(m, name, CompileOptions(; kwargs...))

# A Kernel around `ptr`, kernel `name` of `m` as the library made it for `options`.
function adopt(m::IRModule, name::AbstractString, options::CompileOptions, ptr::Ptr{Cvoid})
    k = finalizer(close, Kernel(ptr, String(name), options.target, Param[], m.context))
    k.params = promised(runtime_params(function_info(m, name)), options)
    count = Ref{UInt32}(0)
    check(ccall((:tri_kernel_arg_count, libtri), Int32, (Ptr{Cvoid}, Ref{UInt32}), k.ptr, count))
    count[] == length(k.params) ||
        throw(TriError(TRI_ERROR_INTERNAL, "kernel @$name reflects $(length(k.params)) runtime parameters but takes $(count[]) arguments"))
    return k
end

function Base.close(k::Kernel)
    p, k.ptr = k.ptr, C_NULL
    ccall((:tri_kernel_destroy, libtri), Cvoid, (Ptr{Cvoid},), p)
    return nothing
end

"""The specialized IR the kernel was compiled from."""
function to_text(k::Kernel)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_kernel_to_text, libtri), Int32, (Ptr{Cvoid}, Ref{Ptr{Cvoid}}), live(k.ptr, "the kernel"), out))
    return String(blob_bytes(out[]))
end

"""Code the target made, by kind: "llvm" (LLVM IR after optimization) for "cpu" and "cuda"; "asm"
(the host assembly) for "cpu"; "ptx", "metadata" (the launch descriptor, JSON) and "cubin" (the
driver's machine code, binary, with a GPU) for "cuda". Stages a compile does not keep are made
on the first call. A TriError with TRI_ERROR_NOT_FOUND when the target makes nothing of that
kind (the message lists what it makes)."""
function kernel_code(k::Kernel, kind::AbstractString)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_kernel_code, libtri), Int32, (Ptr{Cvoid}, Cstring, Ref{Ptr{Cvoid}}), live(k.ptr, "the kernel"),
                kind, out))
    return String(blob_bytes(out[]))
end

"""The variants launch-time specialization has made so far, as JSON (docs/capi.md "Variants")."""
function kernel_variants(k::Kernel)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_kernel_variants, libtri), Int32, (Ptr{Cvoid}, Ref{Ptr{Cvoid}}), live(k.ptr, "the kernel"), out))
    return String(blob_bytes(out[]))
end

# ---- Launching

"""CUDA device memory (a CUdeviceptr) no array describes, for "cuda" kernels: its address, its
size in bytes (0: unknown) and its element type. The caller keeps it allocated until the work
queued on it is done."""
struct DevicePtr
    ptr::UInt64
    nbytes::UInt64
    dtype::DType
end

on_device(k::Kernel) =
    k.target in ("cpu", "interp") ? false : k.target == "cuda" ? true :
    throw(TriError(TRI_ERROR_UNSUPPORTED, "kernel @$(k.name) was compiled for target \"$(k.target)\"; this module " *
                                          "launches \"cpu\" and \"interp\" kernels (host arrays) and \"cuda\" ones (device memory)"))

# The device address of an array whose `pointer` is not a host Ptr (CUDA.jl's CuArray gives a
# CuPtr, a 64-bit primitive), or nothing.
function device_address(value)
    value isa AbstractArray || return nothing
    p = try
        pointer(value)
    catch
        return nothing
    end
    (p isa Ptr || !isbits(p) || sizeof(p) != 8) && return nothing
    return reinterpret(UInt64, p)
end

# The runtime parameters with the options' arg_align promises folded into their alignment, which
# launches check (`aligned`).
promised(params::Vector{Param}, options::CompileOptions) =
    [haskey(options.arg_align, i - 1) ?
     Param(p.name, p.constexpr, p.type_kind, p.dtype, p.type_text, max(p.align, UInt32(options.arg_align[i - 1])),
           p.divisible, p.noalias, p.default) : p for (i, p) in enumerate(params)]

# A pointer argument must keep the alignment its kernel was compiled for (an {align=N} fact or a
# promise): every target would read it wrong or fault on it, so it is refused before the launch.
function aligned(a::TriArg, where, p::Param)
    p.align > 1 && a.value % p.align != 0 &&
        throw(TriError(TRI_ERROR_LAUNCH_ARGS, "$(where()) with {align=$(p.align)}, but the address given, " *
                                              "0x$(string(a.value, base = 16)), is not a multiple of $(p.align): pass " *
                                              "memory that starts on a $(p.align)-byte boundary (a view such as " *
                                              "view(a, 2:n) moves the start; copy it), or compile without that fact"))
    return a
end

# The bits of an integer dtype (I1 .. I64).
intbits(d::DType) = d == I1 ? 1 : d == I8 ? 8 : d == I16 ? 16 : d == I32 ? 32 : 64

function encode(k::Kernel, i::Int, p::Param, value)
    # The message is made only when the argument is refused: a launch that goes through
    # builds no string.
    where() = "argument $(i - 1) (%$(p.name)) of kernel @$(k.name) is $(p.type_text)"
    if p.type_kind == TRI_TYPE_POINTER
        if on_device(k)
            if value isa DevicePtr && value.dtype == p.dtype
                return aligned(TriArg(value.ptr, value.nbytes, TRI_TYPE_POINTER, Int32(p.dtype)), where, p)
            end
            addr = device_address(value)
            if addr !== nothing && haskey(JULIA_DTYPES, eltype(value)) && JULIA_DTYPES[eltype(value)] == p.dtype
                return aligned(TriArg(addr, UInt64(sizeof(eltype(value)) * length(value)), TRI_TYPE_POINTER,
                                      Int32(p.dtype)), where, p)
            end
            throw(TriError(TRI_ERROR_LAUNCH_ARGS, "$(where()), so it takes device memory of $(irname(p.dtype)) (a " *
                                                  "DevicePtr or a device array; the kernel runs on the GPU), but a $(typeof(value)) was given"))
        end
        if !(value isa Array) || !haskey(JULIA_DTYPES, eltype(value)) || JULIA_DTYPES[eltype(value)] != p.dtype
            throw(TriError(TRI_ERROR_LAUNCH_ARGS,
                           "$(where()), so it takes an Array of $(irname(p.dtype)), but a $(typeof(value)) was given"))
        end
        return aligned(TriArg(UInt64(UInt(pointer(value))), UInt64(sizeof(value)), TRI_TYPE_POINTER, Int32(p.dtype)),
                       where, p)
    elseif p.type_kind == TRI_TYPE_SCALAR
        if isfloat(p.dtype)
            value isa Real && !(value isa Bool) ||
                throw(TriError(TRI_ERROR_LAUNCH_ARGS, "$(where()), so it takes a number, but a $(typeof(value)) was given"))
            return TriArg(reinterpret(UInt64, Float64(value)), 0, TRI_TYPE_SCALAR, Int32(p.dtype))
        end
        value isa Integer ||
            throw(TriError(TRI_ERROR_LAUNCH_ARGS, "$(where()), so it takes an integer, but a $(typeof(value)) was given"))
        bits = intbits(p.dtype)
        lo, hi = bits == 1 ? (0, 1) : bits == 64 ? (typemin(Int64), typemax(Int64)) :
                 (-(Int64(1) << (bits - 1)), (Int64(1) << bits) - 1)
        lo <= value <= hi || throw(TriError(TRI_ERROR_LAUNCH_ARGS, "$(where()), and $value does not fit in it"))
        return TriArg(reinterpret(UInt64, Int64(value)), 0, TRI_TYPE_SCALAR, Int32(p.dtype))
    end
    throw(TriError(TRI_ERROR_LAUNCH_ARGS, "$(where()), which a launch cannot pass"))
end

# A CUstream: nothing (the default stream), a Ptr, an integer handle, or an object with a `handle`
# field (CUDA.jl's CuStream).
stream_ptr(::Nothing) = C_NULL
stream_ptr(s::Ptr) = Ptr{Cvoid}(s)
stream_ptr(s::Integer) = Ptr{Cvoid}(UInt(s))
stream_ptr(s) = hasproperty(s, :handle) ? Ptr{Cvoid}(UInt(getproperty(s, :handle))) :
                throw(TriError(TRI_ERROR_INVALID_ARGUMENT, "a $(typeof(s)) is not a stream"))

function grid3(grid)
    g = grid isa Integer ? (grid,) : Tuple(grid)
    1 <= length(g) <= 3 || throw(TriError(TRI_ERROR_INVALID_ARGUMENT, "grid $grid: give 1 to 3 counts"))
    return (g..., 1, 1)[1:3]
end

function check_count(k::Kernel, args)
    on_device(k)
    if length(args) != length(k.params)
        sig = join(["%$(p.name): $(p.type_text)" for p in k.params], ", ")
        throw(TriError(TRI_ERROR_LAUNCH_ARGS,
                       "kernel @$(k.name) takes $(length(k.params)) arguments ($sig), but $(length(args)) were given"))
    end
    return nothing
end

function encode_all(k::Kernel, args)
    check_count(k, args)
    return TriArg[encode(k, i, k.params[i], args[i]) for i in 1:length(args)]
end

# A launch's arguments as a tuple of TriArgs (an isbits value, so the launch allocates no array):
# encode_tuple(k, 1, args...) after check_count.
@inline encode_tuple(k::Kernel, i::Int) = ()
@inline encode_tuple(k::Kernel, i::Int, v, rest...) = (encode(k, i, k.params[i], v), encode_tuple(k, i + 1, rest...)...)

# tri_launch with the arguments passed by reference from the tuple (ccall places an isbits value
# given for a Ref argument in a temporary of its own: no heap allocation).
function launch_tuple(kp::Ptr{Cvoid}, gx, gy, gz, stream::Ptr{Cvoid}, raw::NTuple{N,TriArg}) where {N}
    return ccall((:tri_launch, libtri), Int32,
                 (Ptr{Cvoid}, UInt32, UInt32, UInt32, Ptr{Cvoid}, Ref{NTuple{N,TriArg}}, UInt32),
                 kp, gx, gy, gz, stream, raw, N)
end

"""Runs the kernel over `grid` (an integer or a tuple of 1 to 3). Host kernels ("cpu", "interp")
take Arrays for pointers (element type matching the pointee) and return when every program has
finished; "cuda" kernels take DevicePtrs or device arrays (CUDA.jl's CuArray) and are queued on
`stream` (nothing: the default stream; a Ptr, an integer handle, or a CuStream). Numbers for
scalars."""
function launch(k::Kernel, grid, args...; stream = nothing)
    gx, gy, gz = grid3(grid)
    check_count(k, args)
    raw = encode_tuple(k, 1, args...)
    GC.@preserve args begin
        check(launch_tuple(live(k.ptr, "the kernel"), gx, gy, gz, stream_ptr(stream), raw))
    end
    return nothing
end

"""A prepared launch (plan): a kernel bound to a grid, a stream and arguments, checked and encoded
once. set_arg!, set_grid! and set_stream! change one thing; launch(plan) runs it. It keeps its
kernel and the arrays it holds alive. Not thread-safe (the C plan is not): use one per task."""
mutable struct LaunchPlan
    ptr::Ptr{Cvoid}
    kernel::Kernel
    keep::Vector{Any}
end

function plan(k::Kernel, grid, args...; stream = nothing)
    gx, gy, gz = grid3(grid)
    raw = encode_all(k, args)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve raw begin
        check(ccall((:tri_launch_plan_create, libtri), Int32,
                    (Ptr{Cvoid}, UInt32, UInt32, UInt32, Ptr{Cvoid}, Ptr{TriArg}, UInt32, Ref{Ptr{Cvoid}}),
                    live(k.ptr, "the kernel"), gx, gy, gz, stream_ptr(stream), raw, length(raw), out))
    end
    return finalizer(close, LaunchPlan(out[], k, Any[args...]))
end

"""Replaces argument `i` (1-based, as Julia counts), checked as a launch checks it."""
function set_arg!(p::LaunchPlan, i::Integer, value)
    1 <= i <= length(p.kernel.params) ||
        throw(TriError(TRI_ERROR_LAUNCH_ARGS, "kernel @$(p.kernel.name) takes $(length(p.kernel.params)) arguments; there is no argument $i"))
    a = Ref(encode(p.kernel, Int(i), p.kernel.params[i], value))
    check(ccall((:tri_launch_plan_set_arg, libtri), Int32, (Ptr{Cvoid}, UInt32, Ref{TriArg}),
                live(p.ptr, "the launch plan"), i - 1, a))
    p.keep[i] = value
    return p
end

function set_grid!(p::LaunchPlan, grid)
    gx, gy, gz = grid3(grid)
    check(ccall((:tri_launch_plan_set_grid, libtri), Int32, (Ptr{Cvoid}, UInt32, UInt32, UInt32),
                live(p.ptr, "the launch plan"), gx, gy, gz))
    return p
end

function set_stream!(p::LaunchPlan, stream)
    check(ccall((:tri_launch_plan_set_stream, libtri), Int32, (Ptr{Cvoid}, Ptr{Cvoid}), live(p.ptr, "the launch plan"),
                stream_ptr(stream)))
    return p
end

"""Launches as `launch` would with the plan's kernel, grid, stream and arguments."""
function launch(p::LaunchPlan)
    GC.@preserve p begin
        check(ccall((:tri_launch_plan_launch, libtri), Int32, (Ptr{Cvoid},), live(p.ptr, "the launch plan")))
    end
    return nothing
end

function Base.close(p::LaunchPlan)
    ptr, p.ptr = p.ptr, C_NULL
    ccall((:tri_launch_plan_destroy, libtri), Cvoid, (Ptr{Cvoid},), ptr)
    return nothing
end

# ---- Teams: distributed kernels (tri_team_*, docs/distributed.md)
#
# A team runs one kernel as several ranks that share a symmetric heap: a buffer allocated on the
# team lies at the same offset of every rank's heap, and the IR's distributed ops (rank,
# num_ranks, symm_at, put, get, notify, wait) reach a peer's copy. A host team (Team(ctx, ...))
# is threads of this process with host memory as the heaps, for "cpu" and "interp" kernels; a GPU
# team (join_team) is one process per GPU on NVSHMEM, for "cuda" kernels.

"""A team of ranks sharing a symmetric heap. `Team(ctx, num_ranks, heap_bytes_per_rank)` makes a
host team ("cpu" and "interp" kernels): `num_ranks` ranks (1 to 1024) run as threads of this
process, each with a heap of `heap_bytes_per_rank` bytes (rounded up to 64) of host memory, and
waits time out after 30 s (set_wait_timeout!). `join_team` joins a GPU team. A team keeps its
context alive and may be used from several tasks at once; `close` releases it and its heaps (no
launch of it may be running; pointers from `ptr` are invalid afterwards). A host team is closed
by its finalizer too; a GPU team is not, because releasing it is collective: call `close` on
every rank."""
mutable struct Team
    ptr::Ptr{Cvoid}
    context::Context
    num_ranks::Int
    rank::Int
    gpu::Bool
end

function Team(ctx::Context, num_ranks::Integer, heap_bytes_per_rank::Integer)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_team_create, libtri), Int32, (Ptr{Cvoid}, UInt32, UInt64, Ref{Ptr{Cvoid}}),
                live(ctx.ptr, "the context"), num_ranks, heap_bytes_per_rank, out))
    return finalizer(close, Team(out[], ctx, Int(num_ranks), 0, false))
end

function Base.close(t::Team)
    p, t.ptr = t.ptr, C_NULL
    ccall((:tri_team_destroy, libtri), Cvoid, (Ptr{Cvoid},), p)
    return nothing
end

"""Allocates `bytes` (more than 0) in every rank's heap at one offset, 64-byte aligned and
zero-filled, and returns the offset (first fit: the lowest that fits). A TriError with
TRI_ERROR_OUT_OF_MEMORY when no free range of that size is left (the message says how much is
free). Collective in a GPU team (every rank makes the same calls in the same order)."""
function alloc(t::Team, bytes::Integer)
    offset = Ref{UInt64}(0)
    check(ccall((:tri_team_alloc, libtri), Int32, (Ptr{Cvoid}, UInt64, Ref{UInt64}), live(t.ptr, "the team"), bytes,
                offset))
    return Int(offset[])
end

"""Frees the allocation at `offset` (from `alloc`) on every rank; a TriError with
TRI_ERROR_INVALID_ARGUMENT for an offset that is not an allocation's. Collective in a GPU team."""
function free!(t::Team, offset::Integer)
    check(ccall((:tri_team_free, libtri), Int32, (Ptr{Cvoid}, UInt64), live(t.ptr, "the team"), offset))
    return nothing
end

"""The address of byte `offset` of rank `rank`'s heap (rank 0-based), valid until the team is
closed. On a host team it is host memory: fill and read a buffer through
`unsafe_wrap(Array, Ptr{Int32}(ptr(team, r, offset)), n)`, and pass that array as rank `r`'s
argument (a rank's arguments are its own addresses). On a GPU team it is a device address (a
peer's as mapped on this GPU): pass `DevicePtr(UInt64(UInt(p)), nbytes, dtype)`. A TriError with
TRI_ERROR_INVALID_ARGUMENT for a rank past the team or an offset past the heap."""
function ptr(t::Team, rank::Integer, offset::Integer)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_team_ptr, libtri), Int32, (Ptr{Cvoid}, UInt32, UInt64, Ref{Ptr{Cvoid}}), live(t.ptr, "the team"),
                rank, offset, out))
    return out[]
end

"""How long a `wait` of the team's launches may go without its signal before the launch throws a
TriError with TRI_ERROR_RUNTIME naming the wait (its location, the signal's address and value,
the rank); 0 waits forever, the default is 30000 ms. Launches that begin later use it. Returns
the team."""
function set_wait_timeout!(t::Team, timeout_ms::Integer)
    check(ccall((:tri_team_set_wait_timeout, libtri), Int32, (Ptr{Cvoid}, UInt64), live(t.ptr, "the team"),
                timeout_ms))
    return t
end

function rank_and_size(t::Team)
    r = Ref{UInt32}(0)
    n = Ref{UInt32}(0)
    check(ccall((:tri_team_rank, libtri), Int32, (Ptr{Cvoid}, Ref{UInt32}, Ref{UInt32}), live(t.ptr, "the team"), r, n))
    return Int(r[]), Int(n[])
end

"""This process's rank in the team (0-based; a host team reports 0). (`LinearAlgebra` exports a
`rank` too: with both loaded, write `Tri.rank`.)"""
rank(t::Team) = rank_and_size(t)[1]

"""The number of ranks of the team."""
num_ranks(t::Team) = rank_and_size(t)[2]

"""Waits until this rank's GPU work is done and every rank of the team has called it (a host team
returns at once). A TriError with TRI_ERROR_RUNTIME when a kernel of this rank failed."""
function barrier(t::Team)
    check(ccall((:tri_team_barrier, libtri), Int32, (Ptr{Cvoid},), live(t.ptr, "the team")))
    return nothing
end

# The arguments of each rank `launch` passes: every rank's for a host team, this process's for a
# GPU team; `rank_args` is a vector of tuples (indexed by rank + 1) or a function of the rank.
function team_rank_args(k::Kernel, t::Team, rank_args)
    ranks = t.gpu ? [t.rank] : collect(0:t.num_ranks-1)
    if rank_args isa Function
        return [Tuple(rank_args(r)) for r in ranks]
    end
    rank_args isa AbstractVector ||
        throw(TriError(TRI_ERROR_LAUNCH_ARGS, "kernel @$(k.name): give the ranks' arguments as a vector of tuples " *
                                              "or a function of the rank, not a $(typeof(rank_args))"))
    want = length(ranks)
    length(rank_args) == want ||
        throw(TriError(TRI_ERROR_LAUNCH_ARGS, "kernel @$(k.name): the team " *
                                              (t.gpu ? "is joined as rank $(t.rank), so it takes this rank's arguments (one tuple)" :
                                               "has $want ranks, so it takes $want tuples of arguments") *
                                              ", but $(length(rank_args)) were given"))
    return [Tuple(a) for a in rank_args]
end

"""Runs the kernel on the team over `grid` (an integer or a tuple of 1 to 3) and returns when it
has finished. On a host team every rank runs at once, each over the grid, and `rank_args` holds
every rank's arguments: a vector of one tuple per rank (rank 0's first) or a function of the rank
(0-based) giving its tuple; each is checked as `launch` checks arguments (pointers: Arrays, such
as `unsafe_wrap`s of `ptr`'s addresses). The kernel must be compiled for "cpu" or "interp". On a
GPU team (join_team) only this process's rank runs, with the one tuple of a vector or the
function's tuple for its rank, and the kernel must be compiled for "cuda". A failure on any rank
throws a TriError naming it ("rank 2: file:line:col: error: ..."); a wait that times out throws
TRI_ERROR_RUNTIME (set_wait_timeout!). A kernel with `wait` may have at most 1024 program
instances over all ranks (TRI_ERROR_LIMIT_EXCEEDED)."""
function launch(k::Kernel, t::Team, grid, rank_args)
    gx, gy, gz = grid3(grid)
    if !t.gpu && on_device(k)
        throw(TriError(TRI_ERROR_UNSUPPORTED, "kernel @$(k.name) was compiled for \"cuda\", but a host team " *
                                              "(Team(ctx, ...)) runs \"cpu\" and \"interp\" kernels; a GPU team is joined with join_team"))
    end
    per_rank = team_rank_args(k, t, rank_args)
    raw = TriArg[]
    for args in per_rank
        append!(raw, encode_all(k, args))
    end
    GC.@preserve t per_rank raw begin
        check(ccall((:tri_team_launch, libtri), Int32,
                    (Ptr{Cvoid}, Ptr{Cvoid}, UInt32, UInt32, UInt32, Ptr{TriArg}, UInt32), live(k.ptr, "the kernel"),
                    live(t.ptr, "the team"), gx, gy, gz, raw, length(k.params)))
    end
    return nothing
end

"""Launches this process's rank of a GPU team's kernel (compiled for "cuda") over `grid` on
`stream` (nothing: the default stream of the team's context; a Ptr, an integer handle, or a
CuStream) and returns without waiting, as `launch` does for "cuda" kernels: `args` are this
rank's (DevicePtrs or device arrays, numbers), kept allocated by the caller until the work is
done (barrier). A TriError with TRI_ERROR_INVALID_ARGUMENT on a host team (use `launch`)."""
function launch_async(k::Kernel, t::Team, grid, args...; stream = nothing)
    gx, gy, gz = grid3(grid)
    raw = encode_all(k, args)
    GC.@preserve t args raw begin
        check(ccall((:tri_team_launch_async, libtri), Int32,
                    (Ptr{Cvoid}, Ptr{Cvoid}, UInt32, UInt32, UInt32, Ptr{TriArg}, UInt32, Ptr{Cvoid}),
                    live(k.ptr, "the kernel"), live(t.ptr, "the team"), gx, gy, gz, raw, length(raw), stream_ptr(stream)))
    end
    return nothing
end

"""Makes the unique id of a new GPU team (TRI_TEAM_ID_BYTES bytes), for rank 0 to send to the
other processes by any means (a pipe, a file, MPI, a socket); the process that makes it must
join the team as rank 0. A TriError with TRI_ERROR_UNSUPPORTED when NVSHMEM's host library
cannot be loaded (the message says how to point Tri at it: \$TRI_NVSHMEM_LIB)."""
function make_team_id(ctx::Context)
    id = Vector{UInt8}(undef, TRI_TEAM_ID_BYTES)
    check(ccall((:tri_team_make_id, libtri), Int32, (Ptr{Cvoid}, Ptr{UInt8}, Csize_t), live(ctx.ptr, "the context"), id,
                length(id)))
    return id
end

"""Joins the GPU team of `id` (from make_team_id) as rank `rank` of `num_ranks` (0-based), on CUDA
device `device` (0-based), whose primary context becomes current on the calling thread; each
rank's heap is `heap_bytes_per_rank` bytes (rounded up to 64) of that GPU's memory, zeroed.
Blocks until every rank has joined; one GPU team per process at a time. `alloc`, `free!` and
`close` are collective on it (every rank makes the same calls in the same order), `ptr` gives
device addresses, `launch` runs this rank's kernel and waits for it, `launch_async` queues it.
The team has no finalizer: call `close` on every rank."""
function join_team(ctx::Context, id::AbstractVector{UInt8}, rank::Integer, num_ranks::Integer, device::Integer,
                   heap_bytes_per_rank::Integer)
    bytes = Vector{UInt8}(id)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_team_join, libtri), Int32,
                (Ptr{Cvoid}, Ptr{UInt8}, Csize_t, UInt32, UInt32, UInt32, UInt64, Ref{Ptr{Cvoid}}),
                live(ctx.ptr, "the context"), bytes, length(bytes), rank, num_ranks, device, heap_bytes_per_rank, out))
    return Team(out[], ctx, Int(num_ranks), Int(rank), true)
end

# ---- Autotuning (tri_tune, docs/tune.md)
#
# The space is a Julia value; each `tune` call builds the C space from it and releases it. A
# per-config grid is computed in Julia for every config before the call and handed to the library
# through a @cfunction that copies it from a table (the library calls it on the thread that called
# tri_tune, the Julia thread running `tune`); the configs of a product are read back from the C
# space (tri_tune_space_count, tri_tune_space_value), so the filter is the library's own.

"""One config of a tuning space: constexpr values by name (in order; they add to or replace the
compile options' values), warps (1, 2, 4, 8, 16 or 32; host targets ignore them) and stages (0,
the target's default, to 4): `TuneConfig("BLOCK" => 256; num_warps = 8)`. `c["BLOCK"]` reads a
value; "warps" and "stages" read the other two."""
struct TuneConfig
    constexprs::Vector{Pair{String,Int64}}
    num_warps::Int
    num_stages::Int
end
TuneConfig(constexprs::Pair...; num_warps::Integer = 4, num_stages::Integer = 0) =
    TuneConfig(Pair{String,Int64}[String(k) => Int64(v) for (k, v) in constexprs], Int(num_warps), Int(num_stages))

Base.:(==)(a::TuneConfig, b::TuneConfig) =
    a.constexprs == b.constexprs && a.num_warps == b.num_warps && a.num_stages == b.num_stages
Base.hash(c::TuneConfig, h::UInt) = hash((c.constexprs, c.num_warps, c.num_stages), hash(TuneConfig, h))

function Base.getindex(c::TuneConfig, name::AbstractString)
    for (k, v) in c.constexprs
        k == name && return v
    end
    name == "warps" && return Int64(c.num_warps)
    name == "stages" && return Int64(c.num_stages)
    throw(KeyError(name))
end

"""The product of value lists (tri_tune_space_add_product): every combination of the constexprs'
values (the first name varies slowest), times each of `warps` (none: 4) and each of `stages`
(none: 0; stages vary fastest), kept where `filter` is nonzero, an integer expression over the
names, `warps` and `stages` with C's operators (`"BM * BN <= 32768 && warps <= BM / 16"`):
`TuneProduct("BLOCK" => [128, 256, 512, 1024]; filter = "BLOCK >= 256")`."""
struct TuneProduct
    values::Vector{Pair{String,Vector{Int64}}}
    warps::Vector{Int32}
    stages::Vector{Int32}
    filter::Union{Nothing,String}
end
TuneProduct(values::Pair...; warps = Int[], stages = Int[], filter::Union{Nothing,AbstractString} = nothing) =
    TuneProduct(Pair{String,Vector{Int64}}[String(k) => Int64[x for x in v] for (k, v) in values],
                Int32[w for w in warps], Int32[x for x in stages], filter === nothing ? nothing : String(filter))

"""One config's outcome: `status` is TRI_OK (0) or the error that skipped it (its compile or
launch failed, or it was pruned: TRI_ERROR_LIMIT_EXCEEDED) with `error` its message;
`median_ns` is set for a measured config."""
struct TuneTrial
    index::Int   # 0-based, as tri numbers configs
    config::TuneConfig
    status::Int32
    error::Union{Nothing,String}
    median_ns::Union{Nothing,Float64}
end

"""What `tune` found: the chosen config's index (0-based, as tri numbers configs), the config
and its grid (launch the returned kernel with it), where the answer came from ("benchmark",
"stored", "imported" or "default": frozen with no result, config 0), every config's outcome, and
the result as the library wrote it (JSON, docs/tune.md)."""
struct TuneResult
    best::Int
    config::TuneConfig
    grid::NTuple{3,Int}
    source::String
    trials::Vector{TuneTrial}
    json::String
end

function nul_free(s::AbstractString, what::AbstractString)
    occursin('\0', s) && throw(TriError(TRI_ERROR_INVALID_ARGUMENT, "$what $(repr(s)) contains a NUL character"))
    return String(s)
end

function space_count(space::Ptr{Cvoid})
    n = Ref{UInt32}(0)
    check(ccall((:tri_tune_space_count, libtri), Int32, (Ptr{Cvoid}, Ref{UInt32}), space, n))
    return Int(n[])
end

function space_value(space::Ptr{Cvoid}, index::Integer, name::AbstractString)
    v = Ref{Int64}(0)
    check(ccall((:tri_tune_space_value, libtri), Int32, (Ptr{Cvoid}, UInt32, Cstring, Ref{Int64}), space, index, name,
                v))
    return v[]
end

# Appends an entry of the space; returns the configs it appended.
function add_to_space(space::Ptr{Cvoid}, c::TuneConfig)
    names = String[nul_free(k, "constexpr name") for (k, _) in c.constexprs]
    values = Int64[v for (_, v) in c.constexprs]
    ptrs = Ptr{UInt8}[pointer(n) for n in names]   # Julia strings end with a NUL
    GC.@preserve names values begin
        check(ccall((:tri_tune_space_add_config, libtri), Int32,
                    (Ptr{Cvoid}, Ptr{Ptr{UInt8}}, Ptr{Int64}, UInt32, Int32, Int32, Ptr{UInt32}), space, ptrs, values,
                    length(values), c.num_warps, c.num_stages, C_NULL))
    end
    return [c]
end

function add_to_space(space::Ptr{Cvoid}, p::TuneProduct)
    names = String[nul_free(k, "constexpr name") for (k, _) in p.values]
    lists = Vector{Int64}[v for (_, v) in p.values]
    ptrs = Ptr{UInt8}[pointer(n) for n in names]
    vptrs = Ptr{Int64}[pointer(v) for v in lists]
    counts = UInt32[length(v) for v in lists]
    filter = p.filter === nothing ? nothing : nul_free(p.filter, "filter")
    before = space_count(space)
    added = Ref{UInt32}(0)
    GC.@preserve names lists filter p begin
        check(ccall((:tri_tune_space_add_product, libtri), Int32,
                    (Ptr{Cvoid}, Ptr{Ptr{UInt8}}, Ptr{Ptr{Int64}}, Ptr{UInt32}, UInt32, Ptr{Int32}, UInt32, Ptr{Int32},
                     UInt32, Ptr{UInt8}, Ref{UInt32}),
                    space, ptrs, vptrs, counts, length(names), p.warps, length(p.warps), p.stages, length(p.stages),
                    filter === nothing ? Ptr{UInt8}(C_NULL) : pointer(filter), added))
    end
    after = space_count(space)
    after - before == added[] ||
        throw(TriError(TRI_ERROR_INTERNAL, "tri_tune_space_add_product added $(added[]) configs, but the space grew by $(after - before)"))
    return [TuneConfig(Pair{String,Int64}[n => space_value(space, i, n) for n in names],
                       Int(space_value(space, i, "warps")), Int(space_value(space, i, "stages"))) for i in before:after-1]
end

# tri_tune_grid_fn: `user` is a table of UInt32, the number of configs and then each config's
# grid (x, y, z); the library calls it on the thread running `tune`.
function tune_grid_callback(user::Ptr{Cvoid}, config::UInt32, grid::Ptr{UInt32})
    table = Ptr{UInt32}(user)
    if config < unsafe_load(table, 1)
        for d in 1:3
            unsafe_store!(grid, unsafe_load(table, 1 + 3 * Int(config) + d), d)
        end
    end
    return nothing
end

"""One step of a tuning run, as `tune`'s `progress` function receives it: config `index` (0-based;
`config`) finished `stage` (:compile or :benchmark), the `done`-th of `count` to; `status` is
TRI_OK or the error that skipped it; `median_ns` a benchmark's median (nothing otherwise)."""
struct TuneProgress
    stage::Symbol
    index::Int
    config::TuneConfig
    done::Int
    count::Int
    status::Int32
    median_ns::Union{Nothing,Float64}
end

# tri_tune_stage_fn: `user` points at a (function, configs, error) holder; the library calls it on
# the thread running `tune`. An exception is kept and thrown once tri_tune has returned.
mutable struct ProgressSink
    fn::Function
    configs::Vector{TuneConfig}
    error::Any
end

function tune_stage_callback(user::Ptr{Cvoid}, stage::Int32, config::UInt32, done::UInt32, count::UInt32,
                             status::Int32, median_ns::Float64)
    sink = unsafe_pointer_to_objref(user)::ProgressSink
    sink.error === nothing || return nothing
    try
        bench = stage == TRI_TUNE_STAGE_BENCHMARK
        sink.fn(TuneProgress(bench ? :benchmark : :compile, Int(config), sink.configs[Int(config)+1], Int(done),
                             Int(count), status, bench && status == TRI_OK ? median_ns : nothing))
    catch e
        sink.error = e
    end
    return nothing
end

"""Autotunes kernel `name` (tri_tune, docs/tune.md) over `space`, a vector of TuneConfigs and
TuneProducts (configs are numbered from 0 in order; the number breaks ties) or one of them,
and returns `(kernel, result::TuneResult)`: the fastest config compiled with `options` plus its
constexprs, warps and stages. `args` are `launch`'s; buffers the kernel writes are restored
before every launch and left as they were. `grid` is a grid, or a function of a TuneConfig giving
its grid (`c -> cld(n, c["BLOCK"])`). `key`: names of integer parameters whose values select a
stored result (`bucket` rounds them up to powers of two); `repetitions`: timed launches per
config (default 10). A stored or imported result answers without benchmarking; `frozen` never
benchmarks (no result: config 0), `retune` ignores stored results, `use_other_device` uses an
imported result made on another device. Configs whose compile or launch fails are skipped and
reported in `result.trials`; `tune` throws only when none runs. `progress`, a function of a
TuneProgress, is called as each config finishes compiling and benchmarking (on this thread)."""
function tune(m::IRModule, name::AbstractString, space, args...; grid, options::CompileOptions = CompileOptions(),
              key = String[], bucket::Bool = false, repetitions::Union{Nothing,Integer} = nothing,
              frozen::Bool = false, retune::Bool = false, use_other_device::Bool = false, stream = nothing,
              progress::Union{Nothing,Function} = nothing)
    entries = space isa Union{TuneConfig,TuneProduct} ? [space] : space
    # The arguments are encoded as a launch of this kernel would encode them.
    shell = Kernel(C_NULL, String(name), options.target, promised(runtime_params(function_info(m, name)), options),
                   m.context)
    raw = encode_all(shell, args)
    sp = Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:tri_tune_space_create, libtri), Int32, (Ref{Ptr{Cvoid}},), sp))
    cspace = sp[]
    out_k = Ref{Ptr{Cvoid}}(C_NULL)
    out_r = Ref{Ptr{Cvoid}}(C_NULL)
    configs = TuneConfig[]
    table = UInt32[0]
    fixed = (1, 1, 1)
    sink = nothing
    try
        for e in entries
            e isa Union{TuneConfig,TuneProduct} ||
                throw(TriError(TRI_ERROR_INVALID_ARGUMENT, "tune: the space holds TuneConfigs and TuneProducts, not a $(typeof(e))"))
            append!(configs, add_to_space(cspace, e))
        end
        idx = UInt32[]
        for k in key
            i = findfirst(p -> p.name == string(k), shell.params)
            i === nothing && throw(TriError(TRI_ERROR_INVALID_ARGUMENT, "tune: kernel @$name has no runtime parameter %$k"))
            push!(idx, i - 1)
        end
        check(ccall((:tri_tune_space_set_key, libtri), Int32, (Ptr{Cvoid}, Ptr{UInt32}, UInt32, Int32), cspace, idx,
                    length(idx), bucket ? 1 : 0))
        if repetitions !== nothing
            check(ccall((:tri_tune_space_set_repetitions, libtri), Int32, (Ptr{Cvoid}, UInt32), cspace, repetitions))
        end
        grid_fn = C_NULL
        if grid isa Function
            table[1] = length(configs)
            for c in configs
                for d in grid3(grid(c))
                    push!(table, UInt32(d))
                end
            end
            grid_fn = @cfunction(tune_grid_callback, Cvoid, (Ptr{Cvoid}, UInt32, Ptr{UInt32}))
        else
            fixed = grid3(grid)
        end
        sink = progress === nothing ? nothing : ProgressSink(progress, configs, nothing)
        if sink !== nothing
            check(ccall((:tri_tune_space_set_progress, libtri), Int32, (Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}), cspace,
                        @cfunction(tune_stage_callback, Cvoid,
                                   (Ptr{Cvoid}, Int32, UInt32, UInt32, UInt32, Int32, Float64)),
                        pointer_from_objref(sink)))
        end
        flags = (frozen ? TRI_TUNE_FROZEN : 0) | (retune ? TRI_TUNE_RETUNE : 0) |
                (use_other_device ? TRI_TUNE_USE_OTHER_DEVICE : 0)
        opts = make_options(options)
        try
            GC.@preserve args raw table sink begin
                check(ccall((:tri_tune, libtri), Int32,
                            (Ptr{Cvoid}, Cstring, Ptr{Cvoid}, Ptr{Cvoid}, UInt32, UInt32, UInt32, Ptr{Cvoid}, Ptr{TriArg},
                             UInt32, UInt32, Ptr{Cvoid}, Ptr{Cvoid}, Ptr{Cvoid}, Ref{Ptr{Cvoid}}, Ref{Ptr{Cvoid}}),
                            live(m.ptr, "the module"), name, opts, cspace, fixed[1], fixed[2], fixed[3],
                            stream_ptr(stream), raw, length(raw), flags, C_NULL, grid_fn,
                            grid_fn == C_NULL ? C_NULL : pointer(table), out_k, out_r))
            end
        finally
            ccall((:tri_compile_options_destroy, libtri), Cvoid, (Ptr{Cvoid},), opts)
        end
    finally
        ccall((:tri_tune_space_destroy, libtri), Cvoid, (Ptr{Cvoid},), cspace)
    end
    k = finalizer(close, Kernel(out_k[], String(name), options.target, shell.params, m.context))
    if sink !== nothing && sink.error !== nothing
        close(k)
        ccall((:tri_blob_destroy, libtri), Cvoid, (Ptr{Cvoid},), out_r[])
        throw(sink.error)
    end
    json = String(blob_bytes(out_r[]))
    count = Ref{UInt32}(0)
    check(ccall((:tri_kernel_arg_count, libtri), Int32, (Ptr{Cvoid}, Ref{UInt32}), k.ptr, count))
    count[] == length(k.params) ||
        throw(TriError(TRI_ERROR_INTERNAL, "kernel @$name reflects $(length(k.params)) runtime parameters but takes $(count[]) arguments"))
    root = parse_json(json)
    list = get(root, "configs", nothing)
    best = get(root, "best", nothing)
    (list isa Vector && best isa Int64 && length(list) == length(configs) && 0 <= best < length(configs)) ||
        throw(TriError(TRI_ERROR_INTERNAL, "tri_tune gave a result for another space than the $(length(configs)) configs given"))
    trials = [TuneTrial(i - 1, configs[i], Int32(get(c, "status", TRI_ERROR_INTERNAL)), get(c, "error", nothing),
                        get(c, "median_ns", nothing) === nothing ? nothing : Float64(c["median_ns"]))
              for (i, c) in enumerate(list)]
    chosen = grid isa Function ? (Int(table[2+3*best]), Int(table[3+3*best]), Int(table[4+3*best])) :
             (Int(fixed[1]), Int(fixed[2]), Int(fixed[3]))
    return k, TuneResult(best, configs[best+1], chosen, String(get(root, "source", "")), trials, json)
end

"""Writes every tuning result the context knows (stored in its cache directory, made or imported
here) to a JSON file at `path` (replacing it); returns how many."""
function tune_export(c::Context, path::AbstractString)
    n = Ref{UInt32}(0)
    check(ccall((:tri_tune_export, libtri), Int32, (Ptr{Cvoid}, Cstring, Ref{UInt32}), live(c.ptr, "the context"),
                path, n))
    return Int(n[])
end

"""Makes the results of a tune_export file the context's answers for their keys (ahead of stored
ones); returns how many were imported. A damaged file imports nothing (TRI_ERROR_CORRUPT_BINARY)."""
function tune_import(c::Context, path::AbstractString)
    n = Ref{UInt32}(0)
    check(ccall((:tri_tune_import, libtri), Int32, (Ptr{Cvoid}, Cstring, Ref{UInt32}), live(c.ptr, "the context"),
                path, n))
    return Int(n[])
end

"""One tuning counter (TRI_TUNE_STAT_*), counting the context's tune calls since it was made."""
function tune_stat(c::Context, stat::Integer)
    v = Ref{UInt64}(0)
    check(ccall((:tri_tune_stat, libtri), Int32, (Ptr{Cvoid}, Int32, Ref{UInt64}), live(c.ptr, "the context"), stat,
                v))
    return v[]
end

"""Every tuning counter, as a NamedTuple: trials (configs benchmarked), stored (calls answered by
a stored or imported result), defaults (frozen calls that found none), pruned (configs pruned
before compiling), other_device (calls that met an imported result made on another device)."""
tune_stats(c::Context) =
    (trials = tune_stat(c, TRI_TUNE_STAT_TRIALS), stored = tune_stat(c, TRI_TUNE_STAT_STORED),
     defaults = tune_stat(c, TRI_TUNE_STAT_DEFAULTS), pruned = tune_stat(c, TRI_TUNE_STAT_PRUNED),
     other_device = tune_stat(c, TRI_TUNE_STAT_OTHER_DEVICE))

"""The SVG picture of a tuning result (tri_tune_plot, the renderer `tri tune --plot` and every
binding share; docs/tune.md "Plots"): a `TuneResult`, or one result's JSON as `result.json`, a
stored result file or one entry of a `tune_export` file holds it. `title` heads the picture
(`nothing`: "@kernel on target"). Two or more values that vary give a heatmap over the first two
(each cell the fastest config with those values), one gives a bar per config; the winner is
outlined and named. What is not a tuning result throws a TriError (TRI_ERROR_CORRUPT_BINARY)."""
function tune_svg(json::AbstractString; title::Union{Nothing,AbstractString} = nothing)
    bytes = Vector{UInt8}(codeunits(String(json)))
    n = length(bytes)
    push!(bytes, 0x00)  # never empty, so pointer(bytes) is never NULL; the library reads n bytes
    t = title === nothing ? nothing : nul_free(title, "title")
    out = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve bytes t begin
        check(ccall((:tri_tune_plot, libtri), Int32, (Ptr{UInt8}, Csize_t, Ptr{UInt8}, Ref{Ptr{Cvoid}}),
                    pointer(bytes), n, t === nothing ? Ptr{UInt8}(C_NULL) : pointer(t), out))
    end
    return String(blob_bytes(out[]))
end
tune_svg(r::TuneResult; title::Union{Nothing,AbstractString} = nothing) = tune_svg(r.json; title = title)

# ---- A small JSON reader for tri_tune's result (Julia's standard library has none): objects
# become Dict{String,Any}, arrays Vector{Any}, integers Int64, other numbers Float64, null nothing.

const JSON_QUOTE = 0x22      # the double quote
const JSON_BACKSLASH = 0x5c
const JSON_NUMBER = codeunits("-+.eE0123456789")
const JSON_ESCAPES = codeunits("\"\\/bfnrt")
const JSON_ESCAPED = codeunits("\"\\/\b\f\n\r\t")

json_fail(i, what) = throw(TriError(TRI_ERROR_INTERNAL, "tri_tune gave JSON this module cannot read: $what at byte $i"))

function json_ws(s, i)
    while i <= length(s) && s[i] in (0x20, 0x09, 0x0a, 0x0d)
        i += 1
    end
    return i
end

function parse_json(text::AbstractString)
    s = Vector{UInt8}(codeunits(String(text)))
    value, i = json_value(s, 1, 0)
    json_ws(s, i) > length(s) || json_fail(i, "unexpected text")
    return value
end

function json_value(s, i, depth)
    depth > 128 && json_fail(i, "nesting too deep")
    i = json_ws(s, i)
    i > length(s) && json_fail(i, "unexpected end")
    c = s[i]
    if c == UInt8('{')
        d = Dict{String,Any}()
        i = json_ws(s, i + 1)
        (i <= length(s) && s[i] == UInt8('}')) && return (d, i + 1)
        while true
            i = json_ws(s, i)
            (i <= length(s) && s[i] == JSON_QUOTE) || json_fail(i, "expected a member name")
            k, i = json_string(s, i)
            i = json_ws(s, i)
            (i <= length(s) && s[i] == UInt8(':')) || json_fail(i, "expected ':'")
            v, i = json_value(s, i + 1, depth + 1)
            d[k] = v
            i = json_ws(s, i)
            i <= length(s) || json_fail(i, "unexpected end")
            if s[i] == UInt8(',')
                i += 1
            elseif s[i] == UInt8('}')
                return d, i + 1
            else
                json_fail(i, "expected ',' or '}'")
            end
        end
    elseif c == UInt8('[')
        a = Any[]
        i = json_ws(s, i + 1)
        (i <= length(s) && s[i] == UInt8(']')) && return (a, i + 1)
        while true
            v, i = json_value(s, i, depth + 1)
            push!(a, v)
            i = json_ws(s, i)
            i <= length(s) || json_fail(i, "unexpected end")
            if s[i] == UInt8(',')
                i += 1
            elseif s[i] == UInt8(']')
                return a, i + 1
            else
                json_fail(i, "expected ',' or ']'")
            end
        end
    elseif c == JSON_QUOTE
        return json_string(s, i)
    end
    for (word, v) in (("true", true), ("false", false), ("null", nothing))
        w = codeunits(word)
        if i + length(w) - 1 <= length(s) && view(s, i:i+length(w)-1) == w
            return v, i + length(w)
        end
    end
    j = i
    while j <= length(s) && s[j] in JSON_NUMBER
        j += 1
    end
    text = String(s[i:j-1])
    n = tryparse(Int64, text)
    n === nothing && (n = tryparse(Float64, text))
    n === nothing && json_fail(i, "expected a value")
    return n, j
end

function json_hex4(s, i)
    i + 3 <= length(s) || json_fail(i, "a short \\u escape")
    v = tryparse(UInt32, String(s[i:i+3]); base = 16)
    v === nothing && json_fail(i, "a bad \\u escape")
    return v, i + 4
end

function json_string(s, i)
    out = UInt8[]
    i += 1   # the opening quote
    while true
        i > length(s) && json_fail(i, "an unterminated string")
        c = s[i]
        if c == JSON_QUOTE
            return String(out), i + 1
        elseif c == JSON_BACKSLASH
            i + 1 <= length(s) || json_fail(i, "an unterminated string")
            e = s[i+1]
            i += 2
            if e == UInt8('u')
                cp, i = json_hex4(s, i)
                if 0xd800 <= cp < 0xdc00 && i + 1 <= length(s) && s[i] == JSON_BACKSLASH && s[i+1] == UInt8('u')
                    lo, i = json_hex4(s, i + 2)
                    0xdc00 <= lo < 0xe000 || json_fail(i, "a bad surrogate pair")
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00)
                end
                append!(out, codeunits(string(Char(cp))))
            else
                m = findfirst(==(e), JSON_ESCAPES)
                m === nothing && json_fail(i, "a bad escape")
                push!(out, JSON_ESCAPED[m])
            end
        else
            push!(out, c)
            i += 1
        end
    end
end

end # module
