// The context's disk cache of compiled kernels (tri_cache_*, docs/cache.md): where it is, its
// statistics, its entries, pruning, and bundles that ship a warm cache.

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::ptr;

use tri_sys as sys;

use crate::context::{path_cstring, Context};
use crate::error::{check, Error, Result};
use crate::module::Blob;

/// What `Context::cache_stat` reads (`TRI_CACHE_STAT_*`): counters of this context's use since
/// it was made, then usage of the directory now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CacheStat {
    Hits,
    Misses,
    Stores,
    BytesRead,
    BytesWritten,
    Evictions,
    Corrupt,
    WriteFailures,
    LockWaits,
    Entries,
    Bytes,
    MaxBytes,
    Enabled,
}

impl CacheStat {
    pub fn raw(self) -> i32 {
        match self {
            CacheStat::Hits => sys::TRI_CACHE_STAT_HITS,
            CacheStat::Misses => sys::TRI_CACHE_STAT_MISSES,
            CacheStat::Stores => sys::TRI_CACHE_STAT_STORES,
            CacheStat::BytesRead => sys::TRI_CACHE_STAT_BYTES_READ,
            CacheStat::BytesWritten => sys::TRI_CACHE_STAT_BYTES_WRITTEN,
            CacheStat::Evictions => sys::TRI_CACHE_STAT_EVICTIONS,
            CacheStat::Corrupt => sys::TRI_CACHE_STAT_CORRUPT,
            CacheStat::WriteFailures => sys::TRI_CACHE_STAT_WRITE_FAILURES,
            CacheStat::LockWaits => sys::TRI_CACHE_STAT_LOCK_WAITS,
            CacheStat::Entries => sys::TRI_CACHE_STAT_ENTRIES,
            CacheStat::Bytes => sys::TRI_CACHE_STAT_BYTES,
            CacheStat::MaxBytes => sys::TRI_CACHE_STAT_MAX_BYTES,
            CacheStat::Enabled => sys::TRI_CACHE_STAT_ENABLED,
        }
    }
}

/// Every statistic at once (`Context::cache_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub stores: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub evictions: u64,
    pub corrupt: u64,
    pub write_failures: u64,
    pub lock_waits: u64,
    pub entries: u64,
    pub bytes: u64,
    /// The size bound (0: none).
    pub max_bytes: u64,
    pub enabled: bool,
}

/// One entry of the cache directory (`Context::cache_list`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheEntry {
    /// 32 hex digits; the entry's file is `<key>.entry`.
    pub key: String,
    pub bytes: u64,
    /// Seconds since 1970.
    pub last_use: u64,
    /// "ok", "ok (another build)", "bad: <why>", or (verified) "removed: <why>".
    pub status: String,
    /// The payload: "obj" (cpu), "ptx" or "ptx+cubin" (cuda).
    pub kind: String,
    pub target: String,
    pub kernel: String,
    /// What it was made for: the target's identity (LLVM, CPU and features, GPU architecture).
    pub made_for: String,
    /// What it was specialized for: constexprs, warps and stages (Cuda), a launch variant's facts.
    pub specialized: String,
}

impl CacheEntry {
    pub fn is_ok(&self) -> bool {
        self.status.starts_with("ok")
    }

    fn parse(line: &str) -> Result<CacheEntry> {
        let f: Vec<&str> = line.splitn(9, '\t').collect();
        let number = |s: &str| {
            s.parse::<u64>().map_err(|_| {
                Error::new(
                    sys::TRI_ERROR_INTERNAL,
                    format!("tri_cache_list gave a line this crate cannot read: {:?}", line),
                )
            })
        };
        if f.len() != 9 {
            return Err(Error::new(
                sys::TRI_ERROR_INTERNAL,
                format!("tri_cache_list gave a line of {} fields: {:?}", f.len(), line),
            ));
        }
        Ok(CacheEntry {
            key: f[0].to_string(),
            bytes: number(f[1])?,
            last_use: number(f[2])?,
            status: f[3].to_string(),
            kind: f[4].to_string(),
            target: f[5].to_string(),
            kernel: f[6].to_string(),
            made_for: f[7].to_string(),
            specialized: f[8].to_string(),
        })
    }
}

