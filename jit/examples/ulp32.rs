//! Every f32 bit pattern through a wide f32 routine, against std's f64 function of the same
//! argument rounded to f32 (correctly rounded but for rare double roundings): the largest error
//! in ULP, where it is, and how many results are more than 1 ULP off. Exhaustive where the
//! accuracy tests sample, to fit and check an f32 kernel (`ULP32_MAX=m`: only where `|x| <= m`):
//! `cargo run --release -p kiln-jit --example ulp32 [routine names]` (AVX-512 where the host has
//! it, else AVX2; the routines give the inline route's bits, `tests/wide.rs`).
use kiln_jit::apply_wide;
use kiln_jit::wide::{Level, Routine};

/// std's f64 function for `r`, where it has one.
fn reference(r: Routine) -> Option<fn(f64) -> f64> {
    use Routine::*;
    Some(match r {
        Exp => f64::exp,
        Log => f64::ln,
        Log2 => f64::log2,
        Log10 => f64::log10,
        Log1p => f64::ln_1p,
        Exp2 => f64::exp2,
        Expm1 => f64::exp_m1,
        Sin => f64::sin,
        Cos => f64::cos,
        Tan => f64::tan,
        Tanh => f64::tanh,
        Sinh => f64::sinh,
        Cosh => f64::cosh,
        Arcsin => f64::asin,
        Arccos => f64::acos,
        Arctan => f64::atan,
        Arcsinh => f64::asinh,
        Arccosh => f64::acosh,
        Arctanh => f64::atanh,
        Cbrt => f64::cbrt,
        _ => return None,
    })
}

/// The distance in ULP between two f32 values (0 for two NaNs, `u32::MAX` for a NaN and a number).
fn ulps(a: f32, b: f32) -> u32 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() { 0 } else { u32::MAX };
    }
    let key = |v: f32| {
        let i = v.to_bits() as i32;
        if i < 0 { i32::MIN.wrapping_sub(i) } else { i }
    };
    key(a).abs_diff(key(b))
}

fn main() {
    let level = if Level::Avx512.on_host() {
        Level::Avx512
    } else {
        Level::Avx2
    };
    let filter: Vec<String> = std::env::args().skip(1).collect();
    let block = 1usize << 20;
    // `ULP32_MAX`: only the arguments of at most this magnitude (and NaN)
    let max: f32 =
        std::env::var("ULP32_MAX").map_or(f32::INFINITY, |m| m.parse().expect("ULP32_MAX a number"));
    for r in Routine::ALL {
        let name = format!("{r:?}");
        if !filter.is_empty() && !filter.iter().any(|f| f.eq_ignore_ascii_case(&name)) {
            continue;
        }
        let Some(f) = reference(r) else { continue };
        let (mut worst, mut at, mut over) = (0u32, 0f32, 0u64);
        let mut xs = vec![0f32; block];
        for start in (0..1u64 << 32).step_by(block) {
            for (j, x) in xs.iter_mut().enumerate() {
                *x = f32::from_bits((start as usize + j) as u32);
            }
            let mut ys = xs.clone();
            apply_wide(r, level, &mut ys).expect("the host has the level");
            for (&x, &y) in xs.iter().zip(&ys) {
                if x.abs() > max {
                    continue;
                }
                let e = ulps(y, f(x as f64) as f32);
                if e > 1 {
                    over += 1;
                }
                if e > worst {
                    (worst, at) = (e, x);
                }
            }
        }
        println!("{name:8} {level:?}: max {worst} ULP at {at:e}, {over} results over 1 ULP");
    }
}
