//! The interpreter: the oracle that defines what every kernel means, of every element type.
//!
//! One evaluator ([`evaluate`]) takes a typed kernel ([`TypedKernel`]) one point at a time, in
//! row-major order, each node computed as [`crate::scalar`] says for its type: [`crate::int`]'s
//! integer semantics (wrapping), NumPy's bool arithmetic, [`UnaryOp::eval`](crate::op::UnaryOp::eval)
//! and [`BinaryOp::eval`](crate::op::BinaryOp::eval) for floats, [`crate::complex`] for complex
//! numbers. A float kernel runs on it typed trivially ([`TypedKernel::of_float`]: every value in its
//! dtype): [`interpret`], [`interpret_from`] and [`interpret_outputs`] take float inputs and give the
//! float kernel's result type.
//!
//! Reductions accumulate as NumPy's: float sums pairwise in f64, in the fixed order
//! [`pairwise_sum`] documents (NumPy's blocks of 128 values with eight accumulators, blocks combined
//! pairwise), so the oracle is at least as accurate as NumPy; the other float reductions fold in
//! sequential order: products in an f64 accumulator, min and max propagating NaN and keeping the last
//! of equal extremes (NumPy's `maximum(0.0, -0.0)` is `-0.0`), argmin and argmax keeping the first
//! extreme or the first NaN; sums and products of bool and integer values in int64 (wrapping), their
//! min and max in the type; compound reductions ([`crate::compound`]) of bool and integer values in
//! float64 (NumPy's `mean` and `var`); scans carry their state along each line in scan order (see
//! [`crate::scan`]). It is written to be obviously right, not fast.

mod fold;

use crate::bytes;
use crate::dtype::{Floats, Real};
use crate::error::{IrError, Result};
use crate::expr::{Node, NodeId};
use crate::kernel::{KernelIR, KernelKind, Start};
use crate::op::{BinaryOp, UnaryOp};
use crate::promote::ElemType;
use crate::scalar::Scalar;
use crate::shape::{checked_size, unravel};
pub use crate::sum::pairwise_sum;
use crate::tensor::{Tensor, Values};
use crate::typed::TypedKernel;
use num_complex::{Complex32, Complex64};

/// An input as the interpreter reads it: element `idx` of the iteration space is
/// `data[offset + Σ idx[d] * strides[d]]` (a stride is 0 along a broadcast axis).
#[derive(Debug, Clone)]
pub struct StridedInput<'a, T> {
    /// The input's elements.
    pub data: &'a [T],
    /// The position in `data` of the iteration space's first point.
    pub offset: usize,
    /// Elements to step per axis of the iteration space (0 along a broadcast axis).
    pub strides: Vec<isize>,
}

