//! Typed kernels: bool, int32, int64, float32, float64, complex64 and complex128 values, each node
//! with its own type, and their interpreter (issues 13 and 25).
//!
//! A [`KernelIR`] as the front ends build it is untyped: its literals are Python-style (weak) and
//! its operators are NumPy's operators. [`TypedKernel::new`] types it for the element types of its
//! inputs, as NumPy 2 does (NEP 50, [`crate::promote`]), and writes the result as a kernel whose every
//! operator has operands of one type:
//!
//! - a conversion is an explicit [`Node::Cast`] (`int32 + float32` casts both to float64 first);
//! - a weak literal is cast to the type it takes (`i32 * 2` is `mul %i (cast i32 (int 2))`);
//! - `/` of integers, and unary math (`sqrt sin exp log ...`) of integers and bools, cast to float64
//!   first; `abs sign floor ceil trunc round minimum maximum fmax fmin fmod` of integers stay integer;
//! - `& | ~` are bitwise on integers ([`BinaryOp::BitAnd`], [`UnaryOp::Invert`], ...), logical on
//!   bool, and stay kiln's logical extension when an operand is a float (a bool result); `^ << >>`
//!   of a float are an error, as NumPy's;
//! - comparisons give bool; bool arithmetic is NumPy's (`p + p` is or, `p * p` and, `p * i` int).
//! - complex values ([`crate::complex`]) take NumPy's promotion; a Python complex literal (`2j`,
//!   `complex` of two literals) is weak; `abs real imag` give the parts' float type, `real imag
//!   conj` of a real value the value, zeros, the value; what complex numbers do not have (the
//!   orderings, `// %`, bitwise operators, `floor`..., `min`/`max` and their scans) is an error.
//!
//! Reductions and scans accumulate as NumPy's: `sum`/`prod`/`cumsum`/`cumprod` of bool and integers
//! in int64 (wrapping), `min max cummax cummin` in the data type, the mean of integers in float64;
//! float data as the float interpreter ([`crate::interp`]) does, so a typed kernel whose values are
//! all floats gives the float interpreter's bits.
//!
//! Where kiln differs from NumPy on purpose (no types kiln does not compute): unary math, `floor`,
//! `sign`... of a bool give float64 (NumPy: float16 or int8); `//`, `%`, `**`, `<<`, `>>` of two bools
//! are errors (NumPy: int8). An integer raised to a negative integer *array* element gives what
//! [`crate::int::Int::pow`] gives (1, the exponent read as 0) where NumPy raises at run time.
//!
//! [`interpret`] evaluates a typed kernel one point at a time, with [`crate::int`]'s integer
//! semantics and [`crate::Real`]'s float semantics: the oracle for typed kernels.

use crate::bytes;
use crate::complex;
use crate::dtype::Real;
use crate::error::{IrError, Result};
use crate::expr::{ExprArena, Node, NodeId};
use crate::int::Int;
use crate::interp::{Extents, Folded, StridedInput, fold};
use crate::kernel::{KernelIR, KernelKind, ReduceOp, Start};
use crate::op::{BinaryOp, UnaryOp};
use crate::promote::{self, ElemType, Operand, PromoteError, PromoteOp};
use crate::scan::{Carried, Scan, ScanOp};
use crate::shape::{checked_size, try_filled, unravel};
use crate::tensor::{Tensor, Values};
use num_complex::{Complex32, Complex64};
use std::fmt;

/// Why a kernel must be typed before it runs (an opcode of integers, or a cast), if it must: the
/// float interpreter and the JIT take the rest ([`KernelIR::needs_typing`]).
pub fn needs_typing(kernel: &KernelIR) -> Option<String> {
    kernel.needs_typing()
}

/// A kernel whose every node has a type: see the module doc.
#[derive(Debug, Clone, PartialEq)]
pub struct TypedKernel {
    /// The typed body (casts explicit, bitwise opcodes for integers), its inputs, shape and kind.
    /// Its `dtype` is the float type of its float values (f64 if it has none); nothing reads it.
    pub kernel: KernelIR,
    /// Each input's element type.
    pub input_types: Vec<ElemType>,
    /// The type of every node of `kernel.arena`.
    types: Vec<ElemType>,
}

/// A node's type while typing: an array type, or a Python-style literal not yet given one.
#[derive(Debug, Clone, Copy)]
enum Ty {
    Strong(ElemType),
    WeakInt(i64),
    WeakFloat(f64),
    /// A Python complex literal (`2j`, `complex(1, 2)` of two literals).
    WeakComplex,
}

impl Ty {
    fn operand(self) -> Operand {
        match self {
            Ty::Strong(t) => Operand::Array(t),
            Ty::WeakInt(v) => Operand::Int(v.into()),
            Ty::WeakFloat(v) => Operand::Float(v),
            Ty::WeakComplex => Operand::Complex,
        }
    }

    /// The type a literal has alone (NumPy's default int and float).
    fn resolved(self) -> ElemType {
        match self {
            Ty::Strong(t) => t,
            Ty::WeakInt(_) => ElemType::I64,
            Ty::WeakFloat(_) => ElemType::F64,
            Ty::WeakComplex => ElemType::C128,
        }
    }

    /// A float or a complex value (kiln's logical `& |` take their truth).
    fn is_inexact(self) -> bool {
        matches!(self, Ty::WeakFloat(_) | Ty::WeakComplex) || matches!(self, Ty::Strong(t) if t.is_inexact())
    }

    fn is_weak(self) -> bool {
        !matches!(self, Ty::Strong(_))
    }

    fn is_bytes(self) -> bool {
        matches!(self, Ty::Strong(t) if t.is_bytes())
    }

    /// numexpr's type code of the operand (a Python int literal is `i` where int32 holds it).
    fn numexpr_code(self) -> char {
        match self {
            Ty::Strong(t) => t.numexpr_code(),
            Ty::WeakInt(v) if i32::try_from(v).is_ok() => 'i',
            Ty::WeakInt(_) => 'l',
            Ty::WeakFloat(_) => 'd',
            Ty::WeakComplex => 'c',
        }
    }
}

/// numexpr's name of an operation (`add`, `invert`, `lshift`), for its opcode signatures.
fn numexpr_name(op: impl fmt::Display) -> String {
    match op.to_string().as_str() {
        "not" => "invert".into(),
        "rem" => "mod".into(),
        "bitwise_and" => "and".into(),
        "bitwise_or" => "or".into(),
        "bitwise_xor" => "xor".into(),
        "left_shift" => "lshift".into(),
        "right_shift" => "rshift".into(),
        other => other.into(),
    }
}

/// numexpr's refusal of an operation on byte strings: `NotImplementedError` naming the opcode it
/// lacks where every operand is a string or the operation is a comparison (`add_sss`, `eq_bsi`),
/// else `TypeError` (`s * 2`, `where(c, s, s)`: "strings can only be operated with strings").
fn bytes_error(op: impl fmt::Display, compare: bool, result: char, operands: &[Ty], what: String) -> IrError {
    let all = operands.iter().all(|t| t.is_bytes());
    let error = if compare || all {
        let codes: Vec<char> = operands.iter().map(|t| t.numexpr_code()).collect();
        PromoteError::NotBytes {
            signature: bytes::numexpr_signature(&numexpr_name(op), result, &codes),
        }
    } else {
        PromoteError::BytesWithNumber
    };
    type_error(error, what)
}

fn type_error(e: PromoteError, what: impl fmt::Display) -> IrError {
    IrError::Promote {
        what: what.to_string(),
        error: e,
    }
}

/// The promotion rule of a binary opcode, and whether an integer result is cast to float64 (the
/// float functions: `arctan2 hypot copysign nextafter logaddexp logaddexp2`).
fn rule(op: BinaryOp) -> (PromoteOp, bool) {
    use BinaryOp::*;
    match op {
        Add | Mul | Min | Max | Fmax | Fmin => (PromoteOp::Arith, false),
        Sub => (PromoteOp::Sub, false),
        Div => (PromoteOp::TrueDiv, false),
        FloorDiv => (PromoteOp::FloorDiv, false),
        Rem | Fmod => (PromoteOp::Rem, false),
        Pow => (PromoteOp::Pow, false),
        Lt | Le | Gt | Ge | Eq | Ne | Contains => (PromoteOp::Compare, false),
        And | Or | BitAnd | BitOr | BitXor | Shl | Shr => (PromoteOp::Bitwise, false),
        Arctan2 | Hypot | Copysign | Nextafter | Logaddexp | Logaddexp2 | Complex => (PromoteOp::Arith, true),
    }
}

struct Typer<'a> {
    old: &'a ExprArena,
    inputs: &'a [ElemType],
    arena: ExprArena,
    /// Per old node: its new id and its type.
    map: Vec<Option<(NodeId, Ty)>>,
}

