//! The functions of `Routine` and `Binary` at the host's full vector width: the inline vector
//! math's algorithms (`vmath::exp`, `vmath::log`, `vmath::trig`, `vmath::f32x4`,
//! `vmath::hyperbolic`, `vmath::atan`, `vmath::arc_hyp`, `vmath::cbrt`, `vmath::pow`,
//! `vmath::hypot`; here
//! `exp_family.rs` holds exp2, expm1, tanh (f64), sinh and cosh, `tanh32.rs` f32 tanh (a table of
//! polynomials), `atan.rs` the inverse trigonometric
//! functions, `logs.rs` log2, log10, log1p and the inverse hyperbolic functions, `cbrt.rs`,
//! `pow.rs` pow and hypot, `binary.rs` the routines of two arguments, `complex.rs` complex division
//! and magnitude) compiled
//! by rustc for AVX-512 (8 f64 lanes) and for AVX2 + FMA (4 lanes), over slices, for kernels that run
//! these nodes on blocks (see
//! `block.rs`). Cranelift 0.135 lowers 128-bit vectors only; this is the one place where kiln's code
//! runs wider.
//!
//! **Bit-identical to the inline path, by construction.** Each routine is written per lane
//! (`lanes.rs`): the operations the inline code performs on one lane, in the same order, with the
//! same constants (read from the vmath files themselves) and the same fused multiply-adds; rustc
//! vectorises the loops over a chunk of 16 lanes (the assembly holds `vfmadd...pd zmm`,
//! `vrndscalepd`, `vpsllq` on zmm or ymm registers, and the chunk's test is one compare into a mask
//! and `kortest`), and the remainder of a slice is copied into a padded chunk. f32 tanh looks its
//! table up with permutes, which LLVM does not make of the lane code's lookups (it gathers): its
//! routines are written in each level's intrinsics, the instructions LLVM emits for the lane
//! code's operations (`tanh32.rs`; safe code: the intrinsics are called in `#[target_feature]`
//! functions, and registers are read from arrays by `bytemuck`). The inline code
//! branches per vector to a general path when a lane needs it (exp: |x| >= 708 or NaN; log: not
//! positive, normal and finite); the general path gives every other lane the same bits as the fast
//! path (exp: `p·2^k` by two exact scalings or by adding `k` to the exponent is the same normal
//! number; log: the subnormal scaling and the special-value selects leave a normal positive lane as
//! it was), so a lane's result never depends on its neighbours, and the routines here take the same
//! branch per chunk of 16 lanes instead of per vector of 2 or 4. sin, cos and tan follow
//! `vmath::trig` (f64) and
//! `vmath::f32x4` (f32 sin, cos and tan): the reduction, kernels, quadrant selects and sign flips per
//! lane; their slow path is the inline code's per-lane call of the host function where
//! |x| > 2^20 (f64) or 2^16 (f32), which replaces just those lanes, so a chunk holding such a lane
//! computes each lane by the same rule. A kernel with sin and cos of one argument calls
//! [`WideElem::sincos`] once for both (`block.rs`): the two fast paths inlined into one loop, whose
//! shared operations LLVM computes once.
//! FMA is fused in both (`vfmadd`, or under `KILN_JIT_NO_FMA` Cranelift's call of libm's `fma`, which
//! rounds once as well), so the bits are the same on every host, and the `reproducible` profile is
//! unaffected: a host without FMA has no wide routine and computes the same bits inline. The tests
//! check the identity directly (`tests/wide.rs`: dense sweeps, NumPy's special values, multiples
//! of pi/4 and the edges of the trig fast path, every length 0..=40). cbrt (`cbrt.rs`) branches like
//! log: its general path (subnormal, zero, infinite or NaN lanes) gives the other lanes the core's
//! bits. hypot (`pow.rs`, a routine of two arguments) has one path for every lane, lane selects
//! and no branch, so its chunks need no test; pow has a fast path (f64: positive normal finite
//! bases, finite exponents, `|y·log x| < 708`; f32: positive normal bases, normal exponents) and
//! a general one. pow and the f64 log family (log, log2, log10, log1p, and the inverse
//! hyperbolic functions through log1p) read tables (`vmath::pow_tables`): the inline code by scalar
//! loads per lane, the routines here in stages per chunk (the lookups apart from the arithmetic
//! around them, which vectorises). The tables have 16 rows, stored as columns: at AVX-512 a
//! column's rows fill two registers and one permute looks 8 lanes up (`lanes::Look`); at AVX2 each
//! lookup is a loop of scalar loads.
//!
//! **Sources.** Every routine computes in place, or from a source slice into a destination that
//! need not hold values yet ([`Io`]: `fn(Io<T>)`): a kernel passes an input it reads as a
//! contiguous run where it lies (`block.rs`), each chunk loaded from it into registers, computed,
//! and stored into the destination (a stack slot, or the output row where the block is written
//! straight into the output); the same operations, so the same bits.
//!
//! **Two arguments.** A function of two arguments ([`Binary`]: arctan2) has a routine
//! `fn(Io<T>, &[T])`, `xs[j] = f(xs[j], ys[j])` (`binary.rs`: the chunk loop and the
//! `#[target_feature]` functions); a kernel stages each operand into a slot of its own where it is
//! not an input read in place, and the result is written into the first slot, or into the output
//! (`block.rs`). arcsin, arccos, arctan and arctan2 are in
//! `atan.rs`: `vmath::atan` per lane, its fast path per chunk where the inline code takes it per
//! vector.
//!
//! **Complex values** (`complex.rs`), over slices of interleaved parts (two a point), as memory
//! holds complex values: the division ([`WideFn::ComplexDiv`]) has the signature of a routine of
//! two arguments; the magnitude ([`WideFn::ComplexAbs`]) reads points and writes their magnitudes.
//! A kernel of complex128 values in float64 lanes, or of complex64 values in float32 lanes, stages
//! each quotient and each magnitude as one such call (`block.rs`), its complex operands read where
//! they lie or computed into slots twice a float slot's size.
//!
//! **Kept reductions.** `rows.rs` holds the kept sum's row steps (column sums, skeleton.rs "Kept
//! sums, several reduced rows per pass"), a group of [`GROUP`] rows added as the inline balanced
//! tree into an f64 output run, and a row added alone, which a kept sum of a plain read of an
//! input calls over runs of columns (`crate::apply_kept_rows` for tests); plain additions in the
//! inline order, so the same bits by construction as well. A kept max or min of a plain read
//! steps a group of eight adjacent rows, or a row alone, the same way (`out[j] =
//! maximum(out[j], x[j])` row after row, NaN first, the later of equal values:
//! `crate::apply_kept_extreme`), the inline update's bits; so does each component of kept
//! sibling extremes (`max(m, axis=0) - min(m, axis=0)`), one call each. `int_rows.rs` holds a
//! typed kernel's: the sum, max, min, `any` and `all` of int64, int32 and bool values, a group of
//! rows or one, into the int64 words its kept accumulators are (`crate::apply_kept_int`): exact
//! integer operations, so the inline loop's words.
//!
//! **Trailing extremes.** `extremes.rs` folds a run of f64, f32, int64, int32 or bool values into
//! its max or min (a bool's `any` or `all`), which a trailing `max` or `min` of a plain read of an input calls for each row of at least
//! 64 points (skeleton.rs `wide_folds`; `crate::apply_extreme` for tests). An `argmax` or
//! `argmin` of a plain read finds a row's point by one call (`args.rs`, one pass in AVX2's
//! registers; `arg_blocks`, `crate::apply_arg` for tests): the first NaN, else the first point
//! equal to the extreme, as the inline update finds it, so an index, the same on every route. A
//! nonzero, non-NaN extreme is the inline lanes' own bits, and so is a zero of a row
//! that is all its segment and holds zeros of one sign only (`row_extreme`); a row whose extreme is
//! a NaN, or a zero of both signs or of a segment of several rows (where the lanes' order picks the
//! sign or payload), is folded again inline, so every route gives the same bits and the
//! `reproducible` profile is unaffected.
//!
//! **Trailing sums.** `sums.rs` adds a row of f32 values (or the products of two rows), or of
//! f64 values (or their squares), into the 16 f64 partials the inline loop keeps, in its partition
//! and order, which a trailing `sum` or `mean` of a plain read of an input, or of a product of two,
//! calls for each row of at least 256 points (f64: where the loop keeps 16 partials, rows of at
//! least `LONG_SUM_ROW` points; skeleton.rs `wide_folds`; `crate::apply_sum` for tests): the
//! inline partials' bits, so the caller's fold of them is the inline result. A row whose partials come back NaN is
//! folded again inline (an addition's operand order, which LLVM may swap, picks a NaN's payload).
//! Sibling reductions whose every component has such a fold (`max(x) - min(x)`, `sum(x) +
//! max(x)` of f32) call each component's for a long row, and fold it again inline for every
//! component where any call's result is one of those cases.
//!
//! **Integer sums.** `int_sums.rs` adds a run of int64, int32 or bool values (a bool's count of
//! its truths) into a wrapping int64 partial, which a typed kernel's trailing `sum` of a plain read
//! of an input calls for each row of at least 64 points (skeleton.rs `wide_folds`;
//! `crate::apply_int_sum` for tests): wrapping addition is associative, so the partial is the
//! inline loop's word.
//!
//! **Moments.** `moments.rs` computes a row's blocks of two passes (`S`, then `Σ (x - m)²`) in
//! the inline loop's partition and merges them into its state, operation for operation, which a
//! compound `moments` (`var`, `std`, `mean` with either) of a plain read of an f64 or f32 input
//! calls for each row of at least 256 points (skeleton.rs `segment`; `crate::apply_moments` for
//! tests): the inline state's bits. A row whose state comes back NaN is folded again inline.
//!
//! **Which level.** [`level`]: AVX-512 (F, DQ, VL) where the host has it, else AVX2 + FMA, else none
//! (kernels keep the inline path); [`WIDE_ENV`] caps it (`avx2`) or turns it off (`off`), and
//! [`crate::NO_FMA_ENV`] turns it off (it stands for a host without FMA). [`routed`] says which
//! routines kernels call: every one at the level, but on a host that runs 256-bit operations as
//! two 128-bit halves (AMD's first Zen cores: [`halves_256`]), where the AVX2 code computes no
//! faster than the inline code and the block's staging is extra work, all but the cheap ones
//! measured slower on blocks there, unless [`WIDE_ENV`] is `avx2`. The unsafe calls of these
//! `#[target_feature]` functions are in call.rs, behind the host's feature check: the block
//! function compiled code calls, and [`crate::apply_wide`], which runs a routine of a given level
//! over a slice (for tests and measurements).

