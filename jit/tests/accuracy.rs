//! Accuracy of the vector math (`vmath`) against libm, the interpreter's reference: dense sweeps of a
//! million points per function and dtype through compiled kernels on big arrays, asserting a maximum
//! ULP distance of the function's documented bound + 1 and printing the max and mean; and the special
//! values (NaN, ±inf, ±0, subnormals, overflow, underflow, huge arguments), which must match libm
//! exactly (any NaN equals any NaN, the sign of zero counts).

mod common;

use common::Rng;
use kiln_ir::*;
use kiln_jit::{Elem, Schedule};

/// The distance in ULP between two values of one dtype (the test kit's).
fn ulp_distance<T: Elem>(a: T, b: T) -> u64 {
    common::ulp_distance(a.to_f64(), b.to_f64(), T::DTYPE == ElemType::F32)
}

/// Runs `op` over `xs` (and `ys`) in one compiled map kernel with the default schedule.
fn run<T: Elem>(body: Body, xs: &[T], ys: Option<&[T]>) -> Vec<T> {
    run_with(body, xs, ys, None)
}

/// [`run`] with the given schedule (`None`: the kernel's default).
fn run_with<T: Elem>(body: Body, xs: &[T], ys: Option<&[T]>, sched: Option<Schedule>) -> Vec<T> {
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let n = xs.len();
    let (root, shapes): (NodeId, Vec<Vec<usize>>) = match body {
        Body::Unary(op) => (arena.unary(op, x), vec![vec![n]]),
        Body::Binary(op) => {
            let y = arena.input(1);
            (arena.binary(op, x, y), vec![vec![n], vec![n]])
        }
        Body::PowLiteral(c) => {
            let e = arena.literal(c);
            (arena.binary(BinaryOp::Pow, x, e), vec![vec![n]])
        }
    };
    let sh: Vec<&[usize]> = shapes.iter().map(|s| s.as_slice()).collect();
    let k = common::kernel(T::DTYPE, &sh, arena, root, KernelKind::Map);
    let p = common::plan(&k, 64);
    let mut data = vec![xs.to_vec()];
    if let Some(ys) = ys {
        data.push(ys.to_vec());
    }
    let sched = sched.unwrap_or_else(|| Schedule::for_kernel(&k));
    let t = common::jit(&k, &p, sched, &data).unwrap();
    match (t.values, T::DTYPE) {
        (Values::F64(v), ElemType::F64) => v.iter().map(|&x| T::from_f64(x)).collect(),
        (Values::F32(v), ElemType::F32) => v.iter().map(|&x| T::from_f64(x as f64)).collect(),
        (v, _) => panic!("unexpected output {v:?}"),
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Body {
    Unary(UnaryOp),
    Binary(BinaryOp),
    /// `x ** c` by a literal exponent (`vmath::pow_const` where `c` has its own code).
    PowLiteral(f64),
}

impl Body {
    fn eval<T: Real>(self, x: T, y: T) -> T {
        match self {
            Body::Unary(op) => op.eval(x),
            Body::Binary(op) => op.eval(x, y),
            Body::PowLiteral(c) => BinaryOp::Pow.eval(x, T::from_f64(c)),
        }
    }
    fn bound(self) -> u32 {
        match self {
            Body::Unary(op) => kiln_jit::unary_ulp_bound(op),
            Body::Binary(op) => kiln_jit::binary_ulp_bound(op),
            Body::PowLiteral(_) => kiln_jit::binary_ulp_bound(BinaryOp::Pow),
        }
    }
}

/// Compares the JIT with libm on `xs` (`ys`); returns (max, mean) ULP and the worst input.
fn sweep<T: Elem>(body: Body, xs: &[T], ys: Option<&[T]>) -> (u64, f64, String) {
    let got = run(body, xs, ys);
    let mut max = 0u64;
    let mut sum = 0f64;
    let mut worst = String::new();
    for i in 0..xs.len() {
        let y = ys.map(|ys| ys[i]).unwrap_or(T::ZERO);
        let want = body.eval(xs[i], y);
        let d = ulp_distance(got[i], want);
        if d > max {
            max = d;
            worst = format!(
                "x={:e} y={:e}: jit {:e} libm {:e}",
                xs[i].to_f64(),
                y.to_f64(),
                got[i].to_f64(),
                want.to_f64()
            );
        }
        sum += d.min(1 << 20) as f64;
    }
    (max, sum / xs.len() as f64, worst)
}

const N: usize = 1 << 20;

fn uniform<T: Elem>(rng: &mut Rng, n: usize, lo: f64, hi: f64) -> Vec<T> {
    (0..n).map(|_| T::from_f64(rng.uniform(lo, hi))).collect()
}

/// Log-uniform magnitudes in [2^lo, 2^hi), random signs if `signed`.
fn log_uniform<T: Elem>(rng: &mut Rng, n: usize, lo: f64, hi: f64, signed: bool) -> Vec<T> {
    (0..n)
        .map(|_| {
            let m = rng.uniform(lo, hi).exp2();
            let s = if signed && rng.below(2) == 1 { -1.0 } else { 1.0 };
            T::from_f64(s * m)
        })
        .collect()
}

/// Points next to multiples of pi/2 (within 16 ULP of the type's nearest to `k·pi/2`, random k and
/// sign, |x| below the inline reduction's limit): tan's poles and zeros, sin's and cos's zeros,
/// where the reduced argument cancels furthest. float64's closest double below 2^20,
/// `0x1.6c6cbc45dc8dep+5` (|x - k·pi/2| = 2^-60.5), its copies times 2^j and their neighbours first.
fn next_to_half_pi<T: Elem>(rng: &mut Rng, n: usize) -> Vec<T> {
    let f32 = T::DTYPE == ElemType::F32;
    let kmax = if f32 { 41_000 } else { 667_000 };
    let hardest = f64::from_bits(0x4046_c6cb_c45d_c8de);
    let hard = (0..15).filter(|_| !f32).flat_map(|j| {
        let x = hardest * f64::from(1u32 << j);
        [
            x,
            -x,
            f64::from_bits(x.to_bits() + 1),
            f64::from_bits(x.to_bits() - 1),
        ]
        .map(T::from_f64)
    });
    hard.chain((0..n).map(|_| {
        let k = (1 + rng.below(kmax)) as f64;
        let s = if rng.below(2) == 1 { -1.0 } else { 1.0 };
        let d = rng.below(33) as i64 - 16;
        let m = s * k * std::f64::consts::FRAC_PI_2;
        let x = if f32 {
            f64::from(f32::from_bits(((m as f32).to_bits() as i64 + d) as u32))
        } else {
            f64::from_bits((m.to_bits() as i64 + d) as u64)
        };
        T::from_f64(x)
    }))
    .collect()
}

fn check_sweep<T: Elem>(name: &str, body: Body, xs: &[T], ys: Option<&[T]>) -> bool {
    check_sweep_within(name, body, xs, ys, body.bound() as u64 + 1)
}

/// [`check_sweep`] with the distance from libm allowed given: `body.bound()` where libm itself is
/// within about half an ULP of the correctly rounded value and the sweep's points are where kiln's
/// own error is largest (glibc's pow: 0.52 ULP), so that one ULP of kiln's own error more fails.
fn check_sweep_within<T: Elem>(name: &str, body: Body, xs: &[T], ys: Option<&[T]>, bound: u64) -> bool {
    let (max, mean, worst) = sweep(body, xs, ys);
    println!(
        "{name:>28} {:?}: max {max} ULP, mean {mean:.4} ULP (bound {}){}",
        T::DTYPE,
        body.bound(),
        if max > bound {
            format!("  FAIL at {worst}")
        } else {
            String::new()
        }
    );
    max <= bound
}

/// Exponents `y` for the bases `xs` with `|y·ln x|` uniform in `[lo, hi]`, either sign.
fn exponents_for<T: Elem>(rng: &mut Rng, xs: &[T], lo: f64, hi: f64) -> Vec<T> {
    xs.iter()
        .map(|&x| {
            let t = rng.uniform(lo, hi);
            let s = if rng.below(2) == 1 { -1.0 } else { 1.0 };
            T::from_f64(s * t / x.to_f64().ln())
        })
        .collect()
}

fn sweeps<T: Elem>() {
    use UnaryOp::*;
    let mut rng = Rng::new(7);
    let mut ok = true;
    let f32 = T::DTYPE == ElemType::F32;
    let (emax, emin) = if f32 { (88.7, -103.9) } else { (709.7, -745.0) };
    let mut cases: Vec<(&str, UnaryOp, Vec<T>)> = vec![
        ("exp [-10,10]", Exp, uniform(&mut rng, N, -10.0, 10.0)),
        ("exp full", Exp, uniform(&mut rng, N, emin, emax)),
        (
            "exp2 full",
            Exp2,
            uniform(
                &mut rng,
                N,
                emin * std::f64::consts::LOG2_E,
                emax * std::f64::consts::LOG2_E,
            ),
        ),
        ("expm1 [-3,3]", Expm1, uniform(&mut rng, N, -3.0, 3.0)),
        (
            "expm1 log-uniform",
            Expm1,
            log_uniform(&mut rng, N, -60.0, 9.4, true),
        ),
        ("log (0,10]", Log, uniform(&mut rng, N, 0.0, 10.0)),
        ("log full", Log, log_uniform(&mut rng, N, -1074.0, 1023.9, false)),
        (
            "log2 full",
            Log2,
            log_uniform(&mut rng, N, -1074.0, 1023.9, false),
        ),
        (
            "log10 full",
            Log10,
            log_uniform(&mut rng, N, -1074.0, 1023.9, false),
        ),
        ("log1p (-1,10]", Log1p, uniform(&mut rng, N, -1.0, 10.0)),
        (
            "log1p log-uniform",
            Log1p,
            // up to the largest doubles: 1 + x of exponent 1024 in log1p's reduction
            log_uniform(&mut rng, N, -60.0, 1023.9, false),
        ),
        ("sin [-10,10]", Sin, uniform(&mut rng, N, -10.0, 10.0)),
        ("sin [-1e4,1e4]", Sin, uniform(&mut rng, N, -1e4, 1e4)),
        (
            "sin log-uniform",
            Sin,
            log_uniform(&mut rng, N, -30.0, 40.0, true),
        ),
        ("cos [-10,10]", Cos, uniform(&mut rng, N, -10.0, 10.0)),
        ("cos [-1e4,1e4]", Cos, uniform(&mut rng, N, -1e4, 1e4)),
        ("tan [-10,10]", Tan, uniform(&mut rng, N, -10.0, 10.0)),
        ("tan [-1e4,1e4]", Tan, uniform(&mut rng, N, -1e4, 1e4)),
        ("tan next to k·pi/2", Tan, next_to_half_pi(&mut rng, N)),
        ("sin next to k·pi/2", Sin, next_to_half_pi(&mut rng, N)),
        ("cos next to k·pi/2", Cos, next_to_half_pi(&mut rng, N)),
        ("tanh [-20,20]", Tanh, uniform(&mut rng, N, -20.0, 20.0)),
        (
            "tanh log-uniform",
            Tanh,
            log_uniform(&mut rng, N, -40.0, 4.5, true),
        ),
        ("erf [-1,1]", Erf, uniform(&mut rng, N, -1.0, 1.0)),
        ("erf [-6,6]", Erf, uniform(&mut rng, N, -6.0, 6.0)),
        (
            "erf log-uniform",
            Erf,
            log_uniform(&mut rng, N, -1074.0, 5.0, true),
        ),
        ("erfc [-1,1]", Erfc, uniform(&mut rng, N, -1.0, 1.0)),
        ("erfc [-6,6]", Erfc, uniform(&mut rng, N, -6.0, 6.0)),
        ("erfc [-28,28]", Erfc, uniform(&mut rng, N, -28.0, 28.0)),
        (
            "erfc log-uniform",
            Erfc,
            log_uniform(&mut rng, N, -60.0, 5.0, true),
        ),
        ("sinh [-3,3]", Sinh, uniform(&mut rng, N, -3.0, 3.0)),
        ("sinh full", Sinh, uniform(&mut rng, N, -emax - 0.69, emax + 0.69)),
        (
            "sinh log-uniform",
            Sinh,
            log_uniform(&mut rng, N, -60.0, 9.5, true),
        ),
        ("cosh [-3,3]", Cosh, uniform(&mut rng, N, -3.0, 3.0)),
        ("cosh full", Cosh, uniform(&mut rng, N, -emax - 0.69, emax + 0.69)),
        (
            "cosh log-uniform",
            Cosh,
            log_uniform(&mut rng, N, -60.0, 9.5, true),
        ),
        ("expm1 [-1,1]", Expm1, uniform(&mut rng, N, -1.0, 1.0)),
        ("expm1 full", Expm1, uniform(&mut rng, N, -50.0, emax)),
        ("tanh [-1,1]", Tanh, uniform(&mut rng, N, -1.0, 1.0)),
        ("log2 (0,10]", Log2, uniform(&mut rng, N, 0.0, 10.0)),
        ("log10 (0,10]", Log10, uniform(&mut rng, N, 0.0, 10.0)),
        ("log1p (-1,1]", Log1p, uniform(&mut rng, N, -1.0, 1.0)),
        ("arcsinh [-4,4]", Arcsinh, uniform(&mut rng, N, -4.0, 4.0)),
        (
            "arcsinh log-uniform",
            Arcsinh,
            log_uniform(&mut rng, N, -1074.0, 1023.9, true),
        ),
        ("arccosh [1,3]", Arccosh, uniform(&mut rng, N, 1.0, 3.0)),
        ("arccosh [1,1.01]", Arccosh, uniform(&mut rng, N, 1.0, 1.01)),
        (
            "arccosh log-uniform",
            Arccosh,
            log_uniform(&mut rng, N, 0.0, 1023.9, false),
        ),
        ("arctanh (-1,1)", Arctanh, uniform(&mut rng, N, -1.0, 1.0)),
        ("arctanh [0.99,1)", Arctanh, uniform(&mut rng, N, 0.99, 1.0)),
        (
            "arctanh log-uniform",
            Arctanh,
            log_uniform(&mut rng, N, -1074.0, 0.0, true),
        ),
        ("arcsin [-1,1]", Arcsin, uniform(&mut rng, N, -1.0, 1.0)),
        (
            "arcsin log-uniform",
            Arcsin,
            log_uniform(&mut rng, N, -1074.0, 0.0, true),
        ),
        ("arccos [-1,1]", Arccos, uniform(&mut rng, N, -1.0, 1.0)),
        (
            "arccos log-uniform",
            Arccos,
            log_uniform(&mut rng, N, -1074.0, 0.0, true),
        ),
        ("arctan [-4,4]", Arctan, uniform(&mut rng, N, -4.0, 4.0)),
        (
            "arctan log-uniform",
            Arctan,
            log_uniform(&mut rng, N, -1074.0, 1023.9, true),
        ),
    ];
    cases.extend([
        ("cbrt [-10,10]", Cbrt, uniform(&mut rng, N, -10.0, 10.0)),
        (
            "cbrt log-uniform",
            Cbrt,
            log_uniform(&mut rng, N, -1074.0, 1023.9, true),
        ),
    ]);
    for (name, op, xs) in &cases {
        ok &= check_sweep(name, Body::Unary(*op), xs, None);
    }
    let xs: Vec<T> = uniform(&mut rng, N, 0.0, 100.0);
    let ys: Vec<T> = uniform(&mut rng, N, -30.0, 30.0);
    ok &= check_sweep("pow x in [0,100]", Body::Binary(BinaryOp::Pow), &xs, Some(&ys));
    let xs: Vec<T> = uniform(&mut rng, N, -10.0, 10.0);
    let ys: Vec<T> = (0..N).map(|_| T::from_f64(rng.below(41) as f64 - 20.0)).collect();
    ok &= check_sweep(
        "pow integer exponents",
        Body::Binary(BinaryOp::Pow),
        &xs,
        Some(&ys),
    );
    let xs: Vec<T> = log_uniform(&mut rng, N, -20.0, 20.0, false);
    let ys: Vec<T> = uniform(&mut rng, N, -50.0, 50.0);
    ok &= check_sweep("pow log-uniform x", Body::Binary(BinaryOp::Pow), &xs, Some(&ys));
    // |y·ln x| near the ends of the range, overflow and the subnormals (its own generator, so
    // that the other sweeps keep their points)
    let mut edge = Rng::new(22);
    let (lo, hi) = if f32 { (80.0, 104.0) } else { (700.0, 746.0) };
    let xs: Vec<T> = uniform(&mut edge, N, 1.5, 50.0);
    let ys = exponents_for(&mut edge, &xs, lo, hi);
    ok &= check_sweep(
        "pow near over/underflow",
        Body::Binary(BinaryOp::Pow),
        &xs,
        Some(&ys),
    );
    // bases near 1 (the table row that holds 1, where |r| reaches 0.0384 and the log's rounding
    // counts most against it) with |y·ln x| large: the log's relative error multiplied by |y·ln x|
    let mut near = Rng::new(23);
    let (lo, hi) = if f32 { (60.0, 88.0) } else { (600.0, 708.0) };
    let xs: Vec<T> = (0..N)
        .map(|_| {
            let d = near.uniform(1e-4, 0.04);
            T::from_f64(if near.below(2) == 1 { 1.0 - d } else { 1.0 + d })
        })
        .collect();
    let ys = exponents_for(&mut near, &xs, lo, hi);
    ok &= check_sweep_within(
        "pow near 1, |y·ln x| large",
        Body::Binary(BinaryOp::Pow),
        &xs,
        Some(&ys),
        1,
    );
    // the same bases above 1 with results just below a power of two, where an ULP is relative
    // to the smaller power: `y·ln x = (e + log2 m)·ln 2` with `m` in [1.9, 2) (a search of such
    // points found 2 ULP where the log's `r³/3` was rounded as a single double)
    let xs: Vec<T> = (0..N)
        .map(|_| T::from_f64(1.0 + near.uniform(0.02, 0.0384)))
        .collect();
    let ys: Vec<T> = xs
        .iter()
        .map(|&x| {
            let e = near.below(if f32 { 27 } else { 120 }) as f64 + if f32 { 100.0 } else { 900.0 };
            let m = near.uniform(1.9, 2.0);
            T::from_f64((e + m.log2()) * std::f64::consts::LN_2 / x.to_f64().ln())
        })
        .collect();
    ok &= check_sweep_within(
        "pow near 1, results below 2^k",
        Body::Binary(BinaryOp::Pow),
        &xs,
        Some(&ys),
        1,
    );
    let xs: Vec<T> = uniform(&mut rng, N, -10.0, 10.0);
    let ys: Vec<T> = uniform(&mut rng, N, -10.0, 10.0);
    ok &= check_sweep("hypot [-10,10]²", Body::Binary(BinaryOp::Hypot), &xs, Some(&ys));
    let xs: Vec<T> = log_uniform(&mut rng, N, -1074.0, 1023.9, true);
    let ys: Vec<T> = log_uniform(&mut rng, N, -1074.0, 1023.9, true);
    ok &= check_sweep("hypot log-uniform", Body::Binary(BinaryOp::Hypot), &xs, Some(&ys));
    let ys: Vec<T> = xs
        .iter()
        .map(|&x| T::from_f64(x.to_f64() * rng.uniform(0.5, 2.0)))
        .collect();
    ok &= check_sweep(
        "hypot near |x| = |y|",
        Body::Binary(BinaryOp::Hypot),
        &xs,
        Some(&ys),
    );
    let atan2 = Body::Binary(BinaryOp::Arctan2);
    let xs: Vec<T> = uniform(&mut rng, N, -10.0, 10.0);
    let ys: Vec<T> = uniform(&mut rng, N, -10.0, 10.0);
    ok &= check_sweep("arctan2 [-10,10]^2", atan2, &xs, Some(&ys));
    let (e0, e1) = if f32 { (-149.0, 127.9) } else { (-1074.0, 1023.9) };
    let xs: Vec<T> = log_uniform(&mut rng, N, e0, e1, true);
    let ys: Vec<T> = log_uniform(&mut rng, N, e0, e1, true);
    ok &= check_sweep("arctan2 log-uniform", atan2, &xs, Some(&ys));
    assert!(ok, "a sweep exceeded its bound + 1");
}

#[test]
fn sweeps_f64() {
    sweeps::<f64>();
}

#[test]
fn sweeps_f32() {
    sweeps::<f32>();
}

/// f32 pow (`vmath::pow::pow_f32`, in f64 by two 16-row tables) against the correctly rounded value: f64
/// `pow` of the same operands rounded to f32 (glibc's pow is within an f64 ULP, so this is the
/// correctly rounded f32 but for rare double roundings). Every f32 `x` in [1/2, 2) by steps of 7
/// bit patterns (about 1.2 million) with exponents from a fixed set; `x` log-uniform over all of
/// f32 with `y` such that `y·log2 x` spans [-152, 130] (overflow, the subnormals, underflow); and
/// negative `x` with integer `y`. Within 1 ULP everywhere, and almost always 0.
#[test]
fn pow_f32_correctly_rounded() {
    let mut rng = Rng::new(2222);
    let mut xs: Vec<f32> = Vec::new();
    let mut ys: Vec<f32> = Vec::new();
    let exps = [0.5f32, 1.5, -2.5, 3.0, 7.25, -13.0, 31.7, 100.3, -127.9];
    for (i, b) in (0x3f00_0000u32..0x4000_0000).step_by(7).enumerate() {
        xs.push(f32::from_bits(b));
        ys.push(exps[i % exps.len()]);
    }
    for _ in 0..1 << 20 {
        let e = rng.uniform(-149.0, 127.99);
        let x = e.exp2() as f32;
        let l2 = (x as f64).log2();
        if x == 0.0 || l2 == 0.0 {
            continue;
        }
        xs.push(x);
        ys.push((rng.uniform(-152.0, 130.0) / l2) as f32);
    }
    for _ in 0..1 << 18 {
        xs.push(-(rng.uniform(0.0, 20.0) as f32));
        ys.push(rng.below(41) as f32 - 20.0);
    }
    let got = run::<f32>(Body::Binary(BinaryOp::Pow), &xs, Some(&ys));
    let (mut max, mut off, mut worst) = (0u64, 0usize, String::new());
    for i in 0..xs.len() {
        let want = (xs[i] as f64).powf(ys[i] as f64) as f32;
        let d = ulp_distance(got[i], want);
        off += (d > 0) as usize;
        if d > max {
            max = d;
            worst = format!("x={:e} y={:e}: jit {:e} want {:e}", xs[i], ys[i], got[i], want);
        }
    }
    println!(
        "pow f32 against the correctly rounded value: max {max} ULP, {off} of {} off ({worst})",
        xs.len()
    );
    assert!(max <= 1, "pow f32: {max} ULP at {worst}");
}

/// pow by a literal exponent with its own code (`vmath::pow_const`: `x**1.5`, `x**3`, `x**4`,
/// `x**-0.5`, `x**-2`), both types:
/// within 1 ULP of libm (pow's bound) over a million points of the working range and of the whole
/// range (overflow, underflow, the subnormals); NumPy's special values exactly as libm gives them
/// (any NaN equal to any NaN, the sign of a zero counted); f32 against the correctly rounded value
/// (f64 pow rounded to f32) within 1 ULP and almost always 0; and the same bits with the wide
/// routines on and off and from the scalar loop (the literal's code is inline on every route).
#[test]
fn pow_literal_exponents() {
    literal_powers::<f64>();
    literal_powers::<f32>();
}

fn literal_powers<T: Elem>() {
    let mut rng = Rng::new(1515);
    let f32 = T::DTYPE == ElemType::F32;
    let (e0, e1) = if f32 { (-149.0, 127.99) } else { (-1074.0, 1023.99) };
    for c in [1.5, 3.0, 4.0, -0.5, -2.0] {
        let body = Body::PowLiteral(c);
        let signed = c == 3.0 || c == 4.0 || c == -2.0;
        let lo = if signed { -100.0 } else { 0.0 };
        let cases: Vec<(&str, Vec<T>)> = vec![
            ("working range", uniform(&mut rng, N, lo, 100.0)),
            ("log-uniform", log_uniform(&mut rng, N, e0, e1, signed)),
        ];
        for (name, xs) in &cases {
            let (max, mean, worst) = sweep(body, xs, None);
            println!("x**{c} {name} {:?}: max {max} ULP, mean {mean:.4} ULP", T::DTYPE);
            assert!(max <= 1, "x**{c} {name}: {max} ULP at {worst}");
            let got = run(body, xs, None);
            for sched in [
                Schedule::simd(T::DTYPE, 4, 1).with_wide(false),
                Schedule::scalar(),
            ] {
                let other = run_with(body, xs, None, Some(sched));
                for i in 0..xs.len() {
                    assert!(
                        got[i].to_f64().to_bits() == other[i].to_f64().to_bits()
                            || (got[i].to_f64().is_nan() && other[i].to_f64().is_nan()),
                        "x**{c} of {:e}: {:e} by default, {:e} under {sched:?}",
                        xs[i].to_f64(),
                        got[i].to_f64(),
                        other[i].to_f64()
                    );
                }
            }
            if f32 {
                let (mut max, mut off, mut off_normal) = (0, 0usize, 0usize);
                for (x, g) in xs.iter().zip(&got) {
                    let want = T::from_f64(x.to_f64().powf(c));
                    let d = ulp_distance(*g, want);
                    max = max.max(d);
                    off += (d > 0) as usize;
                    off_normal += (d > 0 && want.to_f64().abs() >= f32::MIN_POSITIVE as f64) as usize;
                }
                println!(
                    "  against the correctly rounded value: max {max} ULP, {off} off, {off_normal} of them normal"
                );
                // f32's code is within about 2^-22 ULP of the true value before its last rounding
                // (`vmath::pow_const`): a point that near a midpoint may round the other way (1 of
                // these 10 million does), at most 1 ULP off and a few per million
                assert!(
                    max <= 1 && off * 250_000 <= xs.len(),
                    "x**{c} {name}: {max} ULP from the correctly rounded value, {off} points off"
                );
            }
        }
        let (tiny, max, min_normal) = if f32 {
            (
                f32::from_bits(1) as f64,
                f32::MAX as f64,
                f32::MIN_POSITIVE as f64,
            )
        } else {
            (f64::from_bits(1), f64::MAX, f64::MIN_POSITIVE)
        };
        let mut specials = vec![
            0.0,
            1.0,
            2.0,
            0.5,
            f64::INFINITY,
            f64::NAN,
            tiny,
            min_normal,
            max,
            // where the result overflows and underflows
            if f32 { 2f64.powf(85.33) } else { 2f64.powf(682.67) },
            if f32 { 2f64.powf(42.67) } else { 2f64.powf(341.34) },
            if f32 { 2f64.powf(-99.3) } else { 2f64.powf(-716.0) },
            if f32 { 2f64.powf(-49.7) } else { 2f64.powf(-358.0) },
            // x**-0.5's and x**-2's scalings and edges (f64)
            2f64.powi(-1000),
            2f64.powf(-1000.5),
            2f64.powi(-500),
            2f64.powf(-500.5),
            2f64.powi(-512),
            2f64.powf(-511.9),
            2f64.powf(-512.1),
            2f64.powi(500),
            2f64.powf(500.5),
            2f64.powi(538),
            2f64.powf(537.9),
            2f64.powf(538.1),
            2f64.powf(575.9),
            2f64.powi(1000),
            // a square (f32) and a product (f64) that round up past the largest float where the
            // power is below the midpoint to infinity: f32::MAX and f64::MAX, not inf
            f64::from(f32::from_bits(0x54cb_2ff5)),
            f64::from_bits(0x6a99_65fe_a53d_6e3c),
        ];
        specials.extend(specials.clone().into_iter().map(|x| -x));
        let xs: Vec<T> = specials.iter().map(|&x| T::from_f64(x)).collect();
        let got = run(body, &xs, None);
        for (x, g) in xs.iter().zip(&got) {
            let want = BinaryOp::Pow.eval(*x, T::from_f64(c));
            let d = ulp_distance(*g, want);
            let (g, w) = (g.to_f64(), want.to_f64());
            // NaN, zeros and infinities exactly (the sign of a zero counts; a negative finite
            // base's NaN is the invalid one, sign set, as libm's), other values within pow's bound
            // and finite
            let xf = x.to_f64();
            let ok = if w.is_nan() && xf < 0.0 && xf.is_finite() {
                g.is_nan() && g.is_sign_negative() == w.is_sign_negative()
            } else if w.is_nan() || w == 0.0 || w.is_infinite() {
                (g.is_nan() && w.is_nan()) || (g == w && g.is_sign_negative() == w.is_sign_negative())
            } else {
                d <= 1 && g.is_finite()
            };
            assert!(
                ok,
                "x**{c} of {:e} ({:?}): jit {g:e}, libm {w:e}",
                x.to_f64(),
                T::DTYPE
            );
        }
    }
}
