// Autotuning (tri_tune, docs/tune.md): a space of configs (single configs, and products of
// value lists kept by a filter) is tried over a launch's arguments, and the fastest config comes
// back compiled with the result. Results are stored by key beside the disk cache; the context
// exports and imports them and counts what tuning did.
//
// The space is a Go value; each Tune call builds the C space from it and releases it. A
// per-config grid is computed in Go for every config before the C call and handed to the library
// through an exported callback and a cgo.Handle (as the log sink is); the configs of a product
// are read back from the C space (tri_tune_space_count, tri_tune_space_value), so the filter is
// the library's own.

package tri

/*
#include <stdint.h>
#include <stdlib.h>
#include <tri/tri.h>
tri_result tri_go_set_tune_progress(tri_tune_space* space, uintptr_t handle);
tri_result tri_go_tune(tri_module* module, const char* name, const tri_compile_options* options,
                       const tri_tune_space* space, uint32_t gx, uint32_t gy, uint32_t gz, uintptr_t stream,
                       const tri_arg* args, uint32_t n, uint32_t flags, uintptr_t grids, tri_kernel** out_kernel,
                       tri_blob** out_result, const uint32_t* slot, uint32_t nbuf,
                       void* b0, void* b1, void* b2, void* b3, void* b4, void* b5, void* b6, void* b7,
                       void* b8, void* b9, void* b10, void* b11, void* b12, void* b13, void* b14, void* b15);
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sort"
	"strings"
	"unsafe"
)

// TuneConfig is one config: constexpr values by name, warps and stages.
type TuneConfig struct {
	// Constexprs add to or replace the compile options' values. Tune passes them to the library
	// sorted by name, so a map's order does not change the key of the stored result.
	Constexprs map[string]int64
	NumWarps   int // 1, 2, 4, 8, 16 or 32 (GPU targets; host targets ignore it); 0 means 4
	NumStages  int // 0 (the target's default) to 4
}

// TuneValues are the values one constexpr takes in a TuneProduct.
type TuneValues struct {
	Name   string
	Values []int64
}

// TuneProduct is the product of value lists (tri_tune_space_add_product): every combination of
// the constexprs' values (the first varies slowest), times each of Warps (none: 4) and each of
// Stages (none: 0; stages vary fastest), kept where Filter is nonzero.
type TuneProduct struct {
	Constexprs []TuneValues
	Warps      []int
	Stages     []int
	// Filter is an integer expression over the names, warps and stages ("" keeps every
	// combination): C's operators + - * / % == != < <= > >= && || ! and parentheses, such as
	// "BM * BN <= 32768 && warps <= BM / 16" (docs/tune.md).
	Filter string
}

// TuneEntry is one item of TuneOptions.Space: a TuneConfig or a TuneProduct.
type TuneEntry interface {
	addTo(space *C.tri_tune_space) ([]TuneConfig, error)
}

// TuneOptions say what Module.Tune tries and how.
type TuneOptions struct {
	// Space lists the configs, numbered from 0 in order (the number breaks ties between equal
	// times); a product adds its configs where it stands.
	Space []TuneEntry
	// Grid is every config's grid, unless GridFunc gives each config its own (a grid that
	// depends on a block size, such as cdiv(n, BLOCK)).
	Grid     Grid
	GridFunc func(TuneConfig) Grid
	// Key names the runtime parameters (integer scalars) whose values select a stored result;
	// with Bucket they are rounded up to a power of two first (1000 and 1024 share a result).
	Key    []string
	Bucket bool
	// Repetitions is the timed launches per config, 1 to 10000 (0: the default, 10).
	Repetitions int
	// Frozen never benchmarks: a key with no stored or imported result uses config 0. Retune
	// ignores stored and imported results. UseOtherDevice uses an imported result made on another
	// device without benchmarking (by default such a result is reported and the key tuned here).
	Frozen, Retune, UseOtherDevice bool
	// Stream is the CUDA stream "cuda" kernels are timed on (0: the default stream; host kernels
	// take only 0).
	Stream Stream
	// Progress, when set, is called (on the goroutine that called Tune) as each config finishes
	// compiling and benchmarking: a progress bar, or a line per config in a log. A panic in it is
	// raised again once the library has returned.
	Progress func(TuneProgress)
}

// TuneStage is what a TuneProgress reports.
type TuneStage int

const (
	// StageCompile: a config finished compiling (or failed to, or was pruned). Compiles run at
	// once and finish in any order.
	StageCompile TuneStage = C.TRI_TUNE_STAGE_COMPILE
	// StageBenchmark: a config finished benchmarking (or was skipped), one at a time, in order.
	StageBenchmark TuneStage = C.TRI_TUNE_STAGE_BENCHMARK
)

// TuneProgress is one step of a tuning run (TuneOptions.Progress).
type TuneProgress struct {
	Stage  TuneStage
	Index  int        // the config's index in the space
	Config TuneConfig // the config
	Done   int        // how many configs have finished this stage, this one included
	Count  int        // of how many
	Status Code       // 0, or the error that skipped the config
	// MedianNs is a benchmark's median time (0 for a compile or a skipped config).
	MedianNs float64
}

// progressSink is what triGoTuneStage gets back through its handle.
type progressSink struct {
	fn       func(TuneProgress)
	configs  []TuneConfig
	panicked interface{}
}

// TuneResult is a tune call's result (docs/tune.md, "The result").
type TuneResult struct {
	Schema    int              `json:"schema"`
	Key       string           `json:"key"`
	Kernel    string           `json:"kernel"`
	Target    string           `json:"target"`
	Device    string           `json:"device"`
	Tri       string           `json:"tri"`
	Source    string           `json:"source"` // "benchmark", "stored", "imported" or "default"
	KeyValues map[string]int64 `json:"key_values"`
	DTypes    []string         `json:"dtypes"`
	Best      int              `json:"best"` // the chosen config's index
	Configs   []TuneTrial      `json:"configs"`
	// Grid is the chosen config's grid (launch the returned kernel with it).
	Grid Grid `json:"-"`
	// JSON is the result as the library wrote it.
	JSON []byte `json:"-"`
}

// TuneTrial is one config's outcome.
type TuneTrial struct {
	Index      int              `json:"index"`
	Config     string           `json:"config"` // "BLOCK=256,warps=4,stages=0"
	Constexprs map[string]int64 `json:"constexprs"`
	NumWarps   int              `json:"num_warps"`
	NumStages  int              `json:"num_stages"`
	// Status is 0 for a config that ran, or the error that skipped it (its compile or launch
	// failed, or it was pruned: CodeLimitExceeded), with Error its message.
	Status   Code      `json:"status"`
	Error    string    `json:"error"`
	Measured bool      `json:"measured"`
	MedianNs float64   `json:"median_ns"`
	TimesNs  []float64 `json:"times_ns"`
}

// Err is the trial's failure as an *Error, or nil for a config that ran.
func (t TuneTrial) Err() error {
	if t.Status == 0 {
		return nil
	}
	return &Error{Code: t.Status, Message: t.Error}
}

// TuneConfig is the trial's config.
func (t TuneTrial) TuneConfig() TuneConfig {
	return TuneConfig{Constexprs: t.Constexprs, NumWarps: t.NumWarps, NumStages: t.NumStages}
}

// String is the config as "BLOCK=256,warps=4,stages=0" (constexprs sorted by name; 0 warps
// reads 4).
func (c TuneConfig) String() string {
	names := make([]string, 0, len(c.Constexprs))
	for n := range c.Constexprs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s=%d,", n, c.Constexprs[n])
	}
	warps := c.NumWarps
	if warps == 0 {
		warps = 4
	}
	fmt.Fprintf(&b, "warps=%d,stages=%d", warps, c.NumStages)
	return b.String()
}

func (c TuneConfig) addTo(space *C.tri_tune_space) ([]TuneConfig, error) {
	names := make([]string, 0, len(c.Constexprs))
	for n := range c.Constexprs {
		names = append(names, n)
	}
	sort.Strings(names)
	cnames := make([]*C.char, len(names)+1) // C strings in Go memory: allowed
	values := make([]C.int64_t, len(names)+1)
	for i, n := range names {
		cnames[i] = C.CString(n)
		defer C.free(unsafe.Pointer(cnames[i]))
		values[i] = C.int64_t(c.Constexprs[n])
	}
	if c.NumWarps == 0 {
		c.NumWarps = 4
	}
	err := call(func() C.tri_result {
		return C.tri_tune_space_add_config(space, &cnames[0], &values[0], C.uint32_t(len(names)), C.int32_t(c.NumWarps),
			C.int32_t(c.NumStages), nil)
	})
	if err != nil {
		return nil, err
	}
	copied := TuneConfig{Constexprs: make(map[string]int64, len(names)), NumWarps: c.NumWarps, NumStages: c.NumStages}
	for n, v := range c.Constexprs {
		copied.Constexprs[n] = v
	}
	return []TuneConfig{copied}, nil
}

func spaceCount(space *C.tri_tune_space) (uint32, error) {
	var n C.uint32_t
	err := call(func() C.tri_result { return C.tri_tune_space_count(space, &n) })
	return uint32(n), err
}

func (p TuneProduct) addTo(space *C.tri_tune_space) ([]TuneConfig, error) {
	n := len(p.Constexprs)
	cnames := make([]*C.char, n+1)
	counts := make([]C.uint32_t, n+1)
	// The value lists go to C memory: the array of pointers to them is Go memory, which may not
	// hold Go pointers when it is passed to C.
	total := 0
	for _, v := range p.Constexprs {
		total += len(v.Values)
	}
	block := (*C.int64_t)(C.malloc(C.size_t(8 * (total + 1))))
	if block == nil {
		return nil, errorf(CodeOutOfMemory, "tune: no memory for the product's %d values", total)
	}
	defer C.free(unsafe.Pointer(block))
	all := unsafe.Slice(block, total+1)
	lists := make([]*C.int64_t, n+1)
	at := 0
	for i, v := range p.Constexprs {
		cnames[i] = C.CString(v.Name)
		defer C.free(unsafe.Pointer(cnames[i]))
		counts[i] = C.uint32_t(len(v.Values))
		lists[i] = &all[at]
		for _, x := range v.Values {
			all[at] = C.int64_t(x)
			at++
		}
	}
	warps := make([]C.int32_t, len(p.Warps)+1)
	for i, w := range p.Warps {
		warps[i] = C.int32_t(w)
	}
	stages := make([]C.int32_t, len(p.Stages)+1)
	for i, s := range p.Stages {
		stages[i] = C.int32_t(s)
	}
	var filter *C.char
	if p.Filter != "" {
		filter = C.CString(p.Filter)
		defer C.free(unsafe.Pointer(filter))
	}
	before, err := spaceCount(space)
	if err != nil {
		return nil, err
	}
	var added C.uint32_t
	err = call(func() C.tri_result {
		return C.tri_tune_space_add_product(space, &cnames[0], &lists[0], &counts[0], C.uint32_t(n), &warps[0],
			C.uint32_t(len(p.Warps)), &stages[0], C.uint32_t(len(p.Stages)), filter, &added)
	})
	if err != nil {
		return nil, err
	}
	after, err := spaceCount(space)
	if err != nil {
		return nil, err
	}
	if after-before != uint32(added) {
		return nil, errorf(CodeInternal, "tri_tune_space_add_product added %d configs, but the space grew by %d", added,
			after-before)
	}
	warpsName, stagesName := C.CString("warps"), C.CString("stages")
	defer C.free(unsafe.Pointer(warpsName))
	defer C.free(unsafe.Pointer(stagesName))
	value := func(i uint32, name *C.char) (int64, error) {
		var v C.int64_t
		err := call(func() C.tri_result { return C.tri_tune_space_value(space, C.uint32_t(i), name, &v) })
		return int64(v), err
	}
	var out []TuneConfig
	for i := before; i < after; i++ {
		c := TuneConfig{Constexprs: make(map[string]int64, n)}
		for j, v := range p.Constexprs {
			x, err := value(i, cnames[j])
			if err != nil {
				return nil, err
			}
			c.Constexprs[v.Name] = x
		}
		w, err := value(i, warpsName)
		if err != nil {
			return nil, err
		}
		s, err := value(i, stagesName)
		if err != nil {
			return nil, err
		}
		c.NumWarps, c.NumStages = int(w), int(s)
		out = append(out, c)
	}
	return out, nil
}

//export triGoTuneGrid
func triGoTuneGrid(user unsafe.Pointer, config C.uint32_t, grid *C.uint32_t) {
	// A panic must not unwind into C; nothing here panics but a bad handle.
	defer func() { _ = recover() }()
	grids := cgo.Handle(uintptr(user)).Value().([]Grid)
	if int(config) < len(grids) {
		g := unsafe.Slice(grid, 3)
		g[0], g[1], g[2] = C.uint32_t(grids[config].X), C.uint32_t(grids[config].Y), C.uint32_t(grids[config].Z)
	}
}

//export triGoTuneStage
func triGoTuneStage(user unsafe.Pointer, stage C.int32_t, config, done, count C.uint32_t, status C.int32_t,
	medianNs C.double) {
	sink := cgo.Handle(uintptr(user)).Value().(*progressSink)
	if sink.panicked != nil {
		return
	}
	// A panic must not unwind into C: it is kept, and raised again once tri_tune has returned.
	defer func() {
		if r := recover(); r != nil {
			sink.panicked = r
		}
	}()
	p := TuneProgress{Stage: TuneStage(stage), Index: int(config), Done: int(done), Count: int(count),
		Status: Code(status)}
	if int(config) < len(sink.configs) {
		p.Config = sink.configs[config]
	}
	if p.Stage == StageBenchmark && p.Status == 0 {
		p.MedianNs = float64(medianNs)
	}
	sink.fn(p)
}

// Tune autotunes kernel name (tri_tune, docs/tune.md): every config of t.Space compiles with
// opts (nil: the defaults) plus its constexprs, warps and stages, launches with args (as Launch
// takes them), and the fastest comes back compiled, with the result. Configs whose compile or
// launch fails are skipped and reported in the result's Configs; Tune fails only when none runs.
// A result stored for the same kernel, space and key values (in this process or another, through
// the disk cache, or imported) answers without benchmarking, as t's flags allow. Buffers the
// kernel writes are restored before every launch and left as they were.
func (m *Module) Tune(name string, opts *CompileOptions, t TuneOptions, args ...interface{}) (*Kernel, *TuneResult,
	error) {
	if opts == nil {
		opts = &CompileOptions{}
	}
	f, err := m.Function(name)
	if err != nil {
		return nil, nil, err
	}
	// The arguments are encoded as a launch of this kernel would encode them.
	shell := &Kernel{name: name, target: opts.Target, params: f.RuntimeParams(), aligns: opts.ArgAlign}
	if shell.target == "" {
		shell.target = "cpu"
	}
	enc, err := shell.encodeCall(args)
	if err != nil {
		return nil, nil, err
	}
	defer enc.release()
	var space *C.tri_tune_space
	if err := call(func() C.tri_result { return C.tri_tune_space_create(&space) }); err != nil {
		return nil, nil, err
	}
	defer C.tri_tune_space_destroy(space)
	var configs []TuneConfig
	for _, e := range t.Space {
		if e == nil {
			return nil, nil, errorf(CodeInvalidArgument, "tune: a nil entry in the space")
		}
		added, err := e.addTo(space)
		if err != nil {
			return nil, nil, err
		}
		configs = append(configs, added...)
	}
	key := make([]C.uint32_t, len(t.Key)+1)
	for i, k := range t.Key {
		found := false
		for j, p := range shell.params {
			if p.Name == k {
				key[i], found = C.uint32_t(j), true
				break
			}
		}
		if !found {
			return nil, nil, errorf(CodeInvalidArgument, "tune: kernel @%s has no runtime parameter %%%s", name, k)
		}
	}
	bucket := C.int32_t(0)
	if t.Bucket {
		bucket = 1
	}
	if err := call(func() C.tri_result {
		return C.tri_tune_space_set_key(space, &key[0], C.uint32_t(len(t.Key)), bucket)
	}); err != nil {
		return nil, nil, err
	}
	if t.Repetitions != 0 {
		if err := call(func() C.tri_result {
			return C.tri_tune_space_set_repetitions(space, C.uint32_t(t.Repetitions))
		}); err != nil {
			return nil, nil, err
		}
	}
	fixed := t.Grid
	var grids []Grid
	var handle cgo.Handle
	if t.GridFunc != nil {
		fixed = Grid{1, 1, 1}
		grids = make([]Grid, len(configs))
		for i, c := range configs {
			grids[i] = t.GridFunc(c)
		}
		handle = cgo.NewHandle(grids)
		defer handle.Delete()
	}
	var sink *progressSink
	if t.Progress != nil {
		sink = &progressSink{fn: t.Progress, configs: configs}
		h := cgo.NewHandle(sink)
		defer h.Delete()
		if err := call(func() C.tri_result { return C.tri_go_set_tune_progress(space, C.uintptr_t(h)) }); err != nil {
			return nil, nil, err
		}
	}
	flags := C.uint32_t(0)
	if t.Frozen {
		flags |= C.TRI_TUNE_FROZEN
	}
	if t.Retune {
		flags |= C.TRI_TUNE_RETUNE
	}
	if t.UseOtherDevice {
		flags |= C.TRI_TUNE_USE_OTHER_DEVICE
	}
	copts, err := opts.build()
	if err != nil {
		return nil, nil, err
	}
	defer C.tri_compile_options_destroy(copts)
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var kraw *C.tri_kernel
	var blob *C.tri_blob
	b := &enc.bufs
	err = m.use(func(mr *C.tri_module) error {
		return call(func() C.tri_result {
			return C.tri_go_tune(mr, cname, copts, space, C.uint32_t(fixed.X), C.uint32_t(fixed.Y), C.uint32_t(fixed.Z),
				C.uintptr_t(t.Stream), &enc.raw[0], C.uint32_t(len(args)), flags, C.uintptr_t(handle), &kraw, &blob,
				&enc.slots[0], C.uint32_t(enc.nbuf), b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
				b[11], b[12], b[13], b[14], b[15])
		})
	})
	// The slices' memory must stay reachable until the C call has returned.
	runtime.KeepAlive(args)
	if sink != nil && sink.panicked != nil {
		if err == nil {
			C.tri_kernel_destroy(kraw)
			C.tri_blob_destroy(blob)
		}
		panic(sink.panicked)
	}
	if err != nil {
		return nil, nil, err
	}
	data := blobBytes(blob)
	k, err := m.adopt(name, opts, kraw)
	if err != nil {
		return nil, nil, err
	}
	res := &TuneResult{JSON: data}
	if err := json.Unmarshal(data, res); err != nil {
		k.Close()
		return nil, nil, errorf(CodeInternal, "tri_tune gave JSON this package cannot read: %v", err)
	}
	if len(res.Configs) != len(configs) || res.Best < 0 || res.Best >= len(configs) {
		k.Close()
		return nil, nil, errorf(CodeInternal, "tri_tune gave %d configs with best %d, for a space of %d configs",
			len(res.Configs), res.Best, len(configs))
	}
	res.Grid = fixed
	if grids != nil {
		res.Grid = grids[res.Best]
	}
	return k, res, nil
}

// TuneStat names what Context.TuneStat reads (TRI_TUNE_STAT_*), counting this context's tune
// calls since it was made.
type TuneStat int32

const (
	TuneStatTrials      TuneStat = C.TRI_TUNE_STAT_TRIALS       // configs benchmarked
	TuneStatStored      TuneStat = C.TRI_TUNE_STAT_STORED       // calls answered by a stored or imported result
	TuneStatDefaults    TuneStat = C.TRI_TUNE_STAT_DEFAULTS     // frozen calls that found no result (config 0)
	TuneStatPruned      TuneStat = C.TRI_TUNE_STAT_PRUNED       // configs pruned before compiling
	TuneStatOtherDevice TuneStat = C.TRI_TUNE_STAT_OTHER_DEVICE // calls that met an imported result of another device
)

// TuneStats holds every tuning counter (Context.TuneStats).
type TuneStats struct {
	Trials, Stored, Defaults, Pruned, OtherDevice uint64
}

// TuneStat reads one tuning counter.
func (c *Context) TuneStat(stat TuneStat) (uint64, error) {
	var v C.uint64_t
	err := c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result { return C.tri_tune_stat(raw, C.int32_t(stat), &v) })
	})
	return uint64(v), err
}

// TuneStats reads every tuning counter.
func (c *Context) TuneStats() (TuneStats, error) {
	var s TuneStats
	for _, f := range []struct {
		stat TuneStat
		to   *uint64
	}{{TuneStatTrials, &s.Trials}, {TuneStatStored, &s.Stored}, {TuneStatDefaults, &s.Defaults},
		{TuneStatPruned, &s.Pruned}, {TuneStatOtherDevice, &s.OtherDevice}} {
		v, err := c.TuneStat(f.stat)
		if err != nil {
			return TuneStats{}, err
		}
		*f.to = v
	}
	return s, nil
}

// TuneExport writes every tuning result this context knows (stored in its cache directory, made
// or imported here) to a JSON file at path (replacing it) and returns how many.
func (c *Context) TuneExport(path string) (int, error) {
	return c.tuneFile(path, true)
}

// TuneImport makes the results of a TuneExport file this context's answers for their keys (ahead
// of stored ones) and returns how many were imported; a damaged file imports nothing
// (ErrCorruptBinary).
func (c *Context) TuneImport(path string) (int, error) {
	return c.tuneFile(path, false)
}

func (c *Context) tuneFile(path string, export bool) (int, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var n C.uint32_t
	err := c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result {
			if export {
				return C.tri_tune_export(raw, cpath, &n)
			}
			return C.tri_tune_import(raw, cpath, &n)
		})
	})
	return int(n), err
}

// TuneSVG draws a tuning result as an SVG picture (tri_tune_plot, the renderer `tri tune --plot`
// and every binding share; docs/tune.md "Plots"). result is one result's JSON, as
// TuneResult.JSON, a stored result file or one entry of a TuneExport file holds it; title heads
// the picture ("": "@kernel on target"). Two or more values that vary give a heatmap over the
// first two (each cell the fastest config with those values), one gives a bar per config; the
// winner is outlined and named. What is not a tuning result is ErrCorruptBinary.
func TuneSVG(result []byte, title string) (string, error) {
	if strings.IndexByte(title, 0) >= 0 {
		return "", &Error{Code: CodeInvalidArgument, Message: "TuneSVG: the title contains a NUL byte"}
	}
	var ctitle *C.char
	if title != "" {
		ctitle = C.CString(title)
		defer C.free(unsafe.Pointer(ctitle))
	}
	data := append(result[:len(result):len(result)], 0) // never empty: C reads size bytes only
	var blob *C.tri_blob
	err := call(func() C.tri_result {
		return C.tri_tune_plot(unsafe.Pointer(&data[0]), C.size_t(len(result)), ctitle, &blob)
	})
	if err != nil {
		return "", err
	}
	return string(blobBytes(blob)), nil
}

// SVG draws this result as an SVG picture (TuneSVG of r.JSON; title "": "@kernel on target").
func (r *TuneResult) SVG(title string) (string, error) {
	return TuneSVG(r.JSON, title)
}
