//! The expression builder: `Expr` values with operator overloading, the front end every other front
//! end (text, ndarray closures) produces.
//!
//! An `Expr` is a cheap, immutable tree (shared subtrees are shared `Rc`s, counted without atomic
//! operations: an `Expr` stays on the thread that builds it, and the runner compiled from it is
//! `Send` and `Sync`). Lowering interns it into kiln-ir's hash-consed arena, so a value used twice is
//! computed once.
//!
//! ```
//! use kiln::Expr;
//! let x = Expr::input("x");
//! let y = (&x * 2.0 + 1.0).sqrt().maximum(Expr::input("y"));
//! let total = (&x * &x).sum();
//! # let _ = (y, total);
//! ```

pub use crate::scan_options::ScanOptions;
use kiln_ir::{BinaryOp, ElemType, ReduceOp, ScanOp, UnaryOp};
use std::cell::{OnceCell, RefCell};
use std::rc::Rc;

/// Which axes a reduction folds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Axes {
    /// Every axis (NumPy's `axis=None`).
    All,
    /// These axes; negative ones count from the end.
    Some(Vec<isize>),
}

/// A node of the builder's tree.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprNode {
    /// An input array, bound by name when the kernel runs (a name known at compile time is kept
    /// without an allocation).
    Input(std::borrow::Cow<'static, str>),
    /// A float constant, weak as a Python float (NEP 50): it takes a float array's type.
    Literal(f64),
    /// An integer constant, weak as a Python int: it takes an integer or float array's type.
    Int(i64),
    /// A byte-string constant (`b'abc'`, of type `S3`), compared with byte strings or searched
    /// ([`Expr::contains`]).
    Bytes(kiln_ir::bytes::ByteStr),
    /// The operand converted to a type, as NumPy's `astype` (the text language's `int32(x)`).
    Cast(ElemType, Expr),
    /// The position along an axis of the iteration space.
    Index(usize),
    /// A unary operation.
    Unary(UnaryOp, Expr),
    /// A binary operation (NumPy's broadcasting between the operands).
    Binary(BinaryOp, Expr, Expr),
    /// `where(cond, a, b)`: `a` where `cond` is nonzero (NaN included), else `b`.
    Where(Expr, Expr, Expr),
    /// A reduction of `arg` over `axes`; `keepdims` keeps each reduced axis with length 1 (NumPy's
    /// `keepdims=True`); `initial` (sum, prod, min, max only) starts each output's fold.
    Reduce {
        /// The reduction.
        op: ReduceOp,
        /// The axes reduced.
        axes: Axes,
        /// The reduced expression.
        arg: Expr,
        /// Whether each reduced axis stays, with length 1.
        keepdims: bool,
        /// The start of each output's fold, if any.
        initial: Option<f64>,
    },
    /// The arithmetic mean of `arg` over `axes`: the sum (in f64 for f32 data) divided by the
    /// number of values reduced, as NumPy's `mean` (NaN over nothing).
    Mean {
        /// The axes averaged over.
        axes: Axes,
        /// The averaged expression.
        arg: Expr,
        /// Whether each reduced axis stays, with length 1.
        keepdims: bool,
    },
    /// A scan (cumulative sum, product, max or min) of `arg` (see scan.rs).
    Scan {
        /// The scan's operation.
        op: ScanOp,
        /// Its axis, direction and start.
        options: ScanOptions,
        /// The scanned expression.
        arg: Expr,
    },
    /// An index variable of the enclosing contraction (see [`crate::contract`]).
    IndexVar(String),
    /// Input `name` read at the index variables `indices` of the enclosing contraction.
    Subscript(String, Vec<String>),
    /// A contraction: `y[free..] = ⊕_{reduced} arg(index..)` over the index variables `index`
    /// (the iteration axes, in order), `reduced` folded (see [`crate::contract`]).
    Contract {
        /// The fold.
        op: ReduceOp,
        /// The index variables, the iteration axes in order.
        index: Vec<String>,
        /// The folded index variable.
        reduced: String,
        /// The folded expression.
        arg: Expr,
        /// The start of each output's fold, if any.
        initial: Option<f64>,
    },
}

/// A symbolic array expression. Not `Send`: its nodes are counted without atomic operations (a
/// `fuse` closure builds and drops a few at every call); compile it on the thread that builds it
/// ([`crate::FusedRunner`] is `Send` and `Sync`).
///
/// An expression built in a `fuse` closure is recorded on its thread's tape: a node
/// is a small record pushed there, the handle its index, and the call-site cache compares the
/// tape with the one it keeps, a slice comparison. Its tree ([`Expr::node`]) is made the first
/// time it is asked for (to compile it). A scalar ([`Expr::lit`], [`Expr::int`]) is a value until
/// its node is asked for.
#[derive(Clone)]
pub struct Expr(Repr);

/// What an [`Expr`] holds: a node, a scalar, or a record of a tape; the last three with their node
/// once it is made.
#[derive(Clone)]
enum Repr {
    Node(Node),
    Lit(f64, OnceCell<Node>),
    Int(i64, OnceCell<Node>),
    Tape(Rc<Tape>, u32, OnceCell<Node>),
}

/// A counted node, dropped without deep recursion (see its `Drop`).
#[derive(Clone)]
struct Node(Rc<ExprNode>);

impl PartialEq for Expr {
    fn eq(&self, other: &Expr) -> bool {
        self.node() == other.node()
    }
}

impl std::fmt::Debug for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Expr").field(self.node()).finish()
    }
}

impl Expr {
    pub(crate) fn new(node: ExprNode) -> Expr {
        // an operation of operands recorded on one tape (or scalars) is recorded there too
        match record(&node) {
            Some(e) => e,
            None => Expr(Repr::Node(Node(Rc::new(node)))),
        }
    }

    /// `op` of `a`: recorded on `a`'s tape where `a` is recorded, else a node.
    #[inline]
    fn of1(op: UnaryOp, a: Expr) -> Expr {
        if let Repr::Tape(tape, i, _) = &a.0
            && let Some(e) = tape.record(Rec::Unary(op, *i))
        {
            return e;
        }
        Expr(Repr::Node(Node(Rc::new(ExprNode::Unary(op, a)))))
    }

