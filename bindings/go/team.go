// Teams (tri_team_*): one kernel run as several ranks that share a symmetric heap
// (docs/distributed.md). A host team (Context.NewTeam, targets "cpu" and "interp") is threads of
// this process whose heaps are host memory from C's side: Team.Ptr gives an address the program
// may view with unsafe.Slice, and a Buffer inside a heap is passed to C as C memory. A GPU team
// (Context.MakeTeamID, Context.JoinTeam) is one process per GPU on NVSHMEM; its heaps are device
// memory, reached as DevicePtrs (Team.DevicePtr).

package tri

/*
#include <stdint.h>
#include <tri/tri.h>
tri_result tri_go_team_launch(const tri_kernel* kernel, tri_team* team, uint32_t gx, uint32_t gy, uint32_t gz,
                              int32_t async, uintptr_t stream, const tri_arg* args, uint32_t n, uint32_t per_rank,
                              const uint32_t* slot, uint32_t nbuf,
                              void* b0, void* b1, void* b2, void* b3, void* b4, void* b5, void* b6, void* b7,
                              void* b8, void* b9, void* b10, void* b11, void* b12, void* b13, void* b14,
                              void* b15);
tri_result tri_go_team_device_ptr(const tri_team* team, uint32_t rank, uint64_t offset, uint64_t* out);
*/
import "C"

import (
	"math"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// TeamIDBytes is the size of a GPU team's unique id (TRI_TEAM_ID_BYTES).
const TeamIDBytes = C.TRI_TEAM_ID_BYTES

// TeamID is the unique id of a GPU team: rank 0 makes it (Context.MakeTeamID) and sends it to
// the other ranks' processes by any means (a pipe, a file, a socket); each joins with it.
type TeamID [TeamIDBytes]byte

// Team is a team of ranks with a symmetric heap; safe for concurrent use (launches, allocations
// and Ptr may run from many goroutines; Close waits for calls in flight). It keeps its context
// alive.
type Team struct {
	mu       sync.RWMutex
	raw      *C.tri_team
	ctx      *Context
	gpu      bool
	numRanks int
	// heaps are a host team's heaps, [start, end) per rank: a Buffer inside one is C memory.
	heaps [][2]uintptr
}

// u32 converts a count or index for the C API, or names it in an ErrInvalidArgument.
func u32(what string, v int) (C.uint32_t, error) {
	if v < 0 || uint64(v) > math.MaxUint32 {
		return 0, errorf(CodeInvalidArgument, "%s is %d; it must be between 0 and %d", what, v, uint32(math.MaxUint32))
	}
	return C.uint32_t(v), nil
}

// NewTeam makes a host team of numRanks ranks (1 to 1024), each with a symmetric heap of
// heapBytesPerRank bytes (rounded up to a multiple of 64) of host memory. Its kernels are
// compiled for "cpu" or "interp"; waits time out after 30 s (SetWaitTimeout).
func (c *Context) NewTeam(numRanks int, heapBytesPerRank uint64) (*Team, error) {
	n, err := u32("the number of ranks", numRanks)
	if err != nil {
		return nil, err
	}
	t := &Team{ctx: c, numRanks: numRanks}
	err = c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result { return C.tri_team_create(raw, n, C.uint64_t(heapBytesPerRank), &t.raw) })
	})
	if err != nil {
		return nil, err
	}
	c.ref()
	runtime.SetFinalizer(t, (*Team).Close)
	size := (heapBytesPerRank + 63) &^ 63
	for r := 0; r < numRanks; r++ {
		p, err := t.Ptr(r, 0)
		if err != nil {
			t.Close()
			return nil, err
		}
		t.heaps = append(t.heaps, [2]uintptr{uintptr(p), uintptr(p) + uintptr(size)})
	}
	return t, nil
}

// MakeTeamID makes the unique id of a new GPU team; the process that makes it joins as rank 0.
// ErrUnsupported, saying how to point Tri at it, when NVSHMEM cannot be loaded.
func (c *Context) MakeTeamID() (TeamID, error) {
	var id TeamID
	err := c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result {
			return C.tri_team_make_id(raw, unsafe.Pointer(&id[0]), C.size_t(len(id)))
		})
	})
	return id, err
}

// JoinTeam joins the GPU team of id as rank rank of numRanks, on CUDA device device (0-based),
// whose primary context becomes current on the calling thread; each rank's heap is
// heapBytesPerRank bytes (rounded up to 64) of that GPU's memory, zeroed. It blocks until every
// rank has joined; one GPU team per process at a time. Alloc, Free and Close of a GPU team are
// collective (every rank makes the same calls in the same order), so a GPU team has no
// finalizer: Close it on every rank. Its kernels are compiled for "cuda".
func (c *Context) JoinTeam(id TeamID, rank, numRanks, device int, heapBytesPerRank uint64) (*Team, error) {
	r, err := u32("the rank", rank)
	if err != nil {
		return nil, err
	}
	n, err := u32("the number of ranks", numRanks)
	if err != nil {
		return nil, err
	}
	d, err := u32("the device", device)
	if err != nil {
		return nil, err
	}
	t := &Team{ctx: c, gpu: true, numRanks: numRanks}
	err = c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result {
			return C.tri_team_join(raw, unsafe.Pointer(&id[0]), C.size_t(len(id)), r, n, d,
				C.uint64_t(heapBytesPerRank), &t.raw)
		})
	})
	if err != nil {
		return nil, err
	}
	c.ref()
	return t, nil
}