mod args;
mod asin;
mod atan;
mod binary;
mod cbrt;
mod complex;
mod exp_family;
mod extremes;
pub use args::arg_scalar;
pub use extremes::{Extreme, Truth, WideExtreme, row_extreme};
pub(crate) mod int_rows;
pub use int_rows::{IntRows, IntValue};
mod int_sums;
pub use int_sums::IntSummed;
mod lanes;
mod logs;
mod moments;
pub use moments::{BLOCK_POINTS as MOMENTS_BLOCK, Moments, STATE as MOMENTS_STATE};
mod pow;
mod pow_const;
mod rows;
mod sums;
pub use sums::{PARTS, Summed, sum_accumulators};
mod tanh32;

pub use rows::GROUP;

use std::sync::OnceLock;

/// `KILN_JIT_WIDE=off` (or `0`) keeps every kernel on the inline 128-bit path; `avx2` uses the AVX2 +
/// FMA routines even where the host has AVX-512, and for every function (see [`routed`]). Read once,
/// when the first kernel is compiled.
pub const WIDE_ENV: &str = "KILN_JIT_WIDE";

/// An instruction-set level the routines are compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// AVX2 and FMA: 4 f64 or 8 f32 lanes.
    Avx2,
    /// AVX-512 F, DQ and VL (with AVX2 and FMA): 8 f64 or 16 f32 lanes.
    Avx512,
}