    /// `op` of `a` and `b`: recorded on their tape where one is recorded and the other is too or is
    /// a scalar, else a node.
    #[inline]
    fn of2(op: BinaryOp, a: Expr, b: Expr) -> Expr {
        match on_tape2(op, &a, &b) {
            Some(e) => e,
            None => Expr(Repr::Node(Node(Rc::new(ExprNode::Binary(op, a, b))))),
        }
    }

    /// `node`, made.
    fn node_of(node: ExprNode) -> Expr {
        Expr(Repr::Node(Node(Rc::new(node))))
    }

    /// The node at the root of this expression.
    pub fn node(&self) -> &ExprNode {
        self.rc()
    }

    /// The counted node (made on first use for a scalar or a recorded expression).
    fn rc(&self) -> &Rc<ExprNode> {
        match &self.0 {
            Repr::Node(node) => &node.0,
            Repr::Lit(v, cell) => &cell.get_or_init(|| Node(Rc::new(ExprNode::Literal(*v)))).0,
            Repr::Int(v, cell) => &cell.get_or_init(|| Node(Rc::new(ExprNode::Int(*v)))).0,
            Repr::Tape(tape, i, cell) => &cell.get_or_init(|| Node(tape.tree(*i))).0,
        }
    }

    /// Whether two handles share one node (used to intern shared subtrees once).
    pub(crate) fn ptr(&self) -> *const ExprNode {
        Rc::as_ptr(self.rc())
    }

    /// Whether another handle holds this node too (a shared subtree).
    pub(crate) fn shared(&self) -> bool {
        Rc::strong_count(self.rc()) > 1
    }

    /// The tape this expression is recorded on and its index there, if it is recorded.
    pub(crate) fn recorded(&self) -> Option<(&Rc<Tape>, u32)> {
        match &self.0 {
            Repr::Tape(tape, i, _) => Some((tape, *i)),
            _ => None,
        }
    }

    /// An input array named `name`.
    pub fn input(name: impl Into<String>) -> Expr {
        Expr::new(ExprNode::Input(std::borrow::Cow::Owned(name.into())))
    }

    /// Input `slot` of a `fuse` closure ([`FUSE_SELF`] for `self`, else `x{slot}`), recorded on this
    /// thread's tape (see [`begin_fuse`]).
    pub(crate) fn fuse_input(slot: u32) -> Expr {
        TAPE.try_with(|t| {
            let tape = t.try_borrow().ok()?;
            let i = push(&mut *tape.recs.try_borrow_mut().ok()?, Rec::Input(slot))?;
            Some(Expr(Repr::Tape(tape.clone(), i, OnceCell::new())))
        })
        .ok()
        .flatten()
        .unwrap_or_else(|| Expr::new(ExprNode::Input(fuse_name(slot))))
    }

    /// A constant. It does not widen f32 inputs: it is rounded to the kernel's dtype.
    pub fn lit(v: f64) -> Expr {
        Expr(Repr::Lit(v, OnceCell::new()))
    }

    /// An integer constant, weak as a Python int (`i32 * 2` stays int32, `f32 * 2` float32).
    pub fn int(v: i64) -> Expr {
        Expr(Repr::Int(v, OnceCell::new()))
    }

    /// A byte-string constant (`b'abc'`, NumPy's `S3`): byte strings compare with `==`, `!=`,
    /// `<`, `<=`, `>`, `>=` (as if padded with NULs, bytes unsigned, as NumPy) and search with
    /// [`Expr::contains`] (numexpr's rules: [`kiln_ir::bytes`]).
    pub fn bytes(v: &[u8]) -> Expr {
        Expr::new(ExprNode::Bytes(kiln_ir::bytes::ByteStr::new(v)))
    }

