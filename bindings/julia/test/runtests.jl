# Tests of the Julia bindings, for `julia --project=bindings/julia -e 'using Pkg; Pkg.test()'`
# with TRI_LIBRARY set. NOT EXECUTED YET: no Julia toolchain where they were written; CTest
# runs check_ccalls.py instead, which checks every ccall against tri.h.
using Test
using Tri
# Tri exports only names no other package uses (src/Tri.jl); the verbs the tests call come in by name.
using Tri: Context, Team, kernel, alloc, barrier, cache_dir, cache_export, cache_import, cache_list, cache_prune,
           cache_stats, cancel, compile, device_count, devices, free!, function_info, functions, launch,
           launch_async, num_ranks, plan, ptr, rank, set_arg!, set_grid!, set_stream!, set_wait_timeout!,
           to_binary, to_text, tune, tune_export, tune_import, tune_stat, tune_stats, tune_svg

include(joinpath(@__DIR__, "..", "examples", "vector_add_softmax.jl"))

# Each rank sends 16 lanes to its right neighbour with put, its rank through symm_at, and a
# notify; it waits for its own signal and copies what arrived (and from whom) to %out.
const NEIGHBOUR_TRI = """
kernel @neighbour(%in: ptr<i32>, %buf: ptr<i32>, %from: ptr<i32>, %sig: ptr<i32>, %out: ptr<i32>) {
  %me = rank : i32
  %n = num_ranks : i32
  %c1 = const[value=1] : i32
  %c16 = const[value=16] : i32
  %me1 = add %me, %c1 : i32
  %next = srem %me1, %n : i32
  %r = arange[start=0, end=16] : <16 x i32>
  %ib = splat %in : <16 x ptr<i32>>
  %ip = addptr %ib, %r : <16 x ptr<i32>>
  %x = load %ip : <16 x i32>
  %bb = splat %buf : <16 x ptr<i32>>
  %bp = addptr %bb, %r : <16 x ptr<i32>>
  put %bp, %x, %next
  %peer = symm_at %from, %next : ptr<i32>
  store %peer, %me
  notify %sig, %c1, %next
  %t = wait %sig, %c1 : i32
  %ready = consume_token %bp, %t : <16 x ptr<i32>>
  %y = load %ready : <16 x i32>
  %fr = consume_token %from, %t : ptr<i32>
  %who = load %fr : i32
  %ob = splat %out : <16 x ptr<i32>>
  %op = addptr %ob, %r : <16 x ptr<i32>>
  store %op, %y
  %o16 = addptr %out, %c16 : ptr<i32>
  store %o16, %who
  return
}
"""

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

    @testset "launch plans" begin
        k = compile(load_module(ctx, joinpath(EXAMPLES, "vector_add.tri")), "vector_add"; constexprs = Dict{String,Any}("BLOCK" => 16))
        x = Float32.(0:39)
        y = Float32.(100:-1:61)
        out = fill(-1f0, 40)
        p = plan(k, 3, x, x, out, 37)
        launch(p)
        @test out[1:37] == 2 .* x[1:37] && all(out[38:40] .== -1)
        set_arg!(p, 2, y)
        launch(p)
        @test out[1:37] == x[1:37] .+ y[1:37]
        @test_throws TriError set_arg!(p, 1, 1.0)
        @test_throws TriError set_arg!(p, 5, 1)
        @test_throws TriError set_grid!(p, 2^31)
        @test_throws TriError set_stream!(p, 0x1234)
        fill!(out, -1)
        set_grid!(p, 2)
        launch(p)
        @test out[1:32] == x[1:32] .+ y[1:32] && all(out[33:40] .== -1)
        close(p)
        @test_throws TriError launch(p)
    end

    @testset "launches allocate nothing" begin
        # Julia's side of a launch: arguments encoded into an isbits tuple passed by reference, a
        # plan's launch one ccall. Warmed up first, so compilation is not counted.
        k = compile(load_module(ctx, joinpath(EXAMPLES, "vector_add.tri")), "vector_add")
        x = Float32.(1:1000)
        out = zeros(Float32, 1000)
        direct(k, x, out) = launch(k, 1, x, x, out, Int32(1000))
        direct(k, x, out)
        @test out == 2 .* x
        @test (@allocated direct(k, x, out)) == 0
        p = plan(k, 1, x, x, out, Int32(1000))
        launch(p)
        @test (@allocated launch(p)) == 0
        close(p)
    end

    @testset "gpu code, variants, cancel, limits" begin
        m = load_module(ctx, joinpath(EXAMPLES, "vector_add.tri"))
        g = compile(m, "vector_add"; target = "cuda", arch = "sm_90", num_warps = 8)
        @test occursin(".target sm_90", kernel_code(g, "ptx"))
        @test occursin("\"num_warps\": 8", kernel_code(g, "metadata"))
        @test occursin("target triple", kernel_code(compile(m, "vector_add"), "llvm"))
        @test occursin("tri.vector_add", kernel_code(compile(m, "vector_add"), "asm"))
        @test_throws TriError kernel_code(compile(m, "vector_add"), "ptx")
        @test_throws TriError compile(m, "vector_add"; target = "cuda", arch = "sm_90", num_warps = 3)
        @test_throws TriError launch(g, 1, ones(Float32, 4), ones(Float32, 4), ones(Float32, 4), 4)  # host arrays
        s = compile(m, "vector_add"; launch_specialization = true, max_variants = 2)
        x = ones(Float32, 160)
        launch(s, 1, x, x, similar(x), 160)
        @test occursin("\"max_variants\": 2", kernel_variants(s))
        spin = IRModule(ctx, "kernel @spin(%out: ptr<i32>, %n: i32) {\n  %c0 = const[value=0] : i32\n" *
                             "  %w = while %c0 {\n  ^(%i: i32):\n    %more = cmp[pred=sge] %i, %c0 : i1\n" *
                             "    condition %more, %i\n  } {\n  ^(%i2: i32):\n    %next = add %i2, %n : i32\n" *
                             "    yield %next\n  } : i32\n  store %out, %w\n  return\n}\n", "spin.tri")
        k = compile(spin, "spin")
        t = Threads.@spawn try
            launch(k, 4, zeros(Int32, 1), 0)
            nothing
        catch e
            e
        end
        sleep(0.3)
        cancel(ctx)
        e = fetch(t)
        @test e isa TriError && e.code == Tri.TRI_ERROR_CANCELLED
        small = Context(cache_dir = "", interp_memory_limit = 1000)
        i = compile(load_module(small, joinpath(EXAMPLES, "vector_add.tri")), "vector_add"; target = "interp")
        e = try
            launch(i, 4, ones(Float32, 4096), ones(Float32, 4096), zeros(Float32, 4096), 4096)
        catch err
            err
        end
        @test e isa TriError && e.code == Tri.TRI_ERROR_LIMIT_EXCEEDED
    end

    @testset "alignment" begin
        # A pointer that breaks its {align=16} fact is refused before the launch, on every target
        # (on "cuda" before a driver is needed).
        # @copy(%x: ptr<f32> {align=16}, %out: ptr<f32>, %n: i32)
        m = load_module(ctx, joinpath(@__DIR__, "..", "..", "..", "tests", "run", "copy_aligned.tri"))
        g = compile(m, "copy"; target = "cuda", arch = "sm_90")
        e = try
            launch(g, 1, DevicePtr(0x7f0000001004, 64, Tri.F32), DevicePtr(0x7f0000002000, 64, Tri.F32), 16)
        catch err
            err
        end
        @test e isa TriError && e.code == Tri.TRI_ERROR_LAUNCH_ARGS && occursin("{align=16}", e.message) &&
              occursin("0x7f0000001004", e.message)
        k = compile(m, "copy"; target = "cpu", arg_align = Dict(1 => 32))
        x = zeros(Float32, 64)
        @test_throws TriError launch(k, 1, x, unsafe_wrap(Array, pointer(x) + 4, 16), 16)
    end

    @testset "disk cache" begin
        dir = mktempdir()
        c = Context(cache_dir = joinpath(dir, "cache"), cache_max_bytes = 1 << 30)
        @test cache_dir(c) == joinpath(dir, "cache")
        compile(load_module(c, joinpath(EXAMPLES, "vector_add.tri")), "vector_add")
        s = cache_stats(c)
        @test s.stores == 1 && s.entries == 1 && s.max_bytes == 1 << 30 && s.enabled
        (e,) = cache_list(c)
        @test e.status == "ok" && e.target == "cpu" && e.kernel == "vector_add"
        @test cache_export(c, joinpath(dir, "b")) == 1
        @test cache_prune(c, 0) == 1 && isempty(cache_list(c))
        @test cache_import(c, joinpath(dir, "b")) == 1
        off = Context(cache_dir = "")
        @test cache_dir(off) == "" && !cache_stats(off).enabled
        @test_throws TriError cache_list(off)
    end

    @testset "devices and comments" begin
        n = try
            device_count(ctx)
        catch e
            @test e isa TriError && e.code == Tri.TRI_ERROR_UNSUPPORTED && occursin("no CUDA driver", e.message)
            nothing
        end
        if n !== nothing
            @test length(devices(ctx)) == n
        end
        m = IRModule(ctx, "// a comment\nkernel @k() {\n  return\n}\n", "k.tri")
        @test occursin("// a comment", to_text_with_comments(m)) && !occursin("//", to_text(m))
    end

    @testset "autotuning" begin
        # Module.tune over tri_tune on the CPU: a config that fails to compile is reported and the
        # others run, the chosen kernel computes out = x + y, a second call is answered from the
        # stored result, an exported result serves a fresh context in frozen mode, and a filtered
        # product yields the configs it keeps.
        vadd = joinpath(@__DIR__, "..", "..", "..", "tests", "run", "vadd.tri")
        n = 5000
        x = Float32.(0:n-1) .* 0.25f0 .- 100
        y = Float32.((0:n-1) .% 17)
        out = fill(7f0, n)
        grid_of(c) = cld(n, c["BLOCK"])
        space = [TuneConfig("BLOCK" => 256; num_warps = 4), TuneConfig("BLOCK" => 100),
                 TuneConfig("BLOCK" => 1024; num_stages = 1)]
        dir = mktempdir()
        c = Context(cache_dir = joinpath(dir, "cache"))
        m = load_module(c, vadd)
        k, res = tune(m, "vadd", space, x, y, out, n; grid = grid_of, key = ["n"], repetitions = 3)
        @test res.source == "benchmark" && res.best in (0, 2)
        @test occursin("\"best\"", res.json) && occursin("\"configs\"", res.json)
        @test length(res.trials) == 3 && res.trials[1].status == 0 && res.trials[3].status == 0
        @test res.trials[2].status != 0 && occursin("power of two", something(res.trials[2].error, ""))
        @test res.trials[2].median_ns === nothing && res.trials[1].median_ns > 0
        @test res.config == space[res.best+1] && res.grid == (grid_of(res.config), 1, 1)
        @test all(out .== 7)   # tune leaves the written buffer as it found it
        @test tune_stat(c, Tri.TRI_TUNE_STAT_TRIALS) == 2
        launch(k, res.grid, x, y, out, n)
        @test out == x .+ y
        # The picture, drawn by the library (tri_tune_plot): Julia's standard library has no XML
        # parser, so the checks are on the text: one <svg> root, every <text> and <rect> closed,
        # the title, a heatmap of BLOCK x stages with one winner, the failed BLOCK=100 config.
        svg = tune_svg(res)
        @test startswith(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"") && endswith(svg, "</svg>\n")
        @test count("<svg", svg) == 1 && count("<text", svg) == count("</text>", svg)
        @test count("<rect", svg) == count(r"<rect[^>]*/>", svg)
        @test occursin(">@vadd on cpu</text>", svg) && occursin(">BLOCK</text>", svg) && occursin(">failed</text>", svg)
        @test count("class=\"cell winner\"", svg) == 1 && occursin("winner: config $(res.best) (", svg)
        @test tune_svg(res.json) == svg
        @test occursin("<title>vadd &lt;sweep&gt;</title>", tune_svg(res; title = "vadd <sweep>"))
        @test_throws TriError tune_svg("{\"schema\": 1}")
        @test try tune_svg("{}"); false catch e; e.code == Tri.TRI_ERROR_CORRUPT_BINARY end
        # Progress: every config's compile (in any order), then its benchmark (in order).
        seen = Tri.TuneProgress[]
        tune(m, "vadd", space, x, y, out, n; grid = grid_of, repetitions = 2, retune = true,
             progress = p -> push!(seen, p))
        @test [p.stage for p in seen] == [:compile, :compile, :compile, :benchmark, :benchmark, :benchmark]
        @test sort([p.index for p in seen[1:3]]) == [0, 1, 2] && [p.done for p in seen[1:3]] == [1, 2, 3]
        @test [p.index for p in seen[4:6]] == [0, 1, 2] && seen[5].status != 0 && seen[5].median_ns === nothing
        @test seen[4].median_ns > 0 && seen[4].config == space[1]
        @test_throws ErrorException tune(m, "vadd", space, x, y, out, n; grid = grid_of, retune = true,
                                         progress = p -> error("stop"))
        before = tune_stats(c)
        _, again = tune(m, "vadd", space, x, y, out, n; grid = grid_of, key = ["n"], repetitions = 3)
        @test again.source == "stored" && again.best == res.best
        after = tune_stats(c)
        @test after.stored == before.stored + 1 && after.trials == before.trials
        @test tune_export(c, joinpath(dir, "tuned.json")) == 1
        c2 = Context(cache_dir = "")
        m2 = load_module(c2, vadd)
        _, none = tune(m2, "vadd", space, x, y, out, n; grid = grid_of, key = ["n"], frozen = true)
        @test none.source == "default" && none.best == 0 && tune_stats(c2).defaults == 1
        @test tune_import(c2, joinpath(dir, "tuned.json")) == 1
        k2, imported = tune(m2, "vadd", space, x, y, out, n; grid = grid_of, key = ["n"], frozen = true)
        @test imported.source == "imported" && imported.best == res.best && tune_stats(c2).trials == 0
        fill!(out, 0)
        launch(k2, imported.grid, x, y, out, n)
        @test out == x .+ y

        # A filtered product; then warps and stages multiply it, stages fastest, after a config.
        _, p = tune(m, "vadd", TuneProduct("BLOCK" => [128, 256, 512, 1024]; filter = "BLOCK >= 256"), x, y, out, n;
                    grid = grid_of, repetitions = 2)
        @test [t.config["BLOCK"] for t in p.trials] == [256, 512, 1024] && all(t.status == 0 for t in p.trials)
        seen = TuneConfig[]
        _, mixed = tune(m, "vadd",
                        [TuneConfig("BLOCK" => 64),
                         TuneProduct("BLOCK" => [256, 512]; warps = [2, 8], stages = [0, 2], filter = "warps * BLOCK >= 1024")],
                        x, y, out, n; grid = cfg -> (push!(seen, cfg); grid_of(cfg)), repetitions = 1, retune = true)
        got = [(t.config["BLOCK"], t.config.num_warps, t.config.num_stages) for t in mixed.trials]
        @test got == [(64, 4, 0), (256, 8, 0), (256, 8, 2), (512, 2, 0), (512, 2, 2), (512, 8, 0), (512, 8, 2)]
        @test [t.config for t in mixed.trials] == seen

        # Each config's grid reaches the library, all three numbers: a grid past the limits (x below
        # 2^31, y and z below 2^16) fails its config alone.
        bad = Dict(64 => (1 << 31, 1, 1), 128 => (40, 1 << 16, 1), 256 => (20, 1, 1 << 16))
        four = [TuneConfig("BLOCK" => b) for b in (64, 128, 256, 512)]
        _, g = tune(m2, "vadd", four, x, y, out, n; grid = cfg -> get(bad, cfg["BLOCK"], grid_of(cfg)), repetitions = 1)
        @test [t.status == 0 for t in g.trials] == [false, false, false, true] && g.best == 3 && g.grid == (10, 1, 1)
        two = four[3:4]

        @test_throws TriError tune(m2, "vadd", TuneConfig[], x, y, out, n; grid = 1)
        e = try
            tune(m2, "vadd", two, x, y, out, n; grid = 1, key = ["nope"])
        catch err
            err
        end
        @test e isa TriError && occursin("no runtime parameter %nope", e.message)
        @test_throws TriError tune(m2, "vadd", TuneProduct("BLOCK" => [256]; filter = "BLOCK >"), x, y, out, n; grid = 1)
        @test_throws TriError tune(m2, "vadd", two, x, y, n; grid = 1)   # an argument missing
        @test_throws TriError tune_import(c2, "/nonexistent/tuned.json")
    end

    @testset "teams" begin
        # Host teams (tri_team_*, docs/distributed.md) on the CPU, of 2 and 4 ranks: every rank
        # puts its input (written through `ptr`) into its right neighbour's `buf`, stores its rank
        # in the neighbour's `from` through symm_at, notifies the neighbour's `sig`, waits for its
        # own signal and copies what arrived into `out`, an ordinary Array of its own.
        neighbour = IRModule(ctx, NEIGHBOUR_TRI, "neighbour.tri")
        k = compile(neighbour, "neighbour"; target = "cpu")
        for n in (2, 4)
            team = Team(ctx, n, 4096)
            @test rank(team) == 0 && num_ranks(team) == n   # a host team reports rank 0
            @test set_wait_timeout!(team, 20_000) === team
            input = alloc(team, 16 * sizeof(Int32))
            buf = alloc(team, 16 * sizeof(Int32))
            from = alloc(team, sizeof(Int32))
            sig = alloc(team, sizeof(Int32))
            @test (input, buf, from, sig) == (0, 64, 128, 192)   # 64-byte granules, first fit
            wrap(r, offset, len) = unsafe_wrap(Array, Ptr{Int32}(ptr(team, r, offset)), len)
            for r in 0:n-1
                @test all(wrap(r, buf, 16) .== 0)   # zero-filled
                wrap(r, input, 16) .= Int32.(100 * r .+ (0:15))
            end
            outs = [fill(Int32(-1), 17) for _ in 1:n]
            args(r) = (wrap(r, input, 16), wrap(r, buf, 16), wrap(r, from, 1), wrap(r, sig, 1), outs[r+1])
            if n == 2
                launch(k, team, 1, [args(r) for r in 0:n-1])   # a tuple per rank
            else
                launch(k, team, 1, args)                       # or a function of the rank
            end
            for r in 0:n-1
                prev = mod(r - 1, n)
                @test outs[r+1][1:16] == Int32.(100 * prev .+ (0:15))
                @test outs[r+1][17] == prev
                @test wrap(r, sig, 1) == Int32[1]
            end
            barrier(team)   # a host team returns at once

            # Errors: a rank past the team, too few ranks' arguments, a GPU-team call, a double free.
            e = try
                ptr(team, n, 0)
            catch err
                err
            end
            @test e isa TriError && e.code == Tri.TRI_ERROR_INVALID_ARGUMENT
            @test e.message == "tri_team_ptr: rank $n, but the team has $n ranks"
            @test_throws TriError ptr(team, 0, 4096)
            @test_throws TriError launch(k, team, 1, [args(0)])
            e = try
                launch_async(k, team, 1, args(0)...)
            catch err
                err
            end
            @test e isa TriError && e.code == Tri.TRI_ERROR_INVALID_ARGUMENT && occursin("use tri_team_launch", e.message)
            free!(team, input)
            @test_throws TriError free!(team, input)
            @test alloc(team, 64) == 0   # first fit: the freed range
            close(team)
            @test_throws TriError alloc(team, 64)
        end

        # A wait whose signal never comes times out with its location and rank.
        stuck = compile(IRModule(ctx, "kernel @stuck(%sig: ptr<i32>) {\n  %c1 = const[value=1] : i32\n" *
                                      "  %t = wait %sig, %c1 : i32\n  return\n}\n", "stuck.tri"), "stuck")
        team = set_wait_timeout!(Team(ctx, 2, 64), 100)
        sig = alloc(team, 4)
        e = try
            launch(stuck, team, 1, r -> (unsafe_wrap(Array, Ptr{Int32}(ptr(team, r, sig)), 1),))
        catch err
            err
        end
        @test e isa TriError && e.code == Tri.TRI_ERROR_RUNTIME && startswith(e.message, "rank ")
        @test occursin("'wait' timed out after 100 ms", e.message)
        close(team)

        # GPU teams need NVSHMEM (and GPUs): without it, make_team_id says how to point Tri at it.
        id = try
            make_team_id(ctx)
        catch e
            @test e isa TriError && e.code == Tri.TRI_ERROR_UNSUPPORTED && occursin("NVSHMEM", e.message)
            nothing
        end
        if id !== nothing
            @test length(id) == Tri.TRI_TEAM_ID_BYTES
        end
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

