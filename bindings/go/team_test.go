// Teams (docs/distributed.md) on the "cpu" target: host teams of 2 and 4 ranks pass data around
// a ring through the symmetric heap with put, notify-by-signal and wait; the error paths carry
// the library's messages; the GPU-team functions, which need NVSHMEM and GPUs, fail cleanly here.
package tri_test

import (
	"errors"
	"sync"
	"testing"
	"time"
	"unsafe"

	tri "github.com/tri-jit/tri/bindings/go"
)

// ring: each rank puts its 16 inputs into its right neighbour's %recv with a signal, waits for
// its own signal (from its left neighbour), then stores recv + bias into %out (this rank's own
// memory, a Go slice) and its rank and the team's size into %who.
const ringIR = `
kernel @ring(%in: ptr<f32>, %recv: ptr<f32>, %sig: ptr<i32>, %out: ptr<f32>, %who: ptr<i32>, %bias: f32) {
  %me = rank : i32
  %nr = num_ranks : i32
  %one = const[value=1] : i32
  %r = arange[start=0, end=16] : <16 x i32>
  %ib = splat %in : <16 x ptr<f32>>
  %ip = addptr %ib, %r : <16 x ptr<f32>>
  %x = load %ip : <16 x f32>
  %rb = splat %recv : <16 x ptr<f32>>
  %rp = addptr %rb, %r : <16 x ptr<f32>>
  %mp1 = add %me, %one : i32
  %peer = srem %mp1, %nr : i32
  put %rp, %x, %peer, signal=%sig, signal_value=%one
  %tok = wait %sig, %one : i32
  %rp2 = consume_token %rp, %tok : <16 x ptr<f32>>
  %y = load %rp2 : <16 x f32>
  %bv = splat %bias : <16 x f32>
  %z = add %y, %bv : <16 x f32>
  %ob = splat %out : <16 x ptr<f32>>
  %op = addptr %ob, %r : <16 x ptr<f32>>
  store %op, %z
  %w1 = addptr %who, %one : ptr<i32>
  store %who, %me
  store %w1, %nr
  return
}

kernel @never(%sig: ptr<i32>) {
  %one = const[value=1] : i32
  %tok = wait %sig, %one : i32
  return
}
`