    /// numexpr's `contains(self, needle)` of byte strings: whether `needle` occurs in this string,
    /// each up to its first NUL (a bool).
    pub fn contains(&self, needle: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Contains, needle)
    }

    /// This value converted to `ty`, as NumPy's `astype`: floats truncate toward zero into integers
    /// (NaN, ±inf and values out of range give the type's MIN, as x86), integers wrap into a narrower
    /// integer and round to the nearest float, anything nonzero is true. A kernel with a cast is a
    /// typed kernel (compiled by the JIT in its values' own types, or interpreted where it declines).
    pub fn cast(&self, ty: ElemType) -> Expr {
        Expr::new(ExprNode::Cast(ty, self.clone()))
    }

    /// The position along `axis` of the iteration space (0, 1, 2, ... as floats).
    pub fn index(axis: usize) -> Expr {
        Expr::new(ExprNode::Index(axis))
    }

    /// Applies a unary opcode.
    pub fn unary(&self, op: UnaryOp) -> Expr {
        Expr::of1(op, self.clone())
    }

    /// Applies a binary opcode.
    pub fn binary(&self, op: BinaryOp, rhs: impl Into<Expr>) -> Expr {
        Expr::of2(op, self.clone(), rhs.into())
    }

    /// `where(cond, a, b)`: `a` where `cond` is nonzero (NaN included), else `b`.
    pub fn select(cond: impl Into<Expr>, a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
        Expr::new(ExprNode::Where(cond.into(), a.into(), b.into()))
    }

    /// The absolute value, elementwise (NumPy's `absolute`).
    pub fn abs(&self) -> Expr {
        self.unary(UnaryOp::Abs)
    }
    /// The square root, elementwise (NumPy's `sqrt`).
    pub fn sqrt(&self) -> Expr {
        self.unary(UnaryOp::Sqrt)
    }
    /// The sine, elementwise (NumPy's `sin`).
    pub fn sin(&self) -> Expr {
        self.unary(UnaryOp::Sin)
    }
    /// The cosine, elementwise (NumPy's `cos`).
    pub fn cos(&self) -> Expr {
        self.unary(UnaryOp::Cos)
    }
    /// The tangent, elementwise (NumPy's `tan`).
    pub fn tan(&self) -> Expr {
        self.unary(UnaryOp::Tan)
    }
    /// `e**x`, elementwise (NumPy's `exp`).
    pub fn exp(&self) -> Expr {
        self.unary(UnaryOp::Exp)
    }
    /// The natural logarithm, elementwise (NumPy's `log`).
    pub fn log(&self) -> Expr {
        self.unary(UnaryOp::Log)
    }
    /// `1/x`, elementwise (NumPy's `reciprocal`).
    pub fn recip(&self) -> Expr {
        self.unary(UnaryOp::Recip)
    }
    /// Logical not: 1 where the value is 0, else 0 (NaN is true, so it gives 0).
    #[allow(clippy::should_implement_trait)] // `!x` works too (`std::ops::Not`); this reads as the text's `~`
    pub fn not(&self) -> Expr {
        self.unary(UnaryOp::Not)
    }
    /// The hyperbolic tangent, elementwise (NumPy's `tanh`).
    pub fn tanh(&self) -> Expr {
        self.unary(UnaryOp::Tanh)
    }
    /// `2**x`, elementwise (NumPy's `exp2`).
    pub fn exp2(&self) -> Expr {
        self.unary(UnaryOp::Exp2)
    }
    /// The base-2 logarithm, elementwise (NumPy's `log2`).
    pub fn log2(&self) -> Expr {
        self.unary(UnaryOp::Log2)
    }
    /// The base-10 logarithm, elementwise (NumPy's `log10`).
    pub fn log10(&self) -> Expr {
        self.unary(UnaryOp::Log10)
    }
    /// `exp(x) - 1`, accurate near 0, elementwise (NumPy's `expm1`).
    pub fn expm1(&self) -> Expr {
        self.unary(UnaryOp::Expm1)
    }
    /// `log(1 + x)`, accurate near 0, elementwise (NumPy's `log1p`).
    pub fn log1p(&self) -> Expr {
        self.unary(UnaryOp::Log1p)
    }
    /// The arcsine, elementwise (NumPy's `arcsin`).
    pub fn arcsin(&self) -> Expr {
        self.unary(UnaryOp::Arcsin)
    }
    /// The arccosine, elementwise (NumPy's `arccos`).
    pub fn arccos(&self) -> Expr {
        self.unary(UnaryOp::Arccos)
    }
    /// The arctangent, elementwise (NumPy's `arctan`).
    pub fn arctan(&self) -> Expr {
        self.unary(UnaryOp::Arctan)
    }
    /// The hyperbolic sine, elementwise (NumPy's `sinh`).
    pub fn sinh(&self) -> Expr {
        self.unary(UnaryOp::Sinh)
    }
    /// The hyperbolic cosine, elementwise (NumPy's `cosh`).
    pub fn cosh(&self) -> Expr {
        self.unary(UnaryOp::Cosh)
    }
    /// The inverse hyperbolic sine, elementwise (NumPy's `arcsinh`).
    pub fn arcsinh(&self) -> Expr {
        self.unary(UnaryOp::Arcsinh)
    }
    /// The inverse hyperbolic cosine, elementwise (NumPy's `arccosh`).
    pub fn arccosh(&self) -> Expr {
        self.unary(UnaryOp::Arccosh)
    }
    /// The inverse hyperbolic tangent, elementwise (NumPy's `arctanh`).
    pub fn arctanh(&self) -> Expr {
        self.unary(UnaryOp::Arctanh)
    }
    /// Rounds toward -inf, elementwise (NumPy's `floor`).
    pub fn floor(&self) -> Expr {
        self.unary(UnaryOp::Floor)
    }
    /// Rounds toward +inf, elementwise (NumPy's `ceil`).
    pub fn ceil(&self) -> Expr {
        self.unary(UnaryOp::Ceil)
    }
    /// Rounds toward zero, elementwise (NumPy's `trunc`).
    pub fn trunc(&self) -> Expr {
        self.unary(UnaryOp::Trunc)
    }
    /// Round to the nearest integer, ties to even (NumPy's `round`).
    pub fn round(&self) -> Expr {
        self.unary(UnaryOp::Round)
    }
    /// NumPy's `sign`: 1, -1, +0.0 for either zero, NaN for NaN.
    pub fn sign(&self) -> Expr {
        self.unary(UnaryOp::Sign)
    }
    /// 1 where the value is NaN, else 0 (a logical result).
    pub fn isnan(&self) -> Expr {
        self.unary(UnaryOp::IsNan)
    }
    /// 1 where the value is ±inf, else 0 (a logical result).
    pub fn isinf(&self) -> Expr {
        self.unary(UnaryOp::IsInf)
    }
    /// 1 where the value is finite, else 0 (a logical result).
    pub fn isfinite(&self) -> Expr {
        self.unary(UnaryOp::IsFinite)
    }

    /// Whether the sign bit is set, NumPy's `signbit` (true for -0.0, false for +0.0; a bool).
    pub fn signbit(&self) -> Expr {
        self.unary(UnaryOp::Signbit)
    }
    /// The error function (libm's `erf`): `erf(±inf) = ±1`.
    pub fn erf(&self) -> Expr {
        self.unary(UnaryOp::Erf)
    }
    /// The complementary error function `1 - erf(x)` (libm's `erfc`), accurate where `erf` is near 1.
    pub fn erfc(&self) -> Expr {
        self.unary(UnaryOp::Erfc)
    }
    /// The cube root (libm's `cbrt`), negative for a negative value.
    pub fn cbrt(&self) -> Expr {
        self.unary(UnaryOp::Cbrt)
    }
    /// Degrees to radians, NumPy's `deg2rad`: `x * (pi / 180)` with the constant in the kernel's dtype.
    pub fn deg2rad(&self) -> Expr {
        self.unary(UnaryOp::Deg2Rad)
    }
    /// Radians to degrees, NumPy's `rad2deg`: `x * (180 / pi)` with the constant in the kernel's dtype.
    pub fn rad2deg(&self) -> Expr {
        self.unary(UnaryOp::Rad2Deg)
    }
    /// The real part of a complex value (NumPy's `real`); of a real value, the value itself.
    pub fn real(&self) -> Expr {
        self.unary(UnaryOp::Real)
    }
    /// The imaginary part of a complex value (NumPy's `imag`); of a real value, zeros of its type.
    pub fn imag(&self) -> Expr {
        self.unary(UnaryOp::Imag)
    }
    /// The complex conjugate (NumPy's `conj`); of a real value, the value itself.
    pub fn conj(&self) -> Expr {
        self.unary(UnaryOp::Conj)
    }
    /// The complex number `re + im j` of two real values (numexpr's `complex(re, im)`): complex64
    /// of two float32 values, else complex128.
    pub fn complex(re: impl Into<Expr>, im: impl Into<Expr>) -> Expr {
        re.into().binary(BinaryOp::Complex, im)
    }
    /// The imaginary literal `v j` (Python's `2j`): a weak complex, complex64 beside float32 and
    /// complex64 values, else complex128.
    pub fn imaginary(v: f64) -> Expr {
        Expr::complex(Expr::lit(0.0), Expr::lit(v))
    }
    /// `x * x`, NumPy's `square` (the same node as `&x * &x`).
    pub fn square(&self) -> Expr {
        self * self
    }
    /// `1 / x`, NumPy's `reciprocal` (the same as [`Expr::recip`]).
    pub fn reciprocal(&self) -> Expr {
        self.unary(UnaryOp::Recip)
    }

    /// NumPy's `minimum`: propagates NaN.
    pub fn minimum(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Min, rhs)
    }
    /// NumPy's `maximum`: propagates NaN.
    pub fn maximum(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Max, rhs)
    }
    /// `atan2(self, x)`: the angle of the point `(x, self)`.
    pub fn arctan2(&self, x: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Arctan2, x)
    }
    /// `sqrt(self² + rhs²)` without overflow.
    pub fn hypot(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Hypot, rhs)
    }
    /// `self` with the sign of `sign`.
    pub fn copysign(&self, sign: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Copysign, sign)
    }
    /// NumPy's `fmax`: ignores a NaN operand.
    pub fn fmax(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Fmax, rhs)
    }
    /// NumPy's `fmin`: ignores a NaN operand.
    pub fn fmin(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Fmin, rhs)
    }
    /// C's `fmod`: the remainder with the sign of the dividend `self`.
    pub fn fmod(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Fmod, rhs)
    }
    /// NumPy's `remainder` (the `%` operator): the sign of the divisor, `-1 % 3 == 2`.
    pub fn remainder(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Rem, rhs)
    }
    /// NumPy's `floor_divide` (Python's `//`): the floor of the quotient, as NumPy computes it from
    /// `fmod` (`x // 0` is ±inf or NaN, `inf // 3` is NaN, `1 // -inf` is -1).
    pub fn floor_divide(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::FloorDiv, rhs)
    }
    /// C's `nextafter`: the representable value next to `self` toward `rhs`.
    pub fn nextafter(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Nextafter, rhs)
    }
    /// Ones of this value's shape and type, as NumPy's `ones_like` (NaN and inf included): `self ** 0`,
    /// which C99's `pow` makes 1 for every `self` and which the kernel computes as the literal 1.
    pub fn ones_like(&self) -> Expr {
        self.binary(BinaryOp::Pow, Expr::int(0))
    }
    /// Zeros (+0.0) of this value's shape and type: NumPy's `imag` of a real value.
    pub fn zeros_like(&self) -> Expr {
        self.ones_like() - Expr::int(1)
    }
    /// NumPy's `logaddexp`, `log(exp(self) + exp(rhs))` without overflow (`logaddexp(inf, inf) = inf`).
    pub fn logaddexp(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Logaddexp, rhs)
    }
    /// NumPy's `logaddexp2`, `log2(2^self + 2^rhs)` without overflow.
    pub fn logaddexp2(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Logaddexp2, rhs)
    }
    /// `self ** e`, C99 `pow`; an exponent of exactly the literal 0.5 is `sqrt`, as NumPy computes it,
    /// and the literal exponents 2, -1, 1 and 0 take NumPy's other fast paths (`x*x`, `1/x`, `x`, 1)
    /// when the kernel is specialised ([`kiln_ir::passes::strength`]). A literal base stays `pow`
    /// (Python computes `2 ** 0.5`, a weak float).
    pub fn pow(&self, e: impl Into<Expr>) -> Expr {
        let e = e.into();
        if matches!(e.node(), ExprNode::Literal(v) if *v == 0.5)
            && !matches!(self.node(), ExprNode::Literal(_) | ExprNode::Int(_))
        {
            return self.sqrt();
        }
        self.binary(BinaryOp::Pow, e)
    }
    /// `self ** n` for an integer `n`, as `f64::powi` is written: [`Expr::pow`] of the weak integer
    /// `n` (the array's type kept; `x.powi(2)` is `x*x`).
    pub fn powi(&self, n: i32) -> Expr {
        self.pow(Expr::int(n.into()))
    }
    /// `self ** e` for a float `e`, as `f64::powf` is written: [`Expr::pow`] of the weak float `e`.
    pub fn powf(&self, e: f64) -> Expr {
        self.pow(Expr::lit(e))
    }
    /// `self < rhs`, elementwise, a bool (IEEE: NaN compares unequal to everything).
    pub fn lt(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Lt, rhs)
    }
    /// `self <= rhs`, elementwise, a bool (IEEE: NaN compares unequal to everything).
    pub fn le(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Le, rhs)
    }
    /// `self > rhs`, elementwise, a bool (IEEE: NaN compares unequal to everything).
    pub fn gt(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Gt, rhs)
    }
    /// `self >= rhs`, elementwise, a bool (IEEE: NaN compares unequal to everything).
    pub fn ge(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Ge, rhs)
    }
    /// `self == rhs`, elementwise, a bool (IEEE: NaN compares unequal to everything).
    pub fn eq(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Eq, rhs)
    }
    /// `self != rhs`, elementwise, a bool (IEEE: NaN compares unequal to everything).
    pub fn ne(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Ne, rhs)
    }
    /// Logical and: 1 where both are true (nonzero or NaN), else 0.
    pub fn and(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::And, rhs)
    }
    /// Logical or: 1 where either is true (nonzero or NaN), else 0.
    pub fn or(&self, rhs: impl Into<Expr>) -> Expr {
        self.binary(BinaryOp::Or, rhs)
    }

    /// A reduction of this expression over `axes`.
    pub fn reduce(&self, op: ReduceOp, axes: Axes) -> Expr {
        self.reduce_with(op, axes, false, None)
    }
    /// A reduction over `axes`, keeping the reduced axes with length 1 if `keepdims`, each output
    /// starting from `initial` if given (sum, prod, min and max take one; the others reject it when
    /// the expression is compiled).
    pub fn reduce_with(&self, op: ReduceOp, axes: Axes, keepdims: bool, initial: Option<f64>) -> Expr {
        Expr::new(ExprNode::Reduce {
            op,
            axes,
            arg: self.clone(),
            keepdims,
            initial,
        })
    }
    /// The sum over several axes (negative count from the end; `&[]` reduces over no axis).
    pub fn sum_axes(&self, axes: &[isize]) -> Expr {
        self.reduce(ReduceOp::Sum, Axes::Some(axes.to_vec()))
    }
    /// The mean over `axes`, as NumPy's `mean(x, axis, keepdims=keepdims)`.
    pub fn mean_axes(&self, axes: Axes, keepdims: bool) -> Expr {
        Expr::new(ExprNode::Mean {
            axes,
            arg: self.clone(),
            keepdims,
        })
    }
    /// The mean of every element.
    pub fn mean(&self) -> Expr {
        self.mean_axes(Axes::All, false)
    }
    /// The variance over `axes` (ddof = 0), computed as NumPy does: `mean(d * d)` with
    /// `d = x - mean(x, keepdims)`, two reductions and the elementwise work between them.
    pub fn var_axes(&self, axes: Axes, keepdims: bool) -> Expr {
        let m = self.mean_axes(axes.clone(), true);
        let d = self - m;
        (&d * &d).mean_axes(axes, keepdims)
    }
    /// The variance of every element (ddof = 0).
    pub fn var(&self) -> Expr {
        self.var_axes(Axes::All, false)
    }
    /// The standard deviation over `axes` (ddof = 0): `sqrt(var)`.
    pub fn std_axes(&self, axes: Axes, keepdims: bool) -> Expr {
        self.var_axes(axes, keepdims).sqrt()
    }
    /// The standard deviation of every element (ddof = 0).
    pub fn std(&self) -> Expr {
        self.std_axes(Axes::All, false)
    }
    /// The sum of every element.
    pub fn sum(&self) -> Expr {
        self.reduce(ReduceOp::Sum, Axes::All)
    }
    /// The product of every element.
    pub fn prod(&self) -> Expr {
        self.reduce(ReduceOp::Prod, Axes::All)
    }
    /// The minimum element, propagating NaN.
    pub fn min(&self) -> Expr {
        self.reduce(ReduceOp::Min, Axes::All)
    }
    /// The maximum element, propagating NaN.
    pub fn max(&self) -> Expr {
        self.reduce(ReduceOp::Max, Axes::All)
    }
    /// The flat index of the first minimum (or first NaN).
    pub fn argmin(&self) -> Expr {
        self.reduce(ReduceOp::ArgMin, Axes::All)
    }
    /// The flat index of the first maximum (or first NaN).
    pub fn argmax(&self) -> Expr {
        self.reduce(ReduceOp::ArgMax, Axes::All)
    }
    /// Whether any element is nonzero (NaN counts).
    pub fn any(&self) -> Expr {
        self.reduce(ReduceOp::Any, Axes::All)
    }
    /// Whether every element is nonzero (NaN counts).
    pub fn all(&self) -> Expr {
        self.reduce(ReduceOp::All, Axes::All)
    }

    /// The reduction `op` over `axes` (negative count from the end), keeping each reduced axis with
    /// length 1 if `keepdims` (NumPy's `keepdims=True`).
    pub fn reduce_axes(&self, op: ReduceOp, axes: &[isize], keepdims: bool) -> Expr {
        self.reduce_with(op, Axes::Some(axes.to_vec()), keepdims, None)
    }
}