func (t *Team) use(f func(*C.tri_team) error) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.raw == nil {
		return errorf(CodeInvalidArgument, "the team is closed (Close was called); make a new one")
	}
	return f(t.raw)
}

// Close releases the team and its heaps; pointers from Ptr are invalid afterwards, and later
// calls return ErrInvalidArgument. It waits for calls in flight. For a GPU team it is collective.
// Idempotent.
func (t *Team) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.raw == nil {
		return nil
	}
	C.tri_team_destroy(t.raw)
	t.raw = nil
	t.heaps = nil
	runtime.SetFinalizer(t, nil)
	t.ctx.unref()
	return nil
}

// IsGPU reports whether the team is a GPU team (JoinTeam) rather than a host team (NewTeam).
func (t *Team) IsGPU() bool { return t.gpu }

// Alloc allocates bytes (more than 0) in every rank's heap at one offset, 64-byte aligned and
// zeroed, and returns the offset; ErrOutOfMemory (saying how much is free) when no free range
// of that size is left. Collective in a GPU team.
func (t *Team) Alloc(bytes uint64) (uint64, error) {
	var off C.uint64_t
	err := t.use(func(raw *C.tri_team) error {
		return call(func() C.tri_result { return C.tri_team_alloc(raw, C.uint64_t(bytes), &off) })
	})
	return uint64(off), err
}

// Free frees the allocation at offset (from Alloc) on every rank. Collective in a GPU team.
func (t *Team) Free(offset uint64) error {
	return t.use(func(raw *C.tri_team) error {
		return call(func() C.tri_result { return C.tri_team_free(raw, C.uint64_t(offset)) })
	})
}

// Ptr is the host address of byte offset of rank rank's heap in a host team, for the program to
// fill and read (unsafe.Slice((*float32)(p), n)) and to pass as that rank's launch argument (in
// a Buffer). It is C memory, valid until Close. A GPU team's heaps are device memory: see
// DevicePtr.
func (t *Team) Ptr(rank int, offset uint64) (unsafe.Pointer, error) {
	if t.gpu {
		return nil, errorf(CodeInvalidArgument, "a GPU team's heaps are device memory; use Team.DevicePtr")
	}
	r, err := u32("the rank", rank)
	if err != nil {
		return nil, err
	}
	var p unsafe.Pointer
	err = t.use(func(raw *C.tri_team) error {
		return call(func() C.tri_result { return C.tri_team_ptr(raw, r, C.uint64_t(offset), &p) })
	})
	return p, err
}

// DevicePtr is byte offset of rank rank's heap in a GPU team as mapped on this process's GPU,
// as a DevicePtr of bytes bytes of dtype, for the kernel's arguments (this rank's own heap) or
// for CUDA copies. Host teams: see Ptr.
func (t *Team) DevicePtr(rank int, offset, bytes uint64, dtype DType) (DevicePtr, error) {
	if !t.gpu {
		return DevicePtr{}, errorf(CodeInvalidArgument, "a host team's heaps are host memory; use Team.Ptr")
	}
	r, err := u32("the rank", rank)
	if err != nil {
		return DevicePtr{}, err
	}
	var p C.uint64_t
	err = t.use(func(raw *C.tri_team) error {
		return call(func() C.tri_result { return C.tri_go_team_device_ptr(raw, r, C.uint64_t(offset), &p) })
	})
	return DevicePtr{Ptr: uint64(p), Bytes: bytes, DType: dtype}, err
}

// SetWaitTimeout sets how long a `wait` of the team's later launches may go without its signal
// before the launch fails with ErrRuntime naming the wait (rounded up to milliseconds; 0 waits
// forever). The default is 30 s.
func (t *Team) SetWaitTimeout(d time.Duration) error {
	if d < 0 {
		return errorf(CodeInvalidArgument, "wait timeout %v is negative (0 waits forever)", d)
	}
	ms := uint64((d + time.Millisecond - 1) / time.Millisecond)
	return t.use(func(raw *C.tri_team) error {
		return call(func() C.tri_result { return C.tri_team_set_wait_timeout(raw, C.uint64_t(ms)) })
	})
}

// Rank is this process's rank and the team's size (a host team reports rank 0).
func (t *Team) Rank() (rank, numRanks int, err error) {
	var r, n C.uint32_t
	err = t.use(func(raw *C.tri_team) error {
		return call(func() C.tri_result { return C.tri_team_rank(raw, &r, &n) })
	})
	return int(r), int(n), err
}

// Barrier waits until this rank's GPU work is done and every rank of the team has called it
// (ErrRuntime when a kernel of this rank failed). A host team returns at once.
func (t *Team) Barrier() error {
	return t.use(func(raw *C.tri_team) error {
		return call(func() C.tri_result { return C.tri_team_barrier(raw) })
	})
}

