//! The wide routines (`kiln_jit::wide`: exp, log, sin, cos, tan, the exp, log, hyperbolic and inverse families, cbrt, pow, hypot) at full width: the routines give the inline vector math's bits
//! (each level this host has, f64 and f32, dense sweeps and NumPy's special values, every length
//! 0..=40 at every offset), and kernels run in blocks give the inline kernels' bits and stay within
//! the documented ULP bounds of the interpreter (lengths around the block, empty, one element,
//! broadcast inputs, reductions, nested and repeated nodes). The inline route is reached by
//! `Schedule::with_wide(false)` here and by `KILN_JIT_WIDE=off` in `cli/tests/no_fma.rs` (kiln's), so both
//! routes are tested on any host; on a host without AVX2 and FMA both are the inline one.

mod common;

use common::*;
use kiln_ir::*;
use kiln_jit::wide::{self, Level, Routine, WideElem, WideFn};
use kiln_jit::{Elem, Schedule};

/// Points per block (`skeleton/block.rs`).
const BLOCK: usize = 256;

/// NumPy's special values for exp and log (its `umath-validation-set` edges) and the edges of
/// both precisions' ranges: zeros, subnormals, the largest finite values, where exp overflows and
/// underflows (and its general path starts), infinities and NaNs of both signs.
fn specials() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        5e-324,
        -5e-324,
        f64::from_bits(0x000f_ffff_ffff_ffff),
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        1.0,
        -1.0,
        0.5,
        2.0,
        1e-300,
        1e300,
        f32::MIN_POSITIVE as f64,
        1e-45,
        1.4e-45,
        f32::MAX as f64,
        f32::EPSILON as f64,
        f64::EPSILON,
        std::f64::consts::LN_2,
        std::f64::consts::SQRT_2,
        std::f64::consts::FRAC_1_SQRT_2,
    ];
    // the edges of the literal powers (`vmath::pow_const`): where f32 bases are scaled (`x**1.5`
    // below 2^-40 and from 2^80, `x**3` below 2^-26 and from 2^40, `x**4` below 2^-20 and from
    // 2^30, `x**-0.5` below 2^-60, `x**-2` below 2^-40 and above 2^60), computed widened (below
    // 2^-84, 2^-42, 2^-31; `x**-2` above 2^63) or given (`x**-2` up to 2^-64), each side and of
    // both signs; f64 `x**1.5` from 2^680
    for p in [-84, -64, -60, -42, -40, -31, -26, -20, 30, 40, 60, 63, 80] {
        let b = 2f32.powi(p);
        for x in [
            b,
            f32::from_bits(b.to_bits() - 1),
            f32::from_bits(b.to_bits() + 1),
        ] {
            v.push(f64::from(x));
            v.push(-f64::from(x));
        }
    }
    let b = 2f64.powi(680);
    v.extend([b, b.next_down(), -b, -b.next_down()]);
    for e in [
        708.0,
        708.3964185322641,
        709.782712893384,
        709.7827128933841,
        710.0,
        -708.0,
        -708.3964185322641,
        -744.4400719213812,
        -745.1332191019411,
        -745.1332191019412,
        -746.0,
        87.0,
        88.72283,
        88.72284,
        89.0,
        -87.0,
        -87.33654,
        -103.27893,
        -103.97208,
        -104.0,
    ] {
        v.push(e);
        v.push(f64::from_bits(e.to_bits() + 1));
        v.push(f64::from_bits(e.to_bits() - 1));
    }
    v
}

/// `n` points spread over `[lo, hi]`, then the same number of random ones there.
fn sweep(rng: &mut Rng, lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let mut v: Vec<f64> = (0..n)
        .map(|i| lo + (hi - lo) * i as f64 / (n - 1) as f64)
        .collect();
    v.extend((0..n).map(|_| rng.uniform(lo, hi)));
    v
}

/// Inputs for `r`: specials, dense sweeps over the ranges that matter, and for log every binade.
fn inputs(r: Routine, rng: &mut Rng) -> Vec<f64> {
    let mut v = specials();
    match r {
        Routine::Exp => {
            v.extend(sweep(rng, -750.0, 750.0, 20_000));
            v.extend(sweep(rng, -110.0, 95.0, 20_000));
            v.extend(sweep(rng, -1.0, 1.0, 5_000));
            v.extend(sweep(rng, -1e-6, 1e-6, 1_000));
        }
        Routine::Log => {
            v.extend(sweep(rng, 0.0, 4.0, 20_000));
            v.extend(sweep(rng, 0.5, 1.5, 10_000));
            v.extend(sweep(rng, -2.0, 0.0, 500));
            for e in -1074..1024 {
                for _ in 0..4 {
                    v.push(f64::from(e).exp2() * rng.uniform(1.0, 2.0));
                }
            }
        }
        Routine::Sin | Routine::Cos | Routine::Tan => v.extend(trig_inputs(rng)),
        Routine::Exp2 | Routine::Expm1 | Routine::Tanh | Routine::Sinh | Routine::Cosh => {
            v.extend(exp_family_inputs(r, rng))
        }
        Routine::Arcsin | Routine::Arccos => v.extend(asin_inputs(rng)),
        Routine::Arctan => v.extend(atan_inputs(rng)),
        Routine::Cbrt => v.extend(cbrt_inputs(rng)),
        Routine::Log2
        | Routine::Log10
        | Routine::Log1p
        | Routine::Arcsinh
        | Routine::Arccosh
        | Routine::Arctanh => v.extend(log_family_inputs(rng)),
        // both signs over every binade and its edges: the scalings of x**-0.5 (2^-1000) and x**-2
        // (2^±500, 2^-512, 2^538), overflow and underflow of each power, subnormals
        Routine::PowThreeHalves
        | Routine::PowCube
        | Routine::PowFourth
        | Routine::PowInvSqrt
        | Routine::PowInvSquare => v.extend(cbrt_inputs(rng)),
    }
    v
}

/// Inputs for cbrt: dense sweeps of both signs, the cubes of small integers and their neighbours
/// (exact results), the edges of the exponent's residue `r` (powers of two 2^(3q+r)), and every
/// binade, subnormals included.
fn cbrt_inputs(rng: &mut Rng) -> Vec<f64> {
    let mut v = sweep(rng, -10.0, 10.0, 20_000);
    v.extend(sweep(rng, -1e-3, 1e-3, 2_000));
    for i in 1..200i32 {
        let c = f64::from(i * i * i);
        for x in [c, -c, c.next_up(), c.next_down(), 1.0 / c] {
            v.push(x);
        }
    }
    for e in -1074..1024 {
        let p = f64::from(e).exp2();
        v.extend([p, -p, p.next_up(), p.next_down()]);
        for _ in 0..4 {
            v.push(p * rng.uniform(1.0, 2.0) * if rng.below(2) == 1 { -1.0 } else { 1.0 });
        }
    }
    v
}

/// Inputs for exp2, expm1, tanh, sinh and cosh: sweeps over the working ranges and the whole
/// range of results, every binade of both signs, and both sides of each edge: the ranges of
/// expm1 (0.35), tanh (0.5493, 20) and sinh (2), where the general paths start (exp2: |x| = 1020;
/// expm1, sinh, cosh: 708), where the results overflow (exp2: 1024; expm1: 709.78; sinh and cosh:
/// 710.4758) and underflow (exp2: -1022, -1074, -1075), and f32's (exp2: 128, -126, -149; expm1:
/// 88.72; sinh and cosh: 89.4).
fn exp_family_inputs(r: Routine, rng: &mut Rng) -> Vec<f64> {
    let mut v = Vec::new();
    let (lo, hi) = match r {
        Routine::Exp2 => (-1100.0, 1100.0),
        Routine::Expm1 => (-60.0, 712.0),
        Routine::Tanh => (-25.0, 25.0),
        _ => (-712.0, 712.0),
    };
    v.extend(sweep(rng, lo, hi, 20_000));
    v.extend(sweep(rng, -3.0, 3.0, 20_000));
    v.extend(sweep(rng, -0.6, 0.6, 5_000));
    v.extend(sweep(rng, -160.0, 160.0, 5_000));
    for e in -1074..11 {
        for _ in 0..2 {
            let x = f64::from(e).exp2() * rng.uniform(1.0, 2.0);
            v.push(x);
            v.push(-x);
        }
    }
    for edge in [
        0.35,
        0.5493,
        2.0,
        20.0,
        708.0,
        709.782712893384,
        710.4758600739439,
        711.0,
        1020.0,
        1022.0,
        1024.0,
        1074.0,
        1075.0,
        1080.0,
        60.0,
        88.72283,
        89.41599,
        126.0,
        128.0,
        149.0,
        150.0,
    ] {
        for sign in [1.0, -1.0] {
            let e: f64 = sign * edge;
            v.push(e);
            for d in 1..4u64 {
                v.push(f64::from_bits(e.to_bits() + d));
                v.push(f64::from_bits(e.to_bits() - d));
                let ef = e as f32;
                v.push(f32::from_bits(ef.to_bits() + d as u32) as f64);
                v.push(f32::from_bits(ef.to_bits() - d as u32) as f64);
            }
        }
    }
    // f32 tanh's intervals (half binades from 1/16 to 8, then 8 to 9.25, the clamp; here every
    // quarter binade's edge) and where it rounds to 1 (9.0109): each edge and the floats beside it
    let quarters = (0..=28).map(|k| 2f32.powi(k / 4 - 4) * (1.0 + (k % 4) as f32 / 4.0));
    for edge in quarters.chain([9.0109f32, 9.25, 10.0, 12.0, 16.0]) {
        for d in 0..4u32 {
            for t in [
                f32::from_bits(edge.to_bits() + d),
                f32::from_bits(edge.to_bits() - d),
            ] {
                v.extend([t as f64, -t as f64]);
            }
        }
    }
    v
}

/// Inputs for arcsin and arccos: dense sweeps of [-1, 1] and a little beyond (NaN there), the
/// neighbours of ±1, ±1/2 and 0, and every binade below 1 of both signs.
fn asin_inputs(rng: &mut Rng) -> Vec<f64> {
    let mut v = sweep(rng, -1.0, 1.0, 20_000);
    v.extend(sweep(rng, -1.2, 1.2, 2_000));
    v.extend(sweep(rng, 0.99, 1.0, 2_000));
    for e in [1.0f64, -1.0, 0.5, -0.5, 0.0] {
        let mut y = e;
        let mut z = e;
        for _ in 0..40 {
            y = f64::from_bits(y.to_bits() + 1);
            z = f64::from_bits(z.to_bits().wrapping_sub(1));
            v.extend([y, z, y as f32 as f64, z as f32 as f64]);
        }
    }
    for e in -1074..0 {
        let m = f64::from(e).exp2() * rng.uniform(1.0, 2.0);
        v.extend([m, -m]);
    }
    v
}

/// Inputs for arctan: dense sweeps near 0 and over wide ranges, the kernel's range cuts (7/16,
/// 11/16, 19/16, 39/16) and their neighbours, and every binade of both signs.
fn atan_inputs(rng: &mut Rng) -> Vec<f64> {
    let mut v = sweep(rng, -4.0, 4.0, 20_000);
    v.extend(sweep(rng, -1e6, 1e6, 2_000));
    for c in [7.0f64 / 16.0, 11.0 / 16.0, 19.0 / 16.0, 39.0 / 16.0, 1.0] {
        for s in [1.0f64, -1.0] {
            let mut y = c * s;
            let mut z = c * s;
            for _ in 0..20 {
                y = f64::from_bits(y.to_bits() + 1);
                z = f64::from_bits(z.to_bits() - 1);
                v.extend([y, z, y as f32 as f64, z as f32 as f64]);
            }
        }
    }
    for e in -1074..1024 {
        let m = f64::from(e).exp2() * rng.uniform(1.0, 2.0);
        v.extend([m, -m]);
    }
    v
}

/// Inputs for log2, log10, log1p and the inverse hyperbolic functions: dense sweeps over their
/// working ranges, every binade of both signs, and their domain edges and branch points with their
/// neighbours: -1, 0, 1 (log1p's pole, arccosh's and arctanh's edges), sqrt(2)/2 - 1 and sqrt(2) - 1
/// (log1p's k = 0 range), 0.5 and 2 (the arctanh and arcsinh/arccosh branches), 2^±28 (the tiny and
/// huge arguments), 2^53 and 2^54 (log1p's correction), f32's edges, and the f32 neighbours of each,
/// each also 32 times in a row (whole chunks of it).
fn log_family_inputs(rng: &mut Rng) -> Vec<f64> {
    let mut v = sweep(rng, -1.0, 1.0, 20_000);
    v.extend(sweep(rng, -1.0, 4.0, 10_000));
    v.extend(sweep(rng, 1.0, 100.0, 10_000));
    v.extend(sweep(rng, -100.0, 100.0, 5_000));
    for e in -1074..1024 {
        for _ in 0..2 {
            let m = f64::from(e).exp2() * rng.uniform(1.0, 2.0);
            v.push(m);
            v.push(-m);
        }
    }
    let mut edges = Vec::new();
    for e in [
        -1.0,
        0.0,
        1.0,
        0.5,
        -0.5,
        2.0,
        -2.0,
        std::f64::consts::FRAC_1_SQRT_2 - 1.0,
        std::f64::consts::SQRT_2 - 1.0,
        -0.2928932188134524,
        0.41421356237309503,
        3.725290298461914e-9,
        -3.725290298461914e-9,
        268435456.0,
        -268435456.0,
        1.1102230246251565e-16,
        -1.1102230246251565e-16,
        9007199254740992.0,
        18014398509481984.0,
        // f32's: 2^±12 (the inverse hyperbolic functions' tiny and huge arguments), 2^-24
        // (log1p's tiny ones), the edges of log1p's k = 0 range, 2^24 and 2^25 (where 2^-k - 1
        // stops being exact)
        2.44140625e-4,
        -2.44140625e-4,
        4096.0,
        -4096.0,
        5.960464477539063e-8,
        -5.960464477539063e-8,
        -0.2928932011127472,
        0.4142136573791504,
        16777216.0,
        33554432.0,
        f64::from(f32::MIN_POSITIVE),
    ] {
        let mut near = vec![
            e,
            f64::from_bits(e.to_bits() + 1),
            f64::from_bits(e.to_bits().wrapping_sub(1)),
        ];
        let ef = e as f32;
        for d in 1..4u32 {
            near.push(f64::from(f32::from_bits(ef.to_bits() + d)));
            near.push(f64::from(f32::from_bits(ef.to_bits().wrapping_sub(d))));
        }
        v.extend(&near);
        edges.extend(near);
    }
    // each edge and neighbour 32 times: whole chunks of it, so that the wide routines' chunk tests
    // (the fast paths of log1p and the inverse hyperbolic functions) meet every edge
    for e in edges {
        v.extend(std::iter::repeat_n(e, 32));
    }
    v
}