/// `NAME_axis(axis)` and `NAME_axis_keepdims(axis)` for each reduction: one axis, negative counting
/// from the end; the `_keepdims` form keeps it with length 1 (NumPy's `keepdims=True`), so the result
/// broadcasts against the input (`&x - x.max_axis_keepdims(1)`).
macro_rules! axis_reductions {
    ($(($axis:ident, $keep:ident, $op:ident, $what:literal)),* $(,)?) => {
        impl Expr {
            $(
                #[doc = concat!("The ", $what, " along one axis (negative counts from the end).")]
                pub fn $axis(&self, axis: isize) -> Expr {
                    self.reduce_axes(ReduceOp::$op, &[axis], false)
                }
                #[doc = concat!("The ", $what, " along one axis, kept with length 1 (NumPy's `keepdims=True`).")]
                pub fn $keep(&self, axis: isize) -> Expr {
                    self.reduce_axes(ReduceOp::$op, &[axis], true)
                }
            )*
        }
    };
}

axis_reductions!(
    (sum_axis, sum_axis_keepdims, Sum, "sum"),
    (prod_axis, prod_axis_keepdims, Prod, "product"),
    (min_axis, min_axis_keepdims, Min, "minimum (propagating NaN)"),
    (max_axis, max_axis_keepdims, Max, "maximum (propagating NaN)"),
    (
        argmin_axis,
        argmin_axis_keepdims,
        ArgMin,
        "index of the first minimum (or first NaN)"
    ),
    (
        argmax_axis,
        argmax_axis_keepdims,
        ArgMax,
        "index of the first maximum (or first NaN)"
    ),
    (any_axis, any_axis_keepdims, Any, "logical or"),
    (all_axis, all_axis_keepdims, All, "logical and"),
);

