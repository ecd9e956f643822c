// Autotuning on the CPU target (Module.Tune over tri_tune, docs/tune.md): a config that fails to
// compile is reported and the others run, the chosen kernel computes out = x + y, the written
// buffer comes back as it was, a second call is answered from the stored result, an exported
// result is used by a fresh context in frozen mode, and a filtered product space yields the
// configs the filter keeps.
package tri_test

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	tri "github.com/tri-jit/tri/bindings/go"
)

const tuneN = 5000

func loadVadd(t *testing.T, ctx *tri.Context) *tri.Module {
	t.Helper()
	m, err := ctx.LoadModule(filepath.Join("..", "..", "tests", "run", "vadd.tri"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// gridOf is cdiv(n, BLOCK): each config's grid.
func gridOf(c tri.TuneConfig) tri.Grid {
	block := int(c.Constexprs["BLOCK"])
	return tri.Grid1((tuneN + block - 1) / block)
}

func tuneInputs() (x, y, out []float32) {
	x, y, out = make([]float32, tuneN), make([]float32, tuneN), make([]float32, tuneN)
	for i := range x {
		x[i], y[i], out[i] = float32(i)*0.25-100, float32(i%17), 7
	}
	return
}

// BLOCK=256; BLOCK=100 (not a power of two: does not compile); BLOCK=1024 with 1 stage.
func tuneOptions() tri.TuneOptions {
	return tri.TuneOptions{
		Space: []tri.TuneEntry{
			tri.TuneConfig{Constexprs: map[string]int64{"BLOCK": 256}, NumWarps: 4},
			tri.TuneConfig{Constexprs: map[string]int64{"BLOCK": 100}},
			tri.TuneConfig{Constexprs: map[string]int64{"BLOCK": 1024}, NumStages: 1},
		},
		GridFunc:    gridOf,
		Key:         []string{"n"},
		Repetitions: 3,
	}
}

func checkSum(t *testing.T, out, x, y []float32) {
	t.Helper()
	for i := range out {
		if out[i] != x[i]+y[i] {
			t.Fatalf("out[%d] = %v, want %v", i, out[i], x[i]+y[i])
		}
	}
}

func TestTuneChoosesStoresExportsAndImports(t *testing.T) {
	dir := t.TempDir()
	x, y, out := tuneInputs()
	cpu := &tri.CompileOptions{Target: "cpu"}
	ctx := newContext(t, tri.WithCacheDir(filepath.Join(dir, "cache")))
	m := loadVadd(t, ctx)

	k, res, err := m.Tune("vadd", cpu, tuneOptions(), x, y, out, tuneN)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if res.Source != "benchmark" || (res.Best != 0 && res.Best != 2) || len(res.Configs) != 3 {
		t.Fatalf("%s", res.JSON)
	}
	var raw map[string]interface{}
	if err := json.Unmarshal(res.JSON, &raw); err != nil || raw["best"] == nil || raw["configs"] == nil {
		t.Fatalf("raw JSON %s: %v", res.JSON, err)
	}
	for _, i := range []int{0, 2} {
		c := res.Configs[i]
		if c.Index != i || c.Status != 0 || c.Err() != nil || !c.Measured || c.MedianNs <= 0 || len(c.TimesNs) != 3 {
			t.Fatalf("config %d: %+v", i, c)
		}
	}
	failed := res.Configs[1]
	if failed.Status == 0 || failed.Measured || !strings.Contains(failed.Error, "power of two") {
		t.Fatalf("config 1: %+v", failed)
	}
	wantError(t, failed.Err(), failed.Status, "power of two")
	if got := res.Configs[2].TuneConfig(); !reflect.DeepEqual(got,
		tri.TuneConfig{Constexprs: map[string]int64{"BLOCK": 1024}, NumWarps: 4, NumStages: 1}) {
		t.Fatalf("%+v", got)
	}
	if res.Grid != gridOf(res.Configs[res.Best].TuneConfig()) {
		t.Fatalf("grid %v for config %d", res.Grid, res.Best)
	}
	if res.KeyValues["n"] != tuneN || res.Kernel != "vadd" || res.Target != "cpu" {
		t.Fatalf("%s", res.JSON)
	}
	for i := range out {
		if out[i] != 7 {
			t.Fatalf("tune must leave the written buffer as it found it: out[%d] = %v", i, out[i])
		}
	}
	if n, err := ctx.TuneStat(tri.TuneStatTrials); err != nil || n != 2 {
		t.Fatal(n, err)
	}
	if k.Name() != "vadd" || k.Target() != "cpu" {
		t.Fatal(k.Name(), k.Target())
	}
	if err := k.Launch(res.Grid, x, y, out, tuneN); err != nil {
		t.Fatal(err)
	}
	checkSum(t, out, x, y)

	// The same call again: the stored result, nothing benchmarked.
	before, err := ctx.TuneStats()
	if err != nil {
		t.Fatal(err)
	}
	k2, again, err := m.Tune("vadd", cpu, tuneOptions(), x, y, out, tuneN)
	if err != nil {
		t.Fatal(err)
	}
	k2.Close()
	if again.Source != "stored" || again.Best != res.Best {
		t.Fatalf("%s", again.JSON)
	}
	after, err := ctx.TuneStats()
	if err != nil {
		t.Fatal(err)
	}
	if after.Stored != before.Stored+1 || after.Trials != before.Trials ||
		after != (tri.TuneStats{Trials: 2, Stored: 1}) {
		t.Fatalf("before %+v, after %+v", before, after)
	}
	exported := filepath.Join(dir, "tuned.json")
	if n, err := ctx.TuneExport(exported); err != nil || n != 1 {
		t.Fatal(n, err)
	}

	// A fresh context without a disk cache: frozen finds nothing, then the imported result.
	ctx2 := newContext(t, tri.WithCacheDir(""))
	m2 := loadVadd(t, ctx2)
	frozen := tuneOptions()
	frozen.Frozen = true
	k3, none, err := m2.Tune("vadd", cpu, frozen, x, y, out, tuneN)
	if err != nil {
		t.Fatal(err)
	}
	k3.Close()
	if none.Source != "default" || none.Best != 0 {
		t.Fatalf("%s", none.JSON)
	}
	if n, err := ctx2.TuneStat(tri.TuneStatDefaults); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	if n, err := ctx2.TuneImport(exported); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	k4, imported, err := m2.Tune("vadd", cpu, frozen, x, y, out, tuneN)
	if err != nil {
		t.Fatal(err)
	}
	defer k4.Close()
	if imported.Source != "imported" || imported.Best != res.Best {
		t.Fatalf("%s", imported.JSON)
	}
	if s, err := ctx2.TuneStats(); err != nil || s.Trials != 0 || s.Stored != 1 {
		t.Fatal(s, err)
	}
	for i := range out {
		out[i] = 0
	}
	if err := k4.Launch(imported.Grid, x, y, out, tuneN); err != nil {
		t.Fatal(err)
	}
	checkSum(t, out, x, y)
}

func TestTuneProduct(t *testing.T) {
	x, y, out := tuneInputs()
	cpu := &tri.CompileOptions{Target: "cpu"}
	ctx := newContext(t, tri.WithCacheDir(filepath.Join(t.TempDir(), "cache")))
	m := loadVadd(t, ctx)
	k, res, err := m.Tune("vadd", cpu, tri.TuneOptions{
		Space: []tri.TuneEntry{tri.TuneProduct{
			Constexprs: []tri.TuneValues{{Name: "BLOCK", Values: []int64{128, 256, 512, 1024}}},
			Filter:     "BLOCK >= 256",
		}},
		GridFunc:    gridOf,
		Repetitions: 2,
	}, x, y, out, tuneN)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	var blocks []int64
	for _, c := range res.Configs {
		if c.Status != 0 || c.NumWarps != 4 || c.NumStages != 0 {
			t.Fatalf("%+v", c)
		}
		blocks = append(blocks, c.Constexprs["BLOCK"])
	}
	if !reflect.DeepEqual(blocks, []int64{256, 512, 1024}) {
		t.Fatalf("%v in %s", blocks, res.JSON)
	}
	if n, err := ctx.TuneStat(tri.TuneStatTrials); err != nil || n != 3 {
		t.Fatal(n, err)
	}
	if err := k.Launch(res.Grid, x, y, out, tuneN); err != nil {
		t.Fatal(err)
	}
	checkSum(t, out, x, y)

	// Warps and stages multiply the product, stages fastest; a single config may precede it. The
	// grid function sees every config, product ones included.
	var seen []string
	k2, mixed, err := m.Tune("vadd", cpu, tri.TuneOptions{
		Space: []tri.TuneEntry{
			tri.TuneConfig{Constexprs: map[string]int64{"BLOCK": 64}},
			tri.TuneProduct{
				Constexprs: []tri.TuneValues{{Name: "BLOCK", Values: []int64{256, 512}}},
				Warps:      []int{2, 8},
				Stages:     []int{0, 2},
				Filter:     "warps * BLOCK >= 1024",
			},
		},
		GridFunc: func(c tri.TuneConfig) tri.Grid {
			seen = append(seen, c.String())
			return gridOf(c)
		},
		Repetitions: 1,
		Retune:      true,
	}, x, y, out, tuneN)
	if err != nil {
		t.Fatal(err)
	}
	k2.Close()
	var got []string
	for _, c := range mixed.Configs {
		got = append(got, c.Config)
	}
	want := []string{"BLOCK=64,warps=4,stages=0", "BLOCK=256,warps=8,stages=0", "BLOCK=256,warps=8,stages=2",
		"BLOCK=512,warps=2,stages=0", "BLOCK=512,warps=2,stages=2", "BLOCK=512,warps=8,stages=0",
		"BLOCK=512,warps=8,stages=2"}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(seen, want) {
		t.Fatalf("configs %v, grid function saw %v, want %v", got, seen, want)
	}
}

// Each config's grid reaches the library, all three numbers: a grid past the limits (x below
// 2^31, y and z below 2^16) fails the launches of its config alone.
func TestTuneGridPerConfig(t *testing.T) {
	x, y, out := tuneInputs()
	ctx := newContext(t, tri.WithCacheDir(""))
	m := loadVadd(t, ctx)
	var space []tri.TuneEntry
	for _, b := range []int64{64, 128, 256, 512} {
		space = append(space, tri.TuneConfig{Constexprs: map[string]int64{"BLOCK": b}})
	}
	k, res, err := m.Tune("vadd", &tri.CompileOptions{Target: "cpu"}, tri.TuneOptions{
		Space: space,
		GridFunc: func(c tri.TuneConfig) tri.Grid {
			switch c.Constexprs["BLOCK"] {
			case 64:
				return tri.Grid{X: 1 << 31, Y: 1, Z: 1}
			case 128:
				return tri.Grid{X: 40, Y: 1 << 16, Z: 1}
			case 256:
				return tri.Grid{X: 20, Y: 1, Z: 1 << 16}
			}
			return gridOf(c)
		},
		Repetitions: 1,
	}, x, y, out, tuneN)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	for i, want := range []bool{false, false, false, true} {
		if (res.Configs[i].Status == 0) != want {
			t.Fatalf("config %d: %+v", i, res.Configs[i])
		}
	}
	if res.Best != 3 || res.Grid != tri.Grid1(10) {
		t.Fatalf("%s", res.JSON)
	}
	// One grid for every config: BLOCK=256 covers 256 * 20 >= 5000 elements.
	k2, res, err := m.Tune("vadd", &tri.CompileOptions{Target: "cpu"}, tri.TuneOptions{
		Space:       []tri.TuneEntry{tri.TuneConfig{Constexprs: map[string]int64{"BLOCK": 256}}},
		Grid:        tri.Grid1(20),
		Repetitions: 1,
	}, x, y, out, tuneN)
	if err != nil {
		t.Fatal(err)
	}
	defer k2.Close()
	if res.Configs[0].Status != 0 || res.Grid != tri.Grid1(20) {
		t.Fatalf("%s", res.JSON)
	}
	if err := k2.Launch(res.Grid, x, y, out, tuneN); err != nil {
		t.Fatal(err)
	}
	checkSum(t, out, x, y)
}

func TestTuneErrors(t *testing.T) {
	x, y, out := tuneInputs()
	cpu := &tri.CompileOptions{Target: "cpu"}
	ctx := newContext(t, tri.WithCacheDir(""))
	m := loadVadd(t, ctx)
	block := []tri.TuneEntry{tri.TuneConfig{Constexprs: map[string]int64{"BLOCK": 1024}}}
	tune := func(o tri.TuneOptions, args ...interface{}) error {
		k, _, err := m.Tune("vadd", cpu, o, args...)
		if err == nil {
			k.Close()
		}
		return err
	}
	wantError(t, tune(tri.TuneOptions{Grid: tri.Grid1(5)}, x, y, out, tuneN), tri.CodeInvalidArgument, "")
	wantError(t, tune(tri.TuneOptions{Space: block, Grid: tri.Grid1(5), Key: []string{"nope"}}, x, y, out, tuneN),
		tri.CodeInvalidArgument, "no runtime parameter %nope")
	wantError(t, tune(tri.TuneOptions{Space: []tri.TuneEntry{tri.TuneProduct{
		Constexprs: []tri.TuneValues{{Name: "BLOCK", Values: []int64{256}}}, Filter: "BLOCK >"}}}, x, y, out, tuneN),
		tri.CodeInvalidArgument, "")
	wantError(t, tune(tri.TuneOptions{Space: []tri.TuneEntry{tri.TuneProduct{
		Constexprs: []tri.TuneValues{{Name: "BLOCK"}}}}}, x, y, out, tuneN), tri.CodeInvalidArgument, "")
	wantError(t, tune(tri.TuneOptions{Space: []tri.TuneEntry{tri.TuneConfig{Constexprs: map[string]int64{"BLOCK": 1024},
		NumWarps: 3}}}, x, y, out, tuneN), tri.CodeInvalidArgument, "")
	wantError(t, tune(tri.TuneOptions{Space: []tri.TuneEntry{nil}}, x, y, out, tuneN), tri.CodeInvalidArgument, "nil")
	// Wrong arguments are refused before the call, named.
	wantError(t, tune(tri.TuneOptions{Space: block, Grid: tri.Grid1(5)}, x, y, tuneN), tri.CodeLaunchArgs, "")
	wantError(t, tune(tri.TuneOptions{Space: block, Grid: tri.Grid1(5)}, make([]int32, tuneN), y, out, tuneN),
		tri.CodeLaunchArgs, "argument 0 (%x)")
	_, _, err := m.Tune("nope", cpu, tri.TuneOptions{Space: block}, x, y, out)
	wantError(t, err, tri.CodeNotFound, "")
	_, err = ctx.TuneImport("/nonexistent/tuned.json")
	wantError(t, err, tri.CodeIO, "")
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"not": "an export"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ctx.TuneImport(bad)
	wantError(t, err, tri.CodeCorruptBinary, "")
	if _, err := ctx.TuneStat(tri.TuneStat(99)); err == nil {
		t.Fatal("an unknown counter must fail")
	}
}

func TestTuneProgressReportsEveryCompileAndBenchmark(t *testing.T) {
	x, y, out := tuneInputs()
	ctx := newContext(t, tri.WithCacheDir(filepath.Join(t.TempDir(), "cache")))
	m := loadVadd(t, ctx)
	var seen []tri.TuneProgress
	opts := tuneOptions()
	opts.Progress = func(p tri.TuneProgress) { seen = append(seen, p) }
	k, _, err := m.Tune("vadd", &tri.CompileOptions{Target: "cpu"}, opts, x, y, out, tuneN)
	if err != nil {
		t.Fatal(err)
	}
	k.Close()
	if len(seen) != 6 {
		t.Fatalf("%d reports: %+v", len(seen), seen)
	}
	indices := map[int]bool{}
	for i, p := range seen[:3] {
		if p.Stage != tri.StageCompile || p.Done != i+1 || p.Count != 3 {
			t.Fatalf("compile report %d: %+v", i, p)
		}
		indices[p.Index] = true
		if p.Index == 1 && (p.Status == 0 || p.Config.Constexprs["BLOCK"] != 100) {
			t.Fatalf("the failing config: %+v", p)
		}
	}
	if len(indices) != 3 {
		t.Fatalf("every config compiles once: %+v", seen[:3])
	}
	for i, p := range seen[3:] {
		if p.Stage != tri.StageBenchmark || p.Index != i || p.Done != i+1 || (i != 1 && p.MedianNs <= 0) {
			t.Fatalf("benchmark report %d: %+v", i, p)
		}
	}
	// A panic in the function comes back once the library has returned.
	opts.Retune = true
	opts.Progress = func(tri.TuneProgress) { panic("stop") }
	defer func() {
		if r := recover(); r != "stop" {
			t.Fatalf("recovered %v", r)
		}
	}()
	m.Tune("vadd", &tri.CompileOptions{Target: "cpu"}, opts, x, y, out, tuneN)
	t.Fatal("Tune returned after its progress function panicked")
}

// svgTexts parses svg with encoding/xml (a well-formed document, one <svg> root in the SVG
// namespace) and returns the text of its <text> elements and the class of each <rect>.
func svgTexts(t *testing.T, svg string) (texts, classes []string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	depth, roots, inText := 0, 0, false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if e.Name.Space != "http://www.w3.org/2000/svg" || e.Name.Local != "svg" {
					t.Fatalf("root %v", e.Name)
				}
			}
			depth++
			inText = e.Name.Local == "text"
			if inText {
				texts = append(texts, "")
			}
			for _, a := range e.Attr {
				if e.Name.Local == "rect" && a.Name.Local == "class" {
					classes = append(classes, a.Value)
				}
			}
		case xml.EndElement:
			depth--
			inText = false
		case xml.CharData:
			if inText {
				texts[len(texts)-1] += string(e)
			}
		}
	}
	if roots != 1 || depth != 0 {
		t.Fatalf("%d roots, depth %d at the end", roots, depth)
	}
	return texts, classes
}