// Launch runs kernel k on the team over grid and returns when it has finished. A host team
// takes one argument list per rank, in rank order, each with Launch's rules (slices, Buffers,
// HostMemory, scalars), and runs every rank at once; a GPU team takes this process's rank's list
// only. A rank's pointers into the symmetric heap are its own addresses (Buffers made from Ptr,
// which pass as C memory); at most 16 Go slices (or Buffers outside the heaps) over all ranks.
// A failure names its rank ("rank 2: ...").
func (t *Team) Launch(k *Kernel, grid Grid, rankArgs ...[]interface{}) error {
	if k == nil {
		return errorf(CodeInvalidArgument, "the team launch has no kernel (nil)")
	}
	want := t.numRanks
	if t.gpu {
		want = 1
	}
	if len(rankArgs) != want {
		what := "one argument list per rank"
		if t.gpu {
			what = "this rank's argument list only (a GPU team)"
		}
		return errorf(CodeLaunchArgs, "the team launch of kernel @%s takes %s, %d lists, but %d were given",
			k.name, what, want, len(rankArgs))
	}
	return t.launch(k, grid, false, 0, rankArgs)
}

// LaunchAsync queues this process's rank of a GPU team's kernel ("cuda") on stream (0: the
// default stream of the team's context) and returns without waiting, as LaunchOn does; args are
// this rank's. Host teams answer ErrInvalidArgument (use Launch).
func (t *Team) LaunchAsync(k *Kernel, stream Stream, grid Grid, args ...interface{}) error {
	if k == nil {
		return errorf(CodeInvalidArgument, "the team launch has no kernel (nil)")
	}
	return t.launch(k, grid, true, stream, [][]interface{}{args})
}

func (t *Team) launch(k *Kernel, grid Grid, async bool, stream Stream, rankArgs [][]interface{}) error {
	// A closed team has no heaps to recognize Buffers by: say it is closed first.
	if err := t.use(func(*C.tri_team) error { return nil }); err != nil {
		return err
	}
	c, err := t.encode(k, rankArgs)
	if err != nil {
		return err
	}
	b := &c.bufs
	perRank := len(k.params)
	n := perRank * len(rankArgs)
	isAsync := C.int32_t(0)
	if async {
		isAsync = 1
	}
	err = k.use(func(kr *C.tri_kernel) error {
		return t.use(func(tr *C.tri_team) error {
			return call(func() C.tri_result {
				return C.tri_go_team_launch(kr, tr, C.uint32_t(grid.X), C.uint32_t(grid.Y), C.uint32_t(grid.Z), isAsync,
					C.uintptr_t(stream), &c.raw[0], C.uint32_t(n), C.uint32_t(perRank), &c.slots[0], C.uint32_t(c.nbuf),
					b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
			})
		})
	})
	// The slices' memory must stay reachable until the C call has returned.
	runtime.KeepAlive(rankArgs)
	return err
}

// inHeap reports whether [p, p+bytes) lies in one of a host team's heaps (C memory).
func (t *Team) inHeap(p unsafe.Pointer, bytes uint64) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	a := uintptr(p)
	for _, h := range t.heaps {
		if a >= h[0] && a < h[1] && uint64(h[1]-a) >= bytes {
			return true
		}
	}
	return false
}

// encode checks every rank's arguments and encodes them rank-major for a direct call: Go memory
// goes in the call's buffer slots, heap Buffers and HostMemory in the arguments themselves.
func (t *Team) encode(k *Kernel, rankArgs [][]interface{}) (*encodedCall, error) {
	c := &encodedCall{raw: make([]C.tri_arg, len(rankArgs)*len(k.params)+1)}
	for r, args := range rankArgs {
		if err := k.checkCount(args); err != nil {
			if te, ok := err.(*Error); ok && len(rankArgs) > 1 {
				return nil, errorf(te.Code, "rank %d: %s", r, te.Message)
			}
			return nil, err
		}
		for i, v := range args {
			e, err := k.encode(i, v, false)
			if err != nil {
				if te, ok := err.(*Error); ok && len(rankArgs) > 1 {
					return nil, errorf(te.Code, "rank %d: %s", r, te.Message)
				}
				return nil, err
			}
			if b, ok := v.(Buffer); ok && e.goPtr != nil && t.inHeap(b.Ptr, b.Bytes) {
				setPointer(&e.raw, uint64(uintptr(b.Ptr))) // C memory: it may sit in the arguments
				e.goPtr = nil
			}
			slot := r*len(k.params) + i
			c.raw[slot] = e.raw
			if e.goPtr != nil {
				if c.nbuf == maxBuffers {
					return nil, errorf(CodeLaunchArgs, "the team launch of kernel @%s passes more than %d Go buffers, "+
						"the most one Go launch passes (heap Buffers from Team.Ptr and HostMemory do not count)",
						k.name, maxBuffers)
				}
				c.slots = append(c.slots, C.uint32_t(slot))
				c.bufs[c.nbuf] = e.goPtr
				c.nbuf++
			}
		}
	}
	c.slots = append(c.slots, 0) // never empty
	return c, nil
}
