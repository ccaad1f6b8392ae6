//! The random-kernel generator: one generator over every element type (bool, int32, int64, float32,
//! float64), shared by the bounded fuzzer of the test suite (`tests/fuzz_parity.rs`, fed by a seeded
//! byte stream) and the cargo-fuzz targets in `fuzz/` (fed by libFuzzer, through
//! `tests/support/fuzz_checks.rs`, which include this file by path).
//!
//! A case has a home type (its first input's). A float home draws, two times in three, an all-float
//! kernel (float32 and float64 inputs, trees of the float operators); every other case is mixed:
//! inputs of any type beside the home type's, casts, weak int and float literals, the integer
//! opcodes (`& | ^ ~ << >> // %`, `**` of integers). Inputs have shapes that broadcast, strided,
//! transposed and reversed views, and values from raw bits, small whole numbers and each type's edge
//! values (the special float bit patterns every fuzz target's seeds reach; integer extremes, shift
//! counts around the width, 2**53 + 1). At the root: a map, a reduction of any op over all axes,
//! one or two of them (keepdims now and then), a mean, a scan (any op and axis, exclusive, reverse,
//! initial), or a function the JIT computes within a ULP bound (over an exact subtree). About half
//! the cases have one or two more results (maps, whole-array reductions), run with the first as one
//! runner of several results.
//!
//! [`Case::check`] runs a case on a compiled backend and on the interpreter, with the tolerance of
//! its kernel kind ([`Rule`]): bit-exact for elementwise algebra (any NaN equal to any NaN, the sign
//! of zero counts) and for every bool and integer result; the documented ULP bound plus one for the
//! approximated functions; a bound relative to the sum of the magnitudes for float sums and means;
//! relative for float products; a per-output bound for reassociated float scans; bit-exact but for
//! the sign of equal zeros for float min/max. Then the same through the prepared handle, in-place
//! updates and the runner of several results.
//!
//! Everything the generator knows of an element type is in the first section (`Data`, `each_data!`,
//! `with_elem!`, `TYPES`, `Class`, the `Elem` trait and its impls, [`same`]), and each class's rules
//! in the tree generator. A complex home (complex64, complex128) draws complex trees: its inputs
//! beside real ones, the operators complex values have (an operand of another is cast to its real
//! part first), `complex()` of two real subtrees; its sums, means and products are compared by
//! their distance in the plane.

#![allow(dead_code, unused_macros, unused_imports)] // each includer uses a different part

// the workspace's test kit (this file is also compiled into the cargo-fuzz targets)
#[path = "kit.rs"]
mod kit;

use arbitrary::{Result, Unstructured};
use kiln::kiln_ir::num_complex::{Complex32, Complex64};
use kiln::kiln_ir::{BinaryOp, ElemType, ReduceOp, ScanOp, UnaryOp};
use kiln::{ArrayArg, Axes, Element, Expr, ExprNode, FusedRunner, Output, ScanOptions};
use ndarray::{ArrayD, ArrayViewD, IxDyn, ShapeBuilder};
use std::fmt::Debug;

// ----------------------------------------------------------------------------------------------
// Element types: everything the generator and the checks know of each type.

/// One input array of any element type, possibly the buffer of a non-contiguous view.
#[derive(Debug, Clone)]
pub enum Data {
    Bool(ArrayD<bool>),
    I32(ArrayD<i32>),
    I64(ArrayD<i64>),
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
    C64(ArrayD<Complex32>),
    C128(ArrayD<Complex64>),
}

/// `$body` with `$a` bound to the array of `$data`, whatever its element type (`$a: &ArrayD<T>`
/// for the variant's `T: Elem`).
macro_rules! each_data {
    ($data:expr, $a:ident => $body:expr) => {
        match $data {
            Data::Bool($a) => $body,
            Data::I32($a) => $body,
            Data::I64($a) => $body,
            Data::F32($a) => $body,
            Data::F64($a) => $body,
            Data::C64($a) => $body,
            Data::C128($a) => $body,
        }
    };
}
pub(crate) use each_data;

/// `$body` with the type `$t` the Rust element type of `$elem` (an `ElemType`).
macro_rules! with_elem {
    ($elem:expr, $t:ident => $body:expr) => {
        match $elem {
            ElemType::Bool => {
                type $t = bool;
                $body
            }
            ElemType::I32 => {
                type $t = i32;
                $body
            }
            ElemType::I64 => {
                type $t = i64;
                $body
            }
            ElemType::F32 => {
                type $t = f32;
                $body
            }
            ElemType::F64 => {
                type $t = f64;
                $body
            }
            ElemType::C64 => {
                type $t = kiln::kiln_ir::num_complex::Complex32;
                $body
            }
            ElemType::C128 => {
                type $t = kiln::kiln_ir::num_complex::Complex64;
                $body
            }
            // byte strings are tests/bytes.rs's
            ElemType::Bytes(_) => {
                unreachable!("the generator draws no string type (TYPES)")
            }
        }
    };
}
pub(crate) use with_elem;

/// Every element type, the home types of the parity suite.
pub const TYPES: [ElemType; 7] = ElemType::ALL;

/// The real types, which every case draws its other inputs and casts from (a complex home's
/// first input is complex), and [`Case::arbitrary`] its home from.
pub const REAL_TYPES: [ElemType; 5] = [
    ElemType::Bool,
    ElemType::I32,
    ElemType::I64,
    ElemType::F32,
    ElemType::F64,
];

/// What the generator knows of a subtree's type: enough to cast a float operand of an integer
/// opcode to an integer first (so that most trees type), and which rule compares a result.
/// Ordered by NumPy's promotion of kinds (the join of two is the larger).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Bool,
    Int,
    Float,
    Complex,
}

impl Class {
    pub fn of(t: ElemType) -> Class {
        match t {
            ElemType::Bool => Class::Bool,
            ElemType::I32 | ElemType::I64 => Class::Int,
            ElemType::F32 | ElemType::F64 => Class::Float,
            ElemType::C64 | ElemType::C128 => Class::Complex,
            ElemType::Bytes(_) => unreachable!("the generator draws no string type (TYPES)"),
        }
    }
}