impl Level {
    /// Every level, narrowest first.
    pub const ALL: [Level; 2] = [Level::Avx2, Level::Avx512];

    /// Whether this host's processor has the features of `self` (whatever the environment says).
    pub fn on_host(self) -> bool {
        // (read once: the call.rs functions compiled code calls ask on every call, and each of
        // std's feature tests is an atomic load and a branch)
        static ON_HOST: OnceLock<[bool; 2]> = OnceLock::new();
        ON_HOST.get_or_init(|| [Level::Avx2, Level::Avx512].map(Level::detect))[self as usize]
    }

    /// [`Level::on_host`], asked of the processor.
    fn detect(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 =
                std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma");
            match self {
                Level::Avx2 => avx2,
                Level::Avx512 => {
                    avx2 && std::arch::is_x86_feature_detected!("avx512f")
                        && std::arch::is_x86_feature_detected!("avx512dq")
                        && std::arch::is_x86_feature_detected!("avx512vl")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = self;
            false
        }
    }

    /// The widest level this host has, if any.
    pub fn best_on_host() -> Option<Level> {
        Level::ALL.into_iter().rev().find(|l| l.on_host())
    }
}

/// The level compiled kernels use: the best the host has, as [`WIDE_ENV`] allows; none under
/// [`crate::NO_FMA_ENV`] or on a host without AVX2 and FMA.
pub fn level() -> Option<Level> {
    choice().0
}

/// The level, and whether [`WIDE_ENV`] asked for it (`avx2`), read once.
fn choice() -> (Option<Level>, bool) {
    static CHOICE: OnceLock<(Option<Level>, bool)> = OnceLock::new();
    *CHOICE.get_or_init(|| {
        if std::env::var_os(crate::NO_FMA_ENV).is_some_and(|v| v != "0") {
            return (None, false);
        }
        let Some(best) = Level::best_on_host() else {
            return (None, false);
        };
        match std::env::var(WIDE_ENV).as_deref() {
            Ok("off" | "0") => (None, false),
            Ok("avx2") => (Some(Level::Avx2), true),
            _ => (Some(best), false),
        }
    })
}

/// Whether this host's processor executes each 256-bit vector operation as two 128-bit halves:
/// AMD's first Zen cores (family 0x17 below model 0x30: Zen and Zen+, the EPYC 7001 series) and
/// Hygon's (family 0x18, built on them). There an AVX2 routine does the arithmetic of the inline
/// 128-bit code at the same rate, and its block's staging is extra work (see [`routed`]).
pub fn halves_256() -> bool {
    match cpu() {
        Some((Vendor::Amd, family, model)) => family == 0x17 && model < 0x30,
        Some((Vendor::Hygon, family, _)) => family == 0x18,
        _ => false,
    }
}

/// The makers [`cpu`] tells apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Vendor {
    Amd,
    Hygon,
    Intel,
    Other,
}

/// This processor's maker, family and model (CPUID leaves 0 and 1), on x86-64.
fn cpu() -> Option<(Vendor, u32, u32)> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        let v = __cpuid(0);
        let mut vendor = [0u8; 12];
        vendor[..4].copy_from_slice(&v.ebx.to_le_bytes());
        vendor[4..8].copy_from_slice(&v.edx.to_le_bytes());
        vendor[8..].copy_from_slice(&v.ecx.to_le_bytes());
        let a = __cpuid(1).eax;
        let base = (a >> 8) & 0xf;
        let family = if base == 0xf {
            base + ((a >> 20) & 0xff)
        } else {
            base
        };
        let model = ((a >> 4) & 0xf) | (((a >> 16) & 0xf) << 4);
        let vendor = match &vendor {
            b"AuthenticAMD" => Vendor::Amd,
            b"HygonGenuine" => Vendor::Hygon,
            b"GenuineIntel" => Vendor::Intel,
            _ => Vendor::Other,
        };
        Some((vendor, family, model))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// The routines whose AVX2 code loses to the inline 128-bit code where 256-bit operations run as
/// two halves ([`halves_256`]), by type: cheap ones, a few operations a lane, where the block's
/// staging (the argument copied into the slot and the result read back) outweighs what the
/// routine could save. Measured on such a host (an EPYC of family 0x17 model 1, AVX2): `python -m
/// kiln.bench --functions --sizes 1e6 --rounds 5 --cpu-time` with `KILN_JIT_WIDE=off` against the
/// default, four runs each alternating, medians of the time on blocks over the time inline: exp
/// 1.79 (f64) and 1.28 (f32), exp2 1.60 and 1.30, `x**1.5` 1.70 and 1.19, log f32 1.17, tanh f64
/// 1.19, sinh f64 1.17, cosh f64 1.35, expm1 f64 1.20, hypot f64 1.29 (BENCHMARKS.md before 0b97b4d,
/// "Functions from Python on an AVX2-only host"). The loaded 2-core host moved rows whose code had not
/// changed by up to 20%, so the rows between keep their routines (the trigonometric and inverse
/// functions, log1p, arctan2 and pow gained 5 to 37% on blocks).
const HALVED_LOSSES: &[(WideFn, kiln_ir::ElemType)] = {
    use Binary::Hypot;
    use Routine::{Cosh, Exp, Exp2, Expm1, Log, PowThreeHalves, Sinh, Tanh};
    use WideFn::{ComplexAbs, One, Two};
    use kiln_ir::ElemType::{F32, F64};
    &[
        (One(Exp), F64),
        (One(Exp), F32),
        (One(Exp2), F64),
        (One(Exp2), F32),
        (One(PowThreeHalves), F64),
        (One(PowThreeHalves), F32),
        (One(Log), F32),
        (One(Tanh), F64),
        (One(Sinh), F64),
        (One(Cosh), F64),
        (One(Expm1), F64),
        (Two(Hypot), F64),
        // the same lanes as the f64 hypot routine (not measured on such a host itself)
        (ComplexAbs, F64),
    ]
};