func TestTuneSVG(t *testing.T) {
	x, y, out := tuneInputs()
	ctx := newContext(t, tri.WithCacheDir(""))
	m := loadVadd(t, ctx)
	k, res, err := m.Tune("vadd", &tri.CompileOptions{Target: "cpu"}, tuneOptions(), x, y, out, tuneN)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	// The library draws it (tri_tune_plot): BLOCK and stages vary, so a heatmap of BLOCK rows.
	svg, err := res.SVG("")
	if err != nil {
		t.Fatal(err)
	}
	texts, classes := svgTexts(t, svg)
	winners, cells := 0, 0
	for _, c := range classes {
		if strings.HasPrefix(c, "cell") {
			cells++
		}
		if c == "cell winner" {
			winners++
		}
	}
	joined := strings.Join(texts, "|")
	if texts[0] != "@vadd on cpu" || cells != 6 || winners != 1 || !strings.Contains(joined, "|BLOCK|") ||
		!strings.Contains(joined, "|failed|") || !strings.Contains(joined, fmt.Sprintf("winner: config %d (", res.Best)) {
		t.Fatalf("cells %d, winners %d, texts %q", cells, winners, texts)
	}
	// The same JSON through the free function, with a title of the caller's.
	titled, err := tri.TuneSVG(res.JSON, "vadd <sweep>")
	if err != nil {
		t.Fatal(err)
	}
	if texts, _ := svgTexts(t, titled); texts[0] != "vadd <sweep>" {
		t.Fatalf("title %q", texts[0])
	}
	// What is not a tuning result is refused, never drawn.
	_, err = tri.TuneSVG([]byte(`{"schema": 1}`), "")
	wantError(t, err, tri.CodeCorruptBinary, "tri_tune_plot")
	_, err = tri.TuneSVG(nil, "")
	wantError(t, err, tri.CodeCorruptBinary, "tri_tune_plot")
	_, err = tri.TuneSVG(res.JSON, "a\x00b")
	wantError(t, err, tri.CodeInvalidArgument, "NUL")
}
