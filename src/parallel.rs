//! Threads: how a run is spread over a thread pool.
//!
//! A [`Parallel`] holds the thread count, the threshold below which a run stays on the calling thread,
//! and the tuning of whole-array reductions. Kernels are cut into work units by kiln-jit (ranges of a
//! map, groups of rows, column ranges, chunks of a whole-array reduction), which never split one
//! output's fold; whole-array reductions are chunked by `n` alone and their partials folded in order.
//! So the bits of every result are the same for any thread count and any threshold.
//!
//! The pool is rayon's: a well-kept work-stealing pool whose workers live across runs (a scoped thread
//! per run costs tens of microseconds, as much as the whole kernel near the threshold). One pool per
//! thread count is built on first use and shared by every runner asking for that count.

use kiln_jit::Spread;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The most threads a runner uses (more are clamped to this): every distinct count keeps a pool.
pub const MAX_THREADS: usize = 256;

/// Below this many points a run stays on the calling thread, measured: `cargo bench --bench reduce
/// -- threshold` runs axpy and sum(x*x) from 2^14 to 2^19 points on 1 and 2 threads (threshold
/// forced to 0). On the 2-core development machine, quiet, spreading a run over the pool cost about
/// 20 us; a second thread broke even at 2^17 points for axpy (30.0 vs 30.3 us) and paid from 2^18
/// (63 vs 41 us), and broke even at 2^18 for sum(x*x) (20.9 vs 21.1 us) and paid from 2^19 (42 vs
/// 31 us). Overridable ([`Parallel::threshold`], `FusedRunner::with_threshold`).
pub const DEFAULT_THRESHOLD: usize = 1 << 18;

/// Whole-array reductions are cut into at most this many partials.
pub const DEFAULT_TARGET_PARTIALS: usize = 64;

/// The shortest chunk of a whole-array reduction (an input of at most this many points takes one
/// pass).
pub const DEFAULT_MIN_CHUNK: usize = 1 << 15;

/// The threads of a runner and the tuning that goes with them.
#[derive(Clone)]
pub struct Parallel {
    threads: usize,
    /// Runs over fewer points than this stay on the calling thread.
    pub threshold: usize,
    /// Whole-array reductions: at most this many chunks (the chunking depends on n and this alone).
    pub target_partials: usize,
    /// Whole-array reductions: the shortest chunk.
    pub min_chunk: usize,
    pool: Option<Arc<rayon::ThreadPool>>,
}

impl std::fmt::Debug for Parallel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parallel")
            .field("threads", &self.threads)
            .field("threshold", &self.threshold)
            .field("target_partials", &self.target_partials)
            .field("min_chunk", &self.min_chunk)
            .finish()
    }
}

/// The number of cores this process may use, asked of the OS once (std reads the cgroup files on
/// every call: tens of microseconds, which every new runner would pay).
pub fn available_threads() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl Default for Parallel {
    /// As many threads as cores.
    fn default() -> Self {
        Parallel::new(available_threads())
    }
}

fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&threads) {
        return Some(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("kiln-{i}"))
        .build()
        .ok()?;
    let p = Arc::new(p);
    pools.insert(threads, p.clone());
    Some(p)
}

impl Parallel {
    /// `threads` threads (at least 1, at most [`MAX_THREADS`]; 1 runs everything on the calling
    /// thread), the default tuning.
    pub fn new(threads: usize) -> Parallel {
        let threads = threads.clamp(1, MAX_THREADS);
        Parallel {
            threads,
            threshold: DEFAULT_THRESHOLD,
            target_partials: DEFAULT_TARGET_PARTIALS,
            min_chunk: DEFAULT_MIN_CHUNK,
            pool: None,
        }
    }

    /// The number of threads runs may use.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The pool, built on first use (None: one thread, or the pool could not be built).
    fn pool(&mut self) -> Option<&Arc<rayon::ThreadPool>> {
        if self.pool.is_none() && self.threads > 1 {
            self.pool = pool(self.threads);
        }
        self.pool.as_ref()
    }

    /// This setting with its pool ready (runners call it once, not per run).
    pub(crate) fn ready(mut self) -> Parallel {
        self.pool();
        self
    }

    /// The jit's run configuration for a kernel of `n` points starting at `start`.
    pub(crate) fn jit_config<'a>(&'a self, n: usize, start: kiln_ir::Start<'a>) -> kiln_jit::RunConfig<'a> {
        let parallel = self.pool.is_some() && n >= self.threshold;
        kiln_jit::RunConfig {
            start,
            target_partials: self.target_partials,
            min_chunk: self.min_chunk,
            max_units: if parallel {
                self.threads.saturating_mul(4)
            } else {
                1
            },
            spread: if parallel { self } else { &kiln_jit::Serial },
        }
    }
}

impl Spread for Parallel {
    fn spread(&self, units: usize, work: &(dyn Fn(usize) + Sync)) {
        match &self.pool {
            Some(pool) if units > 1 => pool.scope(|s| {
                for u in 0..units {
                    s.spawn(move |_| work(u));
                }
            }),
            _ => (0..units).for_each(work),
        }
    }
}
