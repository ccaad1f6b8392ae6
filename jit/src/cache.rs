//! The kernel cache: compiled kernels keyed by structure and schedule, bounded, thread-safe.
//!
//! The key ([`KernelKey`]) is the kernel's [`Structure`] (dtype, rank, plan shape, what it computes),
//! its expression arena and body, and the schedule: never the concrete sizes, which travel at run time,
//! so one compiled kernel serves every size of the same plan shape. The cache keeps at most `capacity`
//! kernels and evicts the least recently used; an evicted kernel's machine code is freed when the last
//! `Arc` to it drops (each kernel owns its JIT module). Compilation happens outside the lock.

use crate::CompiledKernel;
use crate::error::Result;
use crate::layout::Structure;
use crate::schedule::Schedule;
use kiln_ir::{BroadcastPlan, ExprArena, KernelIR, NodeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Everything that shapes a kernel's code. Made only by [`KernelKey::new`], from a validated kernel
/// and a normalised schedule: codegen relies on both (input and index numbers in range, at least one
/// vector and one accumulator per iteration).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelKey {
    pub(crate) structure: Structure,
    pub(crate) arena: ExprArena,
    pub(crate) body: NodeId,
    pub(crate) schedule: Schedule,
}

impl KernelKey {
    /// The key of `kernel` read through `plan` with `schedule` (normalised for the dtype).
    pub fn new(kernel: &KernelIR, plan: &BroadcastPlan, schedule: Schedule) -> Result<KernelKey> {
        kernel.validate()?;
        Ok(KernelKey {
            structure: Structure::new(kernel, plan)?,
            arena: kernel.arena.clone(),
            body: kernel.body,
            schedule: schedule.normalised(kernel.dtype),
        })
    }

    /// The structure of the kernel (plan, mode, rank) the code is for.
    pub fn structure(&self) -> &Structure {
        &self.structure
    }

    /// The schedule, normalised for the kernel's dtype.
    pub fn schedule(&self) -> Schedule {
        self.schedule
    }
}

/// Counters of a cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    pub len: usize,
}

struct Inner {
    map: HashMap<KernelKey, (Arc<CompiledKernel>, u64)>,
    tick: u64,
    stats: CacheStats,
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
                map: HashMap::new(),
                tick: 0,
                stats: CacheStats::default(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // a panic while holding the lock leaves the map consistent (every update is one insert/remove)
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The compiled kernel for `kernel` over `plan` with `schedule`, compiling it on a miss.
    pub fn get_or_compile(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        schedule: Schedule,
    ) -> Result<Arc<CompiledKernel>> {
        let key = KernelKey::new(kernel, plan, schedule)?;
        {
            let mut inner = self.lock();
            inner.tick += 1;
            let tick = inner.tick;
            if let Some((k, used)) = inner.map.get_mut(&key) {
                *used = tick;
                let k = k.clone();
                inner.stats.hits += 1;
                return Ok(k);
            }
            inner.stats.misses += 1;
        }
        let compiled = Arc::new(CompiledKernel::compile_uncached(key.clone())?);
        let mut evicted = Vec::new();
        let result = {
            let mut inner = self.lock();
            inner.tick += 1;
            let tick = inner.tick;
            if let Some((k, used)) = inner.map.get_mut(&key) {
                // another thread compiled it meanwhile: keep theirs
                *used = tick;
                k.clone()
            } else {
                while inner.map.len() >= self.capacity {
                    let oldest = inner
                        .map
                        .iter()
                        .min_by_key(|(_, (_, used))| *used)
                        .map(|(k, _)| k.clone())
                        .expect("a full cache has an entry");
                    evicted.extend(inner.map.remove(&oldest));
                    inner.stats.evictions += 1;
                }
                inner.map.insert(key, (compiled.clone(), tick));
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
            len: inner.map.len(),
            ..inner.stats
        }
    }

    /// Drops every kernel (their code is freed once no caller holds them).
    pub fn clear(&self) {
        let old = std::mem::take(&mut self.lock().map);
        drop(old);
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

/// The process-wide cache [`crate::compile`] uses (256 kernels).
pub fn global() -> &'static KernelCache {
    static CACHE: OnceLock<KernelCache> = OnceLock::new();
    CACHE.get_or_init(|| KernelCache::new(256))
}
