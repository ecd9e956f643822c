# Tri from Julia: ccall wrappers over the C API (include/tri/tri.h) with Julia types, finalizers
# and exceptions. Arrays are host buffers; launch arguments are checked against the kernel's
# reflected signature before the call. NOT EXECUTED YET: no Julia toolchain was available where
# this was written; bindings/julia/check_ccalls.py checks every ccall here (symbol, argument
# count, C types) and the constants and tri_arg's layout against tri.h.
module Tri

export Context, IRModule, Kernel, CompileOptions, TriError, launch, compile, load_module, functions, function_info,
       to_text, to_binary, DType

# The library: TRI_LIBRARY names the file, otherwise the system's "libtri" (read when the module
# loads).
const libtri = get(ENV, "TRI_LIBRARY", "libtri")

# ---- Constants (the header's values; check_ccalls.py compares them)
const TRI_VERSION_MAJOR = 0
const TRI_VERSION_MINOR = 1
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

"""A Tri context: the root of modules and kernels. `cache_dir` is the compiled-kernel cache."""
mutable struct Context
    ptr::Ptr{Cvoid}
    function Context(; cache_dir::Union{Nothing,AbstractString} = nothing)
        opts = Ref{Ptr{Cvoid}}(C_NULL)
        check(ccall((:tri_context_options_create, libtri), Int32, (Ref{Ptr{Cvoid}},), opts))
        ctx = Ref{Ptr{Cvoid}}(C_NULL)
        try
            if cache_dir !== nothing
                check(ccall((:tri_context_options_set_cache_dir, libtri), Int32, (Ptr{Cvoid}, Cstring), opts[],
                            cache_dir))
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

"""How to compile: target ("cpu" or "interp"), checked mode (interp only), constexprs by name,
and alignment/divisibility promises by runtime parameter index (0-based)."""
Base.@kwdef struct CompileOptions
    target::String = "cpu"
    checked::Bool = false
    constexprs::Dict{String,Any} = Dict{String,Any}()
    arg_align::Dict{Int,Int} = Dict{Int,Int}()
    arg_divisible::Dict{Int,Int} = Dict{Int,Int}()
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
    k = finalizer(close, Kernel(out[], String(name), options.target, Param[], m.context))
    k.params = runtime_params(function_info(m, name))
    count = Ref{UInt32}(0)
    check(ccall((:tri_kernel_arg_count, libtri), Int32, (Ptr{Cvoid}, Ref{UInt32}), k.ptr, count))
    count[] == length(k.params) ||
        throw(TriError(TRI_ERROR_INTERNAL, "kernel @$name reflects $(length(k.params)) runtime parameters but takes $(count[]) arguments"))
    return k
end
compile(m::IRModule, name::AbstractString; kwargs...) = compile(m, name, CompileOptions(; kwargs...))

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

# ---- Launching

function encode(k::Kernel, i::Int, p::Param, value)
    where = "argument $(i - 1) (%$(p.name)) of kernel @$(k.name) is $(p.type_text)"
    if p.type_kind == TRI_TYPE_POINTER
        if !(value isa Array) || !haskey(JULIA_DTYPES, eltype(value)) || JULIA_DTYPES[eltype(value)] != p.dtype
            throw(TriError(TRI_ERROR_LAUNCH_ARGS,
                           "$where, so it takes an Array of $(irname(p.dtype)), but a $(typeof(value)) was given"))
        end
        return TriArg(UInt64(UInt(pointer(value))), UInt64(sizeof(value)), TRI_TYPE_POINTER, Int32(p.dtype))
    elseif p.type_kind == TRI_TYPE_SCALAR
        if isfloat(p.dtype)
            value isa Real && !(value isa Bool) ||
                throw(TriError(TRI_ERROR_LAUNCH_ARGS, "$where, so it takes a number, but a $(typeof(value)) was given"))
            return TriArg(reinterpret(UInt64, Float64(value)), 0, TRI_TYPE_SCALAR, Int32(p.dtype))
        end
        value isa Integer ||
            throw(TriError(TRI_ERROR_LAUNCH_ARGS, "$where, so it takes an integer, but a $(typeof(value)) was given"))
        bits = Dict(I1 => 1, I8 => 8, I16 => 16, I32 => 32, I64 => 64)[p.dtype]
        lo, hi = bits == 1 ? (0, 1) : bits == 64 ? (typemin(Int64), typemax(Int64)) :
                 (-(Int64(1) << (bits - 1)), (Int64(1) << bits) - 1)
        lo <= value <= hi || throw(TriError(TRI_ERROR_LAUNCH_ARGS, "$where, and $value does not fit in it"))
        return TriArg(reinterpret(UInt64, Int64(value)), 0, TRI_TYPE_SCALAR, Int32(p.dtype))
    end
    throw(TriError(TRI_ERROR_LAUNCH_ARGS, "$where, which a launch cannot pass"))
end

"""Runs the kernel over `grid` (an integer or a tuple of 1 to 3) and returns when it has
finished. Arrays for pointers (element type matching the pointee), numbers for scalars."""
function launch(k::Kernel, grid, args...)
    # A GPU target needs device buffers and a stream, which this module does not pass yet.
    k.target in ("cpu", "interp") ||
        throw(TriError(TRI_ERROR_UNSUPPORTED, "kernel @$(k.name) was compiled for target \"$(k.target)\"; this module launches host targets only (\"cpu\", \"interp\")"))
    g = grid isa Integer ? (grid,) : Tuple(grid)
    1 <= length(g) <= 3 || throw(TriError(TRI_ERROR_INVALID_ARGUMENT, "grid $grid: give 1 to 3 counts"))
    gx, gy, gz = (g..., 1, 1)[1:3]
    if length(args) != length(k.params)
        sig = join(["%$(p.name): $(p.type_text)" for p in k.params], ", ")
        throw(TriError(TRI_ERROR_LAUNCH_ARGS,
                       "kernel @$(k.name) takes $(length(k.params)) arguments ($sig), but $(length(args)) were given"))
    end
    raw = [encode(k, i, k.params[i], args[i]) for i in 1:length(args)]
    GC.@preserve args raw begin
        check(ccall((:tri_launch, libtri), Int32, (Ptr{Cvoid}, UInt32, UInt32, UInt32, Ptr{Cvoid}, Ptr{TriArg}, UInt32),
                    live(k.ptr, "the kernel"), gx, gy, gz, C_NULL, raw, length(raw)))
    end
    return nothing
end

end # module