impl Context {
    /// The directory the disk cache uses, or None when it is off.
    pub fn cache_dir(&self) -> Result<Option<PathBuf>> {
        let mut p = ptr::null();
        // SAFETY: a live context; the string belongs to it and is copied here.
        check(unsafe { sys::tri_cache_dir(self.as_raw(), &mut p) })?;
        let s = if p.is_null() { String::new() } else { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() };
        Ok(if s.is_empty() { None } else { Some(PathBuf::from(s)) })
    }

    /// One statistic; works with the cache off (everything but the bound reads 0).
    pub fn cache_stat(&self, stat: CacheStat) -> Result<u64> {
        let mut v = 0u64;
        // SAFETY: a live context; out-parameter.
        check(unsafe { sys::tri_cache_stat(self.as_raw(), stat.raw(), &mut v) })?;
        Ok(v)
    }

    pub fn cache_stats(&self) -> Result<CacheStats> {
        let s = |stat| self.cache_stat(stat);
        Ok(CacheStats {
            hits: s(CacheStat::Hits)?,
            misses: s(CacheStat::Misses)?,
            stores: s(CacheStat::Stores)?,
            bytes_read: s(CacheStat::BytesRead)?,
            bytes_written: s(CacheStat::BytesWritten)?,
            evictions: s(CacheStat::Evictions)?,
            corrupt: s(CacheStat::Corrupt)?,
            write_failures: s(CacheStat::WriteFailures)?,
            lock_waits: s(CacheStat::LockWaits)?,
            entries: s(CacheStat::Entries)?,
            bytes: s(CacheStat::Bytes)?,
            max_bytes: s(CacheStat::MaxBytes)?,
            enabled: s(CacheStat::Enabled)? != 0,
        })
    }

    /// The entries, sorted by key, each read and checked in full; with `verify`, bad ones are
    /// removed. `ErrorKind::Unsupported` when the cache is off.
    pub fn cache_list(&self, verify: bool) -> Result<Vec<CacheEntry>> {
        let mut blob = ptr::null_mut();
        // SAFETY: a live context; out-parameter owned by the Blob below.
        check(unsafe { sys::tri_cache_list(self.as_raw(), verify as i32, &mut blob) })?;
        let text = Blob::from_raw(blob, self).into_string()?;
        text.lines().map(CacheEntry::parse).collect()
    }

    /// Removes least recently used entries until the rest take at most `max_bytes` (None: the
    /// context's bound; Some(0) empties the cache), stale temporary files and abandoned locks.
    /// Returns how many entries it removed.
    pub fn cache_prune(&self, max_bytes: Option<u64>) -> Result<u64> {
        let mut removed = 0u64;
        // SAFETY: a live context; out-parameter.
        check(unsafe { sys::tri_cache_prune(self.as_raw(), max_bytes.unwrap_or(u64::MAX), &mut removed) })?;
        Ok(removed)
    }

    /// Writes every valid entry to a bundle file at `path` (replacing it), so an application can
    /// ship a warm cache; returns how many entries it wrote.
    pub fn cache_export(&self, path: impl AsRef<Path>) -> Result<u32> {
        let p = path_cstring(path.as_ref())?;
        let mut n = 0u32;
        // SAFETY: a live context, a NUL-terminated path, an out-parameter.
        check(unsafe { sys::tri_cache_export(self.as_raw(), p.as_ptr(), &mut n) })?;
        Ok(n)
    }

    /// Adds a bundle's entries to the cache, each validated; returns how many were added
    /// (entries of another build of Tri are skipped and logged).
    pub fn cache_import(&self, path: impl AsRef<Path>) -> Result<u32> {
        let p = path_cstring(path.as_ref())?;
        let mut n = 0u32;
        // SAFETY: as for cache_export.
        check(unsafe { sys::tri_cache_import(self.as_raw(), p.as_ptr(), &mut n) })?;
        Ok(n)
    }
}
