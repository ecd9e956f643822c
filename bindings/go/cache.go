// The context's disk cache of compiled kernels (tri_cache_*, docs/cache.md): where it is, its
// statistics, its entries, pruning, and bundles that ship a warm cache.

package tri

/*
#include <stdlib.h>
#include <tri/tri.h>
*/
import "C"

import (
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// CacheStat names what Context.CacheStat reads (TRI_CACHE_STAT_*): counters of this context's
// use since it was made, then usage of the directory now.
type CacheStat int32

const (
	StatHits          CacheStat = C.TRI_CACHE_STAT_HITS
	StatMisses        CacheStat = C.TRI_CACHE_STAT_MISSES
	StatStores        CacheStat = C.TRI_CACHE_STAT_STORES
	StatBytesRead     CacheStat = C.TRI_CACHE_STAT_BYTES_READ
	StatBytesWritten  CacheStat = C.TRI_CACHE_STAT_BYTES_WRITTEN
	StatEvictions     CacheStat = C.TRI_CACHE_STAT_EVICTIONS
	StatCorrupt       CacheStat = C.TRI_CACHE_STAT_CORRUPT
	StatWriteFailures CacheStat = C.TRI_CACHE_STAT_WRITE_FAILURES
	StatLockWaits     CacheStat = C.TRI_CACHE_STAT_LOCK_WAITS
	StatEntries       CacheStat = C.TRI_CACHE_STAT_ENTRIES
	StatBytes         CacheStat = C.TRI_CACHE_STAT_BYTES
	StatMaxBytes      CacheStat = C.TRI_CACHE_STAT_MAX_BYTES
	StatEnabled       CacheStat = C.TRI_CACHE_STAT_ENABLED
)

// CacheBound, given to CachePrune, prunes down to the context's size bound.
const CacheBound uint64 = math.MaxUint64

// CacheStats holds every statistic at once (Context.CacheStats).
type CacheStats struct {
	Hits, Misses, Stores, BytesRead, BytesWritten, Evictions, Corrupt, WriteFailures, LockWaits uint64
	Entries, Bytes, MaxBytes                                                                    uint64
	Enabled                                                                                     bool
}

// CacheEntry is one entry of the cache directory (Context.CacheList).
type CacheEntry struct {
	Key     string // 32 hex digits; the file is <Key>.entry
	Bytes   uint64
	LastUse int64  // seconds since 1970
	Status  string // "ok", "ok (another build)", "bad: <why>", or (verified) "removed: <why>"
	Kind    string // the payload: "obj" (cpu), "ptx" or "ptx+cubin" (cuda)
	Target  string
	Kernel  string
	MadeFor string // the target's identity: LLVM, CPU and features, GPU architecture
	// What it was specialized for: constexprs, warps and stages ("cuda"), a launch variant's facts.
	Specialized string
}

// OK reports whether the entry is usable.
func (e CacheEntry) OK() bool { return strings.HasPrefix(e.Status, "ok") }

// CacheDir is the directory the disk cache uses, or "" when it is off.
func (c *Context) CacheDir() (string, error) {
	var dir string
	err := c.use(func(raw *C.tri_context) error {
		var p *C.char
		if err := call(func() C.tri_result { return C.tri_cache_dir(raw, &p) }); err != nil {
			return err
		}
		dir = C.GoString(p)
		return nil
	})
	return dir, err
}

// CacheStat reads one statistic; it works with the cache off (all but the bound read 0).
func (c *Context) CacheStat(stat CacheStat) (uint64, error) {
	var v C.uint64_t
	err := c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result { return C.tri_cache_stat(raw, C.int32_t(stat), &v) })
	})
	return uint64(v), err
}

// CacheStats reads every statistic.
func (c *Context) CacheStats() (CacheStats, error) {
	var s CacheStats
	var enabled uint64
	for _, f := range []struct {
		stat CacheStat
		to   *uint64
	}{{StatHits, &s.Hits}, {StatMisses, &s.Misses}, {StatStores, &s.Stores}, {StatBytesRead, &s.BytesRead},
		{StatBytesWritten, &s.BytesWritten}, {StatEvictions, &s.Evictions}, {StatCorrupt, &s.Corrupt},
		{StatWriteFailures, &s.WriteFailures}, {StatLockWaits, &s.LockWaits}, {StatEntries, &s.Entries},
		{StatBytes, &s.Bytes}, {StatMaxBytes, &s.MaxBytes}, {StatEnabled, &enabled}} {
		v, err := c.CacheStat(f.stat)
		if err != nil {
			return CacheStats{}, err
		}
		*f.to = v
	}
	s.Enabled = enabled != 0
	return s, nil
}

// CacheList reads the entries, sorted by key, each read and checked in full; with verify, bad
// ones are removed. ErrUnsupported when the cache is off.
func (c *Context) CacheList(verify bool) ([]CacheEntry, error) {
	var text string
	err := c.use(func(raw *C.tri_context) error {
		v := C.int32_t(0)
		if verify {
			v = 1
		}
		var b *C.tri_blob
		if err := call(func() C.tri_result { return C.tri_cache_list(raw, v, &b) }); err != nil {
			return err
		}
		text = string(blobBytes(b))
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []CacheEntry
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 9)
		if len(f) != 9 {
			return nil, errorf(CodeInternal, "tri_cache_list gave a line of %d fields: %q", len(f), line)
		}
		bytes, err1 := strconv.ParseUint(f[1], 10, 64)
		last, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, errorf(CodeInternal, "tri_cache_list gave a line this package cannot read: %q", line)
		}
		out = append(out, CacheEntry{Key: f[0], Bytes: bytes, LastUse: last, Status: f[3], Kind: f[4], Target: f[5],
			Kernel: f[6], MadeFor: f[7], Specialized: f[8]})
	}
	return out, nil
}

// CachePrune removes least recently used entries until the rest take at most maxBytes
// (CacheBound: the context's bound; 0 empties the cache), stale temporary files and abandoned
// locks, and returns how many entries it removed.
func (c *Context) CachePrune(maxBytes uint64) (uint64, error) {
	var removed C.uint64_t
	err := c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result { return C.tri_cache_prune(raw, C.uint64_t(maxBytes), &removed) })
	})
	return uint64(removed), err
}

// CacheExport writes every valid entry to a bundle file at path (replacing it), so an
// application can ship a warm cache, and returns how many entries it wrote.
func (c *Context) CacheExport(path string) (int, error) {
	return c.bundle(path, true)
}

// CacheImport adds a bundle's entries to the cache, each validated, and returns how many were
// added (entries of another build of Tri are skipped and logged).
func (c *Context) CacheImport(path string) (int, error) {
	return c.bundle(path, false)
}

func (c *Context) bundle(path string, export bool) (int, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var n C.uint32_t
	err := c.use(func(raw *C.tri_context) error {
		return call(func() C.tri_result {
			if export {
				return C.tri_cache_export(raw, cpath, &n)
			}
			return C.tri_cache_import(raw, cpath, &n)
		})
	})
	return int(n), err
}
