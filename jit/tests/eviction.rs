//! Compiling and evicting 10 000 distinct kernels keeps memory bounded: each kernel owns its JIT
//! module, freed when the cache evicts it and the last user drops it. (Its own test binary, so the
//! count of live modules is not disturbed by other tests.)

mod common;

use common::*;
use kiln_ir::*;
use kiln_jit::{KernelCache, Schedule, live_modules};

fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

#[test]
fn ten_thousand_kernels_stay_bounded() {
    let cache = KernelCache::new(16);
    let data = [vec![1.5f64; 37]];
    let mut baseline = 0;
    for i in 0..10_000u32 {
        let mut arena = ExprArena::new();
        let x = arena.input(0);
        let c = arena.literal(i as f64);
        let body = arena.binary(BinaryOp::Add, x, c);
        let k = kernel(ElemType::F64, &[&[37]], arena, body, KernelKind::Map);
        let p = plan(&k, 64);
        let compiled = cache.get_or_compile(&k, &p, Schedule::for_kernel(&k)).unwrap();
        if i % 997 == 0 {
            let out = compiled.run_f64(&k, &p, &[&data[0]]).unwrap();
            assert_eq!(out.values, Values::F64(vec![1.5 + i as f64; 37]));
        }
        drop(compiled);
        assert!(live_modules() <= 16, "{} modules alive", live_modules());
        if i == 500 {
            baseline = resident_bytes();
        }
    }
    let stats = cache.stats();
    assert_eq!(stats.misses, 10_000);
    assert_eq!(stats.evictions, 10_000 - 16);
    assert_eq!(stats.len, 16);
    let grown = resident_bytes().saturating_sub(baseline);
    // 9 500 leaked modules would be at least 9 500 pages of code (37 MiB)
    eprintln!("resident memory grew by {grown} bytes over 9 500 kernels");
    assert!(grown < 16 << 20, "resident memory grew by {grown} bytes");
    cache.clear();
    assert_eq!(live_modules(), 0);
}
