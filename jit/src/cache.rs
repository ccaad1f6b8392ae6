//! The kernel cache: compiled kernels keyed by structure and schedule, bounded, thread-safe.
//!
//! The key ([`KernelKey`], the code generator's input) is the kernel's [`Structure`] (dtype, rank, plan shape, what it computes),
//! its expression arena and body, and the schedule: never the concrete sizes, which travel at run time,
//! so one compiled kernel serves every size of the same plan shape. The cache keeps at most `capacity`
//! kernels and evicts the least recently used; an evicted kernel's machine code is freed when the last
//! `Arc` to it drops (each kernel owns its JIT module). Compilation happens outside the lock.

use crate::CompiledKernel;
use crate::error::Result;
use crate::key::KernelKey;
use crate::layout::Structure;
use crate::schedule::Schedule;
use kiln_ir::{BroadcastPlan, ExprArena, KernelIR, NodeId};
use rustc_hash::FxHashMap as HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

/// Counters of a cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups that found a compiled kernel.
    pub hits: u64,
    /// Lookups that compiled one.
    pub misses: u64,
    /// Kernels dropped to stay within the capacity (least recently used first).
    pub evictions: u64,
    /// Kernels held now.
    pub len: usize,
}

/// One cached kernel: its key, its code, and when it was last used.
struct Entry {
    key: KernelKey,
    code: Arc<CompiledKernel>,
    used: u64,
}

struct Inner {
    /// Entries by the hash of their key's parts, so a lookup hashes the caller's kernel in place
    /// (building a `KernelKey` clones the arena; that happens only on a miss).
    map: HashMap<u64, Vec<Entry>>,
    len: usize,
    tick: u64,
    stats: CacheStats,
}

/// The hash of a key's parts, borrowed.
fn key_hash(
    structure: &Structure,
    arena: &ExprArena,
    body: NodeId,
    extra: &[NodeId],
    schedule: Schedule,
) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    structure.hash(&mut h);
    arena.hash(&mut h);
    body.hash(&mut h);
    extra.hash(&mut h);
    schedule.hash(&mut h);
    h.finish()
}

impl Inner {
    /// The entry for these parts, if cached.
    fn find(
        &mut self,
        hash: u64,
        structure: &Structure,
        kernel: &KernelIR,
        schedule: Schedule,
    ) -> Option<&mut Entry> {
        self.map.get_mut(&hash)?.iter_mut().find(|e| {
            e.key.schedule == schedule
                && e.key.body == kernel.body
                && e.key.extra == kernel.extra
                && e.key.structure == *structure
                && e.key.arena == kernel.arena
        })
    }

    /// Removes the least recently used entry.
    fn evict_oldest(&mut self) -> Option<Arc<CompiledKernel>> {
        let (&hash, i) = self
            .map
            .iter()
            .flat_map(|(h, v)| v.iter().enumerate().map(move |(i, e)| ((h, i), e.used)))
            .min_by_key(|(_, used)| *used)
            .map(|(at, _)| at)?;
        let bucket = self.map.get_mut(&hash)?;
        let gone = bucket.swap_remove(i);
        if bucket.is_empty() {
            self.map.remove(&hash);
        }
        self.len -= 1;
        Some(gone.code)
    }
}

/// A bounded LRU cache of compiled kernels.
pub struct KernelCache {
    capacity: usize,
    inner: Mutex<Inner>,
}

impl KernelCache {
    /// A cache holding at most `capacity` kernels (at least 1).
    pub fn new(capacity: usize) -> KernelCache {
        KernelCache {
            capacity: capacity.max(1),
            inner: Mutex::new(Inner {
                map: HashMap::default(),
                len: 0,
                tick: 0,
                stats: CacheStats::default(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // a panic while holding the lock leaves the map consistent (every update is one push/remove)
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The compiled kernel for `kernel` over `plan` with `schedule`, compiling it on a miss.
    pub fn get_or_compile(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        schedule: Schedule,
    ) -> Result<Arc<CompiledKernel>> {
        self.get_or_compile_as(kernel, plan, schedule, false)
    }

    /// The compiled kernel of a typed kernel's `kernel` (see [`crate::compile_typed`]) over `plan`
    /// with `schedule`, compiling it on a miss.
    pub fn get_or_compile_typed(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        schedule: Schedule,
    ) -> Result<Arc<CompiledKernel>> {
        self.get_or_compile_as(kernel, plan, schedule, true)
    }

    fn get_or_compile_as(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        schedule: Schedule,
        typed: bool,
    ) -> Result<Arc<CompiledKernel>> {
        let schedule = schedule.normalised(kernel.dtype);
        let structure = if typed {
            Structure::typed(kernel, plan)?.0
        } else {
            Structure::new(kernel, plan)?
        };
        let hash = key_hash(&structure, &kernel.arena, kernel.body, &kernel.extra, schedule);
        {
            let mut inner = self.lock();
            inner.tick += 1;
            let tick = inner.tick;
            if let Some(e) = inner.find(hash, &structure, kernel, schedule) {
                // an equal key was validated when it was made: same arena, body, rank and inputs
                e.used = tick;
                let code = e.code.clone();
                inner.stats.hits += 1;
                return Ok(code);
            }
            inner.stats.misses += 1;
        }
        let key = if typed {
            KernelKey::typed(kernel, plan, schedule)?
        } else {
            KernelKey::new(kernel, plan, schedule)?
        };
        let compiled = Arc::new(CompiledKernel::compile_uncached(key.clone())?);
        let mut evicted = Vec::new();
        let result = {
            let mut inner = self.lock();
            inner.tick += 1;
            let tick = inner.tick;
            if let Some(e) = inner.find(hash, &structure, kernel, schedule) {
                // another thread compiled it meanwhile: keep theirs
                e.used = tick;
                e.code.clone()
            } else {
                while inner.len >= self.capacity {
                    evicted.extend(inner.evict_oldest());
                    inner.stats.evictions += 1;
                }
                inner.map.entry(hash).or_default().push(Entry {
                    key,
                    code: compiled.clone(),
                    used: tick,
                });
                inner.len += 1;
                compiled
            }
        };
        drop(evicted); // frees evicted kernels outside the lock (if nobody else holds them)
        Ok(result)
    }

    /// The counters, and the number of kernels held.
    pub fn stats(&self) -> CacheStats {
        let inner = self.lock();
        CacheStats {
            len: inner.len,
            ..inner.stats
        }
    }

    /// Drops every kernel (their code is freed once no caller holds them).
    pub fn clear(&self) {
        let old = {
            let mut inner = self.lock();
            inner.len = 0;
            std::mem::take(&mut inner.map)
        };
        drop(old);
    }

    /// The most kernels the cache holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

/// The process-wide cache [`crate::compile`] uses (256 kernels).
pub fn global() -> &'static KernelCache {
    static CACHE: OnceLock<KernelCache> = OnceLock::new();
    CACHE.get_or_init(|| KernelCache::new(256))
}