/// Whether kernels of `dtype` call `f`'s wide routine on their blocks: wherever the host has a
/// level ([`level`]), except that on a host whose 256-bit operations run as two halves
/// ([`halves_256`]) the AVX2 routines measured slower there stay inline (the list `HALVED_LOSSES`), unless
/// [`WIDE_ENV`] asks for them (`avx2`: every routine, as the tests of every route do). The two
/// routes give the same bits, so this decides speed alone.
pub fn routed(f: WideFn, dtype: kiln_ir::ElemType) -> bool {
    static HALVES: OnceLock<bool> = OnceLock::new();
    match choice() {
        (None, _) => false,
        (Some(Level::Avx512), _) | (Some(Level::Avx2), true) => true,
        (Some(Level::Avx2), false) => {
            !(*HALVES.get_or_init(halves_256) && HALVED_LOSSES.contains(&(f, dtype)))
        }
    }
}

/// A function with a wide routine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Routine {
    /// `exp`.
    Exp,
    /// `log` (natural).
    Log,
    /// `sin`.
    Sin,
    /// `cos`.
    Cos,
    /// `tan`.
    Tan,
    /// `exp2`.
    Exp2,
    /// `expm1`.
    Expm1,
    /// `tanh`.
    Tanh,
    /// `sinh`.
    Sinh,
    /// `cosh`.
    Cosh,
    /// `arcsin`.
    Arcsin,
    /// `arccos`.
    Arccos,
    /// `arctan`.
    Arctan,
    /// `cbrt`.
    Cbrt,
    /// `log2`.
    Log2,
    /// `log10`.
    Log10,
    /// `log1p`.
    Log1p,
    /// `arcsinh`.
    Arcsinh,
    /// `arccosh`.
    Arccosh,
    /// `arctanh`.
    Arctanh,
    /// `x**1.5` (a literal exponent with its own code, `vmath::pow_const`).
    PowThreeHalves,
    /// `x**3`.
    PowCube,
    /// `x**4`.
    PowFourth,
    /// `x**-0.5`.
    PowInvSqrt,
    /// `x**-2`.
    PowInvSquare,
}

impl Routine {
    /// Every routine, in the order of declaration (`call.rs` indexes it by discriminant).
    pub const ALL: [Routine; 25] = [
        Routine::Exp,
        Routine::Log,
        Routine::Sin,
        Routine::Cos,
        Routine::Tan,
        Routine::Exp2,
        Routine::Expm1,
        Routine::Tanh,
        Routine::Sinh,
        Routine::Cosh,
        Routine::Arcsin,
        Routine::Arccos,
        Routine::Arctan,
        Routine::Cbrt,
        Routine::Log2,
        Routine::Log10,
        Routine::Log1p,
        Routine::Arcsinh,
        Routine::Arccosh,
        Routine::Arctanh,
        Routine::PowThreeHalves,
        Routine::PowCube,
        Routine::PowFourth,
        Routine::PowInvSqrt,
        Routine::PowInvSquare,
    ];

    /// The routine of pow by the literal exponent `e`, which has its own code.
    pub(crate) fn of_pow_const(e: crate::vmath::pow_const::ConstExp) -> Routine {
        use crate::vmath::pow_const::ConstExp;
        match e {
            ConstExp::ThreeHalves => Routine::PowThreeHalves,
            ConstExp::Cube => Routine::PowCube,
            ConstExp::Fourth => Routine::PowFourth,
            ConstExp::InvSqrt => Routine::PowInvSqrt,
            ConstExp::InvSquare => Routine::PowInvSquare,
        }
    }

    /// The exponent of a pow routine (`x**1.5` for [`Routine::PowThreeHalves`]), None for the
    /// others.
    pub fn pow_exponent(self) -> Option<f64> {
        use crate::vmath::pow_const::ConstExp;
        ConstExp::ALL
            .iter()
            .find(|&&(_, c)| Routine::of_pow_const(c) == self)
            .map(|&(e, _)| e)
    }

    /// The routine of a unary opcode, if it has one.
    pub fn of_unary(op: kiln_ir::UnaryOp) -> Option<Routine> {
        match op {
            kiln_ir::UnaryOp::Exp => Some(Routine::Exp),
            kiln_ir::UnaryOp::Log => Some(Routine::Log),
            kiln_ir::UnaryOp::Sin => Some(Routine::Sin),
            kiln_ir::UnaryOp::Cos => Some(Routine::Cos),
            kiln_ir::UnaryOp::Tan => Some(Routine::Tan),
            kiln_ir::UnaryOp::Exp2 => Some(Routine::Exp2),
            kiln_ir::UnaryOp::Expm1 => Some(Routine::Expm1),
            kiln_ir::UnaryOp::Tanh => Some(Routine::Tanh),
            kiln_ir::UnaryOp::Sinh => Some(Routine::Sinh),
            kiln_ir::UnaryOp::Cosh => Some(Routine::Cosh),
            kiln_ir::UnaryOp::Arcsin => Some(Routine::Arcsin),
            kiln_ir::UnaryOp::Arccos => Some(Routine::Arccos),
            kiln_ir::UnaryOp::Arctan => Some(Routine::Arctan),
            kiln_ir::UnaryOp::Cbrt => Some(Routine::Cbrt),
            kiln_ir::UnaryOp::Log2 => Some(Routine::Log2),
            kiln_ir::UnaryOp::Log10 => Some(Routine::Log10),
            kiln_ir::UnaryOp::Log1p => Some(Routine::Log1p),
            kiln_ir::UnaryOp::Arcsinh => Some(Routine::Arcsinh),
            kiln_ir::UnaryOp::Arccosh => Some(Routine::Arccosh),
            kiln_ir::UnaryOp::Arctanh => Some(Routine::Arctanh),
            _ => None,
        }
    }
}