/// An element type as the generator and the checks use it.
pub trait Elem: Element + Debug + PartialEq {
    /// A random value: raw bits, small whole numbers, or one of [`Elem::edges`].
    fn draw(u: &mut Unstructured<'_>) -> Result<Self>;
    /// The type's edge values, which the parity suite pairs each with each.
    fn edges() -> Vec<Self>;
    /// Equal bit for bit (floats: any NaN equals any NaN; the sign of zero counts).
    fn same(a: &Self, b: &Self) -> bool {
        a == b
    }
    /// An array of this type as an input.
    fn data(a: ArrayD<Self>) -> Data;
}

impl Elem for bool {
    fn draw(u: &mut Unstructured<'_>) -> Result<bool> {
        u.arbitrary()
    }
    fn edges() -> Vec<bool> {
        vec![false, true]
    }
    fn data(a: ArrayD<bool>) -> Data {
        Data::Bool(a)
    }
}

impl Elem for i32 {
    fn draw(u: &mut Unstructured<'_>) -> Result<i32> {
        Ok(match u.int_in_range(0..=3u8)? {
            0 => u.arbitrary()?,
            1 => i32::from(u.int_in_range(-9..=9i8)?),
            _ => *u.choose(&EDGE_I32)?,
        })
    }
    fn edges() -> Vec<i32> {
        EDGE_I32.to_vec()
    }
    fn data(a: ArrayD<i32>) -> Data {
        Data::I32(a)
    }
}

impl Elem for i64 {
    fn draw(u: &mut Unstructured<'_>) -> Result<i64> {
        Ok(match u.int_in_range(0..=3u8)? {
            0 => u.arbitrary()?,
            1 => i64::from(u.int_in_range(-9..=9i8)?),
            _ => *u.choose(&EDGE_I64)?,
        })
    }
    fn edges() -> Vec<i64> {
        EDGE_I64.to_vec()
    }
    fn data(a: ArrayD<i64>) -> Data {
        Data::I64(a)
    }
}

impl Elem for f32 {
    fn draw(u: &mut Unstructured<'_>) -> Result<f32> {
        Ok(float(u)? as f32)
    }
    fn edges() -> Vec<f32> {
        EDGE_F64
            .iter()
            .map(|&v| v as f32)
            .chain(SPECIAL_F32.map(f32::from_bits))
            .collect()
    }
    fn same(a: &f32, b: &f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }
    fn data(a: ArrayD<f32>) -> Data {
        Data::F32(a)
    }
}

impl Elem for f64 {
    fn draw(u: &mut Unstructured<'_>) -> Result<f64> {
        float(u)
    }
    fn edges() -> Vec<f64> {
        EDGE_F64.to_vec()
    }
    fn same(a: &f64, b: &f64) -> bool {
        kit::same_bits(*a, *b)
    }
    fn data(a: ArrayD<f64>) -> Data {
        Data::F64(a)
    }
}

/// The parts of the complex edge values, paired each with each: zeros of both signs, ±1, a half,
/// NaNs of both signs, ±inf, the extremes, a subnormal (a small set: the parity suite pairs each
/// complex edge value with each).
const EDGE_PARTS: [f64; 11] = [
    0.0,
    -0.0,
    1.0,
    -1.5,
    0.5,
    f64::NAN,
    -f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    -5e-324,
];

impl Elem for Complex32 {
    fn draw(u: &mut Unstructured<'_>) -> Result<Complex32> {
        Ok(Complex32::new(float(u)? as f32, float(u)? as f32))
    }
    fn edges() -> Vec<Complex32> {
        Complex64::edges()
            .into_iter()
            .map(|z| Complex32::new(z.re as f32, z.im as f32))
            .collect()
    }
    fn same(a: &Complex32, b: &Complex32) -> bool {
        f32::same(&a.re, &b.re) && f32::same(&a.im, &b.im)
    }
    fn data(a: ArrayD<Complex32>) -> Data {
        Data::C64(a)
    }
}

impl Elem for Complex64 {
    fn draw(u: &mut Unstructured<'_>) -> Result<Complex64> {
        Ok(Complex64::new(float(u)?, float(u)?))
    }
    fn edges() -> Vec<Complex64> {
        EDGE_PARTS
            .iter()
            .flat_map(|&re| EDGE_PARTS.iter().map(move |&im| Complex64::new(re, im)))
            .collect()
    }
    fn same(a: &Complex64, b: &Complex64) -> bool {
        kit::same_bits(a.re, b.re) && kit::same_bits(a.im, b.im)
    }
    fn data(a: ArrayD<Complex64>) -> Data {
        Data::C128(a)
    }
}

/// The same dtype, shape and elements, bit for bit (any NaN equal to any NaN, the sign of zero
/// counts); `Err` names the first difference.
pub fn same(want: &Output, got: &Output) -> std::result::Result<(), String> {
    same_type(want, got)?;
    match (want, got) {
        (Output::Bool(a), Output::Bool(b)) => same_arrays(a, b),
        (Output::I32(a), Output::I32(b)) => same_arrays(a, b),
        (Output::I64(a), Output::I64(b)) => same_arrays(a, b),
        (Output::F32(a), Output::F32(b)) => same_arrays(a, b),
        (Output::F64(a), Output::F64(b)) => same_arrays(a, b),
        (Output::C64(a), Output::C64(b)) => same_arrays(a, b),
        (Output::C128(a), Output::C128(b)) => same_arrays(a, b),
        _ => unreachable!("the dtypes are equal (checked above)"),
    }
}

/// Whether a result is of the float class (compared by the float rules).
fn is_float(o: &Output) -> bool {
    matches!(o, Output::F32(_) | Output::F64(_))
}

/// Whether a result is complex (compared by the float rules, as a distance in the plane).
fn is_complex(o: &Output) -> bool {
    matches!(o, Output::C64(_) | Output::C128(_))
}

/// A complex result's values as complex128 (a complex64's widened exactly).
fn complex_values(o: &Output) -> Vec<Complex64> {
    match o {
        Output::C64(a) => a
            .iter()
            .map(|z| Complex64::new(z.re.into(), z.im.into()))
            .collect(),
        Output::C128(a) => a.iter().copied().collect(),
        _ => unreachable!("a complex result"),
    }
}

// ----------------------------------------------------------------------------------------------
// Values.

/// int32 values the generator picks often: the extremes and their neighbours, ±1, 0, shift counts
/// around the width, the square root of the overflow.
const EDGE_I32: [i32; 18] = [
    0,
    -1,
    1,
    i32::MIN,
    i32::MAX,
    i32::MIN + 1,
    i32::MAX - 1,
    2,
    -2,
    3,
    7,
    31,
    32,
    33,
    64,
    -32,
    1 << 30,
    46_341,
];

/// int64 values the generator picks often: as [`EDGE_I32`], and 2**53 + 1 (the first integer an f64
/// rounds), values whose float32 rounding differs from a rounding through float64, 2**24 + 1, the
/// int32 extremes and their neighbours outside.
const EDGE_I64: [i64; 26] = [
    0,
    -1,
    1,
    i64::MIN,
    i64::MAX,
    i64::MIN + 1,
    i64::MAX - 1,
    (1 << 53) + 1,
    -(1 << 53) - 1,
    1 << 53,
    (1 << 62) + (1 << 38) + 1, // rounds up to float32, but to even through float64
    -(1 << 62) - (1 << 38) - 1,
    (1 << 24) + 1,
    i32::MIN as i64,
    i32::MAX as i64,
    i32::MIN as i64 - 1,
    i32::MAX as i64 + 1,
    2,
    -3,
    7,
    63,
    64,
    65,
    -64,
    -7,
    3_037_000_500,
];

/// Floats the generator picks often: the special bit patterns every fuzz target's seeds reach
/// (`fuzz/seeds/`: quiet and signalling NaNs of both signs, ±0, ±inf, subnormals, the extremes of
/// both float types), and the values an integer cast meets (halves, the ends of int32 and int64 and
/// just beyond, 2**53 + 1 rounded).
const EDGE_F64: [f64; 44] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    2.0,
    2.5,
    -2.5,
    -3.0,
    3.0,
    f64::NAN,
    f64::from_bits(0xfff8_0000_0000_0000), // negative quiet NaN
    f64::from_bits(0x7ff0_0000_0000_0001), // signalling NaN
    f64::from_bits(0xfff0_0000_0000_0001), // negative signalling NaN
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MIN,
    f64::MAX,
    f64::MIN_POSITIVE,
    f64::from_bits(0x000f_ffff_ffff_ffff), // the largest subnormal
    5e-324,
    -5e-324,
    -2.2e-308,
    1e300,
    -1e-300,
    f32::MIN as f64,
    f32::MAX as f64,
    f32::MIN_POSITIVE as f64,
    3.4e38,
    1.5e-45,
    2_147_483_647.0,
    2_147_483_647.5,
    2_147_483_648.0,
    -2_147_483_648.0,
    -2_147_483_649.0,
    16_777_217.0,
    9_007_199_254_740_993.0,   // 2**53 + 1, rounded to 2**53
    9.223_372_036_854_775e18,  // just below 2**63
    -9.223_372_036_854_776e18, // -2**63
    9.3e18,
    -9.3e18,
    1e19,
];

/// The float32 special bit patterns (NaNs of both signs, quiet and signalling, the subnormals, the
/// extremes), beside [`EDGE_F64`] rounded.
const SPECIAL_F32: [u32; 6] = [
    0xffc0_0000,
    0x7f80_0001,
    0xff80_0001,
    0x0000_0001,
    0x8000_0001,
    0x007f_ffff,
];

/// Python int literals: mostly small (a literal that does not fit the array's integer type is an
/// error, as NumPy 2's), now and then one at the edges.
const LITERALS: [i64; 16] = [
    0,
    1,
    -1,
    2,
    3,
    -5,
    7,
    31,
    32,
    33,
    63,
    64,
    (1 << 53) + 1,
    i64::MAX,
    i64::MIN,
    i32::MIN as i64,
];

