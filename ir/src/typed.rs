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
//! float data as a float kernel (the trivial typing below), so a typed kernel whose values are all
//! floats gives a float kernel's bits.
//!
//! Where kiln differs from NumPy on purpose (no types kiln does not compute): unary math, `floor`,
//! `sign`... of a bool give float64 (NumPy: float16 or int8); `//`, `%`, `**`, `<<`, `>>` of two bools
//! are errors (NumPy: int8). An integer raised to a negative integer *array* element gives what
//! [`crate::int::Int::pow`] gives (1, the exponent read as 0) where NumPy raises at run time.
//!
//! Compound reductions of bool and integer values take them as float64 (NumPy's `mean` and `var` of
//! integers), of floats in their type; sibling reductions of bool and integer values give every
//! component as int64 (component major, as the compiled code), of floats each in the value type.
//!
//! A float kernel (no cast, no integer operator: [`KernelIR::needs_typing`]) is typed trivially by
//! [`TypedKernel::of_float`]: every value in its dtype, truth values 1 / 0 in it.
//!
//! The interpreter ([`crate::interp`]) evaluates typed kernels, the oracle of every type.

use crate::bytes;
use crate::error::{IrError, Result};
use crate::expr::{ExprArena, Node, NodeId};
use crate::kernel::{KernelIR, KernelKind, ReduceOp};
use crate::op::{BinaryOp, UnaryOp};
use crate::promote::{self, ElemType, Operand, PromoteError, PromoteOp};
pub use crate::scalar::Scalar;
use crate::scan::{Scan, ScanOp};
use std::fmt;

/// Why a kernel must be typed before it runs (an opcode of integers, or a cast), if it must: the
/// evaluator typed trivially and the JIT take the rest ([`KernelIR::needs_typing`]).
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

    /// Component `c` of sibling reductions alone (see [`KernelIR::component`]): the reduction of
    /// root `c`.
    pub fn component(&self, c: usize) -> TypedKernel {
        TypedKernel {
            kernel: self.kernel.component(c),
            input_types: self.input_types.clone(),
            types: self.types.clone(),
        }
    }

    /// A float kernel typed trivially: every input and value of its dtype, a truth value (of a
    /// comparison or a logical operator) cast to the dtype (1 / 0, as the float path holds it), a
    /// literal or an index converted to the dtype as the float path rounds it (through f64). The
    /// interpreter gives the float path's bits for it; its result type is the dtype where the float
    /// kernel's ([`KernelIR::output_type`]) may be bool or int64 (the interpreter's
    /// [`crate::interp::interpret`] converts).
    ///
    /// # Errors
    /// A malformed kernel, or one that is not a float kernel ([`KernelIR::needs_typing`]).
    pub fn of_float(kernel: &KernelIR) -> Result<TypedKernel> {
        kernel.validate()?;
        if let Some(why) = kernel.needs_typing() {
            return Err(IrError::Malformed(format!(
                "{why}: not a float kernel (TypedKernel::new types it)"
            )));
        }
        let f = kernel.dtype;
        let roots = kernel.roots();
        let top = roots.iter().map(|r| r.index()).max().unwrap_or(0);
        let mut map: Vec<NodeId> = vec![NodeId::at(0); top + 1];
        let mut a = ExprArena::new();
        for id in kernel.arena.reachable_all(&roots) {
            let v = |x: NodeId| map[x.index()];
            let new = match *kernel.arena.node(id) {
                Node::Input(n) => a.input(n),
                Node::Literal(bits) => {
                    let l = a.intern(Node::Literal(bits));
                    a.cast(f, l)
                }
                Node::Int(i) => {
                    let l = a.literal(i as f64);
                    a.cast(f, l)
                }
                Node::Index(axis) => {
                    let i = a.index(axis);
                    a.cast(f, i)
                }
                Node::Unary(op, x) if op.is_logical() => {
                    let t = a.unary(op, v(x));
                    a.cast(f, t)
                }
                Node::Unary(op, x) => a.unary(op, v(x)),
                Node::Binary(op, x, y) if op.is_logical() => {
                    let t = a.binary(op, v(x), v(y));
                    a.cast(f, t)
                }
                Node::Binary(op, x, y) => a.binary(op, v(x), v(y)),
                Node::Where(c, x, y) => a.select(v(c), v(x), v(y)),
                Node::Fma(x, y, z) => a.fma(v(x), v(y), v(z)),
                Node::Cast(..) | Node::Bytes(_) => unreachable!("needs_typing refuses casts and strings"),
            };
            map[id.index()] = new;
        }
        let new_roots = roots.iter().map(|r| map[r.index()]).collect();
        let mut typed = Self::finish(kernel, &vec![f; kernel.inputs.len()], a, new_roots)?;
        typed.kernel.dtype = kernel.dtype;
        Ok(typed)
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
            .copied()
            .filter(|t| t.is_float())
            .max()
            .unwrap_or(crate::ElemType::F64);
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
            KernelKind::Compound { op, .. } => Some(op.name()),
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
            // the moments of bool and integer values in float64 (NumPy's mean and var)
            KernelKind::Compound { .. } if v.is_float() => v,
            KernelKind::Compound { .. } => ElemType::F64,
            // every component's int64 (each of its own type: `TypedKernel::component_type`)
            KernelKind::Siblings { .. } if !v.is_inexact() => ElemType::I64,
            KernelKind::Siblings { .. } => v,
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
    pub fn float_path_differs(&self, dtype: crate::ElemType, float_output: ElemType) -> Option<String> {
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
        dtype: crate::ElemType,
        float_output: ElemType,
    ) -> std::result::Result<Vec<Option<ElemType>>, String> {
        let f = dtype;
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
        dtype: crate::ElemType,
        float_output: ElemType,
        stored: &[Option<ElemType>],
    ) -> Option<String> {
        let f = dtype;
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

/// The result type of the reduction `op` of values of type `v`, as NumPy's: any and all bool, arg
/// reductions their int64 indices, sums and products of bool and integer values int64, else `v`.
pub(crate) fn reduced_type(op: ReduceOp, v: ElemType) -> ElemType {
    match op {
        ReduceOp::Any | ReduceOp::All => ElemType::Bool,
        ReduceOp::ArgMin | ReduceOp::ArgMax => ElemType::I64,
        ReduceOp::Sum | ReduceOp::Prod if !v.is_inexact() => ElemType::I64,
        _ => v,
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
/// the `initial` value `v` (the compiled code's, as [`crate::interp::evaluate`] folds it): a sum's
/// or product's integral value, a min's or max's value of the type, as int64.
///
/// # Errors
/// An `initial` the accumulator does not hold, as [`crate::interp::evaluate`] gives it.
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
pub(crate) fn int_start(v: f64, what: &str) -> Result<i64> {
    if v.fract() == 0.0 && v >= -(2f64.powi(63)) && v < 2f64.powi(63) {
        Ok(v as i64)
    } else {
        Err(IrError::Type(format!(
            "initial={v:?} for {what}: an integer accumulator takes an integer initial value"
        )))
    }
}

/// A start of the data type `t` for min / max / cummax / cummin: exact, and inside the type.
pub(crate) fn typed_start(v: f64, t: ElemType, what: &str) -> Result<Scalar> {
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