/// A function of two arguments with a wide routine (`binary.rs`): `xs[j] = f(xs[j], ys[j])`, the
/// first argument's slot receiving the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binary {
    /// arctan2 (`atan2(x0, x1)`).
    Arctan2,
    /// pow (`x ** y`).
    Pow,
    /// `hypot`.
    Hypot,
}

impl Binary {
    /// Every routine of two arguments, in the order of declaration (`call.rs` indexes it by
    /// discriminant).
    pub const ALL: [Binary; 3] = [Binary::Arctan2, Binary::Pow, Binary::Hypot];

    /// The routine of a binary opcode, if it has one.
    pub fn of_binary(op: kiln_ir::BinaryOp) -> Option<Binary> {
        match op {
            kiln_ir::BinaryOp::Arctan2 => Some(Binary::Arctan2),
            kiln_ir::BinaryOp::Pow => Some(Binary::Pow),
            kiln_ir::BinaryOp::Hypot => Some(Binary::Hypot),
            _ => None,
        }
    }
}

/// A wide routine a kernel calls on its blocks: of one argument or of two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WideFn {
    /// `xs[j] = f(xs[j])`.
    One(Routine),
    /// `xs[j] = f(xs[j], ys[j])`.
    Two(Binary),
    /// Complex division of points whose parts are of the routine's float type (`complex.rs`): the
    /// signature of a routine of two arguments over slices of interleaved parts, two a point.
    ComplexDiv,
    /// The magnitude of points whose parts are of the routine's float type (`complex.rs`): `n`
    /// magnitudes from `2n` interleaved parts, `fn(slot, src, n)`, the points always read from
    /// `src` (an input where it lies, or a slot of them).
    ComplexAbs,
}

impl WideFn {
    /// The routine node `id` of a kernel of `dtype` calls, if it has one: a unary function's, pow's
    /// by a literal exponent with its own code (the routine of one argument, as the inline code
    /// decides it from the exponent's constant in `dtype`), or a binary function's.
    pub(crate) fn of_node(
        arena: &kiln_ir::ExprArena,
        id: kiln_ir::NodeId,
        dtype: kiln_ir::ElemType,
    ) -> Option<WideFn> {
        use crate::vmath::pow_const::ConstExp;
        match *arena.node(id) {
            kiln_ir::Node::Unary(op, _) => Routine::of_unary(op).map(WideFn::One),
            kiln_ir::Node::Binary(kiln_ir::BinaryOp::Pow, _, e) => {
                let literal = match *arena.node(e) {
                    kiln_ir::Node::Literal(bits) => Some(f64::from_bits(bits)),
                    _ => None,
                };
                let in_dtype = |v: f64| match dtype {
                    kiln_ir::ElemType::F64 => v,
                    kiln_ir::ElemType::F32 => f64::from(v as f32),
                    _ => unreachable!("only float types (f32, f64) reach here"),
                };
                match literal.and_then(|v| ConstExp::of(in_dtype(v))) {
                    Some(c) => Some(WideFn::One(Routine::of_pow_const(c))),
                    None => Some(WideFn::Two(Binary::Pow)),
                }
            }
            kiln_ir::Node::Binary(op, _, _) => Binary::of_binary(op).map(WideFn::Two),
            _ => None,
        }
    }

    /// How many arguments the routine takes.
    pub(crate) fn arity(self) -> usize {
        match self {
            WideFn::One(_) => 1,
            WideFn::Two(_) | WideFn::ComplexDiv => 2,
            WideFn::ComplexAbs => 1,
        }
    }

    /// The symbol of its block function on `dtype` (registered by compile.rs where the host has a
    /// wide level).
    pub(crate) fn symbol(self, dtype: kiln_ir::ElemType) -> String {
        // the names of `Routine` and `Binary` differ
        match self {
            WideFn::One(r) => format!("kiln_wide_{r:?}_{}", dtype.short_name()),
            WideFn::Two(r) => format!("kiln_wide_{r:?}_{}", dtype.short_name()),
            WideFn::ComplexDiv => format!("kiln_wide_complexdiv_{}", dtype.short_name()),
            WideFn::ComplexAbs => format!("kiln_wide_complexabs_{}", dtype.short_name()),
        }
        .to_lowercase()
    }
}

/// Where a routine reads its (first) argument and writes its result: in place, or from a source
/// into a destination that need not hold values yet (a kernel's stack slot, or the output row a
/// block is written into: `skeleton/block.rs`), which the routine only writes.
pub enum Io<'a, T> {
    /// `xs[j] = f(xs[j])`.
    InPlace(&'a mut [T]),
    /// `dst[j] = f(src[j])` (`src` as long as `dst`, which callers check).
    From {
        /// Where the results go.
        dst: &'a mut [std::mem::MaybeUninit<T>],
        /// The arguments.
        src: &'a [T],
    },
}