/// A float: raw float64 or float32 bits, a small whole number, or an edge value.
pub fn float(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(match u.int_in_range(0..=5u8)? {
        0 => f64::from_bits(u.arbitrary()?),
        1 => f32::from_bits(u.arbitrary()?) as f64,
        2 => f64::from(u.int_in_range(-9..=9i8)?),
        _ => *u.choose(&EDGE_F64)?,
    })
}

// ----------------------------------------------------------------------------------------------
// Operators and their tolerances.

/// The unary functions the JIT computes as vector polynomials, within a ULP bound of libm
/// (docs/semantics.md, `ulp_bound` in jit/src/math.rs): drawn only at the root of a kernel.
pub const APPROX_UNARY: [UnaryOp; 22] = [
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Tan,
    UnaryOp::Exp,
    UnaryOp::Exp2,
    UnaryOp::Expm1,
    UnaryOp::Log,
    UnaryOp::Log2,
    UnaryOp::Log10,
    UnaryOp::Log1p,
    UnaryOp::Tanh,
    UnaryOp::Erf,
    UnaryOp::Erfc,
    UnaryOp::Sinh,
    UnaryOp::Cosh,
    UnaryOp::Cbrt,
    UnaryOp::Arcsin,
    UnaryOp::Arccos,
    UnaryOp::Arctan,
    UnaryOp::Arcsinh,
    UnaryOp::Arccosh,
    UnaryOp::Arctanh,
];

/// The binary functions computed within a ULP bound (root only, as [`APPROX_UNARY`]).
pub const APPROX_BINARY: [BinaryOp; 3] = [BinaryOp::Pow, BinaryOp::Hypot, BinaryOp::Arctan2];

/// The documented bound of the JIT's complex `op` computed from the vector float math against the
/// interpreter (docs/semantics.md, `kiln_jit::complex_ulp_bound`, which the fuzz crate does not
/// link): units in a part's own last place or the modulus's; None where it is bit-exact.
pub fn complex_ulp_bound(op: UnaryOp) -> Option<u64> {
    match op {
        UnaryOp::Exp => Some(3),
        UnaryOp::Sqrt => Some(2),
        _ => None,
    }
}

/// The documented distance in ULP of the JIT's `op` from libm (docs/semantics.md), plus one, as the
/// parity suites allow.
pub fn ulp_bound_unary(op: UnaryOp) -> u64 {
    1 + match op {
        UnaryOp::Tanh
        | UnaryOp::Expm1
        | UnaryOp::Sinh
        | UnaryOp::Cosh
        | UnaryOp::Arcsinh
        | UnaryOp::Arccosh
        | UnaryOp::Arctanh
        | UnaryOp::Log10 => 2,
        UnaryOp::Erfc => 3,
        _ => 1,
    }
}

/// Unary ops compared bit for bit; a mixed tree also draws `~` (and neg and abs) more often.
fn exact_unary(mixed: bool) -> Vec<UnaryOp> {
    let extra: &[UnaryOp] = if mixed {
        &[UnaryOp::Invert, UnaryOp::Invert, UnaryOp::Neg, UnaryOp::Abs]
    } else {
        &[]
    };
    UnaryOp::ALL
        .into_iter()
        .filter(|op| !APPROX_UNARY.contains(op))
        .chain(extra.iter().copied())
        .collect()
}

/// Binary ops compared bit for bit: all but the approximated ones and `copysign`, whose result shows
/// the sign of a NaN operand, which IEEE leaves unspecified and libm and the vector math set
/// differently (glibc's log10 of a negative is +NaN, the JIT's -NaN). A mixed tree draws the integer
/// opcodes (and `//`, `%`) as often as the rest together.
fn exact_binary(mixed: bool) -> Vec<BinaryOp> {
    let float = BinaryOp::ALL
        .into_iter()
        .filter(|op| !APPROX_BINARY.contains(op) && *op != BinaryOp::Copysign);
    let integer = BinaryOp::INTEGER
        .into_iter()
        .chain([BinaryOp::FloorDiv, BinaryOp::Rem])
        .cycle()
        .take(if mixed { 20 } else { 0 });
    float.chain(integer).collect()
}

// ----------------------------------------------------------------------------------------------
// Shapes, views, inputs.

/// How an input is handed over: as it is, transposed (a Fortran-order view), every other element
/// along its last axis, reversed along its first axis, or every axis backwards with every other
/// element of the last (`a[::-1, ..., ::-2]`: a strided row of negative stride).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Plain,
    Transposed,
    Stepped,
    Reversed,
    Backwards,
}

impl View {
    /// The view of input `i` drawn from `u`: plain twice as often as each other; a stepped view of
    /// an odd input is the backwards one.
    pub fn draw(u: &mut Unstructured<'_>, i: usize) -> Result<View> {
        let view = *u.choose(&[
            View::Plain,
            View::Plain,
            View::Transposed,
            View::Stepped,
            View::Reversed,
        ])?;
        Ok(if view == View::Stepped && i % 2 == 1 {
            View::Backwards
        } else {
            view
        })
    }

    /// How many buffer elements the view's last axis steps over per element.
    pub fn last_step(self) -> usize {
        match self {
            View::Stepped | View::Backwards => 2,
            _ => 1,
        }
    }

    /// The view this says of `v` (a buffer built with [`View::last_step`], or a view of one laid
    /// out as it: the guarded copies).
    pub fn of<T>(self, v: ArrayViewD<'_, T>) -> ArrayViewD<'_, T> {
        let mut v = v;
        let rank = v.ndim();
        if rank == 0 {
            return v;
        }
        match self {
            View::Stepped => v.slice_each_axis_inplace(|ax| {
                let step = if ax.axis.index() == rank - 1 { 2 } else { 1 };
                ndarray::Slice::new(0, None, step)
            }),
            View::Reversed => v.invert_axis(ndarray::Axis(0)),
            View::Backwards => v.slice_each_axis_inplace(|ax| {
                let step = if ax.axis.index() == rank - 1 { -2 } else { -1 };
                ndarray::Slice::new(0, None, step)
            }),
            View::Plain | View::Transposed => {}
        }
        v
    }
}

/// A shape of rank 0 to 3, its axes mostly short, up to `longest`.
pub fn shape(u: &mut Unstructured<'_>, longest: usize) -> Result<Vec<usize>> {
    let rank = u.int_in_range(0..=3usize)?;
    (0..rank)
        .map(|_| {
            Ok(match u.int_in_range(0..=9u8)? {
                0 => 0,
                1..=3 => 1,
                4..=7 => u.int_in_range(2..=9usize)?,
                _ => u.int_in_range(10..=longest)?,
            })
        })
        .collect()
}

/// A shape that broadcasts to `full`: some leading axes dropped, some axes set to 1.
pub fn sub_shape(u: &mut Unstructured<'_>, full: &[usize]) -> Result<Vec<usize>> {
    let drop = u.int_in_range(0..=full.len())?;
    full[drop..]
        .iter()
        .map(|&d| Ok(if u.ratio(1, 4)? { 1 } else { d }))
        .collect()
}

/// The buffer behind an input of `shape` handed over as `view` (twice as long along the last axis
/// for a stepped view, Fortran order for a transposed one), its values drawn by `T::draw`.
fn array<T: Elem>(u: &mut Unstructured<'_>, shape: &[usize], view: View) -> Result<ArrayD<T>> {
    let mut buf = shape.to_vec();
    if let Some(last) = buf.last_mut() {
        *last *= view.last_step();
    }
    let len: usize = buf.iter().product();
    let mut data = Vec::with_capacity(len);
    for _ in 0..len {
        data.push(T::draw(u)?);
    }
    Ok(match view {
        View::Transposed => ArrayD::from_shape_vec(IxDyn(&buf).f(), data).expect("sized"),
        _ => ArrayD::from_shape_vec(IxDyn(&buf), data).expect("sized"),
    })
}

fn elem_of<T: Element>(_: &ArrayD<T>) -> ElemType {
    T::ELEM
}

fn viewed<T: Element>(a: &ArrayD<T>, view: View) -> ArrayArg<'_> {
    T::arg(view.of(a.view()))
}

