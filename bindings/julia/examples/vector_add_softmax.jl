# A complete program on the Tri module: vector add and a fused row softmax compiled for the CPU
# (or the interpreter: TRI_TARGET=interp), checked against plain Julia, then the errors a user
# gets for a wrong argument and, in checked mode, for an array that is too short.
# NOT EXECUTED YET (no Julia toolchain where it was written; see ../README.md).
#
#   TRI_LIBRARY=build/src/libtri.so julia --project=bindings/julia bindings/julia/examples/vector_add_softmax.jl

using Tri
using Random

const EXAMPLES = get(ENV, "TRI_EXAMPLES_DIR", joinpath(@__DIR__, "..", "..", "..", "examples"))

function vector_add(ctx, target, n)
    kernel = Tri.compile(load_module(ctx, joinpath(EXAMPLES, "vector_add.tri")), "vector_add";
                     target = target, constexprs = Dict{String,Any}("BLOCK" => 1024))
    rng = MersenneTwister(1)
    x = rand(rng, Float32, n) .* 16 .- 8
    y = rand(rng, Float32, n) .* 16 .- 8
    out = zeros(Float32, n)
    Tri.launch(kernel, cld(n, 1024), x, y, out, n)
    out == x .+ y || error("vector_add: the result differs from Julia's")
    println("vector_add ($target): $n elements match Julia")
end

function softmax(ctx, target, rows, cols)
    kernel = Tri.compile(load_module(ctx, joinpath(EXAMPLES, "softmax.tri")), "softmax";
                     target = target, constexprs = Dict{String,Any}("BLOCK" => 1024))
    # Julia is column-major: a cols x rows matrix holds each row of the kernel contiguously.
    x = rand(MersenneTwister(2), Float32, cols, rows) .* 16 .- 8
    out = zeros(Float32, cols, rows)
    Tri.launch(kernel, rows, out, x, cols, cols, cols)
    for r in 1:rows
        row = Float64.(x[:, r])
        e = exp.(row .- maximum(row))
        want = e ./ sum(e)
        all(abs.(out[:, r] .- want) .<= 1e-6 .+ 1e-5 .* want) || error("softmax: row $r differs from Julia's")
    end
    println("softmax ($target): $rows x $cols matches Julia")
end

# An Int32 array where vector_add takes f32: refused before the call.
function wrong_argument(ctx)
    kernel = Tri.compile(load_module(ctx, joinpath(EXAMPLES, "vector_add.tri")), "vector_add")
    try
        Tri.launch(kernel, 1, ones(Int32, 16), ones(Float32, 16), zeros(Float32, 16), 16)
    catch e
        e isa TriError && e.code == Tri.TRI_ERROR_LAUNCH_ARGS && return e
        rethrow()
    end
    error("an Int32 array for %x must be refused")
end

# A 50-element x for n = 64: the interpreter's checked mode reports the first load past its end.
function too_short(ctx)
    kernel = Tri.compile(load_module(ctx, joinpath(EXAMPLES, "vector_add.tri")), "vector_add";
                     target = "interp", checked = true, constexprs = Dict{String,Any}("BLOCK" => 64))
    try
        Tri.launch(kernel, 1, ones(Float32, 50), ones(Float32, 64), zeros(Float32, 64), 64)
    catch e
        e isa TriError && e.code == Tri.TRI_ERROR_RUNTIME && return e
        rethrow()
    end
    error("a 50-element x for n = 64 must be reported")
end

function main()
    target = get(ENV, "TRI_TARGET", "cpu")
    small = target == "interp"
    ctx = Tri.Context()
    vector_add(ctx, target, small ? 3000 : 1_000_000)
    softmax(ctx, target, small ? 4 : 256, 1000)
    println("wrong argument -> ", sprint(showerror, wrong_argument(ctx)))
    println("array too short (checked mode) -> ", sprint(showerror, too_short(ctx)))
    close(ctx)
end

abspath(PROGRAM_FILE) == @__FILE__ && main()