impl Typer<'_> {
    fn get(&self, id: NodeId) -> (NodeId, Ty) {
        self.map[id.index()].expect("operands come first in post order")
    }

    /// The value of old node `id` as type `t`: itself, or a cast.
    fn at(&mut self, id: NodeId, t: ElemType) -> NodeId {
        let (new, ty) = self.get(id);
        match ty {
            Ty::Strong(s) if s == t => new,
            _ => self.arena.cast(t, new),
        }
    }

    fn node(&mut self, id: NodeId) -> Result<(NodeId, Ty)> {
        use ElemType::*;
        Ok(match *self.old.node(id) {
            Node::Input(n) => (self.arena.input(n), Ty::Strong(self.inputs[n as usize])),
            Node::Literal(bits) => (
                self.arena.intern(Node::Literal(bits)),
                Ty::WeakFloat(f64::from_bits(bits)),
            ),
            Node::Int(v) => (self.arena.int(v), Ty::WeakInt(v)),
            Node::Index(a) => (self.arena.index(a), Ty::Strong(I64)),
            Node::Bytes(v) => (self.arena.intern(Node::Bytes(v)), Ty::Strong(Bytes(v.width()))),
            Node::Cast(t, a) if self.get(a).1.is_bytes() || t.is_bytes() => {
                let ta = self.get(a).1;
                return Err(bytes_error(
                    format!("cast to {t}"),
                    false,
                    t.numexpr_code(),
                    &[ta],
                    format!("a cast of {} to {t}", show(ta)),
                ));
            }
            Node::Cast(t, a) => (self.at(a, t), Ty::Strong(t)),
            Node::Where(c, a, b) | Node::Fma(c, a, b)
                if [c, a, b].iter().any(|&x| self.get(x).1.is_bytes()) =>
            {
                let ts = [c, a, b].map(|x| self.get(x).1);
                return Err(bytes_error(
                    "where",
                    false,
                    's',
                    &ts,
                    format!("where({}, {}, {})", show(ts[0]), show(ts[1]), show(ts[2])),
                ));
            }
            Node::Unary(op, a) => self.unary(op, a)?,
            Node::Binary(op, a, b) => self.binary(op, a, b)?,
            Node::Where(c, a, b) => {
                let t = promote::binary(PromoteOp::Where, self.get(a).1.operand(), self.get(b).1.operand())
                    .map_err(|e| type_error(e, "where"))?;
                let c = self.at(c, Bool);
                let (a, b) = (self.at(a, t), self.at(b, t));
                (self.arena.select(c, a, b), Ty::Strong(t))
            }
            Node::Fma(a, b, c) => {
                let t = [a, b, c]
                    .into_iter()
                    .map(|x| self.get(x).1.resolved())
                    .fold(F32, promote::result_type);
                if t.is_complex() {
                    let (a, b, c) = (self.at(a, t), self.at(b, t), self.at(c, t));
                    let m = self.arena.binary(BinaryOp::Mul, a, b);
                    return Ok((self.arena.binary(BinaryOp::Add, m, c), Ty::Strong(t)));
                }
                if !t.is_float() {
                    return Err(IrError::Type(format!("fma of {t}: a float operation")));
                }
                let (a, b, c) = (self.at(a, t), self.at(b, t), self.at(c, t));
                (self.arena.fma(a, b, c), Ty::Strong(t))
            }
        })
    }

    fn unary(&mut self, op: UnaryOp, a: NodeId) -> Result<(NodeId, Ty)> {
        use ElemType::*;
        let (new_a, ta) = self.get(a);
        if ta.is_bytes() {
            return Err(bytes_error(op, false, 's', &[ta], format!("{op}({})", show(ta))));
        }
        // `-` and `~` of a Python int stay Python ints (`x & ~5` is `x & -6`)
        match (op, ta) {
            (UnaryOp::Neg, Ty::WeakInt(v)) if v != i64::MIN => {
                return Ok((self.arena.int(-v), Ty::WeakInt(-v)));
            }
            (UnaryOp::Not | UnaryOp::Invert, Ty::WeakInt(v)) => {
                return Ok((self.arena.int(!v), Ty::WeakInt(!v)));
            }
            (UnaryOp::Neg, Ty::WeakFloat(v)) => {
                return Ok((self.arena.literal(-v), Ty::WeakFloat(-v)));
            }
            (UnaryOp::Neg, Ty::WeakComplex) => {
                return Ok((self.arena.unary(UnaryOp::Neg, new_a), Ty::WeakComplex));
            }
            _ => {}
        }
        let t = ta.resolved();
        let keep =
            |arena: &mut ExprArena, op: UnaryOp, x: NodeId, t: ElemType| (arena.unary(op, x), Ty::Strong(t));
        let x = match ta {
            Ty::Strong(_) => new_a,
            _ => self.arena.cast(t, new_a),
        };
        if let Some(part) = t.real_part() {
            return Ok(match op {
                UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite | UnaryOp::Not => {
                    keep(&mut self.arena, op, x, Bool)
                }
                UnaryOp::Abs | UnaryOp::Real | UnaryOp::Imag => keep(&mut self.arena, op, x, part),
                UnaryOp::Floor
                | UnaryOp::Ceil
                | UnaryOp::Trunc
                | UnaryOp::Erf
                | UnaryOp::Erfc
                | UnaryOp::Cbrt
                | UnaryOp::Deg2Rad
                | UnaryOp::Rad2Deg
                | UnaryOp::Signbit
                | UnaryOp::Invert => {
                    return Err(type_error(
                        PromoteError::NotComplex {
                            what: op.name().into(),
                            ty: t,
                        },
                        format!("{op}({})", show(ta)),
                    ));
                }
                _ => keep(&mut self.arena, op, x, t),
            });
        }
        // the parts of a real number: itself, and a zero of its type
        match op {
            UnaryOp::Real | UnaryOp::Conj => return Ok((x, Ty::Strong(t))),
            UnaryOp::Imag => {
                let zero = self.arena.int(0);
                return Ok((self.arena.cast(t, zero), Ty::Strong(t)));
            }
            _ => {}
        }
        Ok(match (op, t) {
            (UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite, _) => keep(&mut self.arena, op, x, Bool),
            // the sign bit of an integer or a bool is that of its float64 (they have no -0)
            (UnaryOp::Signbit, Bool | I32 | I64) => {
                let f = self.arena.cast(F64, x);
                keep(&mut self.arena, op, f, Bool)
            }
            (UnaryOp::Signbit, _) => keep(&mut self.arena, op, x, Bool),
            (UnaryOp::Not | UnaryOp::Invert, Bool) => keep(&mut self.arena, UnaryOp::Not, x, Bool),
            (UnaryOp::Not | UnaryOp::Invert, I32 | I64) => keep(&mut self.arena, UnaryOp::Invert, x, t),
            // kiln's logical extension on floats
            (UnaryOp::Not | UnaryOp::Invert, _) => keep(&mut self.arena, UnaryOp::Not, x, Bool),
            (UnaryOp::Neg, Bool) => {
                return Err(IrError::Type(
                    "`-` of a bool is not supported (as in NumPy): use `~` for logical not".into(),
                ));
            }
            (UnaryOp::Recip, Bool | I32 | I64) => {
                return Err(IrError::Type(format!(
                    "reciprocal of {t} is integer division in NumPy (1 // x); write 1 / x for a float result"
                )));
            }
            (UnaryOp::Abs, Bool) => (x, Ty::Strong(Bool)),
            (
                UnaryOp::Neg
                | UnaryOp::Abs
                | UnaryOp::Sign
                | UnaryOp::Floor
                | UnaryOp::Ceil
                | UnaryOp::Trunc
                | UnaryOp::Round,
                I32 | I64,
            ) => keep(&mut self.arena, op, x, t),
            // every other function of an integer or a bool computes in float64
            (_, Bool | I32 | I64) => {
                let f = self.arena.cast(F64, x);
                keep(&mut self.arena, op, f, F64)
            }
            (_, F32 | F64) => keep(&mut self.arena, op, x, t),
            (_, C64 | C128) => unreachable!("complex operands are typed above"),
            (_, Bytes(_)) => unreachable!("byte strings are refused above"),
        })
    }

    fn binary(&mut self, op: BinaryOp, a: NodeId, b: NodeId) -> Result<(NodeId, Ty)> {
        use ElemType::*;
        let (ta, tb) = (self.get(a).1, self.get(b).1);
        let what = || format!("{op}({}, {})", show(ta), show(tb));
        let (rule, to_float) = rule(op);
        if ta.is_bytes() || tb.is_bytes() || op == BinaryOp::Contains {
            let compare = rule == PromoteOp::Compare;
            if !(ta.is_bytes() && tb.is_bytes() && bytes::has(op)) {
                let result = if compare { 'b' } else { 's' };
                return Err(bytes_error(op, compare, result, &[ta, tb], what()));
            }
            // two strings compared or searched as they are: no cast
            let (x, y) = (self.get(a).0, self.get(b).0);
            return Ok((self.arena.binary(op, x, y), Ty::Strong(Bool)));
        }
        if op == BinaryOp::Complex {
            return self.complex(a, b);
        }
        // Python's arithmetic of two literals, one complex: a Python complex (still weak)
        if ta.is_weak()
            && tb.is_weak()
            && matches!((ta, tb), (Ty::WeakComplex, _) | (_, Ty::WeakComplex))
            && matches!(
                op,
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Pow
            )
        {
            let (x, y) = (self.at(a, C128), self.at(b, C128));
            return Ok((self.arena.binary(op, x, y), Ty::WeakComplex));
        }
        // `& |` with a float or complex operand: kiln's logical extension, on truth values
        if matches!(op, BinaryOp::And | BinaryOp::Or) && (ta.is_inexact() || tb.is_inexact()) {
            let (x, y) = (self.at(a, Bool), self.at(b, Bool));
            return Ok((self.arena.binary(op, x, y), Ty::Strong(Bool)));
        }
        if rule == PromoteOp::Compare {
            let mut t = promote::common(ta.operand(), tb.operand());
            // an integer literal outside the array's type is compared exactly, in int64
            let fits = |ty: Ty| match ty {
                Ty::WeakInt(v) => i32::try_from(v).is_ok(),
                _ => true,
            };
            if t == I32 && !(fits(ta) && fits(tb)) {
                t = I64;
            }
            if t.is_complex() && !matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
                return Err(type_error(
                    PromoteError::NotComplex {
                        what: format!("the ordering `{op}`"),
                        ty: t,
                    },
                    what(),
                ));
            }
            let (x, y) = (self.at(a, t), self.at(b, t));
            return Ok((self.arena.binary(op, x, y), Ty::Strong(Bool)));
        }
        let mut t = promote::binary(rule, ta.operand(), tb.operand()).map_err(|e| type_error(e, what()))?;
        if op == BinaryOp::Fmod && t == Bool {
            return Err(type_error(
                PromoteError::BoolToInt8 { op: PromoteOp::Rem },
                what(),
            ));
        }
        if matches!(op, BinaryOp::Shl | BinaryOp::Shr) && t == Bool {
            return Err(type_error(
                PromoteError::BoolToInt8 {
                    op: PromoteOp::Bitwise,
                },
                what(),
            ));
        }
        if t.is_complex()
            && (to_float
                || matches!(
                    op,
                    BinaryOp::Min | BinaryOp::Max | BinaryOp::Fmax | BinaryOp::Fmin | BinaryOp::Fmod
                ))
        {
            return Err(type_error(
                PromoteError::NotComplex {
                    what: op.name().into(),
                    ty: t,
                },
                what(),
            ));
        }
        if to_float && !t.is_float() {
            t = F64;
        }
        // the operands' type: `/` of integers divides in float64, so do its operands
        let operands = t;
        let op = match (op, t) {
            (BinaryOp::And, I32 | I64) => BinaryOp::BitAnd,
            (BinaryOp::Or, I32 | I64) => BinaryOp::BitOr,
            (BinaryOp::BitAnd, Bool) => BinaryOp::And,
            (BinaryOp::BitOr, Bool) => BinaryOp::Or,
            _ => op,
        };
        let (x, y) = (self.at(a, operands), self.at(b, operands));
        Ok((self.arena.binary(op, x, y), Ty::Strong(t)))
    }

    /// `complex(a, b)` of two real operands, in the complex type of their common float type; of
    /// two literals a weak complex (a Python complex literal, `2j` is `complex(0, 2)`).
    fn complex(&mut self, a: NodeId, b: NodeId) -> Result<(NodeId, Ty)> {
        let (ta, tb) = (self.get(a).1, self.get(b).1);
        let what = || format!("complex({}, {})", show(ta), show(tb));
        let common = promote::binary(PromoteOp::Arith, ta.operand(), tb.operand())
            .map_err(|e| type_error(e, what()))?;
        if common.is_complex() {
            return Err(IrError::Type(format!(
                "{}: complex() takes two real numbers, its real and imaginary parts",
                what()
            )));
        }
        let parts = if common.is_float() { common } else { ElemType::F64 };
        let (x, y) = (self.at(a, parts), self.at(b, parts));
        let node = self.arena.binary(BinaryOp::Complex, x, y);
        if ta.is_weak() && tb.is_weak() {
            Ok((node, Ty::WeakComplex))
        } else {
            Ok((node, Ty::Strong(parts.complex())))
        }
    }
}