func teamKernel(t *testing.T, ctx *tri.Context, name string) *tri.Kernel {
	t.Helper()
	m, err := ctx.NewModule([]byte(ringIR), "ring.tri")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	k, err := m.Compile(name, &tri.CompileOptions{Target: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func newTeam(t *testing.T, ctx *tri.Context, ranks int, heap uint64) *tri.Team {
	t.Helper()
	team, err := ctx.NewTeam(ranks, heap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { team.Close() })
	return team
}

// heapF32 is rank r's copy of the n float32s at offset, viewed through Ptr.
func heapF32(t *testing.T, team *tri.Team, r int, offset uint64, n int) []float32 {
	t.Helper()
	p, err := team.Ptr(r, offset)
	if err != nil || p == nil {
		t.Fatalf("Ptr(%d, %d): %v, %v", r, offset, p, err)
	}
	return unsafe.Slice((*float32)(p), n)
}

func TestTeamRing(t *testing.T) {
	ctx := newContext(t)
	k := teamKernel(t, ctx, "ring")
	for _, ranks := range []int{2, 4} {
		team := newTeam(t, ctx, ranks, 1<<16)
		if r, n, err := team.Rank(); err != nil || r != 0 || n != ranks {
			t.Fatalf("Rank: %d of %d, %v", r, n, err)
		}
		if team.IsGPU() {
			t.Fatal("a host team reports IsGPU")
		}
		in, err := team.Alloc(16 * 4)
		if err != nil {
			t.Fatal(err)
		}
		recv, err := team.Alloc(16 * 4)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := team.Alloc(4)
		if err != nil {
			t.Fatal(err)
		}
		if in%64 != 0 || recv%64 != 0 || sig%64 != 0 || in == recv || recv == sig || in == sig {
			t.Fatalf("offsets %d, %d, %d: want distinct multiples of 64", in, recv, sig)
		}
		outs := make([][]float32, ranks)
		whos := make([][]int32, ranks)
		args := make([][]interface{}, ranks)
		for r := 0; r < ranks; r++ {
			x := heapF32(t, team, r, in, 16)
			for i := range x {
				if x[i] != 0 {
					t.Fatalf("rank %d: Alloc's memory is not zeroed", r)
				}
				x[i] = float32(100*r + i)
			}
			pr, _ := team.Ptr(r, recv)
			ps, _ := team.Ptr(r, sig)
			outs[r] = make([]float32, 16)
			whos[r] = []int32{-1, -1}
			args[r] = []interface{}{
				tri.Buffer{Ptr: unsafe.Pointer(&x[0]), Bytes: 64, DType: tri.F32},
				tri.Buffer{Ptr: pr, Bytes: 64, DType: tri.F32},
				tri.Buffer{Ptr: ps, Bytes: 4, DType: tri.I32},
				outs[r], whos[r], float32(0.5) * float32(r),
			}
		}
		if err := team.Launch(k, tri.Grid1(1), args...); err != nil {
			t.Fatalf("%d ranks: %v", ranks, err)
		}
		for r := 0; r < ranks; r++ {
			left := (r + ranks - 1) % ranks
			got := heapF32(t, team, r, recv, 16)
			for i := 0; i < 16; i++ {
				if want := float32(100*left + i); got[i] != want || outs[r][i] != want+0.5*float32(r) {
					t.Fatalf("%d ranks, rank %d, element %d: recv %v, out %v; want %v and %v", ranks, r, i, got[i],
						outs[r][i], want, want+0.5*float32(r))
				}
			}
			if whos[r][0] != int32(r) || whos[r][1] != int32(ranks) {
				t.Fatalf("%d ranks, rank %d: rank and num_ranks %v", ranks, r, whos[r])
			}
			ps, _ := team.Ptr(r, sig)
			if s := *(*int32)(ps); s != 1 {
				t.Fatalf("rank %d: signal %d, want 1", r, s)
			}
		}
		for _, off := range []uint64{in, recv, sig} {
			if err := team.Free(off); err != nil {
				t.Fatal(err)
			}
		}
		// First fit: with everything freed the next allocation is at the lowest offset again.
		again, err := team.Alloc(64)
		if err != nil || again != 0 {
			t.Fatalf("Alloc after Free: %d, %v; want offset 0", again, err)
		}
		if err := team.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := team.Alloc(64); !errors.Is(err, tri.ErrInvalidArgument) {
			t.Fatalf("Alloc on a closed team: %v", err)
		}
		if err := team.Launch(k, tri.Grid1(1), args...); !errors.Is(err, tri.ErrInvalidArgument) {
			t.Fatalf("Launch on a closed team: %v", err)
		}
		if err := team.Close(); err != nil {
			t.Fatal("a second Close:", err)
		}
	}
}

// Launches of one team from many goroutines at once, each with its own buffers.
func TestTeamConcurrentLaunches(t *testing.T) {
	ctx := newContext(t)
	k := teamKernel(t, ctx, "ring")
	const ranks, workers = 2, 4
	team := newTeam(t, ctx, ranks, 1<<16)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			in, err1 := team.Alloc(64)
			recv, err2 := team.Alloc(64)
			sig, err3 := team.Alloc(4)
			for _, err := range []error{err1, err2, err3} {
				if err != nil {
					errs <- err
					return
				}
			}
			outs := [ranks][]float32{make([]float32, 16), make([]float32, 16)}
			var args [][]interface{}
			for r := 0; r < ranks; r++ {
				pi, _ := team.Ptr(r, in)
				x := unsafe.Slice((*float32)(pi), 16)
				for i := range x {
					x[i] = float32(1000*w + 10*r + i)
				}
				pr, _ := team.Ptr(r, recv)
				ps, _ := team.Ptr(r, sig)
				args = append(args, []interface{}{tri.Buffer{Ptr: pi, Bytes: 64, DType: tri.F32},
					tri.Buffer{Ptr: pr, Bytes: 64, DType: tri.F32}, tri.Buffer{Ptr: ps, Bytes: 4, DType: tri.I32},
					outs[r], make([]int32, 2), float32(0)})
			}
			if err := team.Launch(k, tri.Grid1(1), args...); err != nil {
				errs <- err
				return
			}
			for r := 0; r < ranks; r++ {
				for i := 0; i < 16; i++ {
					if want := float32(1000*w + 10*(1-r) + i); outs[r][i] != want {
						errs <- errors.New("a concurrent launch read another launch's data")
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestTeamErrors(t *testing.T) {
	ctx := newContext(t)
	k := teamKernel(t, ctx, "ring")
	team := newTeam(t, ctx, 2, 1<<10)

	// A rank past the team: the library's message.
	_, err := team.Ptr(2, 0)
	wantError(t, err, tri.CodeInvalidArgument, "tri_team_ptr")
	_, err = team.Ptr(-1, 0)
	wantError(t, err, tri.CodeInvalidArgument, "-1")
	_, err = team.Ptr(0, 1<<20)
	wantError(t, err, tri.CodeInvalidArgument, "tri_team_ptr")
	if _, err := team.DevicePtr(0, 0, 4, tri.F32); !errors.Is(err, tri.ErrInvalidArgument) {
		t.Fatalf("DevicePtr on a host team: %v", err)
	}

	// Allocation errors: 0 bytes, more than the heap, an offset that is no allocation.
	_, err = team.Alloc(0)
	wantError(t, err, tri.CodeInvalidArgument, "tri_team_alloc")
	_, err = team.Alloc(1 << 20)
	wantError(t, err, tri.CodeOutOfMemory, "tri_team_alloc")
	wantError(t, team.Free(12345), tri.CodeInvalidArgument, "tri_team_free")
	wantError(t, team.SetWaitTimeout(-time.Second), tri.CodeInvalidArgument, "negative")

	sig, err := team.Alloc(4)
	if err != nil {
		t.Fatal(err)
	}
	ps0, _ := team.Ptr(0, sig)
	ps1, _ := team.Ptr(1, sig)
	bufs := [][]interface{}{}
	for r := 0; r < 2; r++ {
		p, _ := team.Ptr(r, sig)
		bufs = append(bufs, []interface{}{tri.Buffer{Ptr: p, Bytes: 4, DType: tri.F32}, tri.Buffer{Ptr: p, Bytes: 4,
			DType: tri.F32}, tri.Buffer{Ptr: p, Bytes: 4, DType: tri.I32}, make([]float32, 16), make([]int32, 2), 0.0})
	}
	// A wrong argument count in one rank's list, a wrong number of lists, a wrong type.
	err = team.Launch(k, tri.Grid1(1), bufs[0], bufs[1][:5])
	wantError(t, err, tri.CodeLaunchArgs, "rank 1: kernel @ring takes 6 arguments")
	err = team.Launch(k, tri.Grid1(1), bufs[0])
	wantError(t, err, tri.CodeLaunchArgs, "one argument list per rank, 2 lists, but 1 were given")
	bad := append([]interface{}{}, bufs[1]...)
	bad[3] = make([]int32, 16)
	err = team.Launch(k, tri.Grid1(1), bufs[0], bad)
	wantError(t, err, tri.CodeLaunchArgs, "rank 1: argument 3 (%out)")
	wantError(t, team.Launch(nil, tri.Grid1(1), bufs...), tri.CodeInvalidArgument, "no kernel")
	// Go memory reaches C only as direct call arguments: at most 16 slices over all ranks (heap
	// Buffers, which are C memory, do not count: TestTeamRing passes 12 of them on 4 ranks).
	team4 := newTeam(t, ctx, 4, 1<<10)
	var many [][]interface{}
	for r := 0; r < 4; r++ {
		many = append(many, []interface{}{make([]float32, 16), make([]float32, 16), make([]int32, 1),
			make([]float32, 16), make([]int32, 2), 0.0})
	}
	wantError(t, team4.Launch(k, tri.Grid1(1), many...), tri.CodeLaunchArgs, "more than 16 Go buffers")

	// A wait whose signal never comes times out with the library's message naming it.
	never := teamKernel(t, ctx, "never")
	if err := team.SetWaitTimeout(50 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = team.Launch(never, tri.Grid1(1), []interface{}{tri.Buffer{Ptr: ps0, Bytes: 4, DType: tri.I32}},
		[]interface{}{tri.Buffer{Ptr: ps1, Bytes: 4, DType: tri.I32}})
	wantError(t, err, tri.CodeRuntime, "timed out")
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("the 50 ms wait timeout took %v", d)
	}

	// A host team: Barrier returns at once; LaunchAsync is for GPU teams.
	if err := team.Barrier(); err != nil {
		t.Fatal("Barrier on a host team:", err)
	}
	err = team.LaunchAsync(never, 0, tri.Grid1(1), tri.Buffer{Ptr: ps0, Bytes: 4, DType: tri.I32})
	if te := wantError(t, err, tri.CodeInvalidArgument, ""); te.Message == "" {
		t.Fatal("LaunchAsync on a host team: no message")
	}

	// Teams the library refuses: no ranks, too many, no heap.
	_, err = ctx.NewTeam(0, 1024)
	wantError(t, err, tri.CodeInvalidArgument, "")
	_, err = ctx.NewTeam(1025, 1024)
	wantError(t, err, tri.CodeLimitExceeded, "")
	_, err = ctx.NewTeam(2, 0)
	wantError(t, err, tri.CodeInvalidArgument, "")
	_, err = ctx.NewTeam(-1, 1024)
	wantError(t, err, tri.CodeInvalidArgument, "-1")
}

// The GPU-team functions need NVSHMEM and GPUs: here they fail with an error, not a crash.
func TestGPUTeamWithoutNVSHMEM(t *testing.T) {
	ctx := newContext(t)
	id, err := ctx.MakeTeamID()
	if err == nil {
		t.Skip("NVSHMEM loads here; the GPU-team paths need a multi-process test")
	}
	var te *tri.Error
	if !errors.As(err, &te) || te.Message == "" {
		t.Fatalf("MakeTeamID: want a *tri.Error with the library's message, got %v", err)
	}
	team, err := ctx.JoinTeam(id, 0, 1, 0, 1<<20)
	if !errors.As(err, &te) || te.Message == "" || team != nil {
		t.Fatalf("JoinTeam: want a *tri.Error with the library's message, got %v, %v", team, err)
	}
	_, err = ctx.JoinTeam(id, -1, 1, 0, 1<<20)
	wantError(t, err, tri.CodeInvalidArgument, "-1")
	if tri.TeamIDBytes != len(tri.TeamID{}) || tri.TeamIDBytes < 128 {
		t.Fatalf("TeamIDBytes %d", tri.TeamIDBytes)
	}
	closed, err := tri.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	if _, err := closed.MakeTeamID(); !errors.Is(err, tri.ErrInvalidArgument) {
		t.Fatalf("MakeTeamID on a closed context: %v", err)
	}
	if _, err := closed.NewTeam(2, 1024); !errors.Is(err, tri.ErrInvalidArgument) {
		t.Fatalf("NewTeam on a closed context: %v", err)
	}
}
