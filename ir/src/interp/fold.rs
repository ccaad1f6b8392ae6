//! Reductions, compound reductions, sibling reductions and scans of the interpreter: each extent
//! or line folded in order, as NumPy accumulates values of its type (see [`super`]).

use super::{Evaluator, TypedInput, Value, collect};
use crate::complex;
use crate::compound::CompoundOp;
use crate::dtype::Real;
use crate::error::{IrError, Result};
use crate::kernel::{ReduceOp, Start};
use crate::op::BinaryOp;
use crate::promote::ElemType;
use crate::scalar::{Parts, Scalar, binary};
use crate::scan::{Carried, Scan, ScanOp};
use crate::shape::{checked_size, try_filled, unravel};
use crate::sum::pairwise_sum;
use crate::tensor::Tensor;
use crate::typed::{TypedKernel, int_start, scan_start, typed_start};

/// The points of a reduction over `axes` of an iteration space: the output points (the kept axes,
/// in C order) and each one's extent (the reduced axes, in C order).
pub(super) struct Extents {
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
pub(super) enum Folded<T> {
    Float(T),
    Index(i64),
    Truth(bool),
}

/// Folds one extent's values in order.
///
/// `start` (a given `initial`, or the output's previous value) replaces the identity as the first
/// accumulator value: it is applied exactly once.
pub(super) fn fold<T: Real>(
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

/// A reduction: each extent folded ([`fold_typed`]), in the result type.
pub(super) fn reduce<V: Value>(
    kernel: &TypedKernel,
    op: ReduceOp,
    axes: &[usize],
    eval: &mut Evaluator<'_, '_, V>,
    start: Start<'_>,
) -> Result<Tensor> {
    let (shape, out) = reduce_values(kernel, op, axes, eval, start)?;
    Ok(Tensor {
        shape,
        values: collect(out, kernel.output_type()),
    })
}

/// The kept shape of a reduction and each extent's folded value.
fn reduce_values<V: Value>(
    kernel: &TypedKernel,
    op: ReduceOp,
    axes: &[usize],
    eval: &mut Evaluator<'_, '_, V>,
    start: Start<'_>,
) -> Result<(Vec<usize>, Vec<Scalar>)> {
    let ext = Extents::new(&kernel.kernel.shape, axes)?;
    let n_out = ext.n_out;
    start.check(op, n_out)?;
    if ext.n_red == 0 && n_out > 0 && !op.has_identity() && start == Start::Identity {
        return Err(IrError::EmptyReduction { op: op.name() });
    }
    let vt = kernel.type_of(eval.root);
    let mut out = Vec::new();
    out.try_reserve_exact(n_out).map_err(|_| IrError::Allocation {
        what: "the result".into(),
        elements: n_out,
    })?;
    ext.for_each(
        |idx| eval.at(idx).scalar(),
        |o, values| {
            out.push(fold_typed(op, vt, values, start.at(o))?);
            Ok(())
        },
    )?;
    Ok((ext.out_shape, out))
}

/// A compound reduction: each extent's two statistics ([`CompoundOp::fold`]) of float values in
/// their type, of bool and integer values in float64; component 0 of every output first, then
/// component 1.
pub(super) fn compound<V: Value>(
    kernel: &TypedKernel,
    op: CompoundOp,
    axes: &[usize],
    eval: &mut Evaluator<'_, '_, V>,
) -> Result<Tensor> {
    let ext = Extents::new(&kernel.kernel.shape, axes)?;
    let n_out = ext.n_out;
    let f32_values = kernel.value_type() == ElemType::F32;
    let mut out = try_filled(n_out.saturating_mul(2), Scalar::Bool(false), "the result")?;
    ext.for_each(
        |idx| eval.at(idx).scalar(),
        |o, values| {
            let [a, b] = if f32_values {
                op.fold(values.map(|s| match s {
                    Scalar::F32(v) => v,
                    _ => unreachable!("values of the body's type"),
                }))
                .map(Scalar::F32)
            } else {
                op.fold(values.map(|s| match s.cast(ElemType::F64) {
                    Scalar::F64(v) => v,
                    _ => unreachable!("cast to float64"),
                }))
                .map(Scalar::F64)
            };
            out[o] = a;
            out[n_out + o] = b;
            Ok(())
        },
    )?;
    Ok(Tensor {
        shape: kernel.kernel.output_shape(),
        values: collect(out, kernel.output_type()),
    })
}

/// Sibling reductions: component `c` is what the reduction of root `c` alone gives (the same
/// order, so the same bits), every output of component 0 first, then component 1, ..., each in
/// the result type (int64 words for bool and integer values).
pub(super) fn siblings<V: Value>(
    kernel: &TypedKernel,
    ops: &[ReduceOp],
    axes: &[usize],
    inputs: &[TypedInput<'_>],
) -> Result<Tensor> {
    let mut out = Vec::new();
    for (c, &op) in ops.iter().enumerate() {
        let part = kernel.component(c);
        let mut eval = Evaluator::<V>::new(&part, inputs, part.kernel.body);
        out.extend(reduce_values(&part, op, axes, &mut eval, Start::Identity)?.1);
    }
    Ok(Tensor {
        shape: kernel.kernel.output_shape(),
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

/// A scan: each line folded in scan order, the state carried as [`State`] says.
pub(super) fn scan<V: Value>(
    kernel: &TypedKernel,
    scan: &Scan,
    eval: &mut Evaluator<'_, '_, V>,
) -> Result<Tensor> {
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
                let v = eval.at(&idx).scalar();
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