fn show(t: Ty) -> String {
    match t {
        Ty::Strong(t) => t.to_string(),
        Ty::WeakInt(v) => format!("{v}"),
        Ty::WeakFloat(v) => format!("{v:?}"),
        Ty::WeakComplex => "complex".into(),
    }
}

impl TypedKernel {
    /// The element type of component `c` of sibling reductions ([`KernelKind::Siblings`]): its
    /// reduction's result type for its root's values, as that reduction alone gives it; None for
    /// another kind of kernel, or no such component.
    pub fn component_type(&self, c: usize) -> Option<ElemType> {
        let KernelKind::Siblings { ops, .. } = &self.kernel.kind else {
            return None;
        };
        let root = *self.kernel.roots().get(c)?;
        Some(reduced_type(*ops.get(c)?, self.type_of(root)))
    }

    /// Types `kernel` for inputs of `inputs` (one per declared input); `mean`: the reduction is a mean
    /// (a sum of integers is then taken in float64, as NumPy's `mean`).
    ///
    /// # Errors
    /// What NumPy 2 refuses ([`IrError::Type`], with the operator and its operands' types), and a
    /// malformed kernel.
    pub fn new(kernel: &KernelIR, inputs: &[ElemType], mean: bool) -> Result<TypedKernel> {
        kernel.validate()?;
        if let KernelKind::Compound { op, .. } = &kernel.kind {
            return Err(IrError::Type(format!(
                "the compound reduction {} of integer, bool or complex values (the runner computes \
                 its two reductions instead)",
                op.name()
            )));
        }
        if inputs.len() != kernel.inputs.len() {
            return Err(IrError::Arity {
                expected: kernel.inputs.len(),
                got: inputs.len(),
            });
        }
        let roots = kernel.roots();
        let top = roots.iter().map(|r| r.index()).max().unwrap_or(0);
        let mut t = Typer {
            old: &kernel.arena,
            inputs,
            arena: ExprArena::new(),
            map: vec![None; top + 1],
        };
        for id in kernel.arena.reachable_all(&roots) {
            let typed = t.node(id)?;
            t.map[id.index()] = Some(typed);
        }
        // each output takes its own type: a literal alone its default type (int64, float64), a
        // reduction of integers meant as a mean float64
        let mut new_roots = Vec::with_capacity(roots.len());
        for (o, &root) in roots.iter().enumerate() {
            let mut value = t.get(root).1.resolved();
            if value.is_bytes() && o == 0 {
                let what = match &kernel.kind {
                    KernelKind::Reduce { op, .. } => Some(op.name()),
                    KernelKind::Scan(s) => Some(s.op.name()),
                    _ => None,
                };
                if let Some(what) = what {
                    let ty = Ty::Strong(value);
                    let error = PromoteError::NotBytes {
                        signature: bytes::numexpr_signature(what, 's', &['s', 'n']),
                    };
                    return Err(type_error(error, format!("{what}({})", show(ty))));
                }
            }
            if o == 0 && mean && !value.is_inexact() {
                value = ElemType::F64;
            }
            let mut r = t.at(root, value);
            // a literal alone still needs a typed node to evaluate
            if matches!(t.arena.node(r), Node::Int(_) | Node::Literal(_)) {
                r = t.arena.cast(value, r);
            }
            new_roots.push(r);
        }
        let typed = Self::finish(kernel, inputs, t.arena, new_roots)?;
        typed.check_complex_kind()?;
        Ok(typed)
    }

    /// The typed kernel whose arena is `kernel`'s own, already typed (casts explicit, as
    /// [`TypedKernel::new`] leaves them): each node's type follows from its operands' and the
    /// inputs' (`inputs`, one per declared input), nothing is retyped. The JIT compiles a typed
    /// kernel from this form (its key holds the arena, the inputs' types travel as
    /// [`crate::InputDecl::stored`]).
    ///
    /// # Errors
    /// A malformed kernel, or a count of input types other than the kernel's inputs.
    pub fn of_arena(kernel: &KernelIR, inputs: &[ElemType]) -> Result<TypedKernel> {
        kernel.validate()?;
        if inputs.len() != kernel.inputs.len() {
            return Err(IrError::Arity {
                expected: kernel.inputs.len(),
                got: inputs.len(),
            });
        }
        Self::finish(kernel, inputs, kernel.arena.clone(), kernel.roots())
    }

    /// Output `o` alone (see [`KernelIR::output`]): a map, or for `o == 0` the kernel's own kind.
    pub fn output(&self, o: usize) -> TypedKernel {
        TypedKernel {
            kernel: self.kernel.output(o),
            input_types: self.input_types.clone(),
            types: self.types.clone(),
        }
    }

    /// The element type of output `o`: [`TypedKernel::output_type`] for the first, the value type
    /// of a further one (a map).
    pub fn output_type_of(&self, o: usize) -> ElemType {
        match o.checked_sub(1) {
            None => self.output_type(),
            Some(e) => self.type_of(self.kernel.extra[e]),
        }
    }

    fn finish(
        kernel: &KernelIR,
        inputs: &[ElemType],
        arena: ExprArena,
        roots: Vec<NodeId>,
    ) -> Result<TypedKernel> {
        let mut types: Vec<ElemType> = Vec::with_capacity(arena.len());
        for i in 0..arena.len() {
            let ty = match *arena.node(NodeId::at(i)) {
                Node::Input(n) => inputs[n as usize],
                Node::Literal(_) => ElemType::F64,
                Node::Int(_) | Node::Index(_) => ElemType::I64,
                Node::Bytes(v) => ElemType::Bytes(v.width()),
                Node::Cast(t, _) => t,
                Node::Unary(op, a) => match op {
                    UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite | UnaryOp::Not | UnaryOp::Signbit => {
                        ElemType::Bool
                    }
                    // a complex number's parts and magnitude
                    UnaryOp::Abs | UnaryOp::Real | UnaryOp::Imag => {
                        let t: ElemType = types[a.index()];
                        if t.is_complex() {
                            t.real_part().unwrap_or(t)
                        } else {
                            t
                        }
                    }
                    _ => types[a.index()],
                },
                Node::Binary(op, a, _) => {
                    if op.is_logical() {
                        ElemType::Bool
                    } else if op == BinaryOp::Complex {
                        types[a.index()].complex()
                    } else {
                        types[a.index()]
                    }
                }
                Node::Where(_, a, _) | Node::Fma(a, _, _) => types[a.index()],
            };
            types.push(ty);
        }
        let float = types
            .iter()
            .filter_map(|t| t.float())
            .max()
            .unwrap_or(crate::DType::F64);
        let kernel = KernelIR {
            dtype: float,
            arena,
            body: roots[0],
            extra: roots[1..].to_vec(),
            ..kernel.clone()
        };
        Ok(TypedKernel {
            kernel,
            input_types: inputs.to_vec(),
            types,
        })
    }

    /// A reduction or scan complex numbers do not have (`min`, `max`, `argmin`, `argmax`,
    /// `cummax`, `cummin`: NumPy orders complex numbers, numexpr does not, and kiln follows numexpr)
    /// is a type error.
    fn check_complex_kind(&self) -> Result<()> {
        let t = self.value_type();
        if !t.is_complex() {
            return Ok(());
        }
        let what = match &self.kernel.kind {
            KernelKind::Reduce { op, .. } => match op {
                ReduceOp::Min | ReduceOp::Max | ReduceOp::ArgMin | ReduceOp::ArgMax => Some(op.name()),
                _ => None,
            },
            KernelKind::Scan(s) if matches!(s.op, ScanOp::Max | ScanOp::Min) => Some(s.op.name()),
            _ => None,
        };
        match what {
            Some(what) => Err(type_error(
                PromoteError::NotComplex {
                    what: what.into(),
                    ty: t,
                },
                format!("{what} of {t}"),
            )),
            None => Ok(()),
        }
    }

