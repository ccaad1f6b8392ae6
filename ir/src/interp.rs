//! The interpreter: the oracle that defines what every kernel means.
//!
//! It evaluates a [`KernelIR`] one point at a time, in row-major order, calling exactly the scalar
//! semantics of [`UnaryOp::eval`](crate::op::UnaryOp::eval) and
//! [`BinaryOp::eval`](crate::op::BinaryOp::eval). Sums are pairwise in f64, in the fixed order
//! [`pairwise_sum`] documents (NumPy's blocks of 128 values with eight accumulators, blocks combined
//! pairwise), so the oracle is at least as accurate as NumPy; the other reductions fold in sequential
//! order: products in an f64 accumulator, min and max propagating NaN and keeping the last of equal
//! extremes (NumPy's `maximum(0.0, -0.0)` is `-0.0`), argmin and argmax keeping the first extreme or
//! the first NaN; scans carry their state along each
//! line in scan order (see [`crate::scan`]). It is written to be obviously right,
//! not fast.

use crate::compound::CompoundOp;
use crate::dtype::Real;
use crate::error::{IrError, Result};
use crate::expr::{Node, NodeId};
use crate::kernel::{KernelIR, KernelKind, ReduceOp, Start};
use crate::promote::ElemType;
use crate::scan::{Carried, Scan};
use crate::shape::{checked_size, try_filled, unravel};
pub use crate::sum::pairwise_sum;
use crate::tensor::{Tensor, Values};

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