impl Data {
    /// A random input of element type `elem`, of `shape`, to be handed over as `view`.
    pub fn draw(u: &mut Unstructured<'_>, elem: ElemType, shape: &[usize], view: View) -> Result<Data> {
        with_elem!(elem, T => Ok(T::data(array::<T>(u, shape, view)?)))
    }

    pub fn elem(&self) -> ElemType {
        each_data!(self, a => elem_of(a))
    }

    /// The shape of the buffer (not of the view handed over).
    pub fn shape(&self) -> &[usize] {
        each_data!(self, a => a.shape())
    }

    /// The input as a runner takes it, viewed as `view` says.
    pub fn arg(&self, view: View) -> ArrayArg<'_> {
        each_data!(self, a => viewed(a, view))
    }
}

// ----------------------------------------------------------------------------------------------
// Trees.

/// The tree generator of one case: its inputs (each with its element type), its rank and whether
/// it is mixed (any type, casts, integer opcodes) or all-float.
struct Trees<'a> {
    inputs: &'a [(String, ElemType)],
    rank: usize,
    mixed: bool,
    /// A complex home's type (its trees cast to it now and then, and draw `complex()`, `real`,
    /// `imag`, `conj`).
    complex: Option<ElemType>,
}

/// Whether a unary opcode takes a complex operand (the typing refuses the others).
fn complex_unary(op: UnaryOp) -> bool {
    use UnaryOp::*;
    !matches!(
        op,
        Floor | Ceil | Trunc | Erf | Erfc | Cbrt | Deg2Rad | Rad2Deg | Invert | Signbit
    )
}

/// Whether a binary opcode takes complex operands.
fn complex_binary(op: BinaryOp) -> bool {
    use BinaryOp::*;
    matches!(op, Add | Sub | Mul | Div | Pow | Eq | Ne | And | Or)
}

/// A complex subtree as its real part (float64), any other as it is: the operand of an opcode
/// complex values do not have.
fn real_part((e, k): (Expr, Class)) -> (Expr, Class) {
    match k {
        Class::Complex => (e.cast(ElemType::F64), Class::Float),
        _ => (e, k),
    }
}

impl Trees<'_> {
    /// A random exact tree (no approximated function) and its class.
    fn tree(&self, u: &mut Unstructured<'_>, depth: u32) -> Result<(Expr, Class)> {
        let rank = self.rank;
        if depth == 0 || u.ratio(1, 3)? {
            let leaf = if self.mixed {
                u.int_in_range(0..=7u8)?
            } else {
                *u.choose(&[2u8, 2, 3, 4, 4, 4])?
            };
            return Ok(match leaf {
                0 => (Expr::int(*u.choose(&LITERALS)?), Class::Int),
                1 => (Expr::int(i64::from(u.int_in_range(-4..=8i8)?)), Class::Int),
                2 => (Expr::lit(float(u)?), Class::Float),
                3 if rank > 0 => (Expr::index(u.int_in_range(0..=rank - 1)?), Class::Int),
                _ => {
                    let (name, t) = u.choose(self.inputs)?;
                    (Expr::input(name.clone()), Class::of(*t))
                }
            });
        }
        let sub = |u: &mut Unstructured<'_>| self.tree(u, depth - 1);
        // all-float trees: unary, select, binary as 1 : 1 : 4
        let choice = if self.mixed {
            u.int_in_range(0..=9u8)?
        } else {
            *u.choose(&[1u8, 2, 4, 4, 4, 4])?
        };
        Ok(match choice {
            0 => {
                let t = match self.complex {
                    Some(c) if u.ratio(1, 3)? => c,
                    _ => *u.choose(&REAL_TYPES)?,
                };
                (sub(u)?.0.cast(t), Class::of(t))
            }
            1 if self.complex.is_some() && u.ratio(1, 4)? => {
                // a complex tree's own: complex() of two real subtrees, or a part, or conj
                match u.int_in_range(0..=3u8)? {
                    0 => {
                        let (a, _) = real_part(sub(u)?);
                        let (b, _) = real_part(sub(u)?);
                        (a.binary(BinaryOp::Complex, b), Class::Complex)
                    }
                    1 => (sub(u)?.0.unary(UnaryOp::Real), Class::Float),
                    2 => (sub(u)?.0.unary(UnaryOp::Imag), Class::Float),
                    _ => {
                        let (a, k) = sub(u)?;
                        (a.unary(UnaryOp::Conj), k)
                    }
                }
            }
            1 => {
                let op = *u.choose(&exact_unary(self.mixed))?;
                let (a, k) = sub(u)?;
                let (a, k) = if complex_unary(op) {
                    (a, k)
                } else {
                    real_part((a, k))
                };
                if k == Class::Complex {
                    return Ok(match op {
                        UnaryOp::Not | UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite => {
                            (a.unary(op), Class::Bool)
                        }
                        // a complex magnitude is approximated (the vector hypot, within its ULP
                        // bound: tests/complex.rs), so an exact tree takes the real part instead;
                        // a complex square root too (the vector hypot: complex_ulp_bound), the
                        // conjugate instead
                        UnaryOp::Abs => (a.unary(UnaryOp::Real), Class::Float),
                        UnaryOp::Sqrt => (a.unary(UnaryOp::Conj), Class::Complex),
                        _ => (a.unary(op), Class::Complex),
                    });
                }
                match op {
                    UnaryOp::Invert => {
                        let (a, k) = self.integer(u, (a, k))?;
                        (a.unary(op), k)
                    }
                    // `not` of an integer is its bitwise `~`
                    UnaryOp::Not if k == Class::Int => (a.unary(op), k),
                    UnaryOp::Not | UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite | UnaryOp::Signbit => {
                        (a.unary(op), Class::Bool)
                    }
                    UnaryOp::Neg
                    | UnaryOp::Abs
                    | UnaryOp::Sign
                    | UnaryOp::Floor
                    | UnaryOp::Ceil
                    | UnaryOp::Trunc
                    | UnaryOp::Round => (a.unary(op), k),
                    _ => (a.unary(op), Class::Float),
                }
            }
            2 => {
                let (c, _) = sub(u)?;
                let (a, ka) = sub(u)?;
                let (b, kb) = sub(u)?;
                (Expr::select(c, a, b), ka.max(kb))
            }
            3 => {
                // `**` of integers: a small non-negative exponent, or any integer (a negative
                // element reads as 0), wrapping
                let base = sub(u)?;
                let (base, k) = self.integer(u, base)?;
                let e = if u.ratio(3, 4)? {
                    Expr::int(u.int_in_range(0..=6i64)?)
                } else {
                    let e = sub(u)?;
                    self.integer(u, e)?.0
                };
                (base.pow(e), k)
            }
            _ => {
                let op = *u.choose(&exact_binary(self.mixed))?;
                let (mut a, mut b) = (sub(u)?, sub(u)?);
                if !complex_binary(op) {
                    a = real_part(a);
                    b = real_part(b);
                }
                if BinaryOp::INTEGER.contains(&op) {
                    a = self.integer(u, a)?;
                    b = self.integer(u, b)?;
                }
                let k = match op {
                    BinaryOp::Lt
                    | BinaryOp::Le
                    | BinaryOp::Gt
                    | BinaryOp::Ge
                    | BinaryOp::Eq
                    | BinaryOp::Ne => Class::Bool,
                    BinaryOp::Div if a.1.max(b.1) == Class::Complex => Class::Complex,
                    BinaryOp::Div | BinaryOp::Nextafter | BinaryOp::Logaddexp | BinaryOp::Logaddexp2 => {
                        Class::Float
                    }
                    _ => a.1.max(b.1),
                };
                (a.0.binary(op, b.0), k)
            }
        })
    }

    /// A subtree as an integer in a mixed tree (a float cast to int32 or int64, a bool to int64 now
    /// and then); an all-float tree stays as it is.
    fn integer(&self, u: &mut Unstructured<'_>, (e, k): (Expr, Class)) -> Result<(Expr, Class)> {
        if !self.mixed {
            return Ok((e, k));
        }
        Ok(match k {
            Class::Float | Class::Complex => {
                (e.cast(*u.choose(&[ElemType::I32, ElemType::I64])?), Class::Int)
            }
            Class::Bool if u.ratio(1, 4)? => (e.cast(ElemType::I64), Class::Int),
            _ => (e, k),
        })
    }

    /// The reduced axes: all, one (from either end), or two distinct ones.
    fn axes(&self, u: &mut Unstructured<'_>) -> Result<Axes> {
        let r = self.rank as isize;
        if r == 0 || u.ratio(1, 2)? {
            return Ok(Axes::All);
        }
        let a = u.int_in_range(-r..=r - 1)?;
        if r >= 2 && u.ratio(1, 4)? {
            let b = (a.rem_euclid(r) + u.int_in_range(1..=r - 1)?) % r;
            return Ok(Axes::Some(vec![a, b]));
        }
        Ok(Axes::Some(vec![a]))
    }

    /// A scan's axis: the flattened array, or one axis from either end.
    fn scan_axis(&self, u: &mut Unstructured<'_>) -> Result<Option<isize>> {
        let r = self.rank as isize;
        Ok(if r == 0 || u.ratio(1, 3)? {
            None
        } else {
            Some(u.int_in_range(-r..=r - 1)?)
        })
    }
}