impl Expr {
    /// The mean along one axis, keeping it with length 1 if `keepdims`.
    pub fn mean_axis(&self, axis: isize, keepdims: bool) -> Expr {
        self.mean_axes(Axes::Some(vec![axis]), keepdims)
    }
    /// The variance along one axis (ddof = 0), keeping it with length 1 if `keepdims`.
    pub fn var_axis(&self, axis: isize, keepdims: bool) -> Expr {
        self.var_axes(Axes::Some(vec![axis]), keepdims)
    }
    /// The standard deviation along one axis (ddof = 0), keeping it with length 1 if `keepdims`.
    pub fn std_axis(&self, axis: isize, keepdims: bool) -> Expr {
        self.std_axes(Axes::Some(vec![axis]), keepdims)
    }
}

/// `where(cond, a, b)` as a free function, the NumPy spelling.
pub fn select(cond: impl Into<Expr>, a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    Expr::select(cond, a, b)
}

impl From<f64> for Expr {
    fn from(v: f64) -> Expr {
        Expr::lit(v)
    }
}

impl From<f32> for Expr {
    fn from(v: f32) -> Expr {
        Expr::lit(v as f64)
    }
}

impl From<i64> for Expr {
    /// A weak integer literal ([`Expr::int`]).
    fn from(v: i64) -> Expr {
        Expr::int(v)
    }
}