/// Inputs for sin, cos and tan: dense sweeps over the first periods and over wider ranges, the
/// multiples of pi/4 and pi/2 (where the reduction cancels most) and their neighbours, the edges
/// of the tiny-argument shortcut (2^-27 in f64, 2^-12 in f32), of tan's pi/4 - y transformation
/// (0.6744), and of the fast path (|x| = 2^16 in f32, 2^20 in f64, beyond which libm is called),
/// every binade of both signs, and huge arguments.
fn trig_inputs(rng: &mut Rng) -> Vec<f64> {
    let mut v = Vec::new();
    v.extend(sweep(rng, -7.0, 7.0, 20_000));
    v.extend(sweep(rng, -1.0, 1.0, 5_000));
    v.extend(sweep(rng, -1e4, 1e4, 20_000));
    v.extend(sweep(rng, -70_000.0, 70_000.0, 5_000));
    v.extend(sweep(rng, 65_000.0, 66_000.0, 2_000));
    v.extend(sweep(rng, -1.05e6, -1.04e6, 2_000));
    v.extend(sweep(rng, 1e6, 1.1e6, 2_000));
    for k in -2000..=2000 {
        let m = f64::from(k) * std::f64::consts::FRAC_PI_4;
        let mf = (m as f32) as f64;
        for y in [m, mf] {
            v.push(y);
            v.push(f64::from_bits(y.to_bits() + 1));
            v.push(f64::from_bits(y.to_bits().wrapping_sub(1)));
            let yf = y as f32;
            v.push(f32::from_bits(yf.to_bits() + 1) as f64);
            v.push(f32::from_bits(yf.to_bits().wrapping_sub(1)) as f64);
        }
    }
    // f32 tan's two reductions (`vmath::f32x4::tan`: the exact one where |r| < 8|m|) meet a few
    // floats from the f32 nearest k·pi/2, further out as k grows: the 16 floats either side of it,
    // for k up to the inline reduction's limit (|x| <= 65536), mixed in one chunk with lanes of
    // the other reduction
    for k in (1..=41_000u32).step_by(97) {
        let m = (f64::from(k) * std::f64::consts::FRAC_PI_2) as f32;
        for d in -16i32..=16 {
            let y = f32::from_bits(m.to_bits().wrapping_add_signed(d)) as f64;
            v.extend([y, -y, 0.75 * y]);
        }
    }
    for k in [1e5, 1e6, 1e7, 1e10, 1e15, 1e20, 1e100, 1e300] {
        v.push(k * std::f64::consts::FRAC_PI_2);
    }
    // the double below 2^20 closest to a multiple of pi/2 (2^-60.5 away), times 2^j, and neighbours
    for j in 0..15 {
        let x = f64::from_bits(0x4046_c6cb_c45d_c8de) * f64::from(1u32 << j);
        for y in [x, -x] {
            v.extend([
                y,
                f64::from_bits(y.to_bits() + 1),
                f64::from_bits(y.to_bits() - 1),
            ]);
        }
    }
    for edge in [
        7.450580596923828e-9,
        2.44140625e-4,
        f64::from_bits(0x3FE5942800000000),
        65536.0,
        1048576.0,
        3.0e38,
    ] {
        for sign in [1.0, -1.0] {
            let e = sign * edge;
            v.push(e);
            for d in 1..4u64 {
                v.push(f64::from_bits(e.to_bits() + d));
                v.push(f64::from_bits(e.to_bits() - d));
                let ef = e as f32;
                v.push(f32::from_bits(ef.to_bits() + d as u32) as f64);
                v.push(f32::from_bits(ef.to_bits() - d as u32) as f64);
            }
        }
    }
    for e in -1074..1024 {
        for _ in 0..2 {
            let x = f64::from(e).exp2() * rng.uniform(1.0, 2.0);
            v.push(x);
            v.push(-x);
        }
    }
    v
}

fn body(r: Routine) -> (ExprArena, NodeId) {
    let mut a = ExprArena::new();
    let x = a.input(0);
    if let Some(e) = r.pow_exponent() {
        let e = a.literal(e);
        let b = a.binary(kiln_ir::BinaryOp::Pow, x, e);
        return (a, b);
    }
    let op = match r {
        Routine::Exp => UnaryOp::Exp,
        Routine::Log => UnaryOp::Log,
        Routine::Sin => UnaryOp::Sin,
        Routine::Cos => UnaryOp::Cos,
        Routine::Tan => UnaryOp::Tan,
        Routine::Exp2 => UnaryOp::Exp2,
        Routine::Expm1 => UnaryOp::Expm1,
        Routine::Tanh => UnaryOp::Tanh,
        Routine::Sinh => UnaryOp::Sinh,
        Routine::Cosh => UnaryOp::Cosh,
        Routine::Arcsin => UnaryOp::Arcsin,
        Routine::Arccos => UnaryOp::Arccos,
        Routine::Arctan => UnaryOp::Arctan,
        Routine::Cbrt => UnaryOp::Cbrt,
        Routine::Log2 => UnaryOp::Log2,
        Routine::Log10 => UnaryOp::Log10,
        Routine::Log1p => UnaryOp::Log1p,
        Routine::Arcsinh => UnaryOp::Arcsinh,
        Routine::Arccosh => UnaryOp::Arccosh,
        Routine::Arctanh => UnaryOp::Arctanh,
        _ => unreachable!("a pow routine returned above"),
    };
    let b = a.unary(op, x);
    (a, b)
}

/// `r` of every element of `xs` by a kernel compiled with `sched` (a map over one input).
fn by_kernel<T: Elem>(r: Routine, xs: &[T], sched: Schedule) -> Vec<f64> {
    let (arena, b) = body(r);
    let k = kernel(T::DTYPE, &[&[xs.len()]], arena, b, KernelKind::Map);
    let p = plan(&k, 1);
    jit(&k, &p, sched, &[xs.to_vec()]).unwrap().values.to_f64()
}

/// The inline vector math: the schedule's default loops without the wide routines.
fn inline<T: Elem>(r: Routine, xs: &[T]) -> Vec<f64> {
    by_kernel(r, xs, Schedule::simd(T::DTYPE, 4, 1).with_wide(false))
}

/// Whether `a` and `b` are the same bits, any NaN equal to any NaN (the sign of a NaN follows the
/// operand order of the fused multiply-adds, which differs between rustc's and Cranelift's code and
/// between `vfmadd` and libm's `fma`, see `cli/tests/no_fma.rs`).
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn assert_same(what: &str, xs: &[f64], got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for i in 0..want.len() {
        assert!(
            same(got[i], want[i]),
            "{what}: x = {:e} ({:#x}): wide {:e} ({:#x}) vs inline {:e} ({:#x})",
            xs[i],
            xs[i].to_bits(),
            got[i],
            got[i].to_bits(),
            want[i],
            want[i].to_bits()
        );
    }
}

fn levels() -> Vec<Level> {
    Level::ALL.into_iter().filter(|l| l.on_host()).collect()
}

fn routines_match<T: Elem + WideElem>() {
    let mut rng = Rng::new(14);
    for r in Routine::ALL {
        let xs: Vec<T> = inputs(r, &mut rng).into_iter().map(T::from_f64).collect();
        let x64: Vec<f64> = xs.iter().map(|x| x.to_f64()).collect();
        let want = inline(r, &xs);
        for level in levels() {
            let mut got = xs.clone();
            kiln_jit::apply_wide(r, level, &mut got).unwrap();
            let got: Vec<f64> = got.iter().map(|x| x.to_f64()).collect();
            assert_same(
                &format!("{r:?} {:?} {level:?}", <T as WideElem>::DTYPE),
                &x64,
                &got,
                &want,
            );
        }
    }
}

#[test]
fn routines_give_the_inline_bits_f64() {
    routines_match::<f64>();
}

#[test]
fn routines_give_the_inline_bits_f32() {
    routines_match::<f32>();
}

/// Every length 0..=40 at eight offsets in each of three places of a buffer (ordinary values, the
/// specials, both): the chunks of the fast and the general path and the remainder, all with the
/// inline bits.
fn every_length<T: Elem + WideElem>() {
    let mut rng = Rng::new(15);
    for r in Routine::ALL {
        // ordinary values, then the specials, then ordinary ones: a slice holds chunks of the fast
        // path, of the general path, or both
        let mut base = sweep(&mut rng, -3.0, 3.0, 30);
        base.extend(specials());
        // beyond the trig fast path's limits (2^16, 2^20): chunks that call libm
        base[10] = 1e7;
        base[22] = -7e4;
        base.extend(sweep(&mut rng, 0.5, 3.0, 30));
        let xs: Vec<T> = base.into_iter().map(T::from_f64).collect();
        let want = inline(r, &xs);
        for level in levels() {
            for len in 0..=40 {
                for off in (0..8).chain(50..58).chain(140..148) {
                    let mut got = xs[off..off + len].to_vec();
                    kiln_jit::apply_wide(r, level, &mut got).unwrap();
                    let got: Vec<f64> = got.iter().map(|x| x.to_f64()).collect();
                    let x64: Vec<f64> = xs[off..off + len].iter().map(|x| x.to_f64()).collect();
                    let what = format!("{r:?} {:?} {level:?} len {len} at {off}", <T as WideElem>::DTYPE);
                    assert_same(&what, &x64, &got, &want[off..off + len]);
                    // read from a source where it lies (a kernel's contiguous input): the same bits
                    let mut into = xs[..len].to_vec();
                    kiln_jit::apply_wide_from(r, level, &mut into, &xs[off..off + len]).unwrap();
                    let into: Vec<f64> = into.iter().map(|x| x.to_f64()).collect();
                    assert_same(
                        &format!("{what} from a source"),
                        &x64,
                        &into,
                        &want[off..off + len],
                    );
                }
            }
        }
    }
}

#[test]
fn every_length_and_offset_f64() {
    every_length::<f64>();
}

#[test]
fn every_length_and_offset_f32() {
    every_length::<f32>();
}

/// sin and cos of one argument by one routine (`apply_wide_sincos`, what a kernel holding both
/// calls): the bits of the sin and the cos routines' inline paths, at every level, over the trig
/// inputs and every length 0..=40 at several offsets (libm lanes among them).
fn sincos_match<T: Elem + WideElem>() {
    let mut rng = Rng::new(19);
    let mut base = inputs(Routine::Sin, &mut rng);
    // libm lanes early in the slices the lengths cut
    base[3] = 1e7;
    base[70] = -7e4;
    let xs: Vec<T> = base.into_iter().map(T::from_f64).collect();
    let x64: Vec<f64> = xs.iter().map(|x| x.to_f64()).collect();
    let (want_s, want_c) = (inline(Routine::Sin, &xs), inline(Routine::Cos, &xs));
    let dt = <T as WideElem>::DTYPE;
    for level in levels() {
        let (mut s, mut c) = (xs.clone(), vec![T::from_f64(0.5); xs.len()]);
        kiln_jit::apply_wide_sincos(level, &mut s, &mut c).unwrap();
        let f = |v: &[T]| v.iter().map(|x| x.to_f64()).collect::<Vec<f64>>();
        assert_same(&format!("sin of sincos {dt:?} {level:?}"), &x64, &f(&s), &want_s);
        assert_same(&format!("cos of sincos {dt:?} {level:?}"), &x64, &f(&c), &want_c);
        for len in 0..=40 {
            for off in (0..8).chain(60..68) {
                let r = off..off + len;
                let (mut s, mut c) = (xs[r.clone()].to_vec(), vec![T::from_f64(0.5); len]);
                kiln_jit::apply_wide_sincos(level, &mut s, &mut c).unwrap();
                let what = format!("sincos {dt:?} {level:?} len {len} at {off}");
                assert_same(&what, &x64[r.clone()], &f(&s), &want_s[r.clone()]);
                assert_same(&what, &x64[r.clone()], &f(&c), &want_c[r]);
            }
        }
        // outputs of another length: an error, nothing computed
        let (mut s, mut c) = (xs[..5].to_vec(), vec![T::from_f64(0.5); 4]);
        assert!(kiln_jit::apply_wide_sincos(level, &mut s, &mut c).is_err());
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        assert_eq!(bits(&f(&s)), bits(&x64[..5]), "nothing computed");
    }
    for level in Level::ALL.into_iter().filter(|l| !l.on_host()) {
        let (mut s, mut c) = (xs[..5].to_vec(), xs[..5].to_vec());
        assert!(kiln_jit::apply_wide_sincos(level, &mut s, &mut c).is_err());
    }
}

#[test]
fn sincos_gives_the_inline_bits_f64() {
    sincos_match::<f64>();
}

#[test]
fn sincos_gives_the_inline_bits_f32() {
    sincos_match::<f32>();
}

/// A kernel with sin and cos of one argument calls the routine of both (three arguments: two
/// slots and a count) where the host has a wide level, never with `with_wide(false)`, and not when
/// the arguments differ (`cos(sin(x))`: a call of the routine of each function, two arguments).
#[test]
fn sin_and_cos_of_one_argument_share_a_call() {
    let shared = |build: BodyFn, arity: usize, dtype: ElemType, sched: Schedule| {
        let mut a = ExprArena::new();
        let b = build(&mut a);
        let shape = [1000];
        let shapes: Vec<&[usize]> = vec![&shape; arity];
        let k = kernel(dtype, &shapes, a, b, KernelKind::Map);
        let p = plan(&k, 1);
        let c = kiln_jit::CompiledKernel::explain(&k, &p, sched).unwrap();
        let clif = &c.dumps().unwrap().clif;
        // the block functions return nothing (`call fnN(..)` without a result; libm's calls on
        // the slow paths give one): the arities of their calls (sin and cos: two slots, the
        // source, the count; one function: its slot, the source, the count)
        let block_calls = |n: usize| {
            clif.lines()
                .filter_map(|l| l.trim_start().strip_prefix("call fn"))
                .any(|rest| rest.matches(',').count() == n - 1)
        };
        (block_calls(4), block_calls(3))
    };
    for dtype in [ElemType::F64, ElemType::F32] {
        // sin and cos take their routines together or not at all (`wide::routed`)
        let on = wide::routed(WideFn::One(Routine::Sin), dtype);
        assert_eq!(on, wide::routed(WideFn::One(Routine::Cos), dtype), "{dtype:?}");
        let sched = Schedule::simd(dtype, 4, 1);
        for (name, arity, build) in bodies() {
            let want = match name {
                "sin(x)*cos(x) + sqrt(abs(x))" | "cos(x) - sin(x)" => (on, false),
                "sin(x*y) + cos(x*y) * sin(x) + tan(x*y)" => (on, on),
                "cos(sin(x))" => (false, on),
                _ => continue,
            };
            assert_eq!(shared(build, arity, dtype, sched), want, "{name} {dtype:?}");
            assert_eq!(
                shared(build, arity, dtype, sched.with_wide(false)),
                (false, false),
                "{name} {dtype:?}"
            );
        }
    }
}

/// `Routine::ALL` lists the routines in the order of declaration (the block functions are
/// instantiated by discriminant and look their routine up in it), each once.
#[test]
fn the_routines_are_listed_in_order() {
    for (i, r) in Routine::ALL.into_iter().enumerate() {
        assert_eq!(r as usize, i, "{r:?}");
        assert_eq!(Routine::ALL.iter().filter(|&&x| x == r).count(), 1, "{r:?}");
    }
}

/// Every routine of both types is routed wherever the host has a level, but for the AVX2 level
/// chosen by default on a host whose 256-bit operations run as two halves (where sin and cos are
/// routed together, as the shared call needs); nowhere without a level.
#[test]
fn routines_are_routed_by_the_level_and_the_host() {
    let every = wide::level() == Some(Level::Avx512)
        || std::env::var(wide::WIDE_ENV).as_deref() == Ok("avx2")
        || !wide::halves_256();
    for dtype in [ElemType::F64, ElemType::F32] {
        let mut fns: Vec<WideFn> = Routine::ALL.into_iter().map(WideFn::One).collect();
        fns.extend(wide::Binary::ALL.into_iter().map(WideFn::Two));
        fns.extend([WideFn::ComplexDiv, WideFn::ComplexAbs]);
        for f in fns {
            if wide::level().is_none() || every {
                assert_eq!(wide::routed(f, dtype), wide::level().is_some(), "{f:?} {dtype:?}");
            }
        }
        let (sin, cos) = (WideFn::One(Routine::Sin), WideFn::One(Routine::Cos));
        assert_eq!(wide::routed(sin, dtype), wide::routed(cos, dtype), "{dtype:?}");
    }
}

#[test]
fn a_level_the_host_lacks_is_an_error() {
    for level in Level::ALL.into_iter().filter(|l| !l.on_host()) {
        let mut xs = [1.0f64];
        assert!(kiln_jit::apply_wide(Routine::Exp, level, &mut xs).is_err());
        assert_eq!(xs, [1.0], "nothing computed");
    }
    assert_eq!(Level::best_on_host().is_some(), levels().contains(&Level::Avx2));
}

/// Bodies with exp and log nodes: (name, arity, builder).
type BodyFn = fn(&mut ExprArena) -> NodeId;