// ----------------------------------------------------------------------------------------------
// Cases.

/// A random kernel, its inputs and its sibling results.
#[derive(Debug, Clone)]
pub struct Case {
    pub expr: Expr,
    pub inputs: Vec<(String, Data, View)>,
    /// More results computed with `expr` by one runner of several results: exact maps, now and
    /// then a whole-array reduction.
    pub siblings: Vec<Expr>,
    /// The threads of the tested runner (its default where None).
    pub threads: Option<usize>,
    /// Whether [`Case::check`] compares the run alone (no prepared handle, update or runner of
    /// several results).
    pub run_only: bool,
}

impl Case {
    /// A case of exactly these inputs (each handed over as it is) and no sibling.
    pub fn new(expr: Expr, inputs: Vec<(&str, Data)>) -> Case {
        Case {
            expr,
            inputs: inputs
                .into_iter()
                .map(|(n, d)| (n.to_string(), d, View::Plain))
                .collect(),
            siblings: Vec::new(),
            threads: None,
            run_only: false,
        }
    }

    /// The runner of `exprs` (one, or several results) on `backend`, with the case's threads.
    fn tested(&self, exprs: &[Expr], backend: &str) -> kiln::Result<FusedRunner> {
        let r = match exprs {
            [one] => FusedRunner::compile(one)?,
            _ => FusedRunner::compile_many(exprs)?,
        };
        let r = r.with_backend(kiln::backend_by_name(backend)?);
        Ok(match self.threads {
            Some(t) => r.with_threads(t),
            None => r,
        })
    }

    /// A random case of any home type, drawn from `u` (the fuzz targets).
    pub fn arbitrary(u: &mut Unstructured<'_>) -> Result<Case> {
        let home = *u.choose(&REAL_TYPES)?;
        Case::of_type(u, home)
    }

    /// A random case whose first input is of type `home` (the parity suite draws each type's).
    pub fn of_type(u: &mut Unstructured<'_>, home: ElemType) -> Result<Case> {
        let float_home = Class::of(home) == Class::Float;
        let mixed = !float_home || u.ratio(1, 3)?;
        let full = shape(u, if float_home { 70 } else { 40 })?;
        let n_inputs = u.int_in_range(1..=3usize)?;
        let mut inputs = Vec::new();
        for i in 0..n_inputs {
            let s = if i == 0 {
                full.clone()
            } else {
                sub_shape(u, &full)?
            };
            let view = View::draw(u, i)?;
            let elem = if i == 0 || u.ratio(1, 2)? {
                home
            } else if mixed {
                *u.choose(&REAL_TYPES)?
            } else {
                *u.choose(&[ElemType::F32, ElemType::F64])?
            };
            inputs.push((format!("x{i}"), Data::draw(u, elem, &s, view)?, view));
        }
        let typed: Vec<(String, ElemType)> = inputs.iter().map(|(n, d, _)| (n.clone(), d.elem())).collect();
        let g = Trees {
            inputs: &typed,
            rank: full.len(),
            mixed,
            complex: home.is_complex().then_some(home),
        };
        let depth = u.int_in_range(0..=4u32)?;
        let body = g.tree(u, depth)?;
        // a reduction's body and axes, which its sibling reductions reduce too
        let mut reduced = None;
        let expr = match u.int_in_range(0..=8u8)? {
            0 | 1 => {
                let op = *u.choose(&ReduceOp::ALL)?;
                let body = if u.ratio(1, 2)? { g.integer(u, body)? } else { body };
                let axes = g.axes(u)?;
                let keepdims = u.ratio(1, 8)?;
                reduced = Some((body.0.clone(), axes.clone()));
                body.0.reduce_with(op, axes, keepdims, None)
            }
            2 => {
                let body = if u.ratio(1, 2)? { g.integer(u, body)? } else { body };
                body.0.mean_axes(g.axes(u)?, u.ratio(1, 8)?)
            }
            3 if u.ratio(1, 4)? => {
                let op = *u.choose(&[BinaryOp::Pow, BinaryOp::Pow, BinaryOp::Hypot, BinaryOp::Arctan2])?;
                body.0.binary(op, g.tree(u, 2)?.0)
            }
            3 => body.0.unary(*u.choose(&APPROX_UNARY)?),
            4 | 5 => {
                let (body, class) = if u.ratio(1, 2)? { g.integer(u, body)? } else { body };
                let options = ScanOptions {
                    axis: g.scan_axis(u)?,
                    exclusive: u.ratio(1, 3)?,
                    reverse: u.ratio(1, 3)?,
                    initial: match u.ratio(1, 3)? {
                        false => None,
                        true if class == Class::Float => Some(float(u)?),
                        true => Some(f64::from(u.int_in_range(-3..=3i8)?)),
                    },
                };
                body.scan(*u.choose(&ScanOp::ALL)?, options)
            }
            _ => body.0,
        };
        let mut siblings = Vec::new();
        if let Some((b, axes)) = reduced.filter(|_| u.ratio(1, 2).unwrap_or(false)) {
            // reductions of the same inputs over the same axes: one pass of sibling reductions
            // (trailing axes reduced, or kept), each as the interpreter gives it alone
            for _ in 0..u.int_in_range(1..=3u8)? {
                let s = match u.int_in_range(0..=3u8)? {
                    0 => b.clone(),
                    1 => b.binary(BinaryOp::Mul, b.clone()),
                    2 => b.unary(UnaryOp::Abs),
                    _ => b.binary(BinaryOp::Add, Expr::lit(float(u)?)),
                };
                let op = *u.choose(&[ReduceOp::Max, ReduceOp::Min, ReduceOp::Sum, ReduceOp::Prod])?;
                siblings.push(match u.ratio(1, 6)? {
                    true => s.mean_axes(axes.clone(), u.ratio(1, 4)?),
                    false => s.reduce_with(op, axes.clone(), u.ratio(1, 4)?, None),
                });
            }
        } else if u.ratio(1, 2)? {
            for _ in 0..u.int_in_range(1..=2u8)? {
                let depth = u.int_in_range(0..=3u32)?;
                let s = g.tree(u, depth)?;
                siblings.push(if u.ratio(1, 5)? {
                    let (s, _) = g.integer(u, s)?;
                    let op = *u.choose(&[
                        ReduceOp::Max,
                        ReduceOp::Max,
                        ReduceOp::Sum,
                        ReduceOp::Any,
                        ReduceOp::Min,
                    ])?;
                    s.reduce(op, Axes::All)
                } else {
                    s.0
                });
            }
        }
        Ok(Case {
            expr,
            inputs,
            siblings,
            threads: None,
            run_only: false,
        })
    }

    /// The inputs as the runners take them.
    pub fn args(&self) -> Vec<(&str, ArrayArg<'_>)> {
        self.inputs
            .iter()
            .map(|(name, data, view)| (name.as_str(), data.arg(*view)))
            .collect()
    }