# Packages (docs/aot.md): one made by `tri aot` (TRI_TOOL: the build's tool) loads and launches
# without compiling; with TRI_LIBRARY naming libtri_rt.so the same testset runs on the runtime alone.
@testset "packages" begin
    tool = get(ENV, "TRI_TOOL", "")
    @test !isempty(tool)
    dir = mktempdir()
    pkg = joinpath(dir, "vector_add.tripkg")
    run(`$tool aot $(joinpath(@__DIR__, "..", "..", "..", "examples", "vector_add.tri")) -o $pkg --target cpu
         --kernel vector_add:BLOCK=256 --kernel vector_add:BLOCK=1024`)
    ctx = Context()
    m = load_package(ctx, pkg)
    @test occursin("\"name\": \"vector_add\"", package_info(m))
    n = 3001
    for block in (256, 1024)
        k = kernel(m, "vector_add"; target = "cpu", constexprs = Dict{String,Any}("BLOCK" => block))
        x = Float32.(1:n) .* 0.5f0
        y = 3.0f0 .- Float32.(1:n)
        out = zeros(Float32, n)
        launch(k, cld(n, block), x, y, out, Int32(n))
        @test out == x .+ y
    end
    err = try
        kernel(m, "vector_add"; target = "cpu", constexprs = Dict{String,Any}("BLOCK" => 512))
        nothing
    catch e
        e
    end
    @test err isa TriError && err.code == Tri.TRI_ERROR_NOT_FOUND
    bytes = read(pkg)
    bytes[div(length(bytes), 2)] ⊻= 0x40
    @test_throws TriError load_package(ctx, bytes, "damaged.tripkg")
    close(ctx)
end