fn bodies() -> Vec<(&'static str, usize, BodyFn)> {
    vec![
        // pow by literal exponents with their own routines beside the general pow's
        ("x**1.5 + y**-0.5 * x**2.5 - y**3", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let mut pow = |b, e| {
                let e = a.literal(e);
                a.binary(BinaryOp::Pow, b, e)
            };
            let p1 = pow(x, 1.5);
            let p2 = pow(y, -0.5);
            let p3 = pow(x, 2.5);
            let p4 = pow(y, 3.0);
            let m = a.binary(BinaryOp::Mul, p2, p3);
            let s = a.binary(BinaryOp::Add, p1, m);
            a.binary(BinaryOp::Sub, s, p4)
        }),
        ("1/(1+exp(-x))", 1, |a| {
            let x = a.input(0);
            let n = a.unary(UnaryOp::Neg, x);
            let e = a.unary(UnaryOp::Exp, n);
            let one = a.literal(1.0);
            let d = a.binary(BinaryOp::Add, one, e);
            a.binary(BinaryOp::Div, one, d)
        }),
        ("exp(x - y)", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let d = a.binary(BinaryOp::Sub, x, y);
            a.unary(UnaryOp::Exp, d)
        }),
        ("log(x/y) + exp(-y*x)*x", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let q = a.binary(BinaryOp::Div, x, y);
            let l = a.unary(UnaryOp::Log, q);
            let ny = a.unary(UnaryOp::Neg, y);
            let p = a.binary(BinaryOp::Mul, ny, x);
            let e = a.unary(UnaryOp::Exp, p);
            let m = a.binary(BinaryOp::Mul, e, x);
            a.binary(BinaryOp::Add, l, m)
        }),
        ("exp(log(abs(x)) * 0.5) + log(1 + exp(x))", 1, |a| {
            let x = a.input(0);
            let ab = a.unary(UnaryOp::Abs, x);
            let l = a.unary(UnaryOp::Log, ab);
            let h = a.literal(0.5);
            let m = a.binary(BinaryOp::Mul, l, h);
            let e1 = a.unary(UnaryOp::Exp, m);
            let e2 = a.unary(UnaryOp::Exp, x);
            let one = a.literal(1.0);
            let s = a.binary(BinaryOp::Add, one, e2);
            let l2 = a.unary(UnaryOp::Log, s);
            a.binary(BinaryOp::Add, e1, l2)
        }),
        ("exp(x) * sin(y) + exp(x)", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let e = a.unary(UnaryOp::Exp, x);
            let s = a.unary(UnaryOp::Sin, y);
            let m = a.binary(BinaryOp::Mul, e, s);
            a.binary(BinaryOp::Add, m, e)
        }),
        ("log(x)", 1, |a| {
            let x = a.input(0);
            a.unary(UnaryOp::Log, x)
        }),
        ("sin(x)*cos(x) + sqrt(abs(x))", 1, |a| {
            let x = a.input(0);
            let s = a.unary(UnaryOp::Sin, x);
            let c = a.unary(UnaryOp::Cos, x);
            let m = a.binary(BinaryOp::Mul, s, c);
            let ab = a.unary(UnaryOp::Abs, x);
            let r = a.unary(UnaryOp::Sqrt, ab);
            a.binary(BinaryOp::Add, m, r)
        }),
        ("tan(x * y)", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let m = a.binary(BinaryOp::Mul, x, y);
            a.unary(UnaryOp::Tan, m)
        }),
        ("cos(x) - sin(x)", 1, |a| {
            let x = a.input(0);
            let c = a.unary(UnaryOp::Cos, x);
            let s = a.unary(UnaryOp::Sin, x);
            a.binary(BinaryOp::Sub, c, s)
        }),
        ("sin(x*y) + cos(x*y) * sin(x) + tan(x*y)", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let m = a.binary(BinaryOp::Mul, x, y);
            let s = a.unary(UnaryOp::Sin, m);
            let c = a.unary(UnaryOp::Cos, m);
            let sx = a.unary(UnaryOp::Sin, x);
            let p = a.binary(BinaryOp::Mul, c, sx);
            let t = a.unary(UnaryOp::Tan, m);
            let q = a.binary(BinaryOp::Add, s, p);
            a.binary(BinaryOp::Add, q, t)
        }),
        ("cos(sin(x))", 1, |a| {
            let x = a.input(0);
            let s = a.unary(UnaryOp::Sin, x);
            a.unary(UnaryOp::Cos, s)
        }),
        ("tanh(x)*2 + x*x", 1, |a| {
            let x = a.input(0);
            let t = a.unary(UnaryOp::Tanh, x);
            let two = a.literal(2.0);
            let m = a.binary(BinaryOp::Mul, t, two);
            let sq = a.binary(BinaryOp::Mul, x, x);
            a.binary(BinaryOp::Add, m, sq)
        }),
        ("sinh(x*y) - cosh(x) + expm1(y) * exp2(x)", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let m = a.binary(BinaryOp::Mul, x, y);
            let s = a.unary(UnaryOp::Sinh, m);
            let c = a.unary(UnaryOp::Cosh, x);
            let e = a.unary(UnaryOp::Expm1, y);
            let t = a.unary(UnaryOp::Exp2, x);
            let d = a.binary(BinaryOp::Sub, s, c);
            let p = a.binary(BinaryOp::Mul, e, t);
            a.binary(BinaryOp::Add, d, p)
        }),
        ("tanh(exp2(x))", 1, |a| {
            let x = a.input(0);
            let e = a.unary(UnaryOp::Exp2, x);
            a.unary(UnaryOp::Tanh, e)
        }),
        ("arctan2(x, y)", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            a.binary(BinaryOp::Arctan2, x, y)
        }),
        (
            "arcsin(x) + arccos(y) * arctan(x) + arctan2(y, arctan(x))",
            2,
            |a| {
                let x = a.input(0);
                let y = a.input(1);
                let s = a.unary(UnaryOp::Arcsin, x);
                let c = a.unary(UnaryOp::Arccos, y);
                let t = a.unary(UnaryOp::Arctan, x);
                let m = a.binary(BinaryOp::Mul, c, t);
                let q = a.binary(BinaryOp::Arctan2, y, t);
                let p = a.binary(BinaryOp::Add, s, m);
                a.binary(BinaryOp::Add, p, q)
            },
        ),
        ("x ** y + hypot(x, y) * y ** 1.5", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let p = a.binary(BinaryOp::Pow, x, y);
            let h = a.binary(BinaryOp::Hypot, x, y);
            let c = a.literal(1.5);
            let q = a.binary(BinaryOp::Pow, y, c);
            let m = a.binary(BinaryOp::Mul, h, q);
            a.binary(BinaryOp::Add, p, m)
        }),
        ("2.5 ** x - hypot(x, 3)", 1, |a| {
            let x = a.input(0);
            let b = a.literal(2.5);
            let p = a.binary(BinaryOp::Pow, b, x);
            let t = a.literal(3.0);
            let h = a.binary(BinaryOp::Hypot, x, t);
            a.binary(BinaryOp::Sub, p, h)
        }),
        ("cbrt(x*y) - exp(cbrt(x))", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let m = a.binary(BinaryOp::Mul, x, y);
            let c = a.unary(UnaryOp::Cbrt, m);
            let cx = a.unary(UnaryOp::Cbrt, x);
            let e = a.unary(UnaryOp::Exp, cx);
            a.binary(BinaryOp::Sub, c, e)
        }),
        ("arcsinh(x)", 1, |a| {
            let x = a.input(0);
            a.unary(UnaryOp::Arcsinh, x)
        }),
        ("log1p(x*x) - arctanh(y) * log2(abs(x))", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let xx = a.binary(BinaryOp::Mul, x, x);
            let l = a.unary(UnaryOp::Log1p, xx);
            let t = a.unary(UnaryOp::Arctanh, y);
            let ab = a.unary(UnaryOp::Abs, x);
            let l2 = a.unary(UnaryOp::Log2, ab);
            let m = a.binary(BinaryOp::Mul, t, l2);
            a.binary(BinaryOp::Sub, l, m)
        }),
        ("arccosh(1 + abs(x)) + log10(arccosh(abs(x)))", 1, |a| {
            let x = a.input(0);
            let ab = a.unary(UnaryOp::Abs, x);
            let one = a.literal(1.0);
            let s = a.binary(BinaryOp::Add, one, ab);
            let c = a.unary(UnaryOp::Arccosh, s);
            let c2 = a.unary(UnaryOp::Arccosh, ab);
            let l = a.unary(UnaryOp::Log10, c2);
            a.binary(BinaryOp::Add, c, l)
        }),
    ]
}

/// Shapes of the inputs (all of the body's arity take the first, the rest as given): 1-D lengths
/// around the block, then broadcasts (a row read per row, a column splat per row, a scalar).
fn cases(arity: usize) -> Vec<Vec<Vec<usize>>> {
    let mut v: Vec<Vec<Vec<usize>>> = [
        0,
        1,
        2,
        15,
        16,
        17,
        BLOCK - 1,
        BLOCK,
        BLOCK + 1,
        2 * BLOCK + 3,
        1000,
    ]
    .into_iter()
    .map(|n| vec![vec![n]; arity])
    .collect();
    if arity == 2 {
        v.push(vec![vec![5, 300], vec![300]]);
        v.push(vec![vec![5, 300], vec![5, 1]]);
        v.push(vec![vec![3, 2 * BLOCK + 3], vec![]]);
        v.push(vec![vec![40, 7], vec![7]]);
    } else {
        v.push(vec![vec![3, 2 * BLOCK + 3]]);
    }
    v
}