impl From<i32> for Expr {
    /// A weak integer literal ([`Expr::int`]).
    fn from(v: i32) -> Expr {
        Expr::int(v.into())
    }
}

impl From<&Expr> for Expr {
    fn from(e: &Expr) -> Expr {
        e.clone()
    }
}

/// `+ - * / %` for `Expr` and `&Expr` on the left with anything that becomes an `Expr` (`Expr`,
/// `&Expr`, `f64`, `f32`, and `i64`, `i32` as weak Python ints) on the right, and an `f64` or `i64`
/// on the left. Scalars are NumPy's weak scalars: `0.5 * &x`, `&x * 2`, `2 * &x` keep `x`'s type (an
/// f32 array times 0.5 is f32, an int32 array times 2 is int32). One float type and one integer
/// type on the left is what lets Rust infer a bare literal there (`(-0.5 * &x * &x).exp()`): an
/// `f32` or `i32` value on the left is written on the right (`&x * v`), or widened (`f64::from(v)`).
macro_rules! binary_operator {
    ($trait:ident, $method:ident, $op:expr) => {
        impl<R: Into<Expr>> std::ops::$trait<R> for Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                // the operand moves into the node (no count to raise and lower)
                Expr::of2($op, self, rhs.into())
            }
        }
        impl<R: Into<Expr>> std::ops::$trait<R> for &Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                self.binary($op, rhs)
            }
        }
        impl std::ops::$trait<Expr> for f64 {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                Expr::of2($op, Expr::lit(self), rhs)
            }
        }
        impl std::ops::$trait<&Expr> for f64 {
            type Output = Expr;
            fn $method(self, rhs: &Expr) -> Expr {
                Expr::of2($op, Expr::lit(self), rhs.clone())
            }
        }
        impl std::ops::$trait<Expr> for i64 {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                Expr::of2($op, Expr::int(self), rhs)
            }
        }
        impl std::ops::$trait<&Expr> for i64 {
            type Output = Expr;
            fn $method(self, rhs: &Expr) -> Expr {
                Expr::of2($op, Expr::int(self), rhs.clone())
            }
        }
    };
}

binary_operator!(Add, add, BinaryOp::Add);
binary_operator!(Sub, sub, BinaryOp::Sub);
binary_operator!(Mul, mul, BinaryOp::Mul);
binary_operator!(Div, div, BinaryOp::Div);
binary_operator!(Rem, rem, BinaryOp::Rem);

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::of1(UnaryOp::Neg, self)
    }
}

impl std::ops::Neg for &Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        self.unary(UnaryOp::Neg)
    }
}

/// Drops a deep tree without deep recursion: the children of a uniquely owned node are moved onto a
/// heap stack (none for a leaf), so a chain of a million additions drops without overflowing the
/// thread's stack. A node another handle holds is only released. (A scalar or a recorded expression
/// whose node was never made drops no node.)
impl Drop for Node {
    fn drop(&mut self) {
        if Rc::get_mut(&mut self.0).is_none_or(|node| is_leaf(node)) {
            return;
        }
        let mut stack = Vec::new();
        take_children(&mut self.0, &mut stack);
        while let Some(mut e) = stack.pop() {
            if let Some(node) = e.node_mut() {
                take_children(&mut node.0, &mut stack);
            }
        }
    }
}

impl Expr {
    /// The counted node, where it is made.
    fn node_mut(&mut self) -> Option<&mut Node> {
        match &mut self.0 {
            Repr::Node(node) => Some(node),
            Repr::Lit(_, cell) | Repr::Int(_, cell) | Repr::Tape(_, _, cell) => cell.get_mut(),
        }
    }
}

/// Whether a node holds no expression.
fn is_leaf(node: &ExprNode) -> bool {
    matches!(
        node,
        ExprNode::Input(_)
            | ExprNode::Literal(_)
            | ExprNode::Int(_)
            | ExprNode::Bytes(_)
            | ExprNode::Index(_)
            | ExprNode::IndexVar(_)
            | ExprNode::Subscript(..)
    )
}

/// The names of a `fuse` closure's inputs (`x0`, `x1`, ...), without an allocation for the first 16.
pub(crate) const FUSE_NAMES: [&str; 16] = [
    "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
];

/// The slot of `fuse_assign`'s `self` ([`Expr::fuse_input`]).
pub(crate) const FUSE_SELF: u32 = u32::MAX;