impl<T> StridedInput<'_, T> {
    /// Checks that every point of `shape` reads inside `data`.
    pub(crate) fn check(&self, shape: &[usize], index: usize) -> Result<()> {
        self.check_span(shape, index, 1)
    }

    /// Checks that every point of `shape` reads `span` elements from its position inside `data`
    /// (a byte string's width).
    pub(crate) fn check_span(&self, shape: &[usize], index: usize, span: usize) -> Result<()> {
        let bad = |why: String| IrError::BadInput { index, why };
        if self.strides.len() != shape.len() {
            return Err(bad(format!(
                "{} strides for rank {}",
                self.strides.len(),
                shape.len()
            )));
        }
        if shape.contains(&0) {
            return Ok(());
        }
        let (mut lo, mut hi) = (self.offset as i128, self.offset as i128);
        for (&d, &s) in shape.iter().zip(&self.strides) {
            let span = (d as i128 - 1) * s as i128;
            if span < 0 { lo += span } else { hi += span }
        }
        hi += span.saturating_sub(1) as i128;
        if lo < 0 || hi >= self.data.len() as i128 {
            return Err(bad(format!(
                "reads elements {lo}..={hi} of a buffer of {}",
                self.data.len()
            )));
        }
        Ok(())
    }

    pub(crate) fn at(&self, idx: &[usize]) -> T
    where
        T: Copy,
    {
        self.data[self.position(idx)]
    }

    /// The position in `data` of point `idx`.
    pub(crate) fn position(&self, idx: &[usize]) -> usize {
        let mut off = self.offset as isize;
        for (&i, &s) in idx.iter().zip(&self.strides) {
            off += i as isize * s;
        }
        off as usize
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

    /// A float input read as `s` says.
    fn of_floats<T: Real>(s: &StridedInput<'a, T>) -> TypedInput<'a> {
        let (offset, strides) = (s.offset, s.strides.clone());
        match T::floats(s.data) {
            Floats::F32(data) => TypedInput::F32(StridedInput {
                data,
                offset,
                strides,
            }),
            Floats::F64(data) => TypedInput::F64(StridedInput {
                data,
                offset,
                strides,
            }),
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

/// A value the evaluator computes with: a [`Scalar`] of any type, or the float of a float kernel
/// typed trivially ([`TypedKernel::of_float`]: every value of its dtype, a truth value 1 / 0 in
/// it). Each opcode means what [`crate::scalar`] says for that type (a float's logical opcode gives
/// 1 / 0 where a scalar gives a bool the kernel then casts to 1 / 0): one evaluator, compiled for
/// `Scalar` and, without a tag per value, for `f64` and `f32`.
trait Value: Copy {
    /// Element `idx` of an input.
    fn of_input(input: &TypedInput<'_>, idx: &[usize]) -> Self;
    /// A scalar (a constant, a string comparison) as this value.
    fn of_scalar(s: Scalar) -> Self;
    /// The value as a scalar.
    fn scalar(self) -> Scalar;
    /// A position along an axis (an int64 index).
    fn index(i: usize) -> Self;
    fn unary(op: UnaryOp, x: Self) -> Self;
    fn binary(op: BinaryOp, a: Self, b: Self) -> Self;
    fn fma(a: Self, b: Self, c: Self) -> Self;
    fn cast(self, t: ElemType) -> Self;
    fn truth(self) -> bool;
    /// Values gathered into [`Values`] of type `t`.
    fn gather(v: Vec<Self>, t: ElemType) -> Values;
}

impl Value for Scalar {
    fn of_input(input: &TypedInput<'_>, idx: &[usize]) -> Scalar {
        input.at(idx)
    }
    fn of_scalar(s: Scalar) -> Scalar {
        s
    }
    fn scalar(self) -> Scalar {
        self
    }
    fn index(i: usize) -> Scalar {
        Scalar::I64(i as i64)
    }
    fn unary(op: UnaryOp, x: Scalar) -> Scalar {
        crate::scalar::unary(op, x)
    }
    fn binary(op: BinaryOp, a: Scalar, b: Scalar) -> Scalar {
        crate::scalar::binary(op, a, b)
    }
    fn fma(a: Scalar, b: Scalar, c: Scalar) -> Scalar {
        match (a, b, c) {
            (Scalar::F64(x), Scalar::F64(y), Scalar::F64(z)) => Scalar::F64(x.mul_add(y, z)),
            (Scalar::F32(x), Scalar::F32(y), Scalar::F32(z)) => Scalar::F32(x.mul_add(y, z)),
            _ => unreachable!("the typing gives fma float operands"),
        }
    }
    fn cast(self, t: ElemType) -> Scalar {
        Scalar::cast(self, t)
    }
    fn truth(self) -> bool {
        Scalar::truth(self)
    }
    fn gather(v: Vec<Scalar>, t: ElemType) -> Values {
        collect(v, t)
    }
}

macro_rules! float_value {
    ($t:ty, $v:ident) => {
        impl Value for $t {
            fn of_input(input: &TypedInput<'_>, idx: &[usize]) -> $t {
                match input {
                    TypedInput::$v(s) => s.at(idx),
                    _ => unreachable!("a float kernel's inputs are of its dtype"),
                }
            }
            fn of_scalar(s: Scalar) -> $t {
                match s.cast(ElemType::$v) {
                    Scalar::$v(x) => x,
                    _ => unreachable!("cast to its own type"),
                }
            }
            fn scalar(self) -> Scalar {
                Scalar::$v(self)
            }
            fn index(i: usize) -> $t {
                Self::of_scalar(Scalar::I64(i as i64))
            }
            #[inline(always)]
            fn unary(op: UnaryOp, x: $t) -> $t {
                op.eval(x)
            }
            #[inline(always)]
            fn binary(op: BinaryOp, a: $t, b: $t) -> $t {
                op.eval(a, b)
            }
            fn fma(a: $t, b: $t, c: $t) -> $t {
                a.mul_add(b, c)
            }
            fn cast(self, t: ElemType) -> $t {
                // a truth value is 1 / 0 already
                if t == ElemType::$v {
                    self
                } else {
                    Self::of_scalar(Scalar::$v(self).cast(t))
                }
            }
            fn truth(self) -> bool {
                self != 0.0
            }
            fn gather(v: Vec<$t>, t: ElemType) -> Values {
                if t == ElemType::$v {
                    Values::$v(v)
                } else {
                    collect(v.into_iter().map(Scalar::$v).collect(), t)
                }
            }
        }
    };
}

float_value!(f64, F64);
float_value!(f32, F32);

/// Evaluates one root at one point: the nodes it reaches in order, its constants (literals, byte
/// strings, their casts) once, when it is made.
struct Evaluator<'k, 'a, V> {
    kernel: &'k TypedKernel,
    inputs: &'k [TypedInput<'a>],
    root: NodeId,
    /// The nodes computed at every point, operands first, each with its node and whether it
    /// compares byte strings.
    order: Vec<(NodeId, Node, bool)>,
    /// One value per node of the arena up to the root.
    scratch: Vec<V>,
}

impl<'k, 'a, V: Value> Evaluator<'k, 'a, V> {
    fn new(kernel: &'k TypedKernel, inputs: &'k [TypedInput<'a>], root: NodeId) -> Self {
        let mut eval = Evaluator {
            kernel,
            inputs,
            root,
            order: Vec::new(),
            scratch: vec![V::of_scalar(Scalar::Bool(false)); root.index() + 1],
        };
        let arena = &kernel.kernel.arena;
        let mut constant = vec![false; root.index() + 1];
        for id in arena.reachable(root) {
            let node = *arena.node(id);
            let c = match node {
                Node::Literal(_) | Node::Int(_) | Node::Bytes(_) => true,
                Node::Cast(_, a) => constant[a.index()],
                _ => false,
            };
            let strings = matches!(node, Node::Binary(_, a, _) if kernel.type_of(a).is_bytes());
            if c {
                // a constant reads no point
                eval.scratch[id.index()] = eval.step(node, strings, &[]);
                constant[id.index()] = true;
            } else {
                eval.order.push((id, node, strings));
            }
        }
        eval
    }

    /// The byte string node `id` (an input or a constant) holds at point `idx`.
    fn bytes(&self, id: NodeId, idx: &[usize]) -> &'a [u8] {
        match *self.kernel.kernel.arena.node(id) {
            Node::Input(n) => self.inputs[n as usize].bytes_at(idx),
            Node::Bytes(v) => v.bytes(),
            _ => &[],
        }
    }

    /// `node` at point `idx`, its operands in `scratch` (`strings`: it compares byte strings).
    #[inline(always)]
    fn step(&self, node: Node, strings: bool, idx: &[usize]) -> V {
        let s = &self.scratch;
        match node {
            Node::Binary(op, a, b) if strings => V::of_scalar(Scalar::Bool(
                bytes::eval(op, self.bytes(a, idx), self.bytes(b, idx)).unwrap_or(false),
            )),
            // strings are read where they are compared
            Node::Bytes(_) => V::of_scalar(Scalar::Bool(false)),
            Node::Input(n) => V::of_input(&self.inputs[n as usize], idx),
            Node::Literal(bits) => V::of_scalar(Scalar::F64(f64::from_bits(bits))),
            Node::Int(v) => V::of_scalar(Scalar::I64(v)),
            Node::Index(a) => V::index(idx[a as usize]),
            Node::Cast(t, a) => match (*self.kernel.kernel.arena.node(a), t) {
                // a Python float takes a float type by rounding once, as NumPy's
                (Node::Literal(bits), ElemType::F32 | ElemType::C64) => {
                    V::of_scalar(Scalar::F32(f64::from_bits(bits) as f32).cast(t))
                }
                _ => s[a.index()].cast(t),
            },
            Node::Unary(op, a) => V::unary(op, s[a.index()]),
            Node::Binary(op, a, b) => V::binary(op, s[a.index()], s[b.index()]),
            Node::Where(c, a, b) => {
                if s[c.index()].truth() {
                    s[a.index()]
                } else {
                    s[b.index()]
                }
            }
            Node::Fma(a, b, c) => V::fma(s[a.index()], s[b.index()], s[c.index()]),
        }
    }

    /// The root's value at point `idx`.
    fn at(&mut self, idx: &[usize]) -> V {
        for i in 0..self.order.len() {
            let (id, node, strings) = self.order[i];
            self.scratch[id.index()] = self.step(node, strings, idx);
        }
        self.scratch[self.root.index()]
    }
}

/// Evaluates a typed kernel over `inputs` (one per declared input, of its declared type), each
/// reduction starting at `start` (see [`Start`]; an integer accumulator takes an integral start that
/// fits int64, else an error): the result of [`TypedKernel::output_type`].
pub fn evaluate(kernel: &TypedKernel, inputs: &[TypedInput<'_>], start: Start<'_>) -> Result<Tensor> {
    run::<Scalar>(kernel, inputs, start)
}

/// [`evaluate`], each value a `V`.
fn run<V: Value>(kernel: &TypedKernel, inputs: &[TypedInput<'_>], start: Start<'_>) -> Result<Tensor> {
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
    let mut eval = Evaluator::<V>::new(kernel, inputs, k.body);
    let no_start = |why: String| {
        if start == Start::Identity {
            Ok(())
        } else {
            Err(IrError::InvalidReduction(why))
        }
    };
    match &k.kind {
        KernelKind::Map if kernel.value_type().is_bytes() => map_bytes(kernel, &eval),
        KernelKind::Map => {
            let out = each_point(&k.shape, 1, |idx, out| out.push(eval.at(idx)))?;
            Ok(Tensor {
                shape: k.shape.clone(),
                values: V::gather(out, kernel.value_type()),
            })
        }
        KernelKind::Reduce { op, axes } => fold::reduce(kernel, *op, axes, &mut eval, start),
        KernelKind::Compound { op, axes } => {
            no_start(format!(
                "the compound reduction {} takes no start value",
                op.name()
            ))?;
            fold::compound(kernel, *op, axes, &mut eval)
        }
        KernelKind::Siblings { ops, axes } => {
            no_start("sibling reductions take no start value".into())?;
            fold::siblings::<V>(kernel, ops, axes, inputs)
        }
        KernelKind::Scan(scan) => {
            no_start("a scan takes its initial value in the kernel, not as a start".into())?;
            fold::scan(kernel, scan, &mut eval)
        }
    }
}

/// Evaluates every output of a typed kernel (see [`KernelIR::extra`]): one tensor per output, in
/// order, each of its own type, each what [`evaluate`] gives for that output alone (the oracle of a
/// kernel of several outputs; `start` is the first output's, a reduction's).
pub fn evaluate_outputs(
    kernel: &TypedKernel,
    inputs: &[TypedInput<'_>],
    start: Start<'_>,
) -> Result<Vec<Tensor>> {
    kernel.kernel.validate()?;
    (0..kernel.kernel.n_outputs())
        .map(|o| {
            let start = if o == 0 { start } else { Start::Identity };
            evaluate(&kernel.output(o), inputs, start)
        })
        .collect()
}

/// Evaluates the float kernel `kernel` over `inputs` (one per declared input, in the kernel's
/// dtype `T`).
pub fn interpret<T: Real>(kernel: &KernelIR, inputs: &[StridedInput<'_, T>]) -> Result<Tensor> {
    interpret_from(kernel, inputs, Start::Identity)
}

/// Evaluates every output of the float kernel `kernel` (see [`KernelIR::extra`]): one tensor per
/// output, in order, each what [`interpret`] gives for that output alone.
pub fn interpret_outputs<T: Real>(kernel: &KernelIR, inputs: &[StridedInput<'_, T>]) -> Result<Vec<Tensor>> {
    let (typed, inputs) = float_typed(kernel, inputs)?;
    (0..kernel.n_outputs())
        .map(|o| {
            let out = run_float(&typed.output(o), &inputs, Start::Identity)?;
            Ok(retyped(out, kernel.output_type_of(o)))
        })
        .collect()
}

/// [`interpret`], each reduction's accumulator starting at `start` (see [`Start`]): the start is
/// folded first, then the values in order.
///
/// The float kernel is typed trivially ([`TypedKernel::of_float`]) and evaluated; its result takes
/// the float kernel's type ([`KernelIR::output_type`]: a truth value's map bool, a sum of truth
/// values int64, ...).
pub fn interpret_from<T: Real>(
    kernel: &KernelIR,
    inputs: &[StridedInput<'_, T>],
    start: Start<'_>,
) -> Result<Tensor> {
    let (typed, inputs) = float_typed(kernel, inputs)?;
    let out = run_float(&typed, &inputs, start)?;
    Ok(retyped(out, kernel.output_type()))
}

/// A float kernel typed trivially evaluated, each value a float of its dtype.
fn run_float(typed: &TypedKernel, inputs: &[TypedInput<'_>], start: Start<'_>) -> Result<Tensor> {
    match typed.kernel.dtype {
        ElemType::F64 => run::<f64>(typed, inputs, start),
        ElemType::F32 => run::<f32>(typed, inputs, start),
        t => Err(IrError::Malformed(format!(
            "a float kernel computes in f32 or f64, not {t}"
        ))),
    }
}

/// A float kernel typed trivially, and its inputs as typed inputs.
fn float_typed<'a, T: Real>(
    kernel: &KernelIR,
    inputs: &[StridedInput<'a, T>],
) -> Result<(TypedKernel, Vec<TypedInput<'a>>)> {
    let typed = TypedKernel::of_float(kernel)?;
    if kernel.dtype != T::DTYPE {
        return Err(IrError::BadInput {
            index: 0,
            why: format!(
                "the kernel computes in {} but the inputs are {}",
                kernel.dtype.short(),
                T::DTYPE.short()
            ),
        });
    }
    Ok((typed, inputs.iter().map(TypedInput::of_floats).collect()))
}

/// A float kernel's result in its own result type (1 / 0 read as bool, integral floats as int64).
fn retyped(t: Tensor, to: ElemType) -> Tensor {
    let values = match t.values {
        Values::F64(v) if to != ElemType::F64 => collect(v.into_iter().map(Scalar::F64).collect(), to),
        Values::F32(v) if to != ElemType::F32 => collect(v.into_iter().map(Scalar::F32).collect(), to),
        v => v,
    };
    Tensor {
        shape: t.shape,
        values,
    }
}

/// A map whose value is a byte string (an input or a constant: nothing computes one), copied: the
/// strings of its width (at least 1: NumPy has no `S0` array, `b''` alone gives `S1` `b''`).
fn map_bytes<V: Value>(kernel: &TypedKernel, eval: &Evaluator<'_, '_, V>) -> Result<Tensor> {
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

/// Values gathered into [`Values`] of type `t`, each cast to it.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::ExprArena;
    use crate::kernel::InputDecl;
    use crate::op::{BinaryOp, UnaryOp};

    fn kernel(arena: ExprArena, body: NodeId, names: &[&str], kind: KernelKind) -> KernelIR {
        KernelIR {
            dtype: crate::ElemType::F64,
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
        let out = evaluate(
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
        let bad = evaluate(
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