/// Evaluates `kernel` over `inputs` (one per declared input, in the kernel's dtype `T`).
pub fn interpret<T: Real>(kernel: &KernelIR, inputs: &[StridedInput<'_, T>]) -> Result<Tensor> {
    interpret_from(kernel, inputs, Start::Identity)
}

/// Evaluates every output of `kernel` (see [`KernelIR::extra`]): one tensor per output, in order,
/// each what [`interpret`] gives for that output alone (the oracle of a kernel of several outputs).
pub fn interpret_outputs<T: Real>(kernel: &KernelIR, inputs: &[StridedInput<'_, T>]) -> Result<Vec<Tensor>> {
    kernel.validate()?;
    (0..kernel.n_outputs())
        .map(|o| interpret(&kernel.output(o), inputs))
        .collect()
}

/// [`interpret`], each reduction's accumulator starting at `start` (see [`Start`]): the start is
/// folded first, then the values in order.
pub fn interpret_from<T: Real>(
    kernel: &KernelIR,
    inputs: &[StridedInput<'_, T>],
    start: Start<'_>,
) -> Result<Tensor> {
    kernel.validate()?;
    if let Some(why) = kernel.needs_typing() {
        return Err(IrError::Malformed(format!(
            "{why}: a typed kernel, evaluated by kiln_ir::typed"
        )));
    }
    if kernel.dtype != T::DTYPE {
        return Err(IrError::BadInput {
            index: 0,
            why: format!(
                "the kernel computes in {} but the inputs are {}",
                kernel.dtype,
                T::DTYPE
            ),
        });
    }
    if inputs.len() != kernel.inputs.len() {
        return Err(IrError::Arity {
            expected: kernel.inputs.len(),
            got: inputs.len(),
        });
    }
    for (i, input) in inputs.iter().enumerate() {
        input.check(&kernel.shape, i)?;
    }
    let mut eval = Evaluator::new(kernel, inputs);
    let out_type = kernel.output_type();
    match &kernel.kind {
        KernelKind::Map => {
            let n = checked_size(&kernel.shape)?;
            let mut idx = vec![0; kernel.shape.len()];
            let mut out = Vec::new();
            out.try_reserve_exact(n).map_err(|_| IrError::Allocation {
                what: "the result".into(),
                elements: n,
            })?;
            for flat in 0..n {
                unravel(flat, &kernel.shape, &mut idx);
                out.push(eval.at(&idx));
            }
            let values = match out_type {
                ElemType::Bool => Values::Bool(out.iter().map(|v| v.is_true()).collect()),
                _ => float_values(out),
            };
            Ok(Tensor {
                shape: kernel.shape.clone(),
                values,
            })
        }
        KernelKind::Reduce { op, axes } => reduce(kernel, *op, axes, &mut eval, out_type, start),
        KernelKind::Compound { op, axes } => {
            if start != Start::Identity {
                return Err(IrError::InvalidReduction(format!(
                    "the compound reduction {} takes no start value",
                    op.name()
                )));
            }
            compound(kernel, *op, axes, &mut eval)
        }
        KernelKind::Siblings { ops, .. } => {
            if start != Start::Identity {
                return Err(IrError::InvalidReduction(
                    "sibling reductions take no start value".into(),
                ));
            }
            siblings(kernel, ops.len(), inputs)
        }
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

/// A scan: each line folded in scan order, the state carried as [`Carried`] says.
fn scan_kernel<T: Real>(kernel: &KernelIR, scan: &Scan, eval: &mut Evaluator<'_, '_, T>) -> Result<Tensor> {
    let shape = &kernel.shape;
    let n = checked_size(shape)?;
    let (outer, _, inner) = scan.lines(shape);
    let mut out = try_filled(n, T::ZERO, "the scan's result")?;
    let mut idx = vec![0; shape.len()];
    for o in 0..outer {
        for c in 0..inner {
            let mut state = Carried::<T>::start(scan);
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
        shape: kernel.output_shape(),
        values: float_values(out),
    })
}

pub(crate) fn float_values<T: Real>(v: Vec<T>) -> Values {
    let any: Box<dyn std::any::Any> = Box::new(v);
    match any.downcast::<Vec<f64>>() {
        Ok(v) => Values::F64(*v),
        Err(any) => Values::F32(*any.downcast::<Vec<f32>>().expect("Real is f32 or f64")),
    }
}

/// The points of a reduction over `axes` of an iteration space: the output points (the kept axes,
/// in C order) and each one's extent (the reduced axes, in C order).
pub(crate) struct Extents {
    kept: Vec<usize>,
    axes: Vec<usize>,
    rank: usize,
    pub out_shape: Vec<usize>,
    red_shape: Vec<usize>,
    pub n_out: usize,
    pub n_red: usize,
}

impl Extents {
    pub(crate) fn new(shape: &[usize], axes: &[usize]) -> Result<Extents> {
        let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
        let out_shape: Vec<usize> = kept.iter().map(|&a| shape[a]).collect();
        let red_shape: Vec<usize> = axes.iter().map(|&a| shape[a]).collect();
        Ok(Extents {
            n_out: checked_size(&out_shape)?,
            n_red: checked_size(&red_shape)?,
            kept,
            axes: axes.to_vec(),
            rank: shape.len(),
            out_shape,
            red_shape,
        })
    }

    /// Calls `each(o, values)` for every output `o` in order, `values` being what `at` gives at
    /// the points of its extent, in order.
    pub(crate) fn for_each<V>(
        &self,
        mut at: impl FnMut(&[usize]) -> V,
        mut each: impl FnMut(usize, &mut dyn Iterator<Item = V>) -> Result<()>,
    ) -> Result<()> {
        let mut idx = vec![0; self.rank];
        let (mut out_idx, mut red_idx) = (vec![0; self.kept.len()], vec![0; self.axes.len()]);
        for o in 0..self.n_out {
            unravel(o, &self.out_shape, &mut out_idx);
            for (&a, &i) in self.kept.iter().zip(&out_idx) {
                idx[a] = i;
            }
            let mut values = (0..self.n_red).map(|r| {
                unravel(r, &self.red_shape, &mut red_idx);
                for (&a, &i) in self.axes.iter().zip(&red_idx) {
                    idx[a] = i;
                }
                at(&idx)
            });
            each(o, &mut values)?;
        }
        Ok(())
    }
}

/// The value of one reduced extent.
pub(crate) enum Folded<T> {
    Float(T),
    Index(i64),
    Truth(bool),
}

fn reduce<T: Real>(
    kernel: &KernelIR,
    op: ReduceOp,
    axes: &[usize],
    eval: &mut Evaluator<'_, '_, T>,
    out_type: ElemType,
    start: Start<'_>,
) -> Result<Tensor> {
    let ext = Extents::new(&kernel.shape, axes)?;
    let n_out = ext.n_out;
    start.check(op, n_out)?;
    if ext.n_red == 0 && n_out > 0 && !op.has_identity() && start == Start::Identity {
        return Err(IrError::EmptyReduction { op: op.name() });
    }
    let mut folded = Vec::new();
    folded.try_reserve_exact(n_out).map_err(|_| IrError::Allocation {
        what: "the result".into(),
        elements: n_out,
    })?;
    ext.for_each(
        |idx| eval.at(idx),
        |o, values| {
            folded.push(fold(op, values, start.at(o)));
            Ok(())
        },
    )?;
    let values = match out_type {
        ElemType::F32 | ElemType::F64 => float_values(
            folded
                .into_iter()
                .map(|f| match f {
                    Folded::Float(v) => v,
                    _ => unreachable!("a float reduction folds to a float"),
                })
                .collect(),
        ),
        ElemType::I64 | ElemType::I32 => Values::I64(
            folded
                .into_iter()
                .map(|f| match f {
                    Folded::Index(i) => i,
                    Folded::Float(v) => v.to_f64() as i64,
                    Folded::Truth(b) => b as i64,
                })
                .collect(),
        ),
        ElemType::Bool => Values::Bool(
            folded
                .into_iter()
                .map(|f| match f {
                    Folded::Truth(b) => b,
                    Folded::Float(v) => v.is_true(),
                    Folded::Index(i) => i != 0,
                })
                .collect(),
        ),
        ElemType::C64 | ElemType::C128 | ElemType::Bytes(_) => {
            return Err(IrError::Type(format!(
                "a {out_type} result of a float kernel (complex and byte-string kernels are typed: \
                 kiln_ir::typed)"
            )));
        }
    };
    Ok(Tensor {
        shape: ext.out_shape,
        values,
    })
}

/// A compound reduction: each extent's two statistics ([`CompoundOp::fold`]), component 0 of every
/// output first, then component 1.
fn compound<T: Real>(
    kernel: &KernelIR,
    op: CompoundOp,
    axes: &[usize],
    eval: &mut Evaluator<'_, '_, T>,
) -> Result<Tensor> {
    let ext = Extents::new(&kernel.shape, axes)?;
    let n_out = ext.n_out;
    if ext.n_red == 0 && n_out > 0 && !op.has_identity() {
        return Err(IrError::EmptyReduction { op: "max" });
    }
    let mut out = try_filled(n_out.saturating_mul(2), T::ZERO, "the result")?;
    ext.for_each(
        |idx| eval.at(idx),
        |o, values| {
            let [a, b] = op.fold(values);
            out[o] = a;
            out[n_out + o] = b;
            Ok(())
        },
    )?;
    Ok(Tensor {
        shape: kernel.output_shape(),
        values: float_values(out),
    })
}

/// Sibling reductions: component `c` is what the reduction of root `c` alone gives (the same
/// order, so the same bits), every output of component 0 first, then component 1, ...
fn siblings<T: Real>(kernel: &KernelIR, n: usize, inputs: &[StridedInput<'_, T>]) -> Result<Tensor> {
    let mut out: Vec<T> = Vec::new();
    for c in 0..n {
        match interpret(&kernel.component(c), inputs)?.values {
            Values::F64(v) => out.extend(v.into_iter().map(T::from_f64)),
            Values::F32(v) => out.extend(v.into_iter().map(|x| T::from_f64(f64::from(x)))),
            _ => unreachable!("sibling components are float reductions"),
        }
    }
    Ok(Tensor {
        shape: kernel.output_shape(),
        values: float_values(out),
    })
}

/// Folds one extent's values in order.
///
/// `start` (a given `initial`, or the output's previous value) replaces the identity as the first
/// accumulator value: it is applied exactly once.
pub(crate) fn fold<T: Real>(
    op: ReduceOp,
    mut values: impl Iterator<Item = T>,
    start: Option<f64>,
) -> Folded<T> {
    match op {
        ReduceOp::Sum => {
            // NumPy starts its sums from +0.0, so a sum of -0.0s is +0.0 (and an empty sum is 0)
            let s = start.unwrap_or(0.0f64) + pairwise_sum(values.map(T::to_f64));
            Folded::Float(T::from_f64(s))
        }
        ReduceOp::Prod => Folded::Float(T::from_f64(
            values.fold(start.unwrap_or(1.0f64), |acc, v| op.merge(acc, v.to_f64())),
        )),
        ReduceOp::Min | ReduceOp::Max => {
            let first = match start {
                Some(s) => T::from_f64(s),
                None => values.next().expect("checked non-empty"),
            };
            Folded::Float(values.fold(first, |a, v| op.merge(a, v)))
        }
        ReduceOp::ArgMin | ReduceOp::ArgMax => {
            let mut best = values.next().expect("checked non-empty");
            let mut at = 0usize;
            for (i, v) in values.enumerate() {
                if best.is_nan() {
                    break;
                }
                if op.arg_replaces(best, v) {
                    best = v;
                    at = i + 1;
                }
            }
            Folded::Index(at as i64)
        }
        // short-circuiting folds of `op.merge` (any stops at the first truth, all at the first false)
        ReduceOp::Any => Folded::Truth(values.any(|v| v.is_true())),
        ReduceOp::All => Folded::Truth(values.all(|v| v.is_true())),
    }
}

/// Evaluates the body at one point; `scratch` holds one value per arena node.
struct Evaluator<'k, 'a, T> {
    kernel: &'k KernelIR,
    inputs: &'k [StridedInput<'a, T>],
    order: Vec<NodeId>,
    scratch: Vec<T>,
}

impl<'k, 'a, T: Real> Evaluator<'k, 'a, T> {
    fn new(kernel: &'k KernelIR, inputs: &'k [StridedInput<'a, T>]) -> Self {
        Evaluator {
            kernel,
            inputs,
            order: kernel.arena.reachable(kernel.body),
            scratch: vec![T::ZERO; kernel.body.index() + 1],
        }
    }

    fn at(&mut self, idx: &[usize]) -> T {
        let arena = &self.kernel.arena;
        for &id in &self.order {
            let v = match *arena.node(id) {
                Node::Input(n) => self.inputs[n as usize].at(idx),
                Node::Literal(bits) => T::from_f64(f64::from_bits(bits)),
                Node::Int(v) => T::from_f64(v as f64),
                // a float kernel never holds a cast (`interpret_from` refuses one)
                Node::Cast(_, a) => self.scratch[a.index()],
                Node::Index(axis) => T::from_f64(idx[axis as usize] as f64),
                // a float kernel never holds a string (`interpret_from` refuses one)
                Node::Bytes(_) => T::ZERO,
                Node::Unary(op, a) => op.eval(self.scratch[a.index()]),
                Node::Binary(op, a, b) => op.eval(self.scratch[a.index()], self.scratch[b.index()]),
                Node::Fma(a, b, c) => {
                    let s = &self.scratch;
                    s[a.index()].mul_add(s[b.index()], s[c.index()])
                }
                Node::Where(c, a, b) => {
                    if self.scratch[c.index()].is_true() {
                        self.scratch[a.index()]
                    } else {
                        self.scratch[b.index()]
                    }
                }
            };
            self.scratch[id.index()] = v;
        }
        self.scratch[self.kernel.body.index()]
    }
}