/// The name of a `fuse` closure's input `slot`.
fn fuse_name(slot: u32) -> std::borrow::Cow<'static, str> {
    match slot {
        FUSE_SELF => "self".into(),
        _ => match FUSE_NAMES.get(slot as usize) {
            Some(name) => (*name).into(),
            None => format!("x{slot}").into(),
        },
    }
}

/// One node of an expression recorded on a [`Tape`]: its operation, parameters (literals by bit
/// pattern) and the indices of its operands, each recorded before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rec {
    /// A `fuse` closure's input (see [`fuse_name`]).
    Input(u32),
    /// A float literal's bits.
    Lit(u64),
    /// An integer literal.
    Int(i64),
    Cast(ElemType, u32),
    Unary(UnaryOp, u32),
    Binary(BinaryOp, u32, u32),
    /// A binary operation of a recorded operand and a float literal's bits (on the right).
    BinaryLit(BinaryOp, u32, u64),
    /// A binary operation of a float literal's bits and a recorded operand (on the right).
    LitBinary(BinaryOp, u64, u32),
    /// A binary operation of a recorded operand and an integer literal (on the right).
    BinaryInt(BinaryOp, u32, i64),
    /// A binary operation of an integer literal and a recorded operand (on the right).
    IntBinary(BinaryOp, i64, u32),
    Where(u32, u32, u32),
    /// A reduction over every axis ([`ALL_AXES`]) or one, with no `initial`.
    Reduce(ReduceOp, u32, i32, bool),
    /// A mean over every axis ([`ALL_AXES`]) or one.
    Mean(u32, i32, bool),
}

/// [`Rec::Reduce`]'s and [`Rec::Mean`]'s axis for every axis.
const ALL_AXES: i32 = i32::MIN;

/// A thread's record of the expressions a `fuse` closure builds: building a node pushes a record,
/// comparing two closures' expressions compares two slices. Records are only ever added while a
/// handle holds the tape (an index always means the same expression); the thread clears its tape
/// for the next call only where no handle holds it (else it starts another).
#[derive(Default)]
pub(crate) struct Tape {
    recs: RefCell<Vec<Rec>>,
    /// The nodes of the records made so far, in order (made on first use, to compile).
    trees: RefCell<Vec<Rc<ExprNode>>>,
}

impl Tape {
    /// `rec` pushed, as an expression.
    #[inline]
    fn record(self: &Rc<Tape>, rec: Rec) -> Option<Expr> {
        let i = push(&mut *self.recs.try_borrow_mut().ok()?, rec)?;
        Some(Expr(Repr::Tape(self.clone(), i, OnceCell::new())))
    }

    /// The records.
    pub(crate) fn recs(&self) -> std::cell::Ref<'_, [Rec]> {
        std::cell::Ref::map(self.recs.borrow(), Vec::as_slice)
    }

    /// The node of record `i`, made (with those before it) if not yet.
    fn tree(&self, i: u32) -> Rc<ExprNode> {
        let recs = self.recs.borrow();
        let mut trees = self.trees.borrow_mut();
        while trees.len() <= i as usize {
            let at = |j: u32| Expr(Repr::Node(Node(trees[j as usize].clone())));
            let lit = |bits: u64| Expr::node_of(ExprNode::Literal(f64::from_bits(bits)));
            let int = |v: i64| Expr::node_of(ExprNode::Int(v));
            let axes = |axis: i32| match axis {
                ALL_AXES => Axes::All,
                a => Axes::Some(vec![a as isize]),
            };
            let node = match recs[trees.len()] {
                Rec::Input(slot) => ExprNode::Input(fuse_name(slot)),
                Rec::Lit(bits) => ExprNode::Literal(f64::from_bits(bits)),
                Rec::Int(v) => ExprNode::Int(v),
                Rec::Cast(ty, a) => ExprNode::Cast(ty, at(a)),
                Rec::Unary(op, a) => ExprNode::Unary(op, at(a)),
                Rec::Binary(op, a, b) => ExprNode::Binary(op, at(a), at(b)),
                Rec::BinaryLit(op, a, bits) => ExprNode::Binary(op, at(a), lit(bits)),
                Rec::LitBinary(op, bits, b) => ExprNode::Binary(op, lit(bits), at(b)),
                Rec::BinaryInt(op, a, v) => ExprNode::Binary(op, at(a), int(v)),
                Rec::IntBinary(op, v, b) => ExprNode::Binary(op, int(v), at(b)),
                Rec::Where(c, a, b) => ExprNode::Where(at(c), at(a), at(b)),
                Rec::Reduce(op, a, axis, keepdims) => ExprNode::Reduce {
                    op,
                    axes: axes(axis),
                    arg: at(a),
                    keepdims,
                    initial: None,
                },
                Rec::Mean(a, axis, keepdims) => ExprNode::Mean {
                    axes: axes(axis),
                    arg: at(a),
                    keepdims,
                },
            };
            trees.push(Rc::new(node));
        }
        trees[i as usize].clone()
    }
}

thread_local! {
    /// This thread's tape.
    static TAPE: RefCell<Rc<Tape>> = RefCell::new(Rc::default());
}

/// Starts recording a `fuse` call: this thread's tape is cleared where no expression holds it, else
/// replaced by a new one.
pub(crate) fn begin_fuse() {
    let _ = TAPE.try_with(|t| {
        let Ok(mut t) = t.try_borrow_mut() else { return };
        match Rc::get_mut(&mut t) {
            Some(tape) => {
                tape.recs.get_mut().clear();
                tape.trees.get_mut().clear();
            }
            None => *t = Rc::default(),
        }
    });
}

/// Pushes `rec`, its index (None past `u32::MAX` records).
#[inline]
fn push(recs: &mut Vec<Rec>, rec: Rec) -> Option<u32> {
    let i = u32::try_from(recs.len()).ok().filter(|&i| i < FUSE_SELF)?;
    recs.push(rec);
    Some(i)
}