    /// The interpreter's result, if the kernel types and runs.
    pub fn oracle(&self) -> Option<Output> {
        interpret(&self.expr, &self.args()).ok()
    }

    /// The number of elements in the largest broadcast of the inputs (the terms of a whole-array
    /// sum).
    fn terms(&self) -> usize {
        let rank = self
            .inputs
            .iter()
            .map(|(_, d, _)| d.shape().len())
            .max()
            .unwrap_or(0);
        let mut full = vec![1usize; rank];
        for (_, d, view) in &self.inputs {
            let a = d.arg(*view);
            let s = a.shape();
            for (k, &n) in s.iter().enumerate() {
                let slot = &mut full[rank - s.len() + k];
                *slot = (*slot).max(n);
            }
        }
        full.iter().product()
    }

    /// How each kernel of the case runs on `backend` (`kiln explain`'s engines), or None where the
    /// case does not type or bind.
    pub fn engines(&self, backend: &str) -> Option<Vec<kiln::Engine>> {
        let r = self.tested(std::slice::from_ref(&self.expr), backend).ok()?;
        let kernels = r.explain_kernels(&self.args()).ok()?;
        Some(kernels.iter().map(|k| k.engine).collect())
    }

    /// Runs the case on `backend` and on the interpreter, then through the prepared handle, the
    /// in-place updates and the runner of several results; `Err` describes a disagreement.
    pub fn check(&self, backend: &str) -> std::result::Result<(), String> {
        let args = self.args();
        let oracle = FusedRunner::compile(&self.expr).map(|r| r.with_backend(kiln::interpreter()));
        let tested = self.tested(std::slice::from_ref(&self.expr), backend);
        let (oracle, tested) = match (oracle, tested) {
            (Ok(o), Ok(t)) => (o, t),
            (Err(_), Err(_)) => return Ok(()),
            (o, t) => return Err(format!("compile differs: interp {o:?} vs {backend} {t:?}")),
        };
        let (want, got) = match (oracle.run(&args), tested.run(&args)) {
            (Err(_), Err(_)) => return Ok(()),
            (Ok(w), Ok(g)) => (w, g),
            (w, g) => return Err(format!("run differs: interp {w:?} vs {backend} {g:?}")),
        };
        let rule = self.rule(&self.expr, &want, &args, backend)?;
        compare(&want, &got, &rule)?;
        if self.run_only {
            return Ok(());
        }
        self.check_siblings(&args, backend, &got, &rule)?;
        self.check_prepared(&args, &tested, &got)
    }

