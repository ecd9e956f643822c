# Tests of the Julia bindings, for `julia --project=bindings/julia -e 'using Pkg; Pkg.test()'`
# with TRI_LIBRARY set. NOT EXECUTED YET: no Julia toolchain where they were written; CTest
# runs check_ccalls.py instead, which checks every ccall against tri.h.
using Test
using Tri

include(joinpath(@__DIR__, "..", "examples", "vector_add_softmax.jl"))

@testset "Tri" begin
    ctx = Context()

    @testset "example" begin
        vector_add(ctx, "cpu", 100_003)
        softmax(ctx, "cpu", 64, 1000)
        vector_add(ctx, "interp", 2049)
        softmax(ctx, "interp", 3, 777)
        @test occursin("argument 0 (%x) of kernel @vector_add is ptr<f32>", wrong_argument(ctx).message)
        @test occursin("argument %x (extent 200 bytes)", too_short(ctx).message)
    end

    @testset "errors" begin
        e = try
            IRModule(ctx, "kernel @k() {\n  bogus\n}\n", "bad.tri")
        catch err
            err
        end
        @test e isa TriError && e.code == Tri.TRI_ERROR_PARSE && startswith(e.message, "bad.tri:2:")
        @test startswith(sprint(showerror, e), "TRI_ERROR_PARSE: ")
        @test_throws TriError load_module(ctx, "/nonexistent/k.tri")
        m = load_module(ctx, joinpath(EXAMPLES, "vector_add.tri"))
        @test_throws TriError compile(m, "vector_add"; constexprs = Dict{String,Any}("BLOCK" => 24))
        @test_throws TriError compile(m, "vector_add"; target = "tpu")
        k = compile(m, "vector_add")
        x = ones(Float32, 8)
        @test_throws TriError launch(k, 1, x, x, x)
        @test_throws TriError launch(k, 1, x, x, x, 8.5)
        @test_throws TriError launch(k, (0, 1), x, x, x, 8)
        close(k)
        @test_throws TriError launch(k, 1, x, x, x, 8)
    end

    @testset "reflection and round trips" begin
        m = load_module(ctx, joinpath(EXAMPLES, "softmax.tri"))
        f = function_info(m, "softmax")
        @test [p.name for p in f.params] == ["out", "in", "in_row_stride", "out_row_stride", "n_cols", "BLOCK"]
        @test f.params[1].dtype == Tri.F32 && f.params[1].type_text == "ptr<f32>"
        @test f.params[6].constexpr && f.params[6].default == "1024"
        @test length(functions(m)) == 1
        again = IRModule(ctx, to_binary(m), "softmax.trib")
        @test to_text(again) == to_text(m)
    end

    @testset "threads" begin
        k = compile(load_module(ctx, joinpath(EXAMPLES, "vector_add.tri")), "vector_add")
        results = Vector{Bool}(undef, 4)
        Threads.@threads for t in 1:4
            x = Float32.(1:5000) .* t
            out = zeros(Float32, 5000)
            launch(k, cld(5000, 1024), x, x, out, 5000)
            results[t] = out == 2 .* x
        end
        @test all(results)
    end
    close(ctx)
end