/// Every body over every case, as a map and as sums of rows and of everything, both schedules of
/// maps: the blocked kernel has the inline kernel's bits and is within the bound of the interpreter.
fn kernels_match<T: Elem>() {
    // the bodies of one rounded function of exact arguments (and logistic, whose `1 + e` and
    // division add half an ULP each on both sides): within the bound of the interpreter
    let single = [
        "1/(1+exp(-x))",
        "exp(x - y)",
        "log(x)",
        "tan(x * y)",
        "arctan2(x, y)",
        "arcsinh(x)",
    ];
    let mut rng = Rng::new(16);
    for (name, arity, build) in bodies() {
        for shapes in cases(arity) {
            let data: Vec<Vec<T>> = shapes
                .iter()
                .map(|s| gen_data(&mut rng, s.iter().product(), Data::Special))
                .collect();
            let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
            let mut kinds = vec![KernelKind::Map];
            if rank > 0 {
                kinds.push(KernelKind::Reduce {
                    op: ReduceOp::Sum,
                    axes: vec![rank - 1],
                });
                kinds.push(KernelKind::Reduce {
                    op: ReduceOp::Max,
                    axes: (0..rank).collect(),
                });
                kinds.push(KernelKind::Reduce {
                    op: ReduceOp::ArgMin,
                    axes: vec![rank - 1],
                });
            }
            for kind in kinds {
                let mut a = ExprArena::new();
                let b = build(&mut a);
                let refs: Vec<&[usize]> = shapes.iter().map(|s| s.as_slice()).collect();
                let k = kernel(T::DTYPE, &refs, a, b, kind.clone());
                for min_row in [1, 64] {
                    let p = plan(&k, min_row);
                    for sched in [
                        Schedule::simd(T::DTYPE, 4, 1),
                        Schedule::simd(T::DTYPE, 1, 4),
                        Schedule::simd(T::DTYPE, 3, 2),
                        Schedule::scalar().with_wide(true),
                    ] {
                        let what = format!(
                            "{name} {:?} {shapes:?} {kind:?} min_row {min_row} {sched:?}",
                            T::DTYPE
                        );
                        let (wide, inl) = match (
                            jit(&k, &p, sched, &data),
                            jit(&k, &p, sched.with_wide(false), &data),
                        ) {
                            (Ok(a), Ok(b)) => (a, b),
                            (Err(_), Err(_)) => continue,
                            (a, b) => panic!("{what}: blocked {a:?} vs inline {b:?}"),
                        };
                        let (g, w) = (wide.values.to_f64(), inl.values.to_f64());
                        assert_eq!(wide.shape, inl.shape, "{what}");
                        let points = vec![f64::NAN; g.len()];
                        assert_same(&what, &points, &g, &w);
                        if kind == KernelKind::Map && single.contains(&name) {
                            let bound = body_ulp_bound(&k.arena, k.body) as u64 + 1;
                            check_ulp(&what, &k, &p, sched, &data, bound);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn blocked_kernels_give_the_inline_bits_f64() {
    kernels_match::<f64>();
}

#[test]
fn blocked_kernels_give_the_inline_bits_f32() {
    kernels_match::<f32>();
}

/// The route is visible in the code: a kernel with exp calls the block function (the one import
/// of signature `(i64, i64, i64)`: the slot, the source, the count) where the host has a wide level
/// and the schedule asks for it, and never with `with_wide(false)`.
/// So does a kernel with a pow by a literal exponent with its own routine (`x**1.5`), in both types.
#[test]
fn the_route_shows_in_the_code() {
    for (r, dtype) in [
        (Routine::Exp, ElemType::F64),
        (Routine::PowThreeHalves, ElemType::F64),
        (Routine::PowInvSquare, ElemType::F32),
    ] {
        let (arena, b) = body(r);
        let k = kernel(dtype, &[&[1000]], arena, b, KernelKind::Map);
        let p = plan(&k, 1);
        let calls_block = |s: Schedule| {
            let c = kiln_jit::CompiledKernel::explain(&k, &p, s).unwrap();
            c.dumps().unwrap().clif.contains("= (i64, i64, i64) ")
        };
        let sched = Schedule::simd(dtype, 4, 1);
        assert_eq!(
            calls_block(sched),
            wide::routed(WideFn::One(r), dtype),
            "{r:?} {dtype:?}"
        );
        assert!(!calls_block(sched.with_wide(false)), "{r:?} {dtype:?}");
        assert_eq!(sched.normalised(dtype).wide, wide::level().is_some());
    }
}

/// A map of several outputs (each an exp or log node, or reading one) and a whole-array sum with
/// further map outputs: every output has the inline kernel's bits.
#[test]
fn several_outputs_give_the_inline_bits() {
    let mut rng = Rng::new(17);
    for n in [1, 17, BLOCK + 1, 2 * BLOCK + 3] {
        let mut a = ExprArena::new();
        let x = a.input(0);
        let y = a.input(1);
        let e = a.unary(UnaryOp::Exp, x);
        let ay = a.unary(UnaryOp::Abs, y);
        let l = a.unary(UnaryOp::Log, ay);
        let m = a.binary(BinaryOp::Mul, e, l);
        let data: Vec<Vec<f64>> = (0..2).map(|_| gen_data(&mut rng, n, Data::Special)).collect();
        let refs: Vec<&[f64]> = data.iter().map(|d| d.as_slice()).collect();
        for kind in [
            KernelKind::Map,
            KernelKind::Reduce {
                op: ReduceOp::Sum,
                axes: vec![0],
            },
        ] {
            let mut k = kernel(ElemType::F64, &[&[n], &[n]], a.clone(), m, kind.clone());
            k.extra = vec![e, l];
            let p = plan(&k, 1);
            let run = |sched: Schedule| {
                let code = kiln_jit::compile(&k, &p, sched).unwrap();
                let (mut e0, mut e1) = (vec![0.0; n], vec![0.0; n]);
                if kind == KernelKind::Map {
                    let mut o = vec![0.0; n];
                    code.run_into_many(&k, &p, &refs, &mut [&mut o, &mut e0, &mut e1])
                        .unwrap();
                    return (o, e0, e1);
                }
                let t = code
                    .run_with_extra(
                        &k,
                        &p,
                        &refs,
                        &mut [&mut e0, &mut e1],
                        &kiln_jit::RunConfig::default(),
                        &mut kiln_jit::Workspace::new(),
                    )
                    .unwrap();
                (t.values.to_f64(), e0, e1)
            };
            let sched = Schedule::simd(ElemType::F64, 4, 1);
            let (w, i) = (run(sched), run(sched.with_wide(false)));
            let what = format!("n {n} {kind:?}");
            let points = vec![f64::NAN; n];
            assert_same(&format!("{what} output 0"), &points, &w.0, &i.0);
            assert_same(&format!("{what} output 1"), &data[0], &w.1, &i.1);
            assert_same(&format!("{what} output 2"), &data[1], &w.2, &i.2);
        }
    }
}

/// A kernel of more than 64 inputs (row pointers loaded where they are read): exp of their sum.
#[test]
fn many_inputs_give_the_inline_bits() {
    let mut rng = Rng::new(18);
    let n = 2 * BLOCK + 3;
    let mut a = ExprArena::new();
    let mut sum = a.input(0);
    for i in 1..70 {
        let x = a.input(i);
        sum = a.binary(BinaryOp::Add, sum, x);
    }
    let scale = a.literal(0.1);
    let arg = a.binary(BinaryOp::Mul, sum, scale);
    let body = a.unary(UnaryOp::Exp, arg);
    let shape = [n];
    let shapes: Vec<&[usize]> = (0..70).map(|_| &shape[..]).collect();
    let k = kernel(ElemType::F64, &shapes, a, body, KernelKind::Map);
    let p = plan(&k, 1);
    let data: Vec<Vec<f64>> = (0..70).map(|_| gen_data(&mut rng, n, Data::Plain)).collect();
    let sched = Schedule::for_kernel(&k);
    let w = jit(&k, &p, sched, &data).unwrap().values.to_f64();
    let i = jit(&k, &p, sched.with_wide(false), &data)
        .unwrap()
        .values
        .to_f64();
    assert_same("exp of a sum of 70 inputs", &vec![f64::NAN; n], &w, &i);
    check_ulp("exp of a sum of 70 inputs", &k, &p, sched, &data, 2);
}

/// Rows a kept sum's group step adds (`kiln_jit::wide::GROUP`, skeleton.rs `ROW_GROUP`).
const GROUP: usize = kiln_jit::wide::GROUP;

/// Values for the kept sum's row steps: ordinary ones of mixed magnitude and sign (so that the
/// association shows in the bits), and the specials (NaN, ±inf, -0.0, subnormals, the extremes).
fn sum_values(rng: &mut Rng, n: usize) -> Vec<f64> {
    let sp = specials();
    (0..n)
        .map(|i| match i % 5 {
            0 => sp[rng.below(sp.len())],
            1 => rng.uniform(-1.0, 1.0) * 1e16,
            _ => rng.uniform(-3.0, 3.0),
        })
        .collect()
}

/// The kept sum's row steps (`apply_kept_rows`) at every level this host has, f64 and f32 rows,
/// every length 0..=40 and 1000 at several offsets: bit for bit the inline code's per-lane
/// operations (`Gen::acc_update_rows`: `acc + (((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)))`,
/// `Gen::acc_update`: `acc + x`, each value widened to f64 first), any NaN equal to any NaN.
fn kept_row_steps<T: Elem + WideElem>() {
    let mut rng = Rng::new(16);
    let len_max = 1000 + 16;
    let rows: Vec<Vec<T>> = (0..GROUP)
        .map(|_| {
            sum_values(&mut rng, len_max)
                .into_iter()
                .map(T::from_f64)
                .collect()
        })
        .collect();
    let acc0 = sum_values(&mut rng, len_max);
    let x = |m: usize, j: usize| rows[m][j].to_f64();
    for level in levels() {
        for len in (0..=40).chain([1000]) {
            for off in [0, 1, 3, 8, 13] {
                let what = format!("{:?} {level:?} len {len} at {off}", <T as WideElem>::DTYPE);
                let run: Vec<&[T]> = rows.iter().map(|r| &r[off..off + len]).collect();
                // a group of eight rows
                let mut got = acc0[off..off + len].to_vec();
                kiln_jit::apply_kept_rows(level, &run, &mut got).unwrap();
                let want: Vec<f64> = (off..off + len)
                    .map(|j| {
                        let a = (x(0, j) + x(1, j)) + (x(2, j) + x(3, j));
                        let b = (x(4, j) + x(5, j)) + (x(6, j) + x(7, j));
                        acc0[j] + (a + b)
                    })
                    .collect();
                assert_same(&format!("group {what}"), &acc0[off..off + len], &got, &want);
                // a single row
                let mut got = acc0[off..off + len].to_vec();
                kiln_jit::apply_kept_rows(level, &run[..1], &mut got).unwrap();
                let want: Vec<f64> = (off..off + len).map(|j| acc0[j] + x(0, j)).collect();
                assert_same(&format!("single {what}"), &acc0[off..off + len], &got, &want);
            }
        }
    }
}

#[test]
fn kept_row_steps_give_the_inline_bits_f64() {
    kept_row_steps::<f64>();
}

#[test]
fn kept_row_steps_give_the_inline_bits_f32() {
    kept_row_steps::<f32>();
}

/// The row steps refuse what they cannot do, computing nothing: a level the host lacks, a number
/// of rows other than 1 and 8, a row shorter than the output run.
#[test]
fn kept_row_steps_refuse_bad_arguments() {
    let row = [1.0f64; 4];
    for level in Level::ALL {
        let mut out = [0.5f64; 4];
        let three: Vec<&[f64]> = vec![&row; 3];
        let r = kiln_jit::apply_kept_rows(level, &three, &mut out);
        assert!(r.is_err(), "{level:?}: three rows");
        let short: Vec<&[f64]> = vec![&row[..3]; GROUP];
        assert!(
            kiln_jit::apply_kept_rows(level, &short, &mut out).is_err(),
            "{level:?}: short rows"
        );
        let eight: Vec<&[f64]> = vec![&row; GROUP];
        assert_eq!(
            kiln_jit::apply_kept_rows(level, &eight, &mut out).is_ok(),
            level.on_host()
        );
        let want = if level.on_host() { 8.5 } else { 0.5 };
        assert_eq!(out, [want; 4], "{level:?}");
    }
}

/// The route of a kept sum is visible in the code: `sum(x, axis=0)` calls the group step (the
/// import of ten i64: eight rows, the output, the count) and the single-row step where the host
/// has a wide level and the schedule asks for it; never with `with_wide(false)`, and never for a
/// computed body (`sum(x*x, axis=0)` keeps the inline path). The sums are the same bits either way.
#[test]
fn the_kept_sum_route_shows_in_the_code() {
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let xx = arena.binary(BinaryOp::Mul, x, x);
    let group_sig = format!("= ({}) ", ["i64"; GROUP + 2].join(", "));
    let kind = KernelKind::Reduce {
        op: ReduceOp::Sum,
        axes: vec![0],
    };
    let mut rng = Rng::new(17);
    let xs: Vec<f64> = sum_values(&mut rng, 37 * 100);
    for (body, plain) in [(x, true), (xx, false)] {
        let k = kernel(ElemType::F64, &[&[37, 100]], arena.clone(), body, kind.clone());
        let p = plan(&k, 1);
        let calls_step = |s: Schedule| {
            let c = kiln_jit::CompiledKernel::explain(&k, &p, s).unwrap();
            let clif = &c.dumps().unwrap().clif;
            (clif.contains(&group_sig), clif.contains("= (i64, i64, i64) "))
        };
        let sched = Schedule::for_kernel(&k);
        let on = plain && wide::level().is_some();
        assert_eq!(calls_step(sched), (on, on), "plain {plain}");
        assert_eq!(calls_step(sched.with_wide(false)), (false, false));
        let a = jit(&k, &p, sched, std::slice::from_ref(&xs))
            .unwrap()
            .values
            .to_f64();
        let b = jit(&k, &p, sched.with_wide(false), std::slice::from_ref(&xs))
            .unwrap()
            .values
            .to_f64();
        assert_same(&format!("plain {plain}"), &a, &a, &b);
    }
}

/// Pairs for the routines of two arguments: every pair of the specials, the specials against
/// ordinary values of both signs, random pairs of magnitudes spread over the whole range (so
/// that both the fast path and the scaled general path are taken, in chunks and in vectors), and
/// pairs whose ratio straddles the kernel's range cuts.
fn binary_inputs(rng: &mut Rng) -> (Vec<f64>, Vec<f64>) {
    let sp = specials();
    let (mut ys, mut xs) = (Vec::new(), Vec::new());
    for &a in &sp {
        for &b in &sp {
            ys.push(a);
            xs.push(b);
        }
        for b in [0.3, -0.3, 7.0, -7.0] {
            ys.extend([a, b]);
            xs.extend([b, a]);
        }
    }
    for _ in 0..20_000 {
        let ey = rng.uniform(-1080.0, 1030.0).floor();
        let ex = rng.uniform(-1080.0, 1030.0).floor();
        let sy = if rng.uniform(0.0, 1.0) < 0.5 { -1.0 } else { 1.0 };
        let sx = if rng.uniform(0.0, 1.0) < 0.5 { -1.0 } else { 1.0 };
        ys.push(sy * ey.exp2() * rng.uniform(1.0, 2.0));
        xs.push(sx * ex.exp2() * rng.uniform(1.0, 2.0));
    }
    for _ in 0..20_000 {
        let x = rng.uniform(-10.0, 10.0);
        xs.push(x);
        ys.push(x * rng.uniform(-3.0, 3.0));
    }
    for c in [7.0 / 16.0, 11.0 / 16.0, 19.0 / 16.0, 39.0 / 16.0] {
        for _ in 0..200 {
            let x = rng.uniform(0.1, 10.0);
            let y = x * c;
            for d in [-2i64, -1, 0, 1, 2] {
                xs.push(x);
                ys.push(f64::from_bits((y.to_bits() as i64 + d) as u64));
            }
        }
    }
    (ys, xs)
}

/// More pairs `(x, y)` for `x ** y` (pushed as `ys`, `xs`): bases in [0, 4] and [0, 100] with
/// exponents in [-40, 40], negative bases with integer exponents (odd and even) and with
/// fractional ones (NaN), bases near 1 with huge exponents, runs of positive bases (the fast
/// paths, by chunks), and `|y·log x|` on both sides of 708,
/// where the inline exp takes its general path, and of overflow and underflow (f64 and f32).
fn pow_inputs(rng: &mut Rng, ys: &mut Vec<f64>, xs: &mut Vec<f64>) {
    for _ in 0..10_000 {
        ys.push(rng.uniform(0.0, 4.0));
        xs.push(rng.uniform(-40.0, 40.0));
        ys.push(rng.uniform(0.0, 100.0));
        xs.push(rng.uniform(-40.0, 40.0));
        ys.push(-rng.uniform(0.0, 10.0));
        xs.push(rng.below(41) as f64 - 20.0);
        ys.push(-rng.uniform(0.0, 10.0));
        xs.push(rng.uniform(-5.0, 5.0));
        ys.push(1.0 + rng.uniform(-1e-9, 1e-9));
        xs.push(rng.uniform(-1e12, 1e12));
    }
    // runs of positive bases and finite exponents, so that whole chunks take the fast paths, with
    // |y·log x| beyond 708 (f64's fast path, `vmath::pow::FAST_EXP`) now and then
    for _ in 0..20_000 {
        ys.push(rng.uniform(0.01, 100.0));
        xs.push(rng.uniform(-40.0, 40.0));
    }
    for _ in 0..20_000 {
        ys.push(rng.uniform(0.01, 100.0));
        xs.push(rng.uniform(-160.0, 160.0));
    }
    // runs of positive bases with f32 subnormals among them, and exponents now and then zero or
    // f32-subnormal: f32's fast path splits a normal base on its own bits and takes chunks of
    // normal bases and exponents only, the others the general path (the same bits); and the
    // edges of that split and of its table's rows (the least normal, OFF = 0x1.2d554p-1 and its
    // neighbours, twice it, each row's first f32 and f64 and the one before it, 1/sqrt(2), powers
    // of two, the largest f32)
    let mut splits = vec![
        1.1754944e-38f64,
        f32::from_bits(0x3f34_aaa7) as f64,
        f32::from_bits(0x3f34_aaa9) as f64,
        f32::from_bits(0x3fb4_aaa8) as f64,
        0.70710677,
        0.5,
        1.0,
        2.0,
        std::f64::consts::SQRT_2,
        3.4028235e38,
    ];
    for row in 0..16u32 {
        let first = 0x3f34_aaa8 + (row << 19);
        splits.push(f32::from_bits(first) as f64);
        splits.push(f32::from_bits(first - 1) as f64);
        // f64's rows (`LN16`, the same split on the f64's bits)
        let first = 0x3fe6_9555_0000_0000u64 + ((row as u64) << 48);
        splits.push(f64::from_bits(first));
        splits.push(f64::from_bits(first - 1));
    }
    for i in 0..8_000 {
        let x = match i % 37 {
            0 => rng.uniform(1e-45, 1.2e-38),
            1 => splits[rng.below(splits.len())],
            _ => rng.uniform(0.01, 100.0),
        };
        let y = match i % 41 {
            0 => 0.0,
            1 => rng.uniform(-1e-39, 1e-39),
            _ => rng.uniform(-40.0, 40.0),
        };
        ys.push(x);
        xs.push(y);
    }
    for edge in [708.0f64, 709.78, 745.13, 88.72, 103.97, 87.0] {
        for _ in 0..500 {
            let x = rng.uniform(1.5, 50.0);
            let y = edge / x.ln() * rng.uniform(0.999, 1.001);
            for s in [1.0, -1.0] {
                ys.push(x);
                xs.push(s * y);
            }
        }
    }
}

/// The binary opcode of a routine of two arguments.
fn binary_op(r: wide::Binary) -> BinaryOp {
    match r {
        wide::Binary::Arctan2 => BinaryOp::Arctan2,
        wide::Binary::Pow => BinaryOp::Pow,
        wide::Binary::Hypot => BinaryOp::Hypot,
    }
}

/// `r(ys[j], xs[j])` by the inline kernel (a map over two inputs).
fn inline_binary<T: Elem>(r: wide::Binary, ys: &[T], xs: &[T]) -> Vec<f64> {
    let mut a = ExprArena::new();
    let (y, x) = (a.input(0), a.input(1));
    let b = a.binary(binary_op(r), y, x);
    let n = ys.len();
    let k = kernel(T::DTYPE, &[&[n], &[n]], a, b, KernelKind::Map);
    let p = plan(&k, 1);
    let sched = Schedule::simd(T::DTYPE, 4, 1).with_wide(false);
    jit(&k, &p, sched, &[ys.to_vec(), xs.to_vec()])
        .unwrap()
        .values
        .to_f64()
}

/// The routines of two arguments give the inline bits: over [`binary_inputs`], and every length
/// 0..=40 at offsets into the specials' pairs and ordinary ones.
fn binary_routines_match<T: Elem + WideElem>() {
    let mut rng = Rng::new(18);
    for r in wide::Binary::ALL {
        let (mut ys, mut xs) = binary_inputs(&mut rng);
        if r == wide::Binary::Pow {
            pow_inputs(&mut rng, &mut ys, &mut xs);
        }
        let ys: Vec<T> = ys.into_iter().map(T::from_f64).collect();
        let xs: Vec<T> = xs.into_iter().map(T::from_f64).collect();
        let y64: Vec<f64> = ys.iter().map(|x| x.to_f64()).collect();
        let want = inline_binary(r, &ys, &xs);
        for level in levels() {
            let what = format!("{r:?} {:?} {level:?}", <T as WideElem>::DTYPE);
            let mut got = ys.clone();
            kiln_jit::apply_wide_binary(r, level, &mut got, &xs).unwrap();
            let got: Vec<f64> = got.iter().map(|x| x.to_f64()).collect();
            assert_same(&what, &y64, &got, &want);
            for len in 0..=40 {
                for off in (0..8).chain(700..708).chain(40_000..40_008) {
                    let mut got = ys[off..off + len].to_vec();
                    kiln_jit::apply_wide_binary(r, level, &mut got, &xs[off..off + len]).unwrap();
                    let got: Vec<f64> = got.iter().map(|x| x.to_f64()).collect();
                    let what = format!("{what} len {len} at {off}");
                    assert_same(&what, &y64[off..off + len], &got, &want[off..off + len]);
                }
            }
            // pow over only the pairs whose chunks take the fast path (positive normal bases,
            // normal exponents): every chunk of the slice by the fast path with no test of its own
            // (`Paths2::all_fast`), whole chunks and a remainder
            if r == wide::Binary::Pow {
                let f32 = <T as WideElem>::DTYPE == kiln_ir::ElemType::F32;
                let normal = |v: f64| {
                    if f32 {
                        (v as f32).is_normal()
                    } else {
                        v.is_normal()
                    }
                };
                let fast: Vec<usize> = (0..ys.len())
                    .filter(|&i| y64[i] > 0.0 && normal(y64[i]) && normal(xs[i].to_f64()))
                    .collect();
                assert!(fast.len() > 1000, "{what}: {} fast pairs", fast.len());
                for len in [fast.len(), 17, 40, 333] {
                    let idx = &fast[..len];
                    let mut got: Vec<T> = idx.iter().map(|&i| ys[i]).collect();
                    let ex: Vec<T> = idx.iter().map(|&i| xs[i]).collect();
                    kiln_jit::apply_wide_binary(r, level, &mut got, &ex).unwrap();
                    let got: Vec<f64> = got.iter().map(|x| x.to_f64()).collect();
                    let base: Vec<f64> = idx.iter().map(|&i| y64[i]).collect();
                    let w: Vec<f64> = idx.iter().map(|&i| want[i]).collect();
                    assert_same(&format!("{what} fast pairs, {len}"), &base, &got, &w);
                }
            }
            // a second argument of another length is an error, and computes nothing
            let mut one = ys[..3].to_vec();
            assert!(kiln_jit::apply_wide_binary(r, level, &mut one, &xs[..2]).is_err());
            assert_eq!(
                one.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>(),
                y64[..3].iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
        for level in Level::ALL.into_iter().filter(|l| !l.on_host()) {
            let mut one = ys[..3].to_vec();
            assert!(kiln_jit::apply_wide_binary(r, level, &mut one, &xs[..3]).is_err());
        }
    }
}

/// pow of a constant base (`2.5**x`: every lane of a chunk one value, whose log the wide fast
/// paths compute once per chunk) gives the inline bits: bases below, at and above 1, exponents
/// with |y·log x| on both sides of f64's fast-path bound, and a few special exponents.
fn pow_constant_base_matches<T: Elem + WideElem>() {
    let mut rng = Rng::new(19);
    for base in [2.5f64, 0.3, 1.0, 1e-5, 3.0e4, 10.0, 7.0, -2.0, 0.0, f64::INFINITY] {
        let mut xs: Vec<f64> = (0..4000).map(|_| rng.uniform(-40.0, 40.0)).collect();
        xs.extend((0..4000).map(|_| rng.uniform(-800.0, 800.0)));
        // a chunk of zero and subnormal exponents with finite ones (the constant base's own path
        // takes it: every exponent finite), apart from the infinite ones below
        xs.extend((0..16).map(|i| match i % 4 {
            0 => 0.0,
            1 => -0.0,
            2 => 1e-40 * (i as f64),
            _ => -3e-310,
        }));
        xs.extend([
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1.0,
            -1.0,
            0.5,
        ]);
        let xs: Vec<T> = xs.into_iter().map(T::from_f64).collect();
        let ys: Vec<T> = vec![T::from_f64(base); xs.len()];
        let y64: Vec<f64> = ys.iter().map(|x| x.to_f64()).collect();
        let want = inline_binary(wide::Binary::Pow, &ys, &xs);
        for level in levels() {
            let mut got = ys.clone();
            kiln_jit::apply_wide_binary(wide::Binary::Pow, level, &mut got, &xs).unwrap();
            let got: Vec<f64> = got.iter().map(|x| x.to_f64()).collect();
            let what = format!("pow {base}**x {:?} {level:?}", <T as WideElem>::DTYPE);
            assert_same(&what, &y64, &got, &want);
        }
    }
}

#[test]
fn pow_constant_base_gives_the_inline_bits() {
    pow_constant_base_matches::<f64>();
    pow_constant_base_matches::<f32>();
}

#[test]
fn binary_routines_give_the_inline_bits_f64() {
    binary_routines_match::<f64>();
}

#[test]
fn binary_routines_give_the_inline_bits_f32() {
    binary_routines_match::<f32>();
}

/// `Binary::ALL` lists the routines of two arguments in the order of declaration, each once.
#[test]
fn the_binary_routines_are_listed_in_order() {
    for (i, r) in wide::Binary::ALL.into_iter().enumerate() {
        assert_eq!(r as usize, i, "{r:?}");
        assert_eq!(wide::Binary::ALL.iter().filter(|&&x| x == r).count(), 1, "{r:?}");
    }
}

/// A kernel with a function of two arguments calls its block function (the one import of signature
/// `(i64, i64, i64, i64)`: the slot, the first argument's source, the second's slot or source, the
/// count) where the host has a wide level and the schedule asks for it, and never with
/// `with_wide(false)`.
#[test]
fn the_binary_route_shows_in_the_code() {
    for r in wide::Binary::ALL {
        let mut a = ExprArena::new();
        let (y, x) = (a.input(0), a.input(1));
        let b = a.binary(binary_op(r), y, x);
        let k = kernel(ElemType::F64, &[&[1000], &[1000]], a, b, KernelKind::Map);
        let p = plan(&k, 1);
        let calls_block = |s: Schedule| {
            let c = kiln_jit::CompiledKernel::explain(&k, &p, s).unwrap();
            c.dumps().unwrap().clif.contains("= (i64, i64, i64, i64) ")
        };
        let sched = Schedule::simd(ElemType::F64, 4, 1);
        assert_eq!(
            calls_block(sched),
            wide::routed(WideFn::Two(r), ElemType::F64),
            "{r:?}"
        );
        assert!(!calls_block(sched.with_wide(false)), "{r:?}");
    }
}

/// Complex division at full width (`wide/complex.rs`) over the points `z` and `w` (each part a
/// float of `T`): interleaved parts in, the quotients' parts out.
fn wide_complex_div<T: Elem + WideElem>(level: Level, z: &[T], w: &[T]) -> Vec<f64> {
    let mut got = z.to_vec();
    kiln_jit::apply_wide_complex_div(level, &mut got, w).unwrap();
    got.iter().map(|x| x.to_f64()).collect()
}

/// The oracle's quotients (`kiln_ir::complex::div`, Smith's method as NumPy writes it; the
/// inline code gives its bits, `tests/complex.rs`) of the points `z` and `w`, interleaved parts.
fn oracle_complex_div<T: Elem + kiln_ir::dtype::Real>(z: &[T], w: &[T]) -> Vec<f64> {
    use kiln_ir::num_complex::Complex;
    z.chunks(2)
        .zip(w.chunks(2))
        .flat_map(|(a, b)| {
            let q = kiln_ir::complex::div(Complex::new(a[0], a[1]), Complex::new(b[0], b[1]));
            [q.re.to_f64(), q.im.to_f64()]
        })
        .collect()
}

/// Complex division at full width gives the oracle's bits: every pair of points whose parts are
/// special values (zeros of both signs, NaN, infinities, subnormals, the extremes), random points
/// of every scale, and every length 0..=40 points at a few offsets; a slice of half a point, or
/// of a length other than the divisor's, is an error and computes nothing.
fn complex_div_matches<T: Elem + WideElem + kiln_ir::dtype::Real>() {
    let parts: Vec<f64> = specials().into_iter().take(16).collect();
    let points: Vec<(f64, f64)> = parts
        .iter()
        .flat_map(|&re| parts.iter().map(move |&im| (re, im)))
        .collect();
    let mut rng = Rng::new(21);
    let mut z = Vec::new();
    let mut w = Vec::new();
    for &(ar, ai) in &points {
        for &(br, bi) in &points {
            z.extend([ar, ai]);
            w.extend([br, bi]);
        }
    }
    for _ in 0..20_000 {
        let scale = |rng: &mut Rng| 10f64.powf(rng.uniform(-40.0, 40.0));
        let (sz, sw) = (scale(&mut rng), scale(&mut rng));
        z.extend([rng.uniform(-1.0, 1.0) * sz, rng.uniform(-1.0, 1.0) * sz]);
        w.extend([rng.uniform(-1.0, 1.0) * sw, rng.uniform(-1.0, 1.0) * sw]);
    }
    let z: Vec<T> = z.into_iter().map(T::from_f64).collect();
    let w: Vec<T> = w.into_iter().map(T::from_f64).collect();
    let z64: Vec<f64> = z.iter().map(|x| x.to_f64()).collect();
    let want = oracle_complex_div(&z, &w);
    for level in levels() {
        let what = format!("complex division of {:?} parts {level:?}", <T as WideElem>::DTYPE);
        assert_same(&what, &z64, &wide_complex_div(level, &z, &w), &want);
        for len in 0..=40 {
            for off in (0..4).chain(500..504).chain(40_000..40_004) {
                let (lo, hi) = (2 * off, 2 * (off + len));
                let got = wide_complex_div(level, &z[lo..hi], &w[lo..hi]);
                let what = format!("{what} len {len} at {off}");
                assert_same(&what, &z64[lo..hi], &got, &want[lo..hi]);
            }
        }
        for (a, b) in [(3, 3), (4, 2)] {
            let mut one = z[..a].to_vec();
            assert!(kiln_jit::apply_wide_complex_div(level, &mut one, &w[..b]).is_err());
            assert!(
                one.iter()
                    .zip(&z)
                    .all(|(x, y)| x.to_f64().to_bits() == y.to_f64().to_bits())
            );
        }
    }
    for level in Level::ALL.into_iter().filter(|l| !l.on_host()) {
        let mut one = z[..2].to_vec();
        assert!(kiln_jit::apply_wide_complex_div(level, &mut one, &w[..2]).is_err());
    }
}

#[test]
fn complex_division_gives_the_oracles_bits() {
    complex_div_matches::<f64>();
    complex_div_matches::<f32>();
}

/// The magnitude of complex points at full width (`wide/complex.rs`) gives the bits of the wide
/// hypot routine of their parts (the inline `abs`'s, `binary_routines_give_the_inline_bits_*`):
/// every pair of special parts and random points of every scale, every length 0..=40 points at a
/// few offsets; a source that is not two parts an element is an error and computes nothing.
fn complex_abs_matches<T: Elem + WideElem>() {
    let parts: Vec<f64> = specials().into_iter().take(16).collect();
    let mut rng = Rng::new(22);
    let mut z = Vec::new();
    for &re in &parts {
        for &im in &parts {
            z.extend([re, im]);
        }
    }
    for _ in 0..20_000 {
        let s = 10f64.powf(rng.uniform(-40.0, 40.0));
        z.extend([rng.uniform(-1.0, 1.0) * s, rng.uniform(-1.0, 1.0) * s]);
    }
    let z: Vec<T> = z.into_iter().map(T::from_f64).collect();
    let n = z.len() / 2;
    let re: Vec<T> = z.iter().step_by(2).copied().collect();
    let im: Vec<T> = z.iter().skip(1).step_by(2).copied().collect();
    let re64: Vec<f64> = re.iter().map(|x| x.to_f64()).collect();
    for level in levels() {
        let mut want = re.clone();
        kiln_jit::apply_wide_binary(wide::Binary::Hypot, level, &mut want, &im).unwrap();
        let want: Vec<f64> = want.iter().map(|x| x.to_f64()).collect();
        let what = format!("|z| of {:?} parts {level:?}", <T as WideElem>::DTYPE);
        let abs = |lo: usize, hi: usize| {
            let mut got = vec![T::from_f64(7.0); hi - lo];
            kiln_jit::apply_wide_complex_abs(level, &mut got, &z[2 * lo..2 * hi]).unwrap();
            got.iter().map(|x| x.to_f64()).collect::<Vec<f64>>()
        };
        assert_same(&what, &re64, &abs(0, n), &want);
        for len in 0..=40 {
            for off in (0..4).chain(500..504).chain(20_000..20_004) {
                let what = format!("{what} len {len} at {off}");
                let (lo, hi) = (off, off + len);
                assert_same(&what, &re64[lo..hi], &abs(lo, hi), &want[lo..hi]);
            }
        }
        let mut three = vec![T::from_f64(7.0); 3];
        assert!(kiln_jit::apply_wide_complex_abs(level, &mut three, &z[..5]).is_err());
        assert!(three.iter().all(|x| x.to_f64() == 7.0), "nothing computed");
    }
    for level in Level::ALL.into_iter().filter(|l| !l.on_host()) {
        let mut one = vec![T::from_f64(7.0); 1];
        assert!(kiln_jit::apply_wide_complex_abs(level, &mut one, &z[..2]).is_err());
    }
}

#[test]
fn complex_magnitudes_give_the_hypot_routines_bits() {
    complex_abs_matches::<f64>();
    complex_abs_matches::<f32>();
}

/// Whether `a` and `b` are one extreme: the same bits, both NaN (payloads are not compared), or
/// zeros of either sign (of -0.0 and 0.0 the fold gives either, as the inline lanes do).
fn same_extreme(a: f64, b: f64) -> bool {
    same(a, b) || (a == 0.0 && b == 0.0)
}

/// Runs for the extreme folds: ordinary values, with a NaN, an infinity, subnormals or zeros of
/// both signs placed at the front, the middle or the end (in the 32-lane loop or in the tail).
fn extreme_runs(rng: &mut Rng, len: usize) -> Vec<(String, Vec<f64>)> {
    let base: Vec<f64> = (0..len).map(|_| rng.uniform(-3.0, 3.0)).collect();
    let mut runs = vec![("plain".to_string(), base.clone())];
    for (name, v) in [
        ("nan", f64::NAN),
        ("-nan", -f64::NAN),
        ("inf", f64::INFINITY),
        ("-inf", f64::NEG_INFINITY),
        ("subnormal", 4.9e-324),
        ("-subnormal", -4.9e-324),
    ] {
        for at in [0, len / 2, len.saturating_sub(1)] {
            if at < len {
                let mut r = base.clone();
                r[at] = v;
                runs.push((format!("{name} at {at}"), r));
            }
        }
    }
    runs.push((
        "zeros".into(),
        (0..len).map(|i| if i % 3 == 0 { -0.0 } else { 0.0 }).collect(),
    ));
    runs.push(("all nan".into(), vec![f64::NAN; len]));
    runs.push(("all -inf".into(), vec![f64::NEG_INFINITY; len]));
    runs.push(("all inf".into(), vec![f64::INFINITY; len]));
    runs
}

/// The extreme folds (`apply_extreme`) at every level this host has, f64 and f32, every length
/// 0..=80 and a few long ones at several offsets, against a sequential fold in NumPy's
/// `maximum` / `minimum` (NaN propagating): the same extreme ([`same_extreme`]).
fn extreme_folds<T: Elem + WideElem + wide::WideExtreme>() {
    let mut rng = Rng::new(18);
    for level in levels() {
        for len in (0..=80).chain([127, 1000, 4099]) {
            for (name, run) in extreme_runs(&mut rng, len + 7) {
                for off in [0, 1, 7] {
                    let xs: Vec<T> = run[off..off + len].iter().map(|&v| T::from_f64(v)).collect();
                    for max in [true, false] {
                        let got = kiln_jit::apply_extreme(level, max, false, &xs).unwrap().to_f64();
                        let mut want = if max { f64::NEG_INFINITY } else { f64::INFINITY };
                        for x in &xs {
                            let v = x.to_f64();
                            let beyond = if max { v > want } else { v < want };
                            if want.is_nan() || v.is_nan() || beyond {
                                want = if want.is_nan() { want } else { v };
                            }
                        }
                        let what = format!(
                            "{:?} {level:?} {} of {name}, len {len} at {off}",
                            <T as WideElem>::DTYPE,
                            if max { "max" } else { "min" }
                        );
                        assert!(same_extreme(got, want), "{what}: {got:e} vs {want:e}");
                    }
                }
            }
        }
    }
}

#[test]
fn extreme_folds_match_a_sequential_fold_f64() {
    extreme_folds::<f64>();
}

#[test]
fn extreme_folds_match_a_sequential_fold_f32() {
    extreme_folds::<f32>();
}

/// The integer sums (`apply_int_sum`) at every level this host has: int64 values (wrapping),
/// int32 values (widened first) and bools (the count of nonzero bytes) of every length 0..=200,
/// around a count's block of 255 chunks of 64 bytes, and long, at several offsets, against a
/// sequential sum.
#[test]
fn integer_sums_match_a_sequential_sum() {
    let mut rng = Rng::new(19);
    let block = 255 * 64;
    let lens = (0..=200).chain([block - 1, block, block + 1, block + 65, 3 * block + 17, 100_003]);
    for level in levels() {
        for len in lens.clone() {
            let words: Vec<i64> = (0..len + 7).map(|_| rng.next_u64() as i64).collect();
            let bytes: Vec<u8> = words
                .iter()
                .map(|&w| [0, 1, 2, 255, 128, 0, 0][(w as u64 % 7) as usize])
                .collect();
            for off in [0, 1, 7] {
                let x = &words[off..off + len];
                let want = x.iter().fold(0i64, |a, &v| a.wrapping_add(v));
                assert_eq!(
                    kiln_jit::apply_int_sum(level, x).unwrap(),
                    want,
                    "{level:?} i64 len {len} at {off}"
                );
                let narrow: Vec<i32> = x.iter().map(|&v| v as i32).collect();
                let want: i64 = narrow.iter().map(|&v| i64::from(v)).sum();
                let got = kiln_jit::apply_int_sum(level, &narrow).unwrap();
                assert_eq!(got, want, "{level:?} i32 len {len} at {off}");
                let truths: Vec<wide::Truth> =
                    bytes[off..off + len].iter().map(|&b| wide::Truth(b)).collect();
                let want = bytes[off..off + len].iter().filter(|&&b| b != 0).count() as i64;
                let got = kiln_jit::apply_int_sum(level, &truths).unwrap();
                assert_eq!(got, want, "{level:?} bool len {len} at {off}");
            }
        }
    }
}

/// A typed kernel's kept row steps (`apply_kept_int`) at every level this host has: the sum,
/// max, min, `any` and `all` of one row and of eight, of int64, int32 and bool values (bytes 0, 1,
/// 2, 128, 255), over every length 0..=150 and a few long ones at several offsets, into words that
/// start at the identities, at int64's extremes (an int32 max's identity is int64's MIN) and at
/// other values, against a sequential fold of each column.
#[test]
fn kept_integer_row_steps_match_a_sequential_fold() {
    use kiln_ir::ReduceOp;
    let mut rng = Rng::new(20);
    let ops = [
        ReduceOp::Sum,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::Any,
        ReduceOp::All,
    ];
    let fold = |op: ReduceOp, a: i64, v: i64| match op {
        ReduceOp::Sum => a.wrapping_add(v),
        ReduceOp::Max => a.max(v),
        ReduceOp::Min => a.min(v),
        ReduceOp::Any => a | i64::from(v != 0),
        _ => a & i64::from(v != 0),
    };
    for level in levels() {
        for len in (0..=150).chain([255, 1000, 4099]) {
            let words: Vec<Vec<i64>> = (0..8)
                .map(|r| {
                    (0..len + 7)
                        .map(|j| match (r + j) % 11 {
                            0 => i64::MAX,
                            1 => i64::MIN,
                            2 => 0,
                            _ => rng.next_u64() as i64 >> (rng.below(60) as u32),
                        })
                        .collect()
                })
                .collect();
            for off in [0, 1, 7] {
                let rows64: Vec<&[i64]> = words.iter().map(|w| &w[off..off + len]).collect();
                let r32: Vec<Vec<i32>> = rows64
                    .iter()
                    .map(|r| r.iter().map(|&v| v as i32).collect())
                    .collect();
                let rows32: Vec<&[i32]> = r32.iter().map(|r| r.as_slice()).collect();
                let rb: Vec<Vec<wide::Truth>> = rows64
                    .iter()
                    .map(|r| {
                        r.iter()
                            .map(|&v| wide::Truth([0, 1, 2, 128, 255, 0][(v as u64 % 6) as usize]))
                            .collect()
                    })
                    .collect();
                let rowsb: Vec<&[wide::Truth]> = rb.iter().map(|r| r.as_slice()).collect();
                for op in ops {
                    for group in [false, true] {
                        let k = if group { 8 } else { 1 };
                        let start: Vec<i64> = (0..len)
                            .map(|j| match j % 5 {
                                0 => i64::MIN,
                                1 => i64::MAX,
                                2 => i64::from(op == ReduceOp::All),
                                _ => (j as i64 - 50) * 3,
                            })
                            .map(|w| {
                                if matches!(op, ReduceOp::Any | ReduceOp::All) {
                                    w & 1
                                } else {
                                    w
                                }
                            })
                            .collect();
                        let want = |values: &dyn Fn(usize, usize) -> i64| -> Vec<i64> {
                            (0..len)
                                .map(|j| (0..k).fold(start[j], |a, r| fold(op, a, values(r, j))))
                                .collect()
                        };
                        let what = format!("{level:?} {op:?} of {k} rows, len {len} at {off}");
                        let mut out = start.clone();
                        kiln_jit::apply_kept_int(level, op, &rows64[..k], &mut out).unwrap();
                        assert_eq!(out, want(&|r, j| rows64[r][j]), "{what}, i64");
                        let mut out = start.clone();
                        kiln_jit::apply_kept_int(level, op, &rows32[..k], &mut out).unwrap();
                        assert_eq!(out, want(&|r, j| i64::from(rows32[r][j])), "{what}, i32");
                        let mut out = start.clone();
                        kiln_jit::apply_kept_int(level, op, &rowsb[..k], &mut out).unwrap();
                        assert_eq!(out, want(&|r, j| i64::from(rowsb[r][j].0 != 0)), "{what}, bool");
                    }
                }
            }
        }
        // refused: an op without a step, rows shorter than the output run, three rows
        let mut out = vec![0i64; 4];
        assert!(kiln_jit::apply_kept_int(level, ReduceOp::Prod, &[&[1i64; 4][..]], &mut out).is_err());
        assert!(kiln_jit::apply_kept_int(level, ReduceOp::Sum, &[&[1i64; 3][..]], &mut out).is_err());
        assert!(kiln_jit::apply_kept_int(level, ReduceOp::Sum, &[&[1i64; 4][..]; 3], &mut out).is_err());
    }
}

/// NumPy's argmax (`max`) or argmin of `xs`, point by point: the first NaN, else the first point
/// equal to the extreme (-0.0 and 0.0 are equal); 0 for an empty run.
fn scalar_arg<T: PartialOrd + Copy>(xs: &[T], max: bool) -> usize {
    #[allow(clippy::eq_op)]
    if let Some(k) = xs.iter().position(|v| v != v) {
        return k;
    }
    let mut best = 0;
    for (k, v) in xs.iter().enumerate() {
        if (max && *v > xs[best]) || (!max && *v < xs[best]) {
            best = k;
        }
    }
    best
}

/// `wide::arg_scalar` (the routines' answer where no level is) of `xs`.
fn point_by_point<T: wide::Extreme>(xs: &[T], max: bool) -> usize {
    if max {
        wide::arg_scalar::<T, true>(xs)
    } else {
        wide::arg_scalar::<T, false>(xs)
    }
}

/// The argmax and argmin of a run (`apply_arg`, and `wide::arg_scalar`) at every level this host
/// has, f64 and f32, every length 0..=80 and a few long ones, at several offsets: NaN (of either
/// sign, the first one wins), infinities, subnormals, zeros of both signs (equal: the first of
/// either), runs of one value and runs of many ties, as a scalar search finds the point.
fn args<T: Elem + WideElem + wide::WideExtreme>() {
    let mut rng = Rng::new(21);
    for level in levels() {
        for len in (0..=80).chain([127, 1000, 4099]) {
            let mut runs = extreme_runs(&mut rng, len + 7);
            let ties = (0..len + 7).map(|_| rng.uniform(-3.0, 3.0).round()).collect();
            runs.push(("ties".into(), ties));
            for (name, run) in runs {
                for off in [0, 1, 7] {
                    let xs: Vec<T> = run[off..off + len].iter().map(|&v| T::from_f64(v)).collect();
                    let values: Vec<f64> = xs.iter().map(|v| v.to_f64()).collect();
                    for max in [true, false] {
                        let got = kiln_jit::apply_arg(level, max, &xs).unwrap();
                        let what = format!(
                            "{:?} {level:?} max {max} of {name}, len {len} at {off}",
                            <T as WideElem>::DTYPE
                        );
                        assert_eq!(got, scalar_arg(&values, max), "{what}");
                        assert_eq!(got, point_by_point(&xs, max), "{what}");
                    }
                }
            }
        }
    }
}

#[test]
fn args_match_a_scalar_search() {
    args::<f64>();
    args::<f32>();
    // integer values (a typed kernel's): ties, the extremes of the type
    int_args::<i64>();
    int_args::<i32>();
}

/// [`args_match_a_scalar_search`] of int64 or int32 values.
fn int_args<T: wide::WideExtreme + Ord + std::fmt::Debug + TryFrom<i64> + num_bounds::Bounded>() {
    let mut rng = Rng::new(22);
    for level in levels() {
        for len in (0..=70).chain([1000]) {
            let of = |v: i64| T::try_from(v).ok().expect("in range");
            let mut runs = vec![vec![T::MIN; len], vec![T::MAX; len]];
            let mut xs: Vec<T> = (0..len)
                .map(|_| of((rng.uniform(-4.0, 4.0) as i64) * 1_000_003))
                .collect();
            runs.push(xs.clone());
            if len > 2 {
                xs[len / 2] = T::MAX;
                xs[len - 1] = T::MIN;
                runs.push(xs);
            }
            for xs in runs {
                for max in [true, false] {
                    let got = kiln_jit::apply_arg(level, max, &xs).unwrap();
                    assert_eq!(got, scalar_arg(&xs, max), "{level:?} max {max} of a run of {len}");
                    assert_eq!(
                        got,
                        point_by_point(&xs, max),
                        "{level:?} max {max} of a run of {len}"
                    );
                }
            }
        }
    }
}

#[test]
fn args_refuse_a_level_the_host_lacks() {
    for level in Level::ALL {
        let r = kiln_jit::apply_arg(level, true, &[1.0f64, 2.0, 2.0]);
        assert_eq!(r.is_ok(), level.on_host(), "{level:?}");
        if let Ok(k) = r {
            assert_eq!(k, 1);
        }
    }
}

/// The folds refuse a level the host lacks, computing nothing.

#[test]
fn extreme_folds_refuse_a_level_the_host_lacks() {
    for level in Level::ALL {
        let r = kiln_jit::apply_extreme(level, true, false, &[1.0f64, 2.0]);
        assert_eq!(r.is_ok(), level.on_host(), "{level:?}");
        if let Ok(v) = r {
            assert_eq!(v, 2.0);
        }
    }
}

/// A trailing max or min of a plain read calls the fold (an import `(i64, i64) -> f64`), and an
/// argmax or argmin the row's search (`(i64, i64, i64) -> i64`), where the host has a wide level
/// and the schedule asks for it; never with `with_wide(false)`, a scalar schedule, or a computed body
/// (`max(x*x)`). Each route agrees with the interpreter (an arg reduction's index exactly), and
/// the routes give the same bits (a zero extreme's sign and a NaN's payload included: the
/// reproducible profile's promise), rows shorter and longer than the call's threshold and than a
/// block, with NaN of two payloads, infinities and zeros of both signs, and whole arrays cut into
/// chunks (two passes).
fn extreme_route<T: Elem>(dtype: ElemType) {
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let xx = arena.binary(BinaryOp::Mul, x, x);
    let mut rng = Rng::new(19);
    for op in [ReduceOp::Max, ReduceOp::Min, ReduceOp::ArgMax, ReduceOp::ArgMin] {
        let sig = match op {
            ReduceOp::ArgMax | ReduceOp::ArgMin => "= (i64, i64, i64) -> i64 ".to_string(),
            _ => format!("= (i64, i64) -> {} ", dtype.short_name().to_lowercase()),
        };
        for (shape, axes) in [
            (vec![5usize, 15], vec![1usize]),
            (vec![5, 16], vec![1]),
            (vec![5, 63], vec![1]),
            (vec![5, 64], vec![1]),
            (vec![3, 1000], vec![1]),
            (vec![2, 9000], vec![1]),
            (vec![2, 3, 200], vec![2]),
            (vec![4, 2000], vec![0, 1]),
            (vec![300_000], vec![0]),
        ] {
            let n: usize = shape.iter().product();
            for d in [
                "special",
                "plain",
                "zero extremes",
                "+0 extremes",
                "-0 extremes",
                "payloads",
            ] {
                let data = if d == "special" {
                    Data::Special
                } else {
                    Data::Plain
                };
                let mut xs = gen_data::<T>(&mut rng, n, data);
                if let Some(last) = xs.last_mut() {
                    *last = T::from_f64(-0.0);
                }
                if let Some(zero) = match d {
                    "+0 extremes" => Some(0.0),
                    "-0 extremes" => Some(-0.0),
                    _ => None,
                } {
                    // every extreme a zero of one sign (ReLU's outputs: +0.0), which the row's
                    // fold gives where the row is its segment, with no fold inline again
                    let toward = matches!(op, ReduceOp::Max | ReduceOp::ArgMax);
                    for (i, x) in xs.iter_mut().enumerate() {
                        let v = x.to_f64().abs() + 1.0;
                        *x = T::from_f64(match i % 7 {
                            2 => zero,
                            _ if toward => -v,
                            _ => v,
                        });
                    }
                }
                if d == "zero extremes" {
                    // every extreme a zero, of both signs in every row
                    let toward = matches!(op, ReduceOp::Max | ReduceOp::ArgMax);
                    for (i, x) in xs.iter_mut().enumerate() {
                        let v = x.to_f64().abs() + 1.0;
                        *x = T::from_f64(match i % 7 {
                            2 => 0.0,
                            5 => -0.0,
                            _ if toward => -v,
                            _ => v,
                        });
                    }
                }
                if d == "payloads" {
                    // NaNs of two payloads and both signs in the loop and the tail of long rows
                    for (i, x) in xs.iter_mut().enumerate() {
                        let nan = match i % 997 {
                            100 => f64::from_bits(0x7ff8_0000_0000_0001),
                            600 => f64::from_bits(0xfff8_0000_0000_0f00),
                            _ => continue,
                        };
                        *x = T::from_f64(nan);
                    }
                }
                for (body, plain) in [(x, true), (xx, false)] {
                    let kind = KernelKind::Reduce {
                        op,
                        axes: axes.clone(),
                    };
                    let k = kernel(dtype, &[&shape], arena.clone(), body, kind);
                    let p = plan(&k, 1);
                    let calls = |s: Schedule| {
                        let c = kiln_jit::CompiledKernel::explain(&k, &p, s).unwrap();
                        c.dumps().unwrap().clif.contains(&sig)
                    };
                    let sched = Schedule::for_kernel(&k);
                    let on = plain && wide::level().is_some();
                    let what = format!("{op:?} {dtype:?} {shape:?} axes {axes:?} {d:?} plain {plain}");
                    assert_eq!(calls(sched), on, "{what}");
                    assert!(!calls(sched.with_wide(false)), "{what}");
                    assert!(!calls(Schedule::scalar()), "{what}");
                    let want = oracle(&k, std::slice::from_ref(&xs)).unwrap().values.to_f64();
                    let run =
                        |s: Schedule| jit(&k, &p, s, std::slice::from_ref(&xs)).unwrap().values.to_f64();
                    let (wide_bits, inline_bits) = (run(sched), run(sched.with_wide(false)));
                    assert_eq!(wide_bits.len(), want.len(), "{what}");
                    for (g, w) in wide_bits.iter().zip(&want) {
                        assert!(same_extreme(*g, *w), "{what}: {g:e} vs {w:e}");
                    }
                    // every route the same bits, a zero's sign and a NaN's payload included
                    for (a, b) in wide_bits.iter().zip(&inline_bits) {
                        assert_eq!(a.to_bits(), b.to_bits(), "{what}: wide {a:e} vs inline {b:e}");
                    }
                }
            }
        }
    }
}

#[test]
fn the_extreme_route_shows_in_the_code_and_agrees() {
    extreme_route::<f64>(ElemType::F64);
    extreme_route::<f32>(ElemType::F32);
}

/// A max or a sum of a plain read with map outputs beside it (`max(x)` and `x*x` in one pass)
/// keeps its own loop, which stores the maps as it reads: the fold's call would skip them.
#[test]
fn a_fold_with_map_outputs_keeps_its_loop() {
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let xx = arena.binary(BinaryOp::Mul, x, x);
    for (op, dtype, sig) in [
        (ReduceOp::Max, ElemType::F64, "= (i64, i64) -> f64 "),
        (ReduceOp::Sum, ElemType::F32, "= (i64, i64, i64, i64) -> i8 "),
    ] {
        let kind = KernelKind::Reduce { op, axes: vec![0] };
        let mut k = kernel(dtype, &[&[1000]], arena.clone(), x, kind);
        let p = plan(&k, 1);
        let calls = |k: &KernelIR| {
            let c = kiln_jit::CompiledKernel::explain(k, &p, Schedule::for_kernel(k)).unwrap();
            c.dumps().unwrap().clif.contains(sig)
        };
        assert_eq!(calls(&k), wide::level().is_some(), "{op:?}");
        k.extra = vec![xx];
        assert!(!calls(&k), "{op:?}");
    }
}

/// The int64 and int32 folds at every level this host has (AVX2 has no `vpmaxsq`: a compare and a
/// blend), every length 0..=80 and long runs, the extremes anywhere, the type's MIN and MAX among
/// them.
#[test]
fn integer_extreme_folds_match_a_sequential_fold() {
    int_extreme_folds::<i64>(9.0e18);
    int_extreme_folds::<i32>(2.1e9);
}

fn int_extreme_folds<T: wide::WideExtreme + Ord + std::fmt::Debug + TryFrom<i64> + num_bounds::Bounded>(
    scale: f64,
) {
    let mut rng = Rng::new(20);
    for level in levels() {
        for len in (0..=80usize).chain([127, 1000, 4099]) {
            let base: Vec<T> = (0..len)
                .map(|_| {
                    T::try_from((rng.uniform(-1.0, 1.0) * scale) as i64)
                        .ok()
                        .expect("in range")
                })
                .collect();
            let mut runs = vec![base.clone()];
            for (at, v) in [(0, T::MAX), (len / 2, T::MIN), (len.saturating_sub(1), T::MAX)] {
                if at < len {
                    let mut r = base.clone();
                    r[at] = v;
                    runs.push(r);
                }
            }
            for xs in runs {
                let max = kiln_jit::apply_extreme(level, true, false, &xs).unwrap();
                let min = kiln_jit::apply_extreme(level, false, false, &xs).unwrap();
                let what = format!("{level:?} len {len}");
                assert_eq!(max, xs.iter().copied().max().unwrap_or(T::MIN), "{what}");
                assert_eq!(min, xs.iter().copied().min().unwrap_or(T::MAX), "{what}");
            }
        }
    }
}

/// The bool folds (`wide::Truth`: a byte, true where nonzero) at every level this host has: the
/// max is `any`, the min `all`, and the search gives the first point of a truth; every length
/// 0..=80 and runs longer than the stretch between two tests of whether the result is decided,
/// the deciding point anywhere, bytes other than 0 and 1 among the trues.
#[test]
fn bool_folds_are_any_and_all() {
    use wide::Truth;
    for level in levels() {
        for len in (0..=80usize).chain([4095, 4096, 4097, 10_000]) {
            let mut runs = vec![vec![0u8; len], vec![1u8; len]];
            for at in [0, len / 3, len.saturating_sub(1)] {
                if at < len {
                    let mut r = vec![0u8; len];
                    r[at] = 7;
                    runs.push(r);
                    let mut r = vec![1u8; len];
                    r[at] = 0;
                    runs.push(r);
                }
            }
            runs.push((0..len).map(|k| (k % 3 == 2) as u8 * 200).collect());
            for bytes in runs {
                let xs: Vec<Truth> = bytes.iter().map(|&b| Truth(b)).collect();
                let what = format!("{level:?} len {len} {:?}", &bytes[..len.min(8)]);
                let any = kiln_jit::apply_extreme(level, true, false, &xs).unwrap();
                let all = kiln_jit::apply_extreme(level, false, false, &xs).unwrap();
                assert_eq!(any.0 != 0, bytes.iter().any(|&b| b != 0), "any {what}");
                assert_eq!(all.0 != 0, bytes.iter().all(|&b| b != 0), "all {what}");
                for max in [true, false] {
                    // the first true (argmax) or false, else 0
                    let got = kiln_jit::apply_arg(level, max, &xs).unwrap();
                    let want = bytes.iter().position(|&b| (b != 0) == max).unwrap_or(0);
                    assert_eq!(got, want, "arg max {max} {what}");
                }
            }
        }
    }
}

/// The kept max's and min's row steps (`apply_kept_extreme`) at every level this host has: bit
/// for bit the inline kept update (`Gen::maximum(out, x)`: `out` where it is beyond `x` or NaN,
/// else `x`), NaN payloads included, over rows of every length 0..=40 and 1000 at several
/// offsets, the specials against one another; one row, and a group of eight adjacent rows
/// folded in order.
fn kept_extreme_steps<T: Elem + WideElem>() {
    let sp = specials();
    let len_max = 1000 + 40;
    let mut rng = Rng::new(21);
    let pick = |rng: &mut Rng| {
        if rng.uniform(0.0, 1.0) < 0.3 {
            sp[(rng.uniform(0.0, sp.len() as f64) as usize).min(sp.len() - 1)]
        } else {
            rng.uniform(-3.0, 3.0)
        }
    };
    let x: Vec<T> = (0..len_max).map(|_| T::from_f64(pick(&mut rng))).collect();
    let acc0: Vec<T> = (0..len_max).map(|_| T::from_f64(pick(&mut rng))).collect();
    for level in levels() {
        for len in (0..=40).chain([1000]) {
            for off in [0, 1, 3, 8, 13] {
                for (max, rows) in [(true, 1), (false, 1), (true, 8), (false, 8)] {
                    // row `m` starts `m * 3` elements on (every row as long as the output run)
                    let xs: Vec<&[T]> = (0..rows).map(|m| &x[off + m * 3..off + m * 3 + len]).collect();
                    let mut got = acc0[off..off + len].to_vec();
                    kiln_jit::apply_kept_extreme(level, max, &xs, &mut got).unwrap();
                    for j in 0..len {
                        let a0 = acc0[off + j].to_f64();
                        let want = xs.iter().fold(a0, |a, r| {
                            let v = r[j].to_f64();
                            let keep = a.is_nan() || if max { a > v } else { a < v };
                            if keep { a } else { v }
                        });
                        let g = got[j].to_f64();
                        assert!(
                            g.to_bits() == want.to_bits(),
                            "{:?} {level:?} max {max} rows {rows} len {len} at {off}: {a0:e}: {g:e} vs {want:e}",
                            <T as WideElem>::DTYPE
                        );
                    }
                }
            }
        }
        let mut short = vec![T::from_f64(0.0); 4];
        assert!(kiln_jit::apply_kept_extreme(level, true, &[&x[..3]], &mut short).is_err());
        assert!(kiln_jit::apply_kept_extreme(level, true, &[&x[..4], &x[..4]], &mut short).is_err());
    }
}

#[test]
fn kept_extreme_steps_give_the_inline_bits_f64() {
    kept_extreme_steps::<f64>();
}

#[test]
fn kept_extreme_steps_give_the_inline_bits_f32() {
    kept_extreme_steps::<f32>();
}

/// A kept max or min of a plain read (`max(m, axis=0)`) calls the row step (an import of three
/// i64) where the host has a wide level and the schedule asks for it; not with `with_wide(false)`
/// or a computed body. Both routes give the interpreter's bits (any NaN equal), f64 and f32
/// (whose outputs are 4 bytes apart), columns below and above the step's threshold.
#[test]
fn the_kept_extreme_route_shows_in_the_code_and_agrees() {
    kept_extreme_route::<f64>(ElemType::F64);
    kept_extreme_route::<f32>(ElemType::F32);
}

fn kept_extreme_route<T: Elem>(dtype: ElemType) {
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let xx = arena.binary(BinaryOp::Mul, x, x);
    let mut rng = Rng::new(22);
    for op in [ReduceOp::Max, ReduceOp::Min] {
        for (shape, axes) in [
            (vec![37usize, 100], vec![0usize]),
            (vec![9, 15], vec![0]),
            (vec![4, 5, 70], vec![0, 1]),
            (vec![3, 20, 40], vec![1]),
        ] {
            let n: usize = shape.iter().product();
            let xs: Vec<T> = gen_data::<T>(&mut rng, n, Data::Special);
            for (body, plain) in [(x, true), (xx, false)] {
                let kind = KernelKind::Reduce {
                    op,
                    axes: axes.clone(),
                };
                let k = kernel(dtype, &[&shape], arena.clone(), body, kind);
                let p = plan(&k, 1);
                let calls = |s: Schedule| {
                    let c = kiln_jit::CompiledKernel::explain(&k, &p, s).unwrap();
                    c.dumps().unwrap().clif.contains("= (i64, i64, i64) ")
                };
                let sched = Schedule::for_kernel(&k);
                let what = format!("{op:?} {dtype:?} {shape:?} axes {axes:?} plain {plain}");
                assert_eq!(calls(sched), plain && wide::level().is_some(), "{what}");
                assert!(!calls(sched.with_wide(false)), "{what}");
                let want = oracle(&k, std::slice::from_ref(&xs)).unwrap().values.to_f64();
                for s in [sched, sched.with_wide(false)] {
                    let got = jit(&k, &p, s, std::slice::from_ref(&xs)).unwrap().values.to_f64();
                    assert_same(&what, &want, &got, &want);
                }
            }
        }
    }
}

/// The inline loop's partition of a row of `T` values (`vals`, already multiplied where the body
/// is a product) into `parts` (wide/sums.rs): runs of 16 into partials 0..16, then vectors (of 2
/// f64 or 4 f32) into the first partials, then the last points into the scalar, each in order.
fn inline_partition<T: Elem>(vals: &[T], parts: &mut [f64; wide::PARTS + 1]) {
    let lanes = 16 / std::mem::size_of::<T>();
    let whole = vals.len() / 16 * 16;
    let vectors = whole + (vals.len() - whole) / lanes * lanes;
    for (i, v) in vals.iter().enumerate() {
        let slot = if i < whole {
            i % 16
        } else if i < vectors {
            i % lanes
        } else {
            wide::PARTS
        };
        parts[slot] += v.to_f64();
    }
}

/// The sum folds (`apply_sum`) at every level this host has, of f32 and f64 values and of their
/// products, every length 0..=80 and a few long ones at several offsets, from accumulators that
/// already hold values: the inline partition's partials bit for bit, and NaN reported exactly
/// where a partial is NaN (NaN and infinities of both signs in the runs: the caller then folds
/// the row inline).
#[test]
fn sum_folds_keep_the_inline_partition() {
    sum_folds_partition::<f32>();
    sum_folds_partition::<f64>();
    // a level the host lacks computes nothing; rows of two lengths are refused
    for level in Level::ALL {
        let mut parts = [0.0; wide::PARTS + 1];
        let r = kiln_jit::apply_sum::<f64>(level, &[1.0, 2.0], None, &mut parts);
        assert_eq!(r.is_ok(), level.on_host(), "{level:?}");
        if level.on_host() {
            assert_eq!(parts[wide::PARTS], 0.0);
            assert_eq!(parts[0..2], [1.0, 2.0]);
            assert!(kiln_jit::apply_sum::<f32>(level, &[1.0, 2.0], Some(&[1.0]), &mut parts).is_err());
        }
        let mut parts = [0.0; wide::PARTS + 1];
        let r = kiln_jit::apply_sum::<f32>(level, &[1.0, 2.0], None, &mut parts);
        assert_eq!(r.is_ok(), level.on_host(), "{level:?}");
        if level.on_host() {
            assert_eq!(parts[wide::PARTS], 3.0);
        }
    }
}

fn sum_folds_partition<T: Elem + wide::Summed>() {
    let mut rng = Rng::new(23);
    for level in levels() {
        for len in (0..=80).chain([127, 1000, 4099]) {
            for (name, run) in extreme_runs(&mut rng, len + 7) {
                let other: Vec<T> = (0..len + 7)
                    .map(|_| T::from_f64(rng.uniform(-2.0, 2.0)))
                    .collect();
                for off in [0, 1, 7] {
                    let xs: Vec<T> = run[off..off + len].iter().map(|&v| T::from_f64(v)).collect();
                    let ys = &other[off..off + len];
                    // values, products, and squares (`y` the very row `x`: read once)
                    for (how, y) in [
                        ("values", None),
                        ("products", Some(ys)),
                        ("squares", Some(&xs[..])),
                    ] {
                        let start: [f64; wide::PARTS + 1] = std::array::from_fn(|_| rng.uniform(-1.0, 1.0));
                        let vals: Vec<T> = match y {
                            Some(y) => xs.iter().zip(y).map(|(&a, &b)| a * b).collect(),
                            None => xs.clone(),
                        };
                        let mut want = start;
                        inline_partition(&vals, &mut want);
                        let mut got = start;
                        let nan = kiln_jit::apply_sum(level, &xs, y, &mut got).unwrap();
                        let what = format!(
                            "{level:?} {} {how} of {name}, len {len} at {off}",
                            std::any::type_name::<T>()
                        );
                        assert_eq!(nan, want.iter().any(|v| v.is_nan()), "{what}");
                        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                            let same = g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan());
                            assert!(same, "{what}: partial {k}: {g:e} vs {w:e}");
                        }
                    }
                }
            }
        }
    }
}

/// A trailing sum of f32 values whose body is a plain read (`sum(x)`) or a product of two
/// (`sum(x*x)`, `sum(x*y)`), or of f64 values whose body is a plain read or a square over rows of
/// at least `LONG_SUM_ROW` points, calls the fold (an import `(i64, i64, i64, i64) -> i8`) where
/// the host has a wide level and the schedule asks for it; never with `with_wide(false)`, a scalar
/// schedule, another schedule's partition, another body (`sum(x+y)`; `sum(x*y)` of f64, which
/// keeps 4 accumulators). The default schedule keeps 16 f64 partials for a sum of a plain read or
/// a square (f64: 8 accumulators over rows of at least `LONG_SUM_ROW` points), 4 accumulators for
/// the others. Each route agrees with the interpreter, and the routes give the same bits, NaN payloads included, over rows shorter and longer than the call's threshold,
/// with and without special values, rows of several segments (a middle axis) and whole arrays
/// cut into chunks (two passes).
fn sum_route<T: Elem>(dtype: ElemType) {
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let y = arena.input(1);
    let xx = arena.binary(BinaryOp::Mul, x, x);
    let xy = arena.binary(BinaryOp::Mul, x, y);
    let x_plus_y = arena.binary(BinaryOp::Add, x, y);
    let sig = "= (i64, i64, i64, i64) -> i8 ";
    let mut rng = Rng::new(24);
    for (shape, axes) in [
        (vec![5usize, 63], vec![1usize]),
        (vec![5, 255], vec![1]),
        (vec![5, 256], vec![1]),
        (vec![3, 1000], vec![1]),
        // (a main loop of 32 points an iteration leaves 26)
        (vec![2, 1050], vec![1]),
        (vec![2, 3, 300], vec![2]),
        (vec![4, 2000], vec![0, 1]),
        (vec![3, 100, 7], vec![1, 2]),
        (vec![300_000], vec![0]),
    ] {
        let n: usize = shape.iter().product();
        for d in ["special", "plain", "payloads"] {
            let data = if d == "special" {
                Data::Special
            } else {
                Data::Plain
            };
            let mut xs = gen_data::<T>(&mut rng, n, data);
            let ys = gen_data::<T>(&mut rng, n, Data::Plain);
            if d == "payloads" {
                // NaNs of two payloads and both signs, 16 apart (so in one partial of a row's
                // fold), where the operands' order picks the payload
                for (i, x) in xs.iter_mut().enumerate() {
                    *x = T::from_f64(match i % 997 {
                        100 => f64::from_bits(0x7ff8_0000_2000_0000),
                        116 => f64::from_bits(0xfff8_0f00_0000_0000),
                        _ => continue,
                    });
                }
            }
            for (body, summed, square) in [
                (x, true, true),
                (xx, true, true),
                (xy, true, false),
                (x_plus_y, false, false),
            ] {
                let row: usize = axes.iter().map(|&a| shape[a]).product();
                let long = square && row >= kiln_jit::LONG_SUM_ROW;
                // f32 sums of any summed body; f64 ones where the loop keeps 16 partials
                let routed = summed && (dtype == ElemType::F32 || long);
                let kind = KernelKind::Reduce {
                    op: ReduceOp::Sum,
                    axes: axes.clone(),
                };
                let inputs: &[&[usize]] = &[&shape, &shape];
                let k = kernel(dtype, inputs, arena.clone(), body, kind);
                let p = plan(&k, 1);
                let calls = |s: Schedule| {
                    let c = kiln_jit::CompiledKernel::explain(&k, &p, s).unwrap();
                    c.dumps().unwrap().clif.contains(sig)
                };
                let sched = Schedule::for_kernel(&k);
                let what = format!("{dtype:?} {shape:?} axes {axes:?} {d:?} body {body:?}");
                let acc = if long {
                    wide::sum_accumulators(sched.lanes)
                } else {
                    4
                };
                assert_eq!(sched.accumulators, acc, "{what}");
                assert_eq!(calls(sched), routed && wide::level().is_some(), "{what}");
                assert!(!calls(sched.with_wide(false)), "{what}");
                assert!(!calls(Schedule::scalar()), "{what}");
                assert!(!calls(Schedule::simd(dtype, 1, 2)), "{what}");
                let data = [xs.clone(), ys.clone()];
                check(&what, &k, &p, sched, &data);
                let run = |s: Schedule| jit(&k, &p, s, &data).unwrap().values.to_f64();
                for (a, b) in run(sched).iter().zip(&run(sched.with_wide(false))) {
                    assert_eq!(a.to_bits(), b.to_bits(), "{what}: wide {a:e} vs inline {b:e}");
                }
                // a main loop of twice the accumulators' vectors leaves up to that many, all
                // into the first accumulator: not the fold's partition, so no fold, the same bits
                let unrolled = Schedule::simd(dtype, 2 * sched.accumulators, sched.accumulators);
                assert!(!calls(unrolled), "{what}: unrolled");
                for (a, b) in run(unrolled).iter().zip(&run(unrolled.with_wide(false))) {
                    assert_eq!(
                        a.to_bits(),
                        b.to_bits(),
                        "{what}: unrolled, wide {a:e} vs inline {b:e}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_sum_route_shows_in_the_code_and_agrees() {
    sum_route::<f64>(ElemType::F64);
    sum_route::<f32>(ElemType::F32);
}

/// Sibling reductions whose every component folds its long rows at full width (a max and a min
/// of a plain read; a float32 sum of a plain read or a product too, and a float64 one over rows
/// where it keeps 16 partials) call each one's fold; where one component has none (a computed
/// body, a float64 sum over short rows), or the schedule asks for none, every component keeps the
/// inline loop. Each route gives the same bits (a row whose max is a zero of
/// either sign, or that holds NaNs of two payloads, folded again inline for every component).
#[test]
fn sibling_reductions_fold_at_full_width_together() {
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let xx = arena.binary(BinaryOp::Mul, x, x);
    let twice = arena.binary(BinaryOp::Add, x, x);
    let sum_sig = "= (i64, i64, i64, i64) -> i8 ";
    let mut rng = Rng::new(25);
    for dtype in [ElemType::F64, ElemType::F32] {
        let extreme_sig = format!("= (i64, i64) -> {} ", dtype.short_name().to_lowercase());
        let f32 = dtype == ElemType::F32;
        for (ops, roots, extremes, sums) in [
            (vec![ReduceOp::Max, ReduceOp::Min], vec![x, x], true, false),
            // (f64: where the rows are long, below)
            (
                vec![ReduceOp::Sum, ReduceOp::Max, ReduceOp::Sum],
                vec![x, x, xx],
                true,
                true,
            ),
            (vec![ReduceOp::Max, ReduceOp::Min], vec![x, twice], false, false),
            (vec![ReduceOp::Max, ReduceOp::Prod], vec![x, x], false, false),
        ] {
            for (shape, axes) in [
                (vec![3usize, 300], vec![1usize]),
                (vec![70], vec![0]),
                (vec![5000], vec![0]),
            ] {
                let kind = KernelKind::Siblings {
                    ops: ops.clone(),
                    axes: axes.clone(),
                };
                let mut k = kernel(dtype, &[&shape], arena.clone(), roots[0], kind);
                k.extra = roots[1..].to_vec();
                let p = plan(&k, 1);
                let code = |s: Schedule| {
                    let c = kiln_jit::CompiledKernel::explain(&k, &p, s).unwrap();
                    let clif = c.dumps().unwrap().clif.clone();
                    (clif.contains(&extreme_sig), clif.contains(sum_sig))
                };
                let sched = Schedule::for_kernel(&k);
                // a float64 sum folds where its rows are long enough to keep 16 partials
                let row: usize = axes.iter().map(|&a| shape[a]).product();
                let on = wide::level().is_some() && (f32 || !sums || row >= kiln_jit::LONG_SUM_ROW);
                let what = format!("{dtype:?} {ops:?} {shape:?}");
                assert_eq!(code(sched), (extremes && on, sums && on), "{what}");
                assert_eq!(code(sched.with_wide(false)), (false, false), "{what}");
                let n: usize = shape.iter().product();
                for d in ["special", "zeros", "payloads"] {
                    let mut xs = gen_data::<f64>(&mut rng, n, Data::Special);
                    for (i, v) in xs.iter_mut().enumerate() {
                        *v = match (d, i % 97) {
                            ("zeros", 5) => -0.0,
                            ("zeros", 40) => 0.0,
                            ("zeros", _) => -1.0 - v.abs().min(1.0),
                            ("payloads", 7) => f64::from_bits(0x7ff8_0000_0000_0a00),
                            ("payloads", 23) => f64::from_bits(0xfff8_0000_00b0_0000),
                            _ => *v,
                        };
                    }
                    let run = |s: Schedule| -> Vec<f64> {
                        if f32 {
                            let data = [xs.iter().map(|&v| v as f32).collect::<Vec<f32>>()];
                            jit(&k, &p, s, &data).unwrap().values.to_f64()
                        } else {
                            jit(&k, &p, s, std::slice::from_ref(&xs)).unwrap().values.to_f64()
                        }
                    };
                    for (a, b) in run(sched).iter().zip(&run(sched.with_wide(false))) {
                        assert_eq!(a.to_bits(), b.to_bits(), "{what} {d}: wide {a:e} vs inline {b:e}");
                    }
                }
            }
        }
    }
}

/// A compound moments kernel (`mean` and `var` in one pass) whose body is a plain read calls the
/// row's fold at full width (an import `(i64, i64, i64) -> i8`) where the host has a wide level
/// and the schedule is the default one; never with `with_wide(false)`, another schedule's
/// partition, or a computed body. Each route agrees with the interpreter within a relative bound
/// (the interpreter folds Welford's states, the compiled code two passes a block), and the
/// routes give the same bits, NaN payloads included, over rows shorter and longer than the
/// call's threshold and than a block, rows of several segments and whole arrays cut into
/// chunks.
fn moments_route<T: Elem + wide::Moments>(dtype: ElemType) {
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let twice = arena.binary(BinaryOp::Add, x, x);
    let sig = "= (i64, i64, i64) -> i8 ";
    let mut rng = Rng::new(26);
    for (shape, axes) in [
        (vec![5usize, 63], vec![1usize]),
        (vec![5, 256], vec![1]),
        (vec![3, 1000], vec![1]),
        (vec![2, 3041], vec![1]),
        (vec![2, 3, 300], vec![2]),
        (vec![4, 2000], vec![0, 1]),
        (vec![300_000], vec![0]),
    ] {
        let n: usize = shape.iter().product();
        for d in ["special", "plain", "offset", "payloads"] {
            let mut xs = gen_data::<T>(
                &mut rng,
                n,
                if d == "special" {
                    Data::Special
                } else {
                    Data::Plain
                },
            );
            for (i, x) in xs.iter_mut().enumerate() {
                match d {
                    // values far from 0 beside their spread: the blocks' means matter
                    "offset" => *x = T::from_f64(1e4 + x.to_f64()),
                    // NaNs of two payloads and both signs, where the operands' order picks one
                    "payloads" => {
                        *x = T::from_f64(match i % 997 {
                            100 => f64::from_bits(0x7ff8_0000_2000_0000),
                            108 => f64::from_bits(0xfff8_0f00_0000_0000),
                            _ => continue,
                        })
                    }
                    _ => {}
                }
            }
            for (body, routed) in [(x, true), (twice, false)] {
                let kind = KernelKind::Compound {
                    op: CompoundOp::Moments,
                    axes: axes.clone(),
                };
                let k = kernel(dtype, &[&shape], arena.clone(), body, kind);
                let p = plan(&k, 1);
                let calls = |s: Schedule| {
                    let c = kiln_jit::CompiledKernel::explain(&k, &p, s).unwrap();
                    c.dumps().unwrap().clif.contains(sig)
                };
                let sched = Schedule::for_kernel(&k);
                let what = format!("{dtype:?} {shape:?} axes {axes:?} {d:?} body {body:?}");
                assert_eq!(calls(sched), routed && wide::level().is_some(), "{what}");
                assert!(!calls(sched.with_wide(false)), "{what}");
                assert!(!calls(Schedule::simd(dtype, 1, 4)), "{what}");
                let data = [xs.clone()];
                let run = |s: Schedule| jit(&k, &p, s, &data).unwrap().values.to_f64();
                let want = oracle(&k, &data).unwrap().values.to_f64();
                let got = run(sched);
                // (each statistic rounded once to the dtype; a mean near 0 cancels)
                let tol = if dtype == ElemType::F32 { 1e-6 } else { 1e-12 };
                for (i, (&a, &b)) in got.iter().zip(&want).enumerate() {
                    let close = (a - b).abs() <= tol * (a.abs().max(b.abs()) + 1.0);
                    assert!(
                        a.to_bits() == b.to_bits() || close || (a.is_nan() && b.is_nan()),
                        "{what}: {i}: jit {a:e} vs interpreter {b:e}"
                    );
                }
                for (a, b) in got.iter().zip(&run(sched.with_wide(false))) {
                    assert_eq!(a.to_bits(), b.to_bits(), "{what}: wide {a:e} vs inline {b:e}");
                }
            }
        }
    }
    // a level the host lacks computes nothing
    for level in Level::ALL {
        let mut state = [0.0; wide::MOMENTS_STATE];
        let r = kiln_jit::apply_moments(level, &[T::from_f64(1.0), T::from_f64(3.0)], &mut state);
        assert_eq!(r.is_ok(), level.on_host(), "{level:?}");
        if level.on_host() {
            // k = the mean 2, n = 2, the offset 0, m2 = 2, the sum 4
            assert_eq!(state, [2.0, 2.0, 0.0, 2.0, 4.0]);
        }
    }
}

#[test]
fn the_moments_route_shows_in_the_code_and_agrees() {
    moments_route::<f64>(ElemType::F64);
    moments_route::<f32>(ElemType::F32);
}

/// A row's fold takes a zero extreme where the row holds zeros of one sign only (every order of
/// the inline lanes keeps that zero), and makes it a NaN, which the caller folds again inline,
/// where the row holds both.
#[test]
fn a_row_extreme_is_a_zero_of_one_sign_only() {
    let (z, nz) = (0.0f64, -0.0f64);
    assert_eq!(wide::row_extreme(z, &[1.0, z, 2.0, z]).to_bits(), z.to_bits());
    assert_eq!(wide::row_extreme(nz, &[1.0, nz, 2.0]).to_bits(), nz.to_bits());
    assert!(wide::row_extreme(z, &[1.0, z, nz]).is_nan());
    assert!(wide::row_extreme(nz, &[nz, 3.0, z]).is_nan());
    assert!(wide::row_extreme(0.0f32, &[0.0f32, -0.0]).is_nan());
    assert_eq!(wide::row_extreme(-1.5, &[z, nz, -1.5]), -1.5);
    assert_eq!(wide::row_extreme(0i64, &[0, 5]), 0);
}

/// A whole-array max or min whose plan walks its one segment row by row (outer axes 1, segment
/// axes 0) folds a zero extreme again inline: one row's lanes may hold -0.0 and another's 0.0,
/// which the fold of each row alone cannot see. Over rows that are segments (axis 1, outer
/// axes 1), the fold's zero of one sign is kept. Each route gives the same bits.
#[test]
fn a_zero_extreme_of_a_segment_of_several_rows_is_folded_again() {
    let shape = [2usize, 256];
    let layouts = [InputLayout {
        shape: shape.to_vec(),
        contiguous: true,
        strides: None,
    }];
    for dtype in [ElemType::F64, ElemType::F32] {
        for op in [ReduceOp::Max, ReduceOp::Min] {
            for (z0, z1) in [(-0.0, 0.0), (0.0, -0.0)] {
                for (c0, c1) in [(3usize, 8usize), (8, 3), (100, 101)] {
                    // every other value beyond the zeros: below them for a max, above for a min
                    let away = if op == ReduceOp::Max { -1.0 } else { 1.0 };
                    let xs: Vec<f64> = (0..512)
                        .map(|i| match (i / 256, i % 256) {
                            (0, c) if c == c0 => z0,
                            (1, c) if c == c1 => z1,
                            _ => away * (1.0 + (i % 7) as f64),
                        })
                        .collect();
                    for axes in [vec![0usize, 1], vec![1]] {
                        let mut arena = ExprArena::new();
                        let x = arena.input(0);
                        let kind = KernelKind::Reduce {
                            op,
                            axes: axes.clone(),
                        };
                        let k = kernel(dtype, &[&shape], arena, x, kind);
                        let p = BroadcastPlan::with_outer_axes(&k.shape, &layouts, 1).unwrap();
                        let sched = Schedule::for_kernel(&k);
                        let what =
                            format!("{dtype:?} {op:?} axes {axes:?} zeros {z0:?} at {c0}, {z1:?} at {c1}");
                        let bits = |s: Schedule| -> Vec<u64> {
                            let r = if dtype == ElemType::F64 {
                                jit(&k, &p, s, std::slice::from_ref(&xs)).unwrap()
                            } else {
                                let x32: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
                                jit(&k, &p, s, &[x32]).unwrap()
                            };
                            r.values.to_f64().iter().map(|v| v.to_bits()).collect()
                        };
                        assert_eq!(bits(sched), bits(sched.with_wide(false)), "{what}");
                    }
                }
            }
        }
    }
}

/// The integer types' MIN and MAX, for the tests generic over int64 and int32.
mod num_bounds {
    pub trait Bounded: Copy {
        const MIN: Self;
        const MAX: Self;
    }
    impl Bounded for i64 {
        const MIN: i64 = i64::MIN;
        const MAX: i64 = i64::MAX;
    }
    impl Bounded for i32 {
        const MIN: i32 = i32::MIN;
        const MAX: i32 = i32::MAX;
    }
}