    /// The comparison rule of `expr`'s result `want` (the interpreter's), by its kernel kind.
    fn rule(
        &self,
        expr: &Expr,
        want: &Output,
        args: &[(&str, ArrayArg<'_>)],
        backend: &str,
    ) -> std::result::Result<Rule, String> {
        if !is_float(want) && !is_complex(want) {
            return Ok(Rule::Exact);
        }
        // complex results: the reductions' bounds as distances in the plane; the functions computed
        // from the vector float math (`exp`, `sqrt`) within their bound
        // ([`complex_ulp_bound`]); scans (interpreted) and the other functions (the interpreter's
        // own, called) bit for bit
        let complex_bound = match expr.node() {
            ExprNode::Unary(op, _) if is_complex(want) => complex_ulp_bound(*op),
            _ => None,
        };
        if let Some(bound) = complex_bound {
            return Ok(Rule::Ulp(bound));
        }
        if is_complex(want)
            && !matches!(
                expr.node(),
                ExprNode::Reduce {
                    op: ReduceOp::Sum | ReduceOp::Prod,
                    ..
                } | ExprNode::Mean { .. }
            )
        {
            return Ok(Rule::Exact);
        }
        let interp = |e: &Expr| -> std::result::Result<Vec<f64>, String> {
            Ok(interpret(e, args)?.into_f64().iter().copied().collect())
        };
        Ok(match expr.node() {
            // the bound of a reassociated sum: n ε Σ|x| (a mean: n ε mean(|x|))
            ExprNode::Reduce {
                op: ReduceOp::Sum,
                arg,
                axes,
                ..
            } => Rule::SumBound(
                interp(&arg.abs().reduce(ReduceOp::Sum, axes.clone()))?,
                self.terms(),
            ),
            ExprNode::Mean { arg, axes, .. } => {
                // the magnitudes of integer values in float64 (abs of the most negative integer
                // wraps)
                let float_arg = {
                    let a = interpret(arg, args)?;
                    is_float(&a) || is_complex(&a)
                };
                let arg = if float_arg {
                    arg.clone()
                } else {
                    arg.cast(ElemType::F64)
                };
                Rule::SumBound(interp(&arg.abs().mean_axes(axes.clone(), false))?, self.terms())
            }
            ExprNode::Reduce {
                op: ReduceOp::Prod,
                arg,
                axes,
                ..
            } => {
                // a regrouped product loses every digit where one of its partial products passes
                // through the subnormals or overflows, which the grouping decides: flag each output
                // whose factors below 1 in magnitude multiply to less than the smallest normal f64
                // (the accumulator's type), or whose factors above 1 multiply to inf
                let a = arg.abs();
                let part =
                    |keep: Expr| interp(&Expr::select(keep, &a, 1.0).reduce(ReduceOp::Prod, axes.clone()));
                let (small, large) = (part(a.lt(1.0))?, part(a.gt(1.0))?);
                Rule::Relative(
                    small
                        .iter()
                        .zip(&large)
                        .map(|(&s, &l)| s < f64::MIN_POSITIVE || l.is_infinite())
                        .collect(),
                )
            }
            ExprNode::Reduce {
                op: ReduceOp::Min | ReduceOp::Max,
                ..
            } => Rule::Extreme,
            ExprNode::Scan { op, options, arg } => scan_rule(
                *op,
                options,
                interpret(arg, args)?,
                backend,
                innermost_in_memory(expr, args),
            ),
            ExprNode::Unary(op, _) if APPROX_UNARY.contains(op) => Rule::Ulp(ulp_bound_unary(*op)),
            ExprNode::Binary(op, _, _) if APPROX_BINARY.contains(op) => Rule::Ulp(2),
            _ => Rule::Exact,
        })
    }

    /// Runs `expr` and the siblings as one runner of several results on `backend`: the first result
    /// as `got` was (the rule of `expr`), each sibling as the interpreter gives it alone.
    fn check_siblings(
        &self,
        args: &[(&str, ArrayArg<'_>)],
        backend: &str,
        got: &Output,
        rule: &Rule,
    ) -> std::result::Result<(), String> {
        if self.siblings.is_empty() {
            return Ok(());
        }
        let all: Vec<Expr> = std::iter::once(self.expr.clone())
            .chain(self.siblings.iter().cloned())
            .collect();
        let many = self
            .tested(&all, backend)
            .map_err(|e| format!("compile_many fails where compile did not: {e}"))?;
        let alone: Vec<std::result::Result<Output, String>> =
            self.siblings.iter().map(|s| interpret(s, args)).collect();
        let outs = match many.run_many(args) {
            Ok(o) => o,
            // an error of one of them (a sibling that does not type, an empty max) fails them all
            Err(_) if alone.iter().any(|a| a.is_err()) => return Ok(()),
            Err(e) => return Err(format!("run_many fails where each ran: {e}")),
        };
        compare(got, &outs[0], rule).map_err(|e| format!("run_many result 0: {e}"))?;
        for (i, (o, want)) in outs[1..].iter().zip(alone).enumerate() {
            let want = want.map_err(|e| format!("sibling {i} fails alone but not in run_many: {e}"))?;
            let rule = self.rule(&self.siblings[i], &want, args, backend)?;
            compare(&want, o, &rule).map_err(|e| format!("run_many result {}: {e}", i + 1))?;
        }
        Ok(())
    }

    /// The prepared handle (into an output buffer for a float result, its direct path where it
    /// applies) and the in-place updates of `tested` give what its run gave (`got`), bit for bit.
    fn check_prepared(
        &self,
        args: &[(&str, ArrayArg<'_>)],
        tested: &FusedRunner,
        got: &Output,
    ) -> std::result::Result<(), String> {
        let h = tested
            .prepared(args)
            .map_err(|e| format!("prepared fails where run did not: {e}"))?;
        let positional: Vec<ArrayArg<'_>> = args.iter().map(|(_, a)| a.clone()).collect();
        let again = match got {
            Output::F64(a) => {
                let mut o = ArrayD::<f64>::zeros(a.raw_dim());
                h.run_into(&positional, o.view_mut()).map(|_| Output::F64(o))
            }
            Output::F32(a) => {
                let mut o = ArrayD::<f32>::zeros(a.raw_dim());
                h.run_into(&positional, o.view_mut()).map(|_| Output::F32(o))
            }
            _ => h.run(&positional),
        };
        let again = again.map_err(|e| format!("the prepared call fails where run did not: {e}"))?;
        same(got, &again).map_err(|e| format!("prepared call: {e}"))?;
        // an in-place update of each input of the result's type and shape: refused, or the same bits
        for (k, (name, data, view)) in self.inputs.iter().enumerate() {
            let others: Vec<(&str, ArrayArg<'_>)> = args
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != k)
                .map(|(_, (n, a))| (*n, a.clone()))
                .collect();
            let updated = each_data!(data, a => update(tested, name, &others, view.of(a.view()), got));
            if let Some(Err(e)) = updated {
                return Err(format!("run_update of '{name}': {e}"));
            }
        }
        Ok(())
    }
}

/// `expr` on the interpreter.
fn interpret(expr: &Expr, args: &[(&str, ArrayArg<'_>)]) -> std::result::Result<Output, String> {
    FusedRunner::compile(expr)
        .map(|r| r.with_backend(kiln::interpreter()))
        .and_then(|r| r.run(args))
        .map_err(|e| e.to_string())
}

/// `tested`'s update of input `name` (now `previous`) in place, against `got`: None where the
/// input is not of the result's type and shape or the update is refused.
fn update<T: Elem>(
    tested: &FusedRunner,
    name: &str,
    others: &[(&str, ArrayArg<'_>)],
    previous: ArrayViewD<'_, T>,
    got: &Output,
) -> Option<std::result::Result<(), String>> {
    if previous.shape() != got.shape() {
        return None;
    }
    let want = T::take(got.clone()).ok()?;
    let mut target = previous.as_standard_layout().into_owned();
    tested.run_update(name, others, target.view_mut()).ok()?;
    Some(same_arrays(&want, &target))
}

fn same_type(want: &Output, got: &Output) -> std::result::Result<(), String> {
    if want.dtype_name() != got.dtype_name() || want.shape() != got.shape() {
        return Err(format!(
            "type differs: interp {}{:?} vs compiled {}{:?}",
            want.dtype_name(),
            want.shape(),
            got.dtype_name(),
            got.shape()
        ));
    }
    Ok(())
}

fn same_arrays<T: Elem>(a: &ArrayD<T>, b: &ArrayD<T>) -> std::result::Result<(), String> {
    match a.iter().zip(b.iter()).position(|(x, y)| !T::same(x, y)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "element {i}: interp {:?} vs compiled {:?}",
            a.iter().nth(i).expect("in range"),
            b.iter().nth(i).expect("in range")
        )),
    }
}

// ----------------------------------------------------------------------------------------------
// Tolerances.

/// How a result is compared with the interpreter's, by kernel kind. Bool and integer results are
/// always [`Rule::Exact`].
#[derive(Debug, Clone)]
pub enum Rule {
    /// Bit for bit (any NaN equal to any NaN; the sign of zero counts).
    Exact,
    /// min / max reductions of floats: bit-exact, except that of equal extremes +0.0 and -0.0 the
    /// JIT's interleaved lanes may keep another than the sequential fold's last (README).
    Extreme,
    /// Within this many ULP of the result's type.
    Ulp(u64),
    /// A reassociated sum (or mean): within `4 ε max(n, 16) m` of the interpreter's, `m` the
    /// interpreter's sum (mean) of the magnitudes for each output, `n` the number of terms at most.
    SumBound(Vec<f64>, usize),
    /// Relative, except the outputs flagged `true`, whose regrouped products may underflow or
    /// overflow on the way (anything stands there).
    Relative(Vec<bool>),
    /// Per output of a reassociated scan (see [`scan_rule`]).
    Scan(Vec<Slack>),
}

impl Rule {
    fn name(&self) -> &'static str {
        match self {
            Rule::Exact => "exact",
            Rule::Extreme => "exact but for the sign of equal zeros",
            Rule::Ulp(_) => "within the ULP bound",
            Rule::SumBound(..) => "within the bound of a reassociated sum",
            Rule::Relative(_) => "relative",
            Rule::Scan(_) => "within the bound of a reassociated scan",
        }
    }
}

/// How far one output of a reassociated cumsum or cumprod may be from the interpreter's.
#[derive(Debug, Clone, Copy)]
pub enum Slack {
    /// Anything: an intermediate of the reassociated fold may overflow or underflow where the
    /// sequential one does not (then NaN, ±inf, 0 and finite values may all come out either way).
    Any,
    /// Finite results within this absolute bound, non-finite ones equal.
    Abs(f64),
    /// Finite results within this fraction of the larger magnitude, non-finite ones equal.
    Rel(f64),
}

/// The axis `expr` runs innermost where it runs in memory order on `args` (Fortran or transposed
/// inputs: [`FusedRunner::memory_order`]), None where it runs in the inputs' own order.
fn innermost_in_memory(expr: &Expr, args: &[(&str, ArrayArg<'_>)]) -> Option<usize> {
    let runner = FusedRunner::compile(expr).ok()?;
    let refs: Vec<&ArrayArg<'_>> = runner
        .input_names()
        .iter()
        .map(|name| args.iter().find(|(n, _)| n == name).map(|(_, a)| a))
        .collect::<Option<_>>()?;
    runner.memory_order(&refs)?.last().copied()
}

/// The parity rule of a float scan. cummax and cummin are exact (associative, NaN and signed zeros
/// included), and so is every scan that folds sequentially: the scalar schedule, and an outer axis
/// (columns, each folded in order). Along the innermost axis (or the flattened array: the last
/// axis, or where the kernel runs in memory order the axis its inputs' layout puts last,
/// `innermost`) the SIMD code
/// reassociates a sum or product within one 128-bit vector (`carry ⊕ (a ⊕ b)`, blocks of 2 for f64,
/// 4 for f32 in the f64 state; jit/src/scan.rs), so:
/// - cumsum: `|err| <= (len + 4) * eps * m`, `m` the running sum of the finite `|x|` (and `|initial|`)
///   along the same line in scan order; where `m` overflows, anything;
/// - cumprod: relative `2 * (len + 4) * eps` while every prefix and every window of up to 4
///   consecutive factors stays well inside the normal range (log2 within ±1000, f32 results within
///   ±120), else anything from there to the end of the line.
///
/// f32 results may differ by one more rounding (see [`compare`]).
fn scan_rule(
    op: ScanOp,
    options: &ScanOptions,
    body: Output,
    backend: &str,
    innermost: Option<usize>,
) -> Rule {
    let f32_result = matches!(body, Output::F32(_));
    let body = body.into_f64();
    let shape = body.shape().to_vec();
    let x: Vec<f64> = body.iter().copied().collect();
    let n = x.len();
    let (outer, len, inner, axis) = match options.axis {
        None => (1, n, 1, None),
        Some(a) => {
            let a = if a < 0 { a + shape.len() as isize } else { a } as usize;
            (
                shape[..a].iter().product(),
                shape[a],
                shape[a + 1..].iter().product::<usize>(),
                Some(a),
            )
        }
    };
    // the JIT reassociates a float sum along the axis it runs innermost: the last one, or in
    // memory order the axis the inputs' layout puts last
    let reassociated = match innermost {
        Some(m) => axis == Some(m),
        None => inner == 1,
    };
    let sequential = backend.ends_with("scalar") || !reassociated;
    if sequential || matches!(op, ScanOp::Max | ScanOp::Min) {
        return Rule::Exact;
    }
    let start = options.initial.unwrap_or(if options.exclusive {
        op.neutral()
    } else {
        op.identity()
    });
    let finite_nonzero = |v: f64| v.is_finite() && v != 0.0;
    let eps = f64::EPSILON;
    let mut slack = vec![Slack::Any; n];
    for (o, j) in (0..outer).flat_map(|o| (0..inner).map(move |j| (o, j))) {
        let mut m = if start.is_finite() { start.abs() } else { 0.0 };
        let mut log = if finite_nonzero(start) {
            start.abs().log2()
        } else {
            0.0
        };
        let mut in_range = log.abs() <= 1000.0;
        let mut window: Vec<f64> = Vec::new();
        for t in 0..len {
            let k = if options.reverse { len - 1 - t } else { t };
            let i = (o * len + k) * inner + j;
            let v = x[i];
            slack[i] = if op == ScanOp::Sum {
                if v.is_finite() {
                    m += v.abs();
                }
                if m.is_finite() && (!f32_result || m < 1e38) {
                    Slack::Abs((len + 4) as f64 * eps * m)
                } else {
                    Slack::Any
                }
            } else {
                if finite_nonzero(v) {
                    let l = v.abs().log2();
                    log += l;
                    window.insert(0, l);
                    window.truncate(4);
                    let mut w = 0.0;
                    for &l in &window {
                        w += l;
                        in_range &= w.abs() <= 1000.0;
                    }
                    in_range &= log.abs() <= 1000.0;
                }
                if in_range && (!f32_result || log.abs() <= 120.0) {
                    Slack::Rel(2.0 * (len + 4) as f64 * eps)
                } else {
                    Slack::Any
                }
            };
        }
    }
    Rule::Scan(slack)
}

/// [`compare`] of complex results under a reduction's rule: each part within the rule's bound of
/// the output's magnitude (a sum's `4 ε max(n, 16) m`, a product's `1e-6` of the larger magnitude),
/// a non-finite part the same (any NaN for a NaN); the exemptions of the real rules. Under
/// [`Rule::Ulp`] (a complex function from the vector float math) each finite part within that many
/// units in its own last place or the interpreter's modulus's.
fn compare_complex(want: &Output, got: &Output, rule: &Rule) -> std::result::Result<(), String> {
    let eps = if matches!(want, Output::C64(_)) {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let (w, g) = (complex_values(want), complex_values(got));
    let finite = |z: Complex64| z.re.is_finite() && z.im.is_finite();
    for (i, (&a, &b)) in w.iter().zip(&g).enumerate() {
        let bound = match rule {
            Rule::SumBound(mag, n) => 4.0 * mag[i] * eps * (*n).max(16) as f64,
            Rule::Ulp(max) => *max as f64 * eps * a.norm(),
            _ => 1e-6 * a.norm().max(b.norm()),
        };
        let part = |x: f64, y: f64| {
            if let (Rule::Ulp(max), true) = (rule, x.is_finite() && y.is_finite()) {
                let f32_parts = matches!(want, Output::C64(_));
                return x == y || kit::ulp_distance(x, y, f32_parts) <= *max || (x - y).abs() <= bound;
            }
            if x.is_finite() && y.is_finite() {
                // a NaN term makes the magnitude NaN: its finite part stands (as compare's)
                x == y || bound.is_nan() || (x - y).abs() <= bound
            } else {
                (x.is_nan() && y.is_nan()) || x == y
            }
        };
        let ok = match rule {
            Rule::Relative(exposed) if exposed[i] => true,
            // a regrouped product meeting inf and 0 (or overflowing and underflowing) may give NaN
            // or inf where the sequential one does not
            Rule::Relative(_) if !finite(a) || !finite(b) => true,
            Rule::Relative(_) => {
                a == b || (part(a.re, b.re) && part(a.im, b.im)) || a.norm().max(b.norm()) < 1e-290
            }
            // magnitudes that overflow: any result stands (see compare)
            Rule::SumBound(mag, _) if !mag[i].is_finite() && !mag[i].is_nan() => true,
            _ => part(a.re, b.re) && part(a.im, b.im),
        };
        if !ok {
            return Err(format!(
                "element {i}: interp {a:?} vs compiled {b:?} ({})",
                rule.name()
            ));
        }
    }
    Ok(())
}

/// `got` agrees with the interpreter's `want` under `rule`: the same dtype and shape; bool and
/// integer results bit for bit; float results as the rule says.
pub fn compare(want: &Output, got: &Output, rule: &Rule) -> std::result::Result<(), String> {
    same_type(want, got)?;
    if is_complex(want) && !matches!(rule, Rule::Exact) {
        return compare_complex(want, got, rule);
    }
    if !is_float(want) || matches!(rule, Rule::Exact) {
        return same(want, got);
    }
    let f32_result = matches!(want, Output::F32(_));
    let (w, g) = (want.clone().into_f64(), got.clone().into_f64());
    let eps = if f32_result {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    for (i, (&a, &b)) in w.iter().zip(g.iter()).enumerate() {
        let ok = if let Rule::Scan(slack) = rule {
            // f32 results: the f64 states within the slack may round to neighbouring f32 values
            let rounding = if f32_result {
                f32::EPSILON as f64 * a.abs().max(b.abs()) + f64::from(f32::from_bits(1))
            } else {
                0.0
            };
            match slack[i] {
                Slack::Any => true,
                _ if a.is_nan() || b.is_nan() => a.is_nan() && b.is_nan(),
                _ if !a.is_finite() || !b.is_finite() => a == b,
                Slack::Abs(bound) => (a - b).abs() <= bound + rounding,
                Slack::Rel(r) => (a - b).abs() <= r * a.abs().max(b.abs()) + rounding,
            }
        } else if matches!(rule, Rule::Relative(exposed) if exposed[i]) {
            true
        } else if matches!(rule, Rule::Relative(_))
            && (a.is_nan() || b.is_nan())
            && [a, b].iter().any(|v| !v.is_finite() || *v == 0.0)
        {
            // a product that meets inf and 0 (or overflows and underflows) in a regrouped order can
            // give NaN where the sequential order gives inf or 0, and the other way round
            true
        } else if matches!(rule, Rule::SumBound(mag, _) if !mag[i].is_finite() && !mag[i].is_nan()) {
            // the magnitudes overflow (an infinite input, or finite ones whose |x| sum overflows): a
            // reassociated sum may meet inf and -inf in one grouping and not in another, so inf, NaN
            // and finite results all stand (cargo-fuzz exprs: sum([.., -MAX, .., MAX, .., inf, ..]) is
            // inf pairwise in the interpreter, NaN with the JIT's accumulators); a NaN input makes the
            // magnitude NaN, not inf, and is still checked below
            true
        } else if a.is_nan() || b.is_nan() {
            a.is_nan() && b.is_nan()
        } else {
            match rule {
                Rule::Exact => kit::same_bits(a, b),
                Rule::Extreme => kit::same_bits(a, b) || (a == 0.0 && b == 0.0),
                Rule::Ulp(max) => a == b || kit::ulp_distance(a, b, f32_result) <= *max,
                Rule::SumBound(mag, n) => {
                    let m = mag[i];
                    a == b || !m.is_finite() || (a - b).abs() <= 4.0 * m * eps * (*n).max(16) as f64
                }
                Rule::Relative(_) => {
                    // a regrouped product can underflow to 0 (or overflow to inf) where the
                    // sequential order does not, and the other way round (cargo-fuzz exprs:
                    // prod([.., 1e300, .., -6.4e-43, .., 5e-324, ..]) is -1.3e-65 in order, -0.0
                    // with four accumulators)
                    a == b
                        || (a - b).abs() <= 1e-6 * a.abs().max(b.abs())
                        || (!a.is_finite() || !b.is_finite())
                        || a == 0.0
                        || b == 0.0
                        || a.abs().max(b.abs()) < 1e-290
                }
                Rule::Scan(_) => unreachable!("handled above"),
            }
        };
        if !ok {
            return Err(format!(
                "element {i}: interp {a:?} vs compiled {b:?} ({})",
                rule.name()
            ));
        }
    }
    Ok(())
}