    /// The type of a node of the typed kernel's arena.
    pub fn type_of(&self, id: NodeId) -> ElemType {
        self.types[id.index()]
    }

    /// The type of the body's values.
    pub fn value_type(&self) -> ElemType {
        self.type_of(self.kernel.body)
    }

    /// The element type of the result: the value type of a map; a reduction's or scan's accumulator
    /// result as NumPy's (module doc).
    pub fn output_type(&self) -> ElemType {
        let v = self.value_type();
        match &self.kernel.kind {
            KernelKind::Map => v,
            KernelKind::Reduce { op, .. } => reduced_type(*op, v),
            KernelKind::Scan(s) => match s.op {
                ScanOp::Sum | ScanOp::Prod if !v.is_inexact() => ElemType::I64,
                _ => v,
            },
            // `TypedKernel::new` refuses compound kernels; sibling reductions' components have
            // each its own (`TypedKernel::component_type`)
            KernelKind::Compound { .. } | KernelKind::Siblings { .. } => ElemType::F64,
        }
    }

    /// Why the float path (every value in `dtype`, truth values as 1 / 0 in it, `float_output` its
    /// result type: [`KernelIR::output_type`] of the untyped kernel) would not compute this kernel,
    /// if it would not; `None` where it computes exactly these values and this result type.
    ///
    /// The float path computes a typed kernel whose values are all of `dtype` or bool, where a bool
    /// comes from a comparison or a logical operator and is used only as a truth value (a `where`
    /// condition, an operand of a logical operator) or cast to `dtype` (1 / 0, what the float path
    /// holds), and whose integers are leaves (indices, literals) compared or cast to `dtype`. Anything
    /// else is NumPy's typing at work: `(a > 0) + (b > 0)` is a logical or, `(a > 0) * 3` int64,
    /// `1 + 1` int64 without inputs, `0.25 * (a < 5)` float64 beside float32 `a`, `cumsum(a > 0)`
    /// int64.
    pub fn float_path_differs(&self, dtype: crate::DType, float_output: ElemType) -> Option<String> {
        self.differs(dtype, float_output, &vec![None; self.input_types.len()])
    }

    /// Where the float path computes this kernel in `dtype` reading each input of another type
    /// converted where it is read ([`crate::InputDecl::stored`]): each input's stored type (None:
    /// the dtype); else why not.
    ///
    /// It does where [`TypedKernel::float_path_differs`] holds with such inputs, each of a type
    /// NumPy casts into `dtype` (bool into either float; int32, int64 and float32 into float64;
    /// int64 rounded to the nearest, as the cast does) and
    /// used only cast to `dtype` (`mean(i)`, `sum(i * 0.5)`, `sin(i)`, `x32 * b`), or, a bool, as a
    /// truth value (a `where` condition, a logical operand). An integer input in integer arithmetic
    /// or compared (`i + 1`, `i > 0`: exact in int64, not in float64) is the typed path's.
    pub fn stored_inputs(
        &self,
        dtype: crate::DType,
        float_output: ElemType,
    ) -> std::result::Result<Vec<Option<ElemType>>, String> {
        let f = ElemType::of_float(dtype);
        let arena = &self.kernel.arena;
        let mut stored = vec![None; self.input_types.len()];
        for (i, &t) in self.input_types.iter().enumerate() {
            if t != f {
                if !t.converts_into(dtype) {
                    return Err(format!(
                        "input '{}' of {t} in a {f} kernel",
                        self.kernel.inputs[i].name
                    ));
                }
                stored[i] = Some(t);
            }
        }
        let stored_input = |id: NodeId| match *arena.node(id) {
            Node::Input(n) => stored[n as usize].map(|t| (t, &self.kernel.inputs[n as usize].name)),
            _ => None,
        };
        let roots = self.kernel.roots();
        for id in arena.reachable_all(&roots) {
            let node = *arena.node(id);
            for (k, op) in node.operands().enumerate() {
                let Some((t, name)) = stored_input(op) else {
                    continue;
                };
                let fits = match node {
                    Node::Cast(to, _) => to == f,
                    Node::Where(..) => k == 0 && t == ElemType::Bool,
                    Node::Binary(o, ..) => o.is_logical() && t == ElemType::Bool,
                    Node::Unary(o, _) => o.is_logical() && t == ElemType::Bool,
                    _ => false,
                };
                if !fits {
                    return Err(format!("NumPy computes with input '{name}' in {t}"));
                }
            }
        }
        if let Some((t, name)) = roots.iter().find_map(|&r| stored_input(r)) {
            return Err(format!("input '{name}' of {t} is a result"));
        }
        match self.differs(dtype, float_output, &stored) {
            None => Ok(stored),
            Some(why) => Err(why),
        }
    }

    fn differs(
        &self,
        dtype: crate::DType,
        float_output: ElemType,
        stored: &[Option<ElemType>],
    ) -> Option<String> {
        let f = ElemType::of_float(dtype);
        let arena = &self.kernel.arena;
        let literal = |id: NodeId| matches!(arena.node(id), Node::Int(_) | Node::Literal(_));
        let stored_operand =
            |id: NodeId| matches!(*arena.node(id), Node::Input(n) if stored[n as usize].is_some());
        // in post order: a node is looked at after its operands, which fit (else it returned)
        for id in arena.reachable_all(&self.kernel.roots()) {
            let t = self.type_of(id);
            let node = *arena.node(id);
            let held = |x: NodeId| matches!(self.type_of(x), ty if ty == f || ty == ElemType::Bool || ty == ElemType::I64);
            let fits = match node {
                Node::Int(_) | Node::Index(_) | Node::Literal(_) => true,
                Node::Input(n) => t == f || stored[n as usize].is_some(),
                // the float path holds truth values as 1 / 0 and integers (indices, literals and
                // their arithmetic, exact in it) as floats; a stored input is converted as it is read
                Node::Cast(to, a) => {
                    literal(a)
                        || (to == f && (held(a) || stored_operand(a)))
                        || (to == ElemType::Bool && held(a))
                }
                Node::Binary(op, a, b) if t == ElemType::Bool => op.is_logical() && held(a) && held(b),
                Node::Unary(op, _) if t == ElemType::Bool => op.is_logical(),
                Node::Where(..) if t == ElemType::Bool || t == ElemType::I64 => true,
                // index arithmetic (`o - i >= 0`, the triangular masks of the prefix-scan rewrite)
                Node::Binary(
                    BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Min | BinaryOp::Max,
                    ..,
                )
                | Node::Unary(UnaryOp::Neg | UnaryOp::Abs, _)
                    if t == ElemType::I64 =>
                {
                    true
                }
                _ => t == f,
            };
            if !fits {
                let what = match node {
                    Node::Unary(op, _) => format!("{op} in {t}"),
                    Node::Binary(op, _, _) => format!("{op} in {t}"),
                    Node::Cast(to, a) => format!("with a {} taken as {to}", self.type_of(a)),
                    Node::Where(..) => format!("where in {t}"),
                    Node::Fma(..) => format!("fma in {t}"),
                    _ => format!("with an input of {t}"),
                };
                return Some(format!("NumPy computes {what}, where the float path has {f}"));
            }
        }
        (0..self.kernel.n_outputs()).find_map(|o| {
            let want = if o == 0 {
                float_output
            } else {
                self.kernel.output_type_of(o)
            };
            let t = self.output_type_of(o);
            (t != want).then(|| format!("NumPy's result type is {t}, where the float path gives {want}"))
        })
    }

    /// Whether every value is a float (f32 or f64) and there is no cast: the kernel the float
    /// interpreter and the JIT compute the same way.
    pub fn is_float_only(&self) -> bool {
        self.kernel
            .arena
            .reachable_all(&self.kernel.roots())
            .into_iter()
            .all(|id| self.type_of(id).is_float() && !matches!(self.kernel.arena.node(id), Node::Cast(..)))
    }
}

impl fmt::Display for TypedKernel {
    /// As [`KernelIR`]'s text form, each input and node with its type.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = &self.kernel;
        crate::text::write_kind(f, &k.kind)?;
        writeln!(
            f,
            " {} {:?} -> {} {:?}",
            self.value_type().short(),
            k.shape,
            self.output_type().short(),
            k.output_shape()
        )?;
        for (i, input) in k.inputs.iter().enumerate() {
            writeln!(
                f,
                "  in{i} {}: {} {:?}",
                input.name,
                self.input_types[i].short(),
                input.shape
            )?;
        }
        let mut names = std::collections::HashMap::new();
        for id in k.arena.reachable_all(&k.roots()) {
            let n = names.len();
            names.insert(id, n);
            let r = |id: NodeId| names[&id];
            let t = self.type_of(id).short();
            match *k.arena.node(id) {
                Node::Input(i) => writeln!(f, "  %{n}: {t} = in{i}")?,
                Node::Literal(bits) => writeln!(f, "  %{n} = lit {:?}", f64::from_bits(bits))?,
                Node::Int(v) => writeln!(f, "  %{n} = int {v}")?,
                Node::Index(a) => writeln!(f, "  %{n}: {t} = index {a}")?,
                Node::Bytes(v) => writeln!(f, "  %{n}: {t} = bytes {v}")?,
                Node::Cast(_, a) => writeln!(f, "  %{n}: {t} = cast %{}", r(a))?,
                Node::Unary(op, a) => writeln!(f, "  %{n}: {t} = {op} %{}", r(a))?,
                Node::Binary(op, a, b) => writeln!(f, "  %{n}: {t} = {op} %{} %{}", r(a), r(b))?,
                Node::Where(c, a, b) => writeln!(f, "  %{n}: {t} = where %{} %{} %{}", r(c), r(a), r(b))?,
                Node::Fma(a, b, c) => writeln!(f, "  %{n}: {t} = fma %{} %{} %{}", r(a), r(b), r(c))?,
            }
        }
        for root in k.roots() {
            writeln!(f, "  out %{}", names[&root])?;
        }
        Ok(())
    }
}