impl<T> Io<'_, T> {
    /// The arguments: the slice computed in place, or the source (as long as the destination).
    pub(crate) fn src(&self) -> &[T] {
        match self {
            Io::InPlace(xs) => xs,
            Io::From { src, dst } => &src[..dst.len()],
        }
    }

    /// The number of elements the routine computes.
    pub fn len(&self) -> usize {
        match self {
            Io::InPlace(xs) => xs.len(),
            Io::From { dst, .. } => dst.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `d[j] = s[j]` for every `j` of `d` (`s` at least as long), into elements that need not hold
/// values yet.
#[inline(always)]
pub(super) fn write<T: Copy>(d: &mut [std::mem::MaybeUninit<T>], s: &[T]) {
    for (d, &s) in d.iter_mut().zip(s) {
        d.write(s);
    }
}

/// A float type with wide routines.
pub trait WideElem: Copy + Sized {
    /// The dtype of `Self`.
    const DTYPE: kiln_ir::ElemType;
    /// The slice function of `r` at `level`: `xs[j] = r(xs[j])` in place, or `dst[j] = r(src[j])`
    /// from a source ([`Io`]). Unsafe to call unless the host has `level` ([`Level::on_host`]),
    /// which call.rs checks.
    fn routine(r: Routine, level: Level) -> unsafe fn(Io<'_, Self>);
    /// The kept sum's group step at `level` (`rows.rs`): `out[j] += tree(rows[0][j], ...,
    /// rows[7][j])` over `out`, in f64. Unsafe to call unless the host has `level`.
    fn group(level: Level) -> unsafe fn([&[Self]; GROUP], &mut [f64]);
    /// The kept sum's single-row step at `level` (`rows.rs`): `out[j] += x[j]` over `out`, in f64.
    /// Unsafe to call unless the host has `level`.
    fn single(level: Level) -> unsafe fn(&[Self], &mut [f64]);
    /// The kept max's (`max`) or min's single-row step at `level` (`rows.rs`): `out[j] =
    /// maximum(out[j], x[j])` over `out`, in `Self`. Unsafe to call unless the host has `level`.
    fn single_extreme(max: bool, level: Level) -> unsafe fn(&[Self], &mut [Self]);
    /// The kept max's (`max`) or min's group step at `level` (`rows.rs`): `out[j] =
    /// maximum(...maximum(out[j], rows[0][j])..., rows[7][j])` over `out`, in `Self`. Unsafe to
    /// call unless the host has `level`.
    fn group_extreme(max: bool, level: Level) -> unsafe fn([&[Self]; GROUP], &mut [Self]);
    /// sin and cos of one argument at `level` (`lanes.rs`): the argument's elements to their sines
    /// (in place, or from a source into a destination: [`Io`]) and `ys[j]` to the cosine of the
    /// same argument (`ys` at least as long, only written), the bits of [`Routine::Sin`] and
    /// [`Routine::Cos`]. Unsafe to call unless the host has `level`.
    fn sincos(level: Level) -> unsafe fn(Io<'_, Self>, &mut [std::mem::MaybeUninit<Self>]);
    /// The slice function of the routine of two arguments `r` at `level` (`binary.rs`):
    /// `xs[j] = f(xs[j], ys[j])` for every `j` of the first arguments (in place, or from a source
    /// into a destination: [`Io`]; `ys` at least as long). Unsafe to call unless the host has
    /// `level`.
    fn binary(r: Binary, level: Level) -> unsafe fn(Io<'_, Self>, &[Self]);
    /// The slice function of complex division at `level` (`complex.rs`) of points whose parts are
    /// `Self`, interleaved: each point of the dividends (two parts; in place, or from a source into
    /// a destination: [`Io`], of an even length) divided by `ys`'s (at least as long).
    /// Unsafe to call unless the host has `level`.
    fn complex_div(level: Level) -> unsafe fn(Io<'_, Self>, &[Self]);
    /// The slice function of the magnitude at `level` (`complex.rs`) of points whose parts are
    /// `Self`: `dst[j] = |z_j|` for the points of `src` (interleaved, twice as long as `dst`).
    /// Unsafe to call unless the host has `level`.
    fn complex_abs(level: Level) -> unsafe fn(&mut [std::mem::MaybeUninit<Self>], &[Self]);
}

impl WideElem for f64 {
    const DTYPE: kiln_ir::ElemType = kiln_ir::ElemType::F64;
    fn routine(r: Routine, level: Level) -> unsafe fn(Io<'_, f64>) {
        match (r, level) {
            (Routine::Exp, Level::Avx2) => lanes::exp_f64_avx2,
            (Routine::Exp, Level::Avx512) => lanes::exp_f64_avx512,
            (Routine::Log, Level::Avx2) => logs::log64::avx2,
            (Routine::Log, Level::Avx512) => logs::log64::avx512,
            (Routine::Sin, Level::Avx2) => lanes::sin_f64_avx2,
            (Routine::Sin, Level::Avx512) => lanes::sin_f64_avx512,
            (Routine::Cos, Level::Avx2) => lanes::cos_f64_avx2,
            (Routine::Cos, Level::Avx512) => lanes::cos_f64_avx512,
            (Routine::Tan, Level::Avx2) => lanes::tan_f64_avx2,
            (Routine::Tan, Level::Avx512) => lanes::tan_f64_avx512,
            (Routine::Exp2, Level::Avx2) => exp_family::exp2_64::avx2,
            (Routine::Exp2, Level::Avx512) => exp_family::exp2_64::avx512,
            (Routine::Expm1, Level::Avx2) => exp_family::expm1_64::avx2,
            (Routine::Expm1, Level::Avx512) => exp_family::expm1_64::avx512,
            (Routine::Tanh, Level::Avx2) => exp_family::tanh64::avx2,
            (Routine::Tanh, Level::Avx512) => exp_family::tanh64::avx512,
            (Routine::Sinh, Level::Avx2) => exp_family::sinh64::avx2,
            (Routine::Sinh, Level::Avx512) => exp_family::sinh64::avx512,
            (Routine::Cosh, Level::Avx2) => exp_family::cosh64::avx2,
            (Routine::Cosh, Level::Avx512) => exp_family::cosh64::avx512,
            (Routine::Arcsin, Level::Avx2) => asin::asin64::avx2,
            (Routine::Arcsin, Level::Avx512) => asin::asin64::avx512,
            (Routine::Arccos, Level::Avx2) => asin::acos64::avx2,
            (Routine::Arccos, Level::Avx512) => asin::acos64::avx512,
            (Routine::Arctan, Level::Avx2) => atan::atan64::avx2,
            (Routine::Arctan, Level::Avx512) => atan::atan64::avx512,
            (Routine::Cbrt, Level::Avx2) => cbrt::cbrt64::avx2,
            (Routine::Cbrt, Level::Avx512) => cbrt::cbrt64::avx512,
            (Routine::Log2, Level::Avx2) => logs::log2_64::avx2,
            (Routine::Log2, Level::Avx512) => logs::log2_64::avx512,
            (Routine::Log10, Level::Avx2) => logs::log10_64::avx2,
            (Routine::Log10, Level::Avx512) => logs::log10_64::avx512,
            (Routine::Log1p, Level::Avx2) => logs::log1p64::avx2,
            (Routine::Log1p, Level::Avx512) => logs::log1p64::avx512,
            (Routine::Arcsinh, Level::Avx2) => logs::asinh64::avx2,
            (Routine::Arcsinh, Level::Avx512) => logs::asinh64::avx512,
            (Routine::Arccosh, Level::Avx2) => logs::acosh64::avx2,
            (Routine::Arccosh, Level::Avx512) => logs::acosh64::avx512,
            (Routine::Arctanh, Level::Avx2) => logs::atanh64::avx2,
            (Routine::Arctanh, Level::Avx512) => logs::atanh64::avx512,
            (Routine::PowThreeHalves, Level::Avx2) => pow_const::three_halves64::avx2,
            (Routine::PowThreeHalves, Level::Avx512) => pow_const::three_halves64::avx512,
            (Routine::PowCube, Level::Avx2) => pow_const::cube64::avx2,
            (Routine::PowCube, Level::Avx512) => pow_const::cube64::avx512,
            (Routine::PowFourth, Level::Avx2) => pow_const::fourth64::avx2,
            (Routine::PowFourth, Level::Avx512) => pow_const::fourth64::avx512,
            (Routine::PowInvSqrt, Level::Avx2) => pow_const::inv_sqrt64::avx2,
            (Routine::PowInvSqrt, Level::Avx512) => pow_const::inv_sqrt64::avx512,
            (Routine::PowInvSquare, Level::Avx2) => pow_const::inv_square64::avx2,
            (Routine::PowInvSquare, Level::Avx512) => pow_const::inv_square64::avx512,
        }
    }
    fn group(level: Level) -> unsafe fn([&[f64]; GROUP], &mut [f64]) {
        match level {
            Level::Avx2 => rows::rows64::group_avx2,
            Level::Avx512 => rows::rows64::group_avx512,
        }
    }
    fn single(level: Level) -> unsafe fn(&[f64], &mut [f64]) {
        match level {
            Level::Avx2 => rows::rows64::single_avx2,
            Level::Avx512 => rows::rows64::single_avx512,
        }
    }
    fn single_extreme(max: bool, level: Level) -> unsafe fn(&[f64], &mut [f64]) {
        match (max, level) {
            (true, Level::Avx2) => rows::rows64::max_avx2,
            (true, Level::Avx512) => rows::rows64::max_avx512,
            (false, Level::Avx2) => rows::rows64::min_avx2,
            (false, Level::Avx512) => rows::rows64::min_avx512,
        }
    }
    fn group_extreme(max: bool, level: Level) -> unsafe fn([&[f64]; GROUP], &mut [f64]) {
        match (max, level) {
            (true, Level::Avx2) => rows::rows64::max_group_avx2,
            (true, Level::Avx512) => rows::rows64::max_group_avx512,
            (false, Level::Avx2) => rows::rows64::min_group_avx2,
            (false, Level::Avx512) => rows::rows64::min_group_avx512,
        }
    }
    fn sincos(level: Level) -> unsafe fn(Io<'_, f64>, &mut [std::mem::MaybeUninit<f64>]) {
        match level {
            Level::Avx2 => lanes::sincos_f64_avx2,
            Level::Avx512 => lanes::sincos_f64_avx512,
        }
    }
    fn binary(r: Binary, level: Level) -> unsafe fn(Io<'_, f64>, &[f64]) {
        match (r, level) {
            (Binary::Arctan2, Level::Avx2) => atan::atan2_64::avx2,
            (Binary::Arctan2, Level::Avx512) => atan::atan2_64::avx512,
            (Binary::Pow, Level::Avx2) => pow::pow64::avx2,
            (Binary::Pow, Level::Avx512) => pow::pow64::avx512,
            (Binary::Hypot, Level::Avx2) => pow::hypot64::avx2,
            (Binary::Hypot, Level::Avx512) => pow::hypot64::avx512,
        }
    }
    fn complex_div(level: Level) -> unsafe fn(Io<'_, f64>, &[f64]) {
        match level {
            Level::Avx2 => complex::div128::avx2,
            Level::Avx512 => complex::div128::avx512,
        }
    }
    fn complex_abs(level: Level) -> unsafe fn(&mut [std::mem::MaybeUninit<f64>], &[f64]) {
        match level {
            Level::Avx2 => complex::abs128::avx2,
            Level::Avx512 => complex::abs128::avx512,
        }
    }
}

impl WideElem for f32 {
    const DTYPE: kiln_ir::ElemType = kiln_ir::ElemType::F32;
    fn routine(r: Routine, level: Level) -> unsafe fn(Io<'_, f32>) {
        match (r, level) {
            (Routine::Exp, Level::Avx2) => lanes::exp_f32_avx2,
            (Routine::Exp, Level::Avx512) => lanes::exp_f32_avx512,
            (Routine::Log, Level::Avx2) => lanes::log_f32_avx2,
            (Routine::Log, Level::Avx512) => lanes::log_f32_avx512,
            (Routine::Sin, Level::Avx2) => lanes::sin_f32_avx2,
            (Routine::Sin, Level::Avx512) => lanes::sin_f32_avx512,
            (Routine::Cos, Level::Avx2) => lanes::cos_f32_avx2,
            (Routine::Cos, Level::Avx512) => lanes::cos_f32_avx512,
            (Routine::Tan, Level::Avx2) => lanes::tan_f32_avx2,
            (Routine::Tan, Level::Avx512) => lanes::tan_f32_avx512,
            (Routine::Exp2, Level::Avx2) => exp_family::exp2_32::avx2,
            (Routine::Exp2, Level::Avx512) => exp_family::exp2_32::avx512,
            (Routine::Expm1, Level::Avx2) => exp_family::expm1_32::avx2,
            (Routine::Expm1, Level::Avx512) => exp_family::expm1_32::avx512,
            (Routine::Tanh, Level::Avx2) => tanh32::avx2,
            (Routine::Tanh, Level::Avx512) => tanh32::avx512,
            (Routine::Sinh, Level::Avx2) => exp_family::sinh32::avx2,
            (Routine::Sinh, Level::Avx512) => exp_family::sinh32::avx512,
            (Routine::Cosh, Level::Avx2) => exp_family::cosh32::avx2,
            (Routine::Cosh, Level::Avx512) => exp_family::cosh32::avx512,
            (Routine::Arcsin, Level::Avx2) => asin::asin32::avx2,
            (Routine::Arcsin, Level::Avx512) => asin::asin32::avx512,
            (Routine::Arccos, Level::Avx2) => asin::acos32::avx2,
            (Routine::Arccos, Level::Avx512) => asin::acos32::avx512,
            (Routine::Arctan, Level::Avx2) => atan::atan32::avx2,
            (Routine::Arctan, Level::Avx512) => atan::atan32::avx512,
            (Routine::Cbrt, Level::Avx2) => cbrt::cbrt32::avx2,
            (Routine::Cbrt, Level::Avx512) => cbrt::cbrt32::avx512,
            (Routine::Log2, Level::Avx2) => logs::log2_32::avx2,
            (Routine::Log2, Level::Avx512) => logs::log2_32::avx512,
            (Routine::Log10, Level::Avx2) => logs::log10_32::avx2,
            (Routine::Log10, Level::Avx512) => logs::log10_32::avx512,
            (Routine::Log1p, Level::Avx2) => logs::log1p32::avx2,
            (Routine::Log1p, Level::Avx512) => logs::log1p32::avx512,
            (Routine::Arcsinh, Level::Avx2) => logs::asinh32::avx2,
            (Routine::Arcsinh, Level::Avx512) => logs::asinh32::avx512,
            (Routine::Arccosh, Level::Avx2) => logs::acosh32::avx2,
            (Routine::Arccosh, Level::Avx512) => logs::acosh32::avx512,
            (Routine::Arctanh, Level::Avx2) => logs::atanh32::avx2,
            (Routine::Arctanh, Level::Avx512) => logs::atanh32::avx512,
            (Routine::PowThreeHalves, Level::Avx2) => pow_const::three_halves32::avx2,
            (Routine::PowThreeHalves, Level::Avx512) => pow_const::three_halves32::avx512,
            (Routine::PowCube, Level::Avx2) => pow_const::cube32::avx2,
            (Routine::PowCube, Level::Avx512) => pow_const::cube32::avx512,
            (Routine::PowFourth, Level::Avx2) => pow_const::fourth32::avx2,
            (Routine::PowFourth, Level::Avx512) => pow_const::fourth32::avx512,
            (Routine::PowInvSqrt, Level::Avx2) => pow_const::inv_sqrt32::avx2,
            (Routine::PowInvSqrt, Level::Avx512) => pow_const::inv_sqrt32::avx512,
            (Routine::PowInvSquare, Level::Avx2) => pow_const::inv_square32::avx2,
            (Routine::PowInvSquare, Level::Avx512) => pow_const::inv_square32::avx512,
        }
    }
    fn group(level: Level) -> unsafe fn([&[f32]; GROUP], &mut [f64]) {
        match level {
            Level::Avx2 => rows::rows32::group_avx2,
            Level::Avx512 => rows::rows32::group_avx512,
        }
    }
    fn single(level: Level) -> unsafe fn(&[f32], &mut [f64]) {
        match level {
            Level::Avx2 => rows::rows32::single_avx2,
            Level::Avx512 => rows::rows32::single_avx512,
        }
    }
    fn single_extreme(max: bool, level: Level) -> unsafe fn(&[f32], &mut [f32]) {
        match (max, level) {
            (true, Level::Avx2) => rows::rows32::max_avx2,
            (true, Level::Avx512) => rows::rows32::max_avx512,
            (false, Level::Avx2) => rows::rows32::min_avx2,
            (false, Level::Avx512) => rows::rows32::min_avx512,
        }
    }
    fn group_extreme(max: bool, level: Level) -> unsafe fn([&[f32]; GROUP], &mut [f32]) {
        match (max, level) {
            (true, Level::Avx2) => rows::rows32::max_group_avx2,
            (true, Level::Avx512) => rows::rows32::max_group_avx512,
            (false, Level::Avx2) => rows::rows32::min_group_avx2,
            (false, Level::Avx512) => rows::rows32::min_group_avx512,
        }
    }
    fn sincos(level: Level) -> unsafe fn(Io<'_, f32>, &mut [std::mem::MaybeUninit<f32>]) {
        match level {
            Level::Avx2 => lanes::sincos_f32_avx2,
            Level::Avx512 => lanes::sincos_f32_avx512,
        }
    }
    fn binary(r: Binary, level: Level) -> unsafe fn(Io<'_, f32>, &[f32]) {
        match (r, level) {
            (Binary::Arctan2, Level::Avx2) => atan::atan2_32::avx2,
            (Binary::Arctan2, Level::Avx512) => atan::atan2_32::avx512,
            (Binary::Pow, Level::Avx2) => pow::pow32::avx2,
            (Binary::Pow, Level::Avx512) => pow::pow32::avx512,
            (Binary::Hypot, Level::Avx2) => pow::hypot32::avx2,
            (Binary::Hypot, Level::Avx512) => pow::hypot32::avx512,
        }
    }
    fn complex_div(level: Level) -> unsafe fn(Io<'_, f32>, &[f32]) {
        match level {
            Level::Avx2 => complex::div64::avx2,
            Level::Avx512 => complex::div64::avx512,
        }
    }
    fn complex_abs(level: Level) -> unsafe fn(&mut [std::mem::MaybeUninit<f32>], &[f32]) {
        match level {
            Level::Avx2 => complex::abs64::avx2,
            Level::Avx512 => complex::abs64::avx512,
        }
    }
}