/// An operand of a record: an index on the tape, or a scalar (a float literal's bits, an integer).
#[derive(Clone, Copy)]
enum Operand {
    At(u32),
    Lit(u64),
    Int(i64),
}

/// `e` as an operand recorded on `tape` (set by the first recorded one): None for a node, or a
/// record of another tape.
fn operand<'e>(e: &'e Expr, tape: &mut Option<&'e Rc<Tape>>) -> Option<Operand> {
    match &e.0 {
        Repr::Tape(t, i, _) => {
            if tape.is_some_and(|u| !Rc::ptr_eq(u, t)) {
                return None;
            }
            *tape = Some(t);
            Some(Operand::At(*i))
        }
        Repr::Lit(v, _) => Some(Operand::Lit(v.to_bits())),
        Repr::Int(v, _) => Some(Operand::Int(*v)),
        Repr::Node(_) => None,
    }
}

/// [`Expr::of2`]'s record, where it has one.
#[inline]
fn on_tape2(op: BinaryOp, a: &Expr, b: &Expr) -> Option<Expr> {
    let mut tape = None;
    let x = operand(a, &mut tape)?;
    let y = operand(b, &mut tape)?;
    let tape = tape?;
    // a scalar operand is held in the operation's record
    let rec = match (x, y) {
        (Operand::At(i), Operand::At(j)) => Rec::Binary(op, i, j),
        (Operand::At(i), Operand::Lit(bits)) => Rec::BinaryLit(op, i, bits),
        (Operand::Lit(bits), Operand::At(j)) => Rec::LitBinary(op, bits, j),
        (Operand::At(i), Operand::Int(v)) => Rec::BinaryInt(op, i, v),
        (Operand::Int(v), Operand::At(j)) => Rec::IntBinary(op, v, j),
        _ => return None,
    };
    tape.record(rec)
}

/// The index of an operand, a scalar pushed.
#[inline]
fn place(recs: &mut Vec<Rec>, op: Operand) -> Option<u32> {
    match op {
        Operand::At(i) => Some(i),
        Operand::Lit(bits) => push(recs, Rec::Lit(bits)),
        Operand::Int(v) => push(recs, Rec::Int(v)),
    }
}

/// One axis or every axis as a record's axis.
fn rec_axis(axes: &Axes) -> Option<i32> {
    match axes {
        Axes::All => Some(ALL_AXES),
        Axes::Some(v) => match v.as_slice() {
            &[a] => i32::try_from(a).ok().filter(|&a| a != ALL_AXES),
            _ => None,
        },
    }
}

/// `node` recorded on the tape its operands are recorded on (scalars recorded with it), where
/// every operand is recorded there or a scalar, one at least recorded, and the node's kind has a
/// record; else None (the node is made).
fn record(node: &ExprNode) -> Option<Expr> {
    let (kids, n): ([&Expr; 3], usize) = match node {
        ExprNode::Cast(_, a) | ExprNode::Unary(_, a) => ([a, a, a], 1),
        ExprNode::Reduce {
            arg,
            axes,
            initial: None,
            ..
        }
        | ExprNode::Mean { arg, axes, .. }
            if rec_axis(axes).is_some() =>
        {
            ([arg, arg, arg], 1)
        }
        ExprNode::Binary(_, a, b) => ([a, b, b], 2),
        ExprNode::Where(c, a, b) => ([c, a, b], 3),
        _ => return None,
    };
    let mut tape = None;
    let mut ops = [Operand::At(0); 3];
    for (op, kid) in ops.iter_mut().zip(&kids[..n]) {
        *op = operand(kid, &mut tape)?;
    }
    let tape = tape?;
    let mut recs = tape.recs.try_borrow_mut().ok()?;
    let mut at = [0u32; 3];
    for (i, op) in at.iter_mut().zip(&ops[..n]) {
        *i = place(&mut recs, *op)?;
    }
    let rec = match node {
        ExprNode::Cast(ty, _) => Rec::Cast(*ty, at[0]),
        ExprNode::Unary(op, _) => Rec::Unary(*op, at[0]),
        ExprNode::Reduce {
            op, axes, keepdims, ..
        } => Rec::Reduce(*op, at[0], rec_axis(axes)?, *keepdims),
        ExprNode::Mean { axes, keepdims, .. } => Rec::Mean(at[0], rec_axis(axes)?, *keepdims),
        ExprNode::Binary(op, ..) => Rec::Binary(*op, at[0], at[1]),
        ExprNode::Where(..) => Rec::Where(at[0], at[1], at[2]),
        _ => return None,
    };
    let i = push(&mut recs, rec)?;
    Some(Expr(Repr::Tape(tape.clone(), i, OnceCell::new())))
}

fn take_children(node: &mut Rc<ExprNode>, stack: &mut Vec<Expr>) {
    let Some(node) = Rc::get_mut(node) else { return };
    match std::mem::replace(node, ExprNode::Literal(0.0)) {
        ExprNode::Unary(_, a)
        | ExprNode::Cast(_, a)
        | ExprNode::Reduce { arg: a, .. }
        | ExprNode::Mean { arg: a, .. }
        | ExprNode::Scan { arg: a, .. }
        | ExprNode::Contract { arg: a, .. } => stack.push(a),
        ExprNode::Binary(_, a, b) => stack.extend([a, b]),
        ExprNode::Where(c, a, b) => stack.extend([c, a, b]),
        ExprNode::Input(_)
        | ExprNode::Literal(_)
        | ExprNode::Int(_)
        | ExprNode::Bytes(_)
        | ExprNode::Index(_)
        | ExprNode::IndexVar(_)
        | ExprNode::Subscript(..) => {}
    }
}

impl std::ops::Not for Expr {
    type Output = Expr;
    /// Logical not, as [`Expr::not`].
    fn not(self) -> Expr {
        self.unary(UnaryOp::Not)
    }
}

impl std::ops::Not for &Expr {
    type Output = Expr;
    /// Logical not, as [`Expr::not`].
    fn not(self) -> Expr {
        self.unary(UnaryOp::Not)
    }
}