/// One value of a typed kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// A bool.
    Bool(bool),
    /// An int32.
    I32(i32),
    /// An int64.
    I64(i64),
    /// A float32.
    F32(f32),
    /// A float64.
    F64(f64),
    /// A complex64.
    C64(Complex32),
    /// A complex128.
    C128(Complex64),
}

impl Scalar {
    /// The value's type.
    pub fn ty(self) -> ElemType {
        match self {
            Scalar::Bool(_) => ElemType::Bool,
            Scalar::I32(_) => ElemType::I32,
            Scalar::I64(_) => ElemType::I64,
            Scalar::F32(_) => ElemType::F32,
            Scalar::F64(_) => ElemType::F64,
            Scalar::C64(_) => ElemType::C64,
            Scalar::C128(_) => ElemType::C128,
        }
    }

    /// Whether the value reads as true: nonzero, NaN included.
    pub fn truth(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::I32(v) => v != 0,
            Scalar::I64(v) => v != 0,
            Scalar::F32(v) => v != 0.0,
            Scalar::F64(v) => v != 0.0,
            Scalar::C64(z) => complex::truth(z),
            Scalar::C128(z) => complex::truth(z),
        }
    }

    /// The value converted to `t` as NumPy's `astype`: integers wrap to a narrower integer, floats
    /// truncate toward zero into an integer (NaN, ±inf and values out of range give the type's MIN,
    /// as x86), integers round to the nearest float, anything is true where nonzero; a complex number
    /// converts to a real type by its real part (NumPy's `ComplexWarning` case), a real number to a
    /// complex type with a zero imaginary part.
    pub fn cast(self, t: ElemType) -> Scalar {
        use Scalar::*;
        if t != ElemType::Bool {
            match self {
                C64(z) if !t.is_complex() => return F32(z.re).cast(t),
                C128(z) if !t.is_complex() => return F64(z.re).cast(t),
                _ => {}
            }
        }
        match t {
            ElemType::Bool => Bool(self.truth()),
            ElemType::I32 => I32(match self {
                Bool(b) => b as i32,
                I32(v) => v,
                I64(v) => v as i32,
                F32(v) => <i32 as Int>::from_f64(v as f64),
                F64(v) => <i32 as Int>::from_f64(v),
                C64(_) | C128(_) => unreachable!("a complex number casts by its real part"),
            }),
            ElemType::I64 => I64(match self {
                Bool(b) => b as i64,
                I32(v) => v as i64,
                I64(v) => v,
                F32(v) => <i64 as Int>::from_f64(v as f64),
                F64(v) => <i64 as Int>::from_f64(v),
                C64(_) | C128(_) => unreachable!("a complex number casts by its real part"),
            }),
            ElemType::F32 => F32(match self {
                Bool(b) => b as u8 as f32,
                I32(v) => v as f32,
                I64(v) => v as f32,
                F32(v) => v,
                F64(v) => v as f32,
                C64(_) | C128(_) => unreachable!("a complex number casts by its real part"),
            }),
            ElemType::F64 => F64(match self {
                Bool(b) => b as u8 as f64,
                I32(v) => v as f64,
                I64(v) => v as f64,
                F32(v) => v as f64,
                F64(v) => v,
                C64(_) | C128(_) => unreachable!("a complex number casts by its real part"),
            }),
            ElemType::C64 => C64(match self {
                C64(z) => z,
                C128(z) => Complex32::new(z.re as f32, z.im as f32),
                real => match real.cast(ElemType::F32) {
                    F32(v) => Complex32::new(v, 0.0),
                    _ => unreachable!("cast to float32"),
                },
            }),
            ElemType::C128 => C128(match self {
                C64(z) => Complex64::new(z.re as f64, z.im as f64),
                C128(z) => z,
                real => match real.cast(ElemType::F64) {
                    F64(v) => Complex64::new(v, 0.0),
                    _ => unreachable!("cast to float64"),
                },
            }),
            ElemType::Bytes(_) => unreachable!("the typing casts nothing to a byte string"),
        }
    }
}

/// The float types of complex values' parts, and how a complex value of them is a [`Scalar`].
trait Parts: Real + Into<Scalar> {
    /// The scalar of a complex value of these parts.
    fn wrap(z: num_complex::Complex<Self>) -> Scalar;
    /// The complex value a scalar of this complex type holds.
    fn unwrap(s: Scalar) -> num_complex::Complex<Self>;
}

impl Parts for f32 {
    fn wrap(z: Complex32) -> Scalar {
        Scalar::C64(z)
    }
    fn unwrap(s: Scalar) -> Complex32 {
        match s {
            Scalar::C64(z) => z,
            _ => unreachable!("values of the body's type"),
        }
    }
}

impl Parts for f64 {
    fn wrap(z: Complex64) -> Scalar {
        Scalar::C128(z)
    }
    fn unwrap(s: Scalar) -> Complex64 {
        match s {
            Scalar::C128(z) => z,
            _ => unreachable!("values of the body's type"),
        }
    }
}

/// A complex opcode's result as a scalar.
fn complex_out<T: Parts>(o: complex::Out<T>) -> Scalar {
    match o {
        complex::Out::Complex(z) => T::wrap(z),
        complex::Out::Real(v) => v.into(),
        complex::Out::Truth(b) => Scalar::Bool(b),
    }
}

fn int_unary<T: Int>(op: UnaryOp, x: T) -> T {
    match op {
        UnaryOp::Neg => x.neg(),
        UnaryOp::Abs => x.abs(),
        UnaryOp::Sign => x.sign(),
        UnaryOp::Invert => x.not(),
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Trunc | UnaryOp::Round => x,
        _ => unreachable!("the typing casts integer operands of {op} to float64"),
    }
}

fn int_binary<T: Int>(op: BinaryOp, a: T, b: T) -> std::result::Result<T, bool> {
    Ok(match op {
        BinaryOp::Add => a.add(b),
        BinaryOp::Sub => a.sub(b),
        BinaryOp::Mul => a.mul(b),
        BinaryOp::FloorDiv => a.floor_div(b),
        BinaryOp::Rem => a.rem(b),
        // C's `%` (the dividend's sign), 0 for a zero divisor as NumPy's integer fmod
        BinaryOp::Fmod => a.rem(b).sub(fmod_fix(a, b)),
        BinaryOp::Pow => a.pow(b),
        BinaryOp::Min | BinaryOp::Fmin => a.min(b),
        BinaryOp::Max | BinaryOp::Fmax => a.max(b),
        BinaryOp::BitAnd => a.and(b),
        BinaryOp::BitOr => a.or(b),
        BinaryOp::BitXor => a.xor(b),
        BinaryOp::Shl => a.shl(b),
        BinaryOp::Shr => a.shr(b),
        BinaryOp::Lt => return Err(a < b),
        BinaryOp::Le => return Err(a <= b),
        BinaryOp::Gt => return Err(a > b),
        BinaryOp::Ge => return Err(a >= b),
        BinaryOp::Eq => return Err(a == b),
        BinaryOp::Ne => return Err(a != b),
        _ => unreachable!("the typing gives {op} float operands"),
    })
}

/// What turns Python's remainder (the divisor's sign) into C's (the dividend's): `b` where the
/// remainder is nonzero and its sign differs from `a`'s, else 0 (also for a zero divisor).
fn fmod_fix<T: Int>(a: T, b: T) -> T {
    let r = a.rem(b);
    if r != T::ZERO && ((r < T::ZERO) != (a < T::ZERO)) {
        b
    } else {
        T::ZERO
    }
}

/// One unary opcode on a value of its operand type.
fn unary(op: UnaryOp, x: Scalar) -> Scalar {
    use Scalar::*;
    match x {
        F64(v) if op.is_logical() => Bool(op.eval(v) != 0.0),
        F32(v) if op.is_logical() => Bool(op.eval(v) != 0.0),
        F64(v) => F64(op.eval(v)),
        F32(v) => F32(op.eval(v)),
        I32(_) | I64(_) if matches!(op, UnaryOp::IsNan | UnaryOp::IsInf) => Bool(false),
        I32(_) | I64(_) if op == UnaryOp::IsFinite => Bool(true),
        I32(v) => I32(int_unary(op, v)),
        I64(v) => I64(int_unary(op, v)),
        C64(z) => complex_out(complex::unary(op, z)),
        C128(z) => complex_out(complex::unary(op, z)),
        Bool(b) => Bool(match op {
            UnaryOp::Not | UnaryOp::Invert => !b,
            UnaryOp::Abs => b,
            UnaryOp::IsNan | UnaryOp::IsInf => false,
            UnaryOp::IsFinite => true,
            _ => unreachable!("the typing casts bool operands of {op} to float64"),
        }),
    }
}

