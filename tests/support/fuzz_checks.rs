//! The checks of the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs` call them), shared with
//! `tests/fuzz_regressions.rs`, which replays every committed seed and regression input through the
//! same check without cargo-fuzz. Each takes the fuzzer's bytes and panics on a finding.

#![allow(dead_code)]

#[path = "guarded.rs"]
pub mod guarded;
#[path = "random_kernel.rs"]
pub mod random_kernel;

use arbitrary::Unstructured;
use kiln::npy::{self, NpyArray};
use kiln::{ArrayArg, FusedRunner, Output};
use ndarray::{ArrayD, IxDyn};

/// The special bit patterns every target's seeds reach: quiet and signalling NaNs of both signs,
/// ±0, ±inf, the smallest subnormal of both signs, a large subnormal, MIN and MAX.
pub const SPECIAL_BITS: [u64; 14] = [
    0x7ff8_0000_0000_0000, // quiet NaN
    0xfff8_0000_0000_0000, // negative quiet NaN
    0x7ff0_0000_0000_0001, // signalling NaN
    0xfff0_0000_0000_0001, // negative signalling NaN
    0x0000_0000_0000_0000, // +0
    0x8000_0000_0000_0000, // -0
    0x7ff0_0000_0000_0000, // +inf
    0xfff0_0000_0000_0000, // -inf
    0x0000_0000_0000_0001, // smallest subnormal
    0x8000_0000_0000_0001, // its negative
    0x000f_ffff_ffff_ffff, // largest subnormal
    0xffef_ffff_ffff_ffff, // f64::MIN
    0x7fef_ffff_ffff_ffff, // f64::MAX
    0x3ff0_0000_0000_0000, // 1.0
];

/// The f32 special bit patterns (as [`SPECIAL_BITS`]).
pub const SPECIAL_BITS_F32: [u32; 14] = [
    0x7fc0_0000,
    0xffc0_0000,
    0x7f80_0001,
    0xff80_0001,
    0x0000_0000,
    0x8000_0000,
    0x7f80_0000,
    0xff80_0000,
    0x0000_0001,
    0x8000_0001,
    0x007f_ffff,
    0xff7f_ffff,
    0x7f7f_ffff,
    0x3f80_0000,
];

/// `exprs`: a random kernel of any element type (`random_kernel.rs`) compiled by the JIT (SIMD and
/// scalar schedules) agrees with the interpreter under the parity rule of its kernel kind.
pub fn exprs(data: &[u8]) {
    if let Ok(case) = random_kernel::Case::arbitrary(&mut Unstructured::new(data)) {
        for backend in ["jit", "jit-scalar"] {
            if let Err(e) = case.check(backend) {
                panic!("{backend} disagrees with the interpreter: {e}\n{case:?}");
            }
        }
    }
}

/// `bounds`: no read or write outside the arrays (see `guarded.rs`).
pub fn bounds(data: &[u8]) {
    guarded::check(data)
}

/// An array of `shape` whose elements cycle through the special bit patterns.
fn specials_f64(shape: &[usize]) -> ArrayD<f64> {
    let mut k = 0;
    ArrayD::from_shape_fn(IxDyn(shape), |_| {
        k += 1;
        f64::from_bits(SPECIAL_BITS[(k - 1) % SPECIAL_BITS.len()])
    })
}

fn specials_f32(shape: &[usize]) -> ArrayD<f32> {
    let mut k = 0;
    ArrayD::from_shape_fn(IxDyn(shape), |_| {
        k += 1;
        f32::from_bits(SPECIAL_BITS_F32[(k - 1) % SPECIAL_BITS_F32.len()])
    })
}