/// One binary opcode on two values of its operands' type.
fn binary(op: BinaryOp, a: Scalar, b: Scalar) -> Scalar {
    use Scalar::*;
    match (a, b) {
        (F32(x), F32(y)) if op == BinaryOp::Complex => C64(Complex32::new(x, y)),
        (F64(x), F64(y)) if op == BinaryOp::Complex => C128(Complex64::new(x, y)),
        (F64(x), F64(y)) if op.is_logical() => Bool(op.eval(x, y) != 0.0),
        (F32(x), F32(y)) if op.is_logical() => Bool(op.eval(x, y) != 0.0),
        (F64(x), F64(y)) => F64(op.eval(x, y)),
        (F32(x), F32(y)) => F32(op.eval(x, y)),
        (I32(x), I32(y)) => int_binary(op, x, y).map_or_else(Bool, I32),
        (I64(x), I64(y)) => int_binary(op, x, y).map_or_else(Bool, I64),
        (C64(x), C64(y)) => complex_out(complex::binary(op, x, y)),
        (C128(x), C128(y)) => complex_out(complex::binary(op, x, y)),
        (Bool(x), Bool(y)) => Bool(match op {
            BinaryOp::Add | BinaryOp::Max | BinaryOp::Fmax | BinaryOp::Or | BinaryOp::BitOr => x || y,
            BinaryOp::Mul | BinaryOp::Min | BinaryOp::Fmin | BinaryOp::And | BinaryOp::BitAnd => x && y,
            BinaryOp::BitXor | BinaryOp::Ne => x != y,
            BinaryOp::Eq => x == y,
            BinaryOp::Lt => !x & y,
            BinaryOp::Le => x <= y,
            BinaryOp::Gt => x & !y,
            BinaryOp::Ge => x >= y,
            _ => unreachable!("the typing refuses {op} of two bools"),
        }),
        _ => unreachable!("the typing gives {op} operands of one type"),
    }
}

/// An input of a typed kernel: its elements in their own type, read as [`StridedInput`] says.
#[derive(Debug, Clone)]
pub enum TypedInput<'a> {
    /// bool elements.
    Bool(StridedInput<'a, bool>),
    /// int32 elements.
    I32(StridedInput<'a, i32>),
    /// int64 elements.
    I64(StridedInput<'a, i64>),
    /// float32 elements.
    F32(StridedInput<'a, f32>),
    /// float64 elements.
    F64(StridedInput<'a, f64>),
    /// complex64 elements.
    C64(StridedInput<'a, Complex32>),
    /// complex128 elements.
    C128(StridedInput<'a, Complex64>),
    /// Byte strings of this width: string `idx` is the `width` bytes from the position
    /// [`StridedInput`] gives for `idx` (its offset and strides counted in bytes).
    Bytes(StridedInput<'a, u8>, u32),
}

impl<'a> TypedInput<'a> {
    /// The string at point `idx` of a byte-string input (empty for any other).
    fn bytes_at(&self, idx: &[usize]) -> &'a [u8] {
        match self {
            TypedInput::Bytes(s, w) => {
                let start = s.position(idx);
                &s.data[start..start + *w as usize]
            }
            _ => &[],
        }
    }
}

impl TypedInput<'_> {
    /// The elements' type.
    pub fn ty(&self) -> ElemType {
        match self {
            TypedInput::Bool(_) => ElemType::Bool,
            TypedInput::I32(_) => ElemType::I32,
            TypedInput::I64(_) => ElemType::I64,
            TypedInput::F32(_) => ElemType::F32,
            TypedInput::F64(_) => ElemType::F64,
            TypedInput::C64(_) => ElemType::C64,
            TypedInput::C128(_) => ElemType::C128,
            TypedInput::Bytes(_, w) => ElemType::Bytes(*w),
        }
    }

    fn check(&self, shape: &[usize], index: usize) -> Result<()> {
        match self {
            TypedInput::Bool(s) => s.check(shape, index),
            TypedInput::I32(s) => s.check(shape, index),
            TypedInput::I64(s) => s.check(shape, index),
            TypedInput::F32(s) => s.check(shape, index),
            TypedInput::F64(s) => s.check(shape, index),
            TypedInput::C64(s) => s.check(shape, index),
            TypedInput::C128(s) => s.check(shape, index),
            TypedInput::Bytes(s, w) => s.check_span(shape, index, *w as usize),
        }
    }

    fn at(&self, idx: &[usize]) -> Scalar {
        match self {
            TypedInput::Bool(s) => Scalar::Bool(s.at(idx)),
            TypedInput::I32(s) => Scalar::I32(s.at(idx)),
            TypedInput::I64(s) => Scalar::I64(s.at(idx)),
            TypedInput::F32(s) => Scalar::F32(s.at(idx)),
            TypedInput::F64(s) => Scalar::F64(s.at(idx)),
            TypedInput::C64(s) => Scalar::C64(s.at(idx)),
            TypedInput::C128(s) => Scalar::C128(s.at(idx)),
            // a string is read where it is compared ([`Evaluator::bytes`]), never as a scalar
            TypedInput::Bytes(..) => Scalar::Bool(false),
        }
    }
}

/// Evaluates the body at one point.
struct Evaluator<'k, 'a> {
    kernel: &'k TypedKernel,
    inputs: &'k [TypedInput<'a>],
    order: Vec<NodeId>,
    scratch: Vec<Scalar>,
}

impl<'a> Evaluator<'_, 'a> {
    /// The byte string node `id` (an input or a constant) holds at point `idx`.
    fn bytes(&self, id: NodeId, idx: &[usize]) -> &'a [u8] {
        match *self.kernel.kernel.arena.node(id) {
            Node::Input(n) => self.inputs[n as usize].bytes_at(idx),
            Node::Bytes(v) => v.bytes(),
            _ => &[],
        }
    }

    fn at(&mut self, idx: &[usize]) -> Scalar {
        let arena = &self.kernel.kernel.arena;
        for &id in &self.order {
            let s = &self.scratch;
            let v = match *arena.node(id) {
                Node::Binary(op, a, b) if self.kernel.type_of(a).is_bytes() => {
                    Scalar::Bool(bytes::eval(op, self.bytes(a, idx), self.bytes(b, idx)).unwrap_or(false))
                }
                // strings are read where they are compared
                Node::Bytes(_) => Scalar::Bool(false),
                Node::Input(n) => self.inputs[n as usize].at(idx),
                Node::Literal(bits) => Scalar::F64(f64::from_bits(bits)),
                Node::Int(v) => Scalar::I64(v),
                Node::Index(a) => Scalar::I64(idx[a as usize] as i64),
                Node::Cast(t, a) => match (*arena.node(a), t) {
                    // a Python float takes a float type by rounding once, as NumPy's
                    (Node::Literal(bits), ElemType::F32 | ElemType::C64) => {
                        Scalar::F32(f64::from_bits(bits) as f32).cast(t)
                    }
                    _ => s[a.index()].cast(t),
                },
                Node::Unary(op, a) => unary(op, s[a.index()]),
                Node::Binary(op, a, b) => binary(op, s[a.index()], s[b.index()]),
                Node::Where(c, a, b) => {
                    if s[c.index()].truth() {
                        s[a.index()]
                    } else {
                        s[b.index()]
                    }
                }
                Node::Fma(a, b, c) => match (s[a.index()], s[b.index()], s[c.index()]) {
                    (Scalar::F64(x), Scalar::F64(y), Scalar::F64(z)) => Scalar::F64(x.mul_add(y, z)),
                    (Scalar::F32(x), Scalar::F32(y), Scalar::F32(z)) => Scalar::F32(x.mul_add(y, z)),
                    _ => unreachable!("the typing gives fma float operands"),
                },
            };
            self.scratch[id.index()] = v;
        }
        self.scratch[self.kernel.kernel.body.index()]
    }
}

/// Evaluates a typed kernel over `inputs` (one per declared input, of its declared type), each
/// reduction starting at `start` (see [`Start`]; an integer accumulator takes an integral start that
/// fits int64, else an error).
pub fn interpret(kernel: &TypedKernel, inputs: &[TypedInput<'_>], start: Start<'_>) -> Result<Tensor> {
    let k = &kernel.kernel;
    if inputs.len() != k.inputs.len() {
        return Err(IrError::Arity {
            expected: k.inputs.len(),
            got: inputs.len(),
        });
    }
    for (i, input) in inputs.iter().enumerate() {
        if input.ty() != kernel.input_types[i] {
            return Err(IrError::BadInput {
                index: i,
                why: format!("{} given for a {} input", input.ty(), kernel.input_types[i]),
            });
        }
        input.check(&k.shape, i)?;
    }
    let mut eval = Evaluator {
        kernel,
        inputs,
        order: k.arena.reachable(k.body),
        scratch: vec![Scalar::Bool(false); k.body.index() + 1],
    };
    match &k.kind {
        KernelKind::Map if kernel.value_type().is_bytes() => map_bytes(kernel, &eval),
        KernelKind::Map => {
            let out = each_point(&k.shape, 1, |idx, out| out.push(eval.at(idx)))?;
            Ok(Tensor {
                shape: k.shape.clone(),
                values: collect(out, kernel.value_type()),
            })
        }
        KernelKind::Reduce { op, axes } => reduce(kernel, *op, axes, &mut eval, start),
        KernelKind::Compound { op, .. } => Err(IrError::Type(format!(
            "the compound reduction {} of a typed kernel",
            op.name()
        ))),
        KernelKind::Siblings { .. } => Err(IrError::Type("sibling reductions of a typed kernel".into())),
        KernelKind::Scan(scan) => {
            if start != Start::Identity {
                return Err(IrError::InvalidReduction(
                    "a scan takes its initial value in the kernel, not as a start".into(),
                ));
            }
            scan_kernel(kernel, scan, &mut eval)
        }
    }
}

/// Evaluates every output of a typed kernel (see [`KernelIR::extra`]): one tensor per output, in
/// order, each of its own type, each what [`interpret`] gives for that output alone (the oracle of
/// a typed kernel of several outputs; `start` is the first output's, a reduction's).
pub fn interpret_outputs(
    kernel: &TypedKernel,
    inputs: &[TypedInput<'_>],
    start: Start<'_>,
) -> Result<Vec<Tensor>> {
    kernel.kernel.validate()?;
    (0..kernel.kernel.n_outputs())
        .map(|o| {
            let start = if o == 0 { start } else { Start::Identity };
            interpret(&kernel.output(o), inputs, start)
        })
        .collect()
}

/// The result type of the reduction `op` of values of type `v`, as NumPy's: any and all bool, arg
/// reductions their int64 indices, sums and products of bool and integer values int64, else `v`.
fn reduced_type(op: ReduceOp, v: ElemType) -> ElemType {
    match op {
        ReduceOp::Any | ReduceOp::All => ElemType::Bool,
        ReduceOp::ArgMin | ReduceOp::ArgMax => ElemType::I64,
        ReduceOp::Sum | ReduceOp::Prod if !v.is_inexact() => ElemType::I64,
        _ => v,
    }
}

/// A map whose value is a byte string (an input or a constant: nothing computes one), copied: the
/// strings of its width (at least 1: NumPy has no `S0` array, `b''` alone gives `S1` `b''`).
fn map_bytes(kernel: &TypedKernel, eval: &Evaluator<'_, '_>) -> Result<Tensor> {
    let k = &kernel.kernel;
    let width = kernel.value_type().size().max(1);
    let data = each_point(&k.shape, width, |idx, data| {
        let s = eval.bytes(k.body, idx);
        data.extend_from_slice(s);
        data.resize(data.len() + (width - s.len()), 0);
    })?;
    Ok(Tensor {
        shape: k.shape.clone(),
        values: Values::Bytes { width, data },
    })
}

/// `f` at every point of `shape` in C order, pushing that point's `per` values into the result
/// (reserved fallibly).
fn each_point<T>(shape: &[usize], per: usize, mut f: impl FnMut(&[usize], &mut Vec<T>)) -> Result<Vec<T>> {
    let n = checked_size(shape)?;
    let too_big = || IrError::Allocation {
        what: "the result".into(),
        elements: n,
    };
    let total = n.checked_mul(per).ok_or_else(too_big)?;
    let mut out = Vec::new();
    out.try_reserve_exact(total).map_err(|_| too_big())?;
    let mut idx = vec![0; shape.len()];
    for flat in 0..n {
        unravel(flat, shape, &mut idx);
        f(&idx, &mut out);
    }
    Ok(out)
}

/// Values of one type gathered into [`Values`].
fn collect(v: Vec<Scalar>, t: ElemType) -> Values {
    macro_rules! gather {
        ($variant:ident) => {
            Values::$variant(
                v.into_iter()
                    .map(|s| match s.cast(t) {
                        Scalar::$variant(x) => x,
                        _ => unreachable!("cast to its own type"),
                    })
                    .collect(),
            )
        };
    }
    match t {
        ElemType::Bool => gather!(Bool),
        ElemType::I32 => gather!(I32),
        ElemType::I64 => gather!(I64),
        ElemType::F32 => gather!(F32),
        ElemType::F64 => gather!(F64),
        ElemType::C64 => gather!(C64),
        ElemType::C128 => gather!(C128),
        ElemType::Bytes(_) => unreachable!("a map of byte strings is copied by map_bytes"),
    }
}

/// The state a scan of bool or integer values of type `vt` starts from (the compiled code's too):
/// a sum's or product's int64 (its `initial`, an integral value int64 holds, else 0 or 1); a
/// cummax's or cummin's in the data type (its `initial`, exact in the type, else the neutral
/// element: MIN for cummax, MAX for cummin, false / true for bools).
///
/// # Errors
/// An `initial` the accumulator does not hold.
pub fn scan_start(scan: &Scan, vt: ElemType) -> Result<Scalar> {
    if scan.op.wide() {
        return Ok(Scalar::I64(match scan.initial() {
            Some(v) => int_start(v, scan.op.name())?,
            None if scan.op == ScanOp::Prod => 1,
            None => 0,
        }));
    }
    Ok(match scan.initial() {
        Some(v) => typed_start(v, vt, scan.op.name())?,
        None => match (scan.op == ScanOp::Max, vt) {
            (true, ElemType::Bool) => Scalar::Bool(false),
            (false, ElemType::Bool) => Scalar::Bool(true),
            (true, ElemType::I32) => Scalar::I32(i32::MIN),
            (false, ElemType::I32) => Scalar::I32(i32::MAX),
            (true, _) => Scalar::I64(i64::MIN),
            (false, _) => Scalar::I64(i64::MAX),
        },
    })
}

/// The int64 accumulator a reduction `op` of bool or integer values of type `vt` starts from with
/// the `initial` value `v` (the compiled code's, as [`interpret`] folds it): a sum's or product's
/// integral value, a min's or max's value of the type, as int64.
///
/// # Errors
/// An `initial` the accumulator does not hold, as [`interpret`] gives it.
pub fn reduce_start(op: ReduceOp, vt: ElemType, v: f64) -> Result<i64> {
    match op {
        ReduceOp::Sum => int_start(v, "an integer sum"),
        ReduceOp::Prod => int_start(v, "an integer product"),
        _ => match typed_start(v, vt, op.name())?.cast(ElemType::I64) {
            Scalar::I64(x) => Ok(x),
            _ => unreachable!("cast to int64"),
        },
    }
}

/// An integer accumulator's start: an integral value that int64 holds exactly.
fn int_start(v: f64, what: &str) -> Result<i64> {
    if v.fract() == 0.0 && v >= -(2f64.powi(63)) && v < 2f64.powi(63) {
        Ok(v as i64)
    } else {
        Err(IrError::Type(format!(
            "initial={v:?} for {what}: an integer accumulator takes an integer initial value"
        )))
    }
}

/// A start of the data type `t` for min / max / cummax / cummin: exact, and inside the type.
fn typed_start(v: f64, t: ElemType, what: &str) -> Result<Scalar> {
    match t {
        ElemType::F32 => Ok(Scalar::F32(v as f32)),
        ElemType::F64 => Ok(Scalar::F64(v)),
        ElemType::Bool if v == 0.0 || v == 1.0 => Ok(Scalar::Bool(v == 1.0)),
        ElemType::Bool => Err(IrError::Type(format!(
            "initial={v:?} for {what} of bool: give 0 or 1"
        ))),
        ElemType::I32 => {
            let i = int_start(v, what)?;
            i32::try_from(i)
                .map(Scalar::I32)
                .map_err(|_| IrError::Type(format!("initial={v:?} for {what}: out of range for int32")))
        }
        ElemType::I64 => int_start(v, what).map(Scalar::I64),
        ElemType::C64 | ElemType::C128 => Ok(Scalar::F64(v).cast(t)),
        ElemType::Bytes(_) => Err(IrError::Type(format!("initial={v:?} for {what} of byte strings"))),
    }
}

fn reduce(
    kernel: &TypedKernel,
    op: ReduceOp,
    axes: &[usize],
    eval: &mut Evaluator<'_, '_>,
    start: Start<'_>,
) -> Result<Tensor> {
    let ext = Extents::new(&kernel.kernel.shape, axes)?;
    let n_out = ext.n_out;
    start.check(op, n_out)?;
    if ext.n_red == 0 && n_out > 0 && !op.has_identity() && start == Start::Identity {
        return Err(IrError::EmptyReduction { op: op.name() });
    }
    let vt = kernel.value_type();
    let mut out = Vec::new();
    out.try_reserve_exact(n_out).map_err(|_| IrError::Allocation {
        what: "the result".into(),
        elements: n_out,
    })?;
    ext.for_each(
        |idx| eval.at(idx),
        |o, values| {
            out.push(fold_typed(op, vt, values, start.at(o))?);
            Ok(())
        },
    )?;
    Ok(Tensor {
        shape: ext.out_shape,
        values: collect(out, kernel.output_type()),
    })
}

/// One extent folded as NumPy folds values of type `vt`.
fn fold_typed(
    op: ReduceOp,
    vt: ElemType,
    values: impl Iterator<Item = Scalar>,
    start: Option<f64>,
) -> Result<Scalar> {
    fn float<T: Real>(f: Folded<T>) -> Scalar
    where
        Scalar: From<T>,
    {
        match f {
            Folded::Float(v) => Scalar::from(v),
            Folded::Index(i) => Scalar::I64(i),
            Folded::Truth(b) => Scalar::Bool(b),
        }
    }
    match vt {
        ElemType::F64 => {
            return Ok(float(fold(
                op,
                values.map(|s| match s {
                    Scalar::F64(v) => v,
                    _ => unreachable!("values of the body's type"),
                }),
                start,
            )));
        }
        ElemType::F32 => {
            return Ok(float(fold(
                op,
                values.map(|s| match s {
                    Scalar::F32(v) => v,
                    _ => unreachable!("values of the body's type"),
                }),
                start,
            )));
        }
        ElemType::C64 => return fold_complex::<f32>(op, values, start),
        ElemType::C128 => return fold_complex::<f64>(op, values, start),
        _ => {}
    }
    // bool and integers: exact, in int64 where NumPy accumulates in int64
    let wide = |s: Scalar| match s.cast(ElemType::I64) {
        Scalar::I64(v) => v,
        _ => unreachable!("cast to int64"),
    };
    let mut values = values.peekable();
    Ok(match op {
        ReduceOp::Sum => {
            let s0 = match start {
                Some(v) => int_start(v, "an integer sum")?,
                None => 0,
            };
            Scalar::I64(values.fold(s0, |a, v| a.wrapping_add(wide(v))))
        }
        ReduceOp::Prod => {
            let s0 = match start {
                Some(v) => int_start(v, "an integer product")?,
                None => 1,
            };
            Scalar::I64(values.fold(s0, |a, v| a.wrapping_mul(wide(v))))
        }
        ReduceOp::Min | ReduceOp::Max => {
            let first = match start {
                Some(v) => typed_start(v, vt, op.name())?,
                None => values.next().expect("checked non-empty"),
            };
            let bop = if op == ReduceOp::Min {
                BinaryOp::Min
            } else {
                BinaryOp::Max
            };
            values.fold(first, |a, v| binary(bop, a, v))
        }
        ReduceOp::ArgMin | ReduceOp::ArgMax => {
            let mut best = wide(values.next().expect("checked non-empty"));
            let mut at = 0i64;
            for (i, v) in values.enumerate() {
                let v = wide(v);
                if (op == ReduceOp::ArgMin && v < best) || (op == ReduceOp::ArgMax && v > best) {
                    best = v;
                    at = i as i64 + 1;
                }
            }
            Scalar::I64(at)
        }
        ReduceOp::Any => Scalar::Bool(values.any(Scalar::truth)),
        ReduceOp::All => Scalar::Bool(values.all(Scalar::truth)),
    })
}

/// One extent of complex values folded: a sum as the float sums of its parts, a product in order,
/// `any`/`all` of their truth (the typing refuses the orderings).
fn fold_complex<T: Parts>(
    op: ReduceOp,
    values: impl Iterator<Item = Scalar>,
    start: Option<f64>,
) -> Result<Scalar> {
    let values: Vec<num_complex::Complex<T>> = values.map(T::unwrap).collect();
    let part = |f: Folded<T>| match f {
        Folded::Float(v) => v,
        _ => unreachable!("a float sum folds to a float"),
    };
    let s0 = start.map(T::from_f64);
    Ok(T::wrap(match op {
        ReduceOp::Sum => num_complex::Complex {
            re: part(fold(op, values.iter().map(|z| z.re), start)),
            im: part(fold(op, values.iter().map(|z| z.im), s0.map(|_| 0.0))),
        },
        ReduceOp::Prod => values.iter().fold(
            num_complex::Complex {
                re: s0.unwrap_or(T::ONE),
                im: T::ZERO,
            },
            |a, &z| complex::mul(a, z),
        ),
        ReduceOp::Any | ReduceOp::All => {
            let t = if op == ReduceOp::Any {
                values.iter().any(|&z| complex::truth(z))
            } else {
                values.iter().all(|&z| complex::truth(z))
            };
            num_complex::Complex {
                re: T::truth(t),
                im: T::ZERO,
            }
        }
        _ => {
            return Err(IrError::Type(format!(
                "{} of complex numbers is not defined",
                op.name()
            )));
        }
    }))
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Scalar {
        Scalar::F64(v)
    }
}

impl From<f32> for Scalar {
    fn from(v: f32) -> Scalar {
        Scalar::F32(v)
    }
}

/// A scan's carried state over typed values.
enum State {
    F64(Carried<f64>),
    F32(Carried<f32>),
    /// A sum or product of bools or integers, in int64.
    Wide(ScanOp, i64),
    /// cummax / cummin of bools or integers, in the data type.
    Narrow(ScanOp, Scalar),
    /// A sum or product of complex numbers (the typing refuses their cummax and cummin), in order,
    /// from the first value (as NumPy's accumulate: `cumprod([inf+1j])` is `inf+1j`, not
    /// `(1+0j) * (inf+1j)`), or from the scan's `initial`; None before the first.
    Complex(ScanOp, Option<Scalar>, ElemType),
}

impl State {
    fn start(scan: &Scan, vt: ElemType) -> Result<State> {
        Ok(match vt {
            ElemType::F64 => State::F64(Carried::start(scan)),
            ElemType::F32 => State::F32(Carried::start(scan)),
            ElemType::C64 | ElemType::C128 => {
                State::Complex(scan.op, scan.initial().map(|v| Scalar::F64(v).cast(vt)), vt)
            }
            _ => match scan_start(scan, vt)? {
                Scalar::I64(s) if scan.op.wide() => State::Wide(scan.op, s),
                s => State::Narrow(scan.op, s),
            },
        })
    }

    fn push(&mut self, v: Scalar) {
        match (self, v) {
            (State::F64(c), Scalar::F64(v)) => c.push(v),
            (State::F32(c), Scalar::F32(v)) => c.push(v),
            (State::Wide(op, s), v) => {
                let Scalar::I64(v) = v.cast(ElemType::I64) else {
                    unreachable!("cast to int64")
                };
                *s = if *op == ScanOp::Sum {
                    s.wrapping_add(v)
                } else {
                    s.wrapping_mul(v)
                };
            }
            (State::Complex(op, s, _), v) => {
                let bop = if *op == ScanOp::Prod {
                    BinaryOp::Mul
                } else {
                    BinaryOp::Add
                };
                *s = Some(s.map_or(v, |s| binary(bop, s, v)));
            }
            (State::Narrow(op, s), v) => {
                let bop = if *op == ScanOp::Max {
                    BinaryOp::Max
                } else {
                    BinaryOp::Min
                };
                *s = binary(bop, *s, v);
            }
            _ => unreachable!("values of the body's type"),
        }
    }

    fn value(&self) -> Scalar {
        match self {
            State::F64(c) => Scalar::F64(c.value()),
            State::F32(c) => Scalar::F32(c.value()),
            State::Wide(_, s) => Scalar::I64(*s),
            State::Narrow(_, s) => *s,
            // an exclusive scan's first value: the identity
            State::Complex(op, s, vt) => {
                s.unwrap_or_else(|| Scalar::F64(if *op == ScanOp::Prod { 1.0 } else { 0.0 }).cast(*vt))
            }
        }
    }
}

fn scan_kernel(kernel: &TypedKernel, scan: &Scan, eval: &mut Evaluator<'_, '_>) -> Result<Tensor> {
    let shape = &kernel.kernel.shape;
    let n = checked_size(shape)?;
    let (outer, _, inner) = scan.lines(shape);
    let vt = kernel.value_type();
    let mut out = try_filled(n, Scalar::Bool(false), "the scan's result")?;
    let mut idx = vec![0; shape.len()];
    for o in 0..outer {
        for c in 0..inner {
            let mut state = State::start(scan, vt)?;
            for flat in scan.line(shape, o, c) {
                unravel(flat, shape, &mut idx);
                let v = eval.at(&idx);
                if scan.exclusive {
                    out[flat] = state.value();
                    state.push(v);
                } else {
                    state.push(v);
                    out[flat] = state.value();
                }
            }
        }
    }
    Ok(Tensor {
        shape: kernel.kernel.output_shape(),
        values: collect(out, kernel.output_type()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::InputDecl;

    fn kernel(arena: ExprArena, body: NodeId, names: &[&str], kind: KernelKind) -> KernelIR {
        KernelIR {
            dtype: crate::DType::F64,
            inputs: names
                .iter()
                .map(|n| InputDecl {
                    name: n.to_string(),
                    shape: vec![3],
                    stored: None,
                })
                .collect(),
            shape: vec![3],
            arena,
            body,
            extra: Vec::new(),
            kind,
        }
    }

    #[test]
    fn casts_are_explicit_and_the_text_shows_each_type() {
        // i32 * 2 + f32: the literal takes int32, the sum is float64 (NumPy 2: int32 + float32)
        let mut a = ExprArena::new();
        let (i, two, f) = (a.input(0), a.int(2), a.input(1));
        let m = a.binary(BinaryOp::Mul, i, two);
        let body = a.binary(BinaryOp::Add, m, f);
        let k = kernel(a, body, &["i", "f"], KernelKind::Map);
        let t = TypedKernel::new(&k, &[ElemType::I32, ElemType::F32], false).unwrap();
        let text = t.to_string();
        assert_eq!(
            text,
            "kernel map f64 [3] -> f64 [3]\n  in0 i: i32 [3]\n  in1 f: f32 [3]\n  %0: i32 = in0\n  %1 = int 2\n  \
             %2: f32 = in1\n  %3: i32 = cast %1\n  %4: i32 = mul %0 %3\n  %5: f64 = cast %4\n  %6: f64 = cast %2\n  \
             %7: f64 = add %5 %6\n  out %7\n"
        );
        let data_i = [1, i32::MAX, -3];
        let data_f = [0.5f32, 1.0, 2.0];
        let s = |n| StridedInput {
            data: n,
            offset: 0,
            strides: vec![1],
        };
        let out = interpret(
            &t,
            &[
                TypedInput::I32(s(&data_i)),
                TypedInput::F32(StridedInput {
                    data: &data_f,
                    offset: 0,
                    strides: vec![1],
                }),
            ],
            Start::Identity,
        )
        .unwrap();
        // i32::MAX * 2 wraps to -2 before the sum, as NumPy's
        assert_eq!(out.values, Values::F64(vec![2.5, -1.0, -4.0]));
    }

    #[test]
    fn numpy_refusals_are_type_errors() {
        let mut a = ExprArena::new();
        let (x, y) = (a.input(0), a.input(1));
        let body = a.binary(BinaryOp::BitXor, x, y);
        let k = kernel(a, body, &["x", "y"], KernelKind::Map);
        let e = TypedKernel::new(&k, &[ElemType::F64, ElemType::I32], false).unwrap_err();
        assert!(
            e.to_string()
                .contains("bitwise operators take bool or integer operands, not float64"),
            "{e}"
        );
        let mut a = ExprArena::new();
        let x = a.input(0);
        let body = a.unary(UnaryOp::Neg, x);
        let k = kernel(a, body, &["p"], KernelKind::Map);
        let e = TypedKernel::new(&k, &[ElemType::Bool], false).unwrap_err();
        assert!(e.to_string().contains("use `~`"), "{e}");
        // the interpreter's input types are checked
        let mut a = ExprArena::new();
        let body = a.input(0);
        let k = kernel(a, body, &["x"], KernelKind::Map);
        let t = TypedKernel::new(&k, &[ElemType::I64], false).unwrap();
        let data = [1i32, 2, 3];
        let bad = interpret(
            &t,
            &[TypedInput::I32(StridedInput {
                data: &data,
                offset: 0,
                strides: vec![1],
            })],
            Start::Identity,
        );
        assert!(bad.is_err());
    }
}