/// `text`: the bytes are an expression on the first line and, on up to four more, `NAME=SPEC`
/// shape specs of `kiln explain` (`x=f64[3,4]`). Any expression parses to `Ok` or `Err`, any spec
/// to `Ok` or `Err`, never a panic; whatever parses is run (JIT and interpreter) with each name
/// bound to an array of its spec's shape (up to 4096 elements) or of shape [3, 4], its elements
/// the special bit patterns, which must not panic either.
pub fn text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let expr = lines.next().unwrap_or("");
    let mut bound: Vec<(String, NpyArray)> = Vec::new();
    for line in lines.take(4) {
        let Some((name, spec)) = line.split_once('=') else {
            continue;
        };
        match npy::shape_spec(spec) {
            Ok(Some((dtype, shape))) => {
                let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
                assert!(n.is_some(), "shape_spec accepted {spec}, whose size overflows");
                if n.is_some_and(|n| n <= 4096) {
                    let a = match dtype {
                        kiln::kiln_ir::ElemType::F64 => NpyArray::F64(specials_f64(&shape)),
                        kiln::kiln_ir::ElemType::F32 => NpyArray::F32(specials_f32(&shape)),
                        _ => unreachable!("only float types (f32, f64) reach here"),
                    };
                    bound.push((name.to_string(), a));
                }
            }
            Ok(None) => {}
            Err(e) => assert!(!e.to_string().contains('\n'), "a multi-line error: {e}"),
        }
    }
    let Ok(runner) = FusedRunner::compile_text(expr) else {
        return;
    };
    let fallback = NpyArray::F64(specials_f64(&[3, 4]));
    let names: Vec<String> = runner.input_names().to_vec();
    let args: Vec<(&str, ArrayArg<'_>)> = names
        .iter()
        .map(|n| {
            let a = bound.iter().find(|(b, _)| b == n).map_or(&fallback, |(_, a)| a);
            (n.as_str(), a.arg())
        })
        .collect();
    let _ = runner.run(&args);
    let _ = runner.with_backend(kiln::interpreter()).run(&args);
}

/// `npy`: any bytes read as a `.npy` file give an array or a one-line error, never a panic or an
/// allocation the data cannot back; an array has as many elements as its shape says, and `x*2 - x`
/// over it gives the same bits in the JIT and the interpreter (any NaN equal to any NaN); over an
/// array of byte strings (`S<n>`: arithmetic with them is a type error, as numexpr's) `x*2 - x` is
/// that error, and `x == x` the same in both.
pub fn npy(data: &[u8]) {
    let array = match npy::read_bytes(data) {
        Ok(a) => a,
        Err(e) => {
            assert!(!e.to_string().contains('\n'), "a multi-line error: {e}");
            return;
        }
    };
    let arg = array.arg();
    let (shape, len) = (array.shape().to_vec(), array.len());
    assert_eq!(
        shape.iter().product::<usize>(),
        len,
        "shape {shape:?} vs {len} elements"
    );
    let runner = FusedRunner::compile_text("x*2 - x").expect("a valid expression");
    let args = [("x", arg)];
    if args[0].1.elem().is_bytes() {
        let e = runner.run(&args).expect_err("arithmetic with byte strings");
        assert!(
            e.to_string().contains("mul"),
            "the error names the operation: {e}"
        );
        let eq = FusedRunner::compile_text("x == x").expect("a valid expression");
        let jit = eq.run(&args).expect("byte strings compare");
        let interp = eq
            .with_backend(kiln::interpreter())
            .run(&args)
            .expect("the interpreter compares them too");
        assert_eq!(jit, interp, "x == x: the JIT and the interpreter differ");
        return;
    }
    let jit = runner
        .run(&args)
        .expect("an elementwise kernel over a read array runs");
    let interp = runner
        .with_backend(kiln::interpreter())
        .run(&args)
        .expect("the interpreter runs it too");
    let bits = |o: &Output| -> Vec<Option<u64>> {
        o.clone()
            .into_f64()
            .iter()
            .map(|v| (!v.is_nan()).then(|| v.to_bits()))
            .collect()
    };
    assert_eq!(
        bits(&jit),
        bits(&interp),
        "x*2 - x: the JIT and the interpreter differ"
    );
}
