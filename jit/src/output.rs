//! From the output buffers a kernel wrote to the [`Tensor`] the interpreter would give: the result
//! type of `KernelIR::output_type` (bool for logical maps, any and all; int64 for argmin, argmax and
//! sums of truth values), sums rounded once from their f64 accumulator, an empty sum as +0.0.

use crate::call::Elem;
use crate::layout::{Geometry, Mode, Structure};
use kiln_ir::{KernelIR, OutputType, ReduceOp, Tensor, Values};

/// Builds the result of one run (buffers as `call::execute` allocated them).
pub(crate) fn tensor<T: Elem>(
    kernel: &KernelIR,
    st: &Structure,
    geo: &Geometry,
    val_t: Vec<T>,
    val_f64: Vec<f64>,
    idx: Vec<T::Idx>,
    started: bool,
) -> Tensor {
    let out_type = kernel.output_type();
    let floats = |v: Vec<T>| match out_type {
        OutputType::Bool => Values::Bool(v.iter().map(|x| x.is_true()).collect()),
        OutputType::Int64 => Values::I64(v.iter().map(|x| x.to_f64() as i64).collect()),
        OutputType::Float(_) => T::values(v),
    };
    let values = match st.mode.reduce_op() {
        None => floats(val_t),
        Some(op @ (ReduceOp::Sum | ReduceOp::Prod)) => {
            // the accumulators start at -0.0 (the exact identity); adding +0.0 once gives NumPy's
            // answer, which starts from +0.0: a sum of -0.0s (or of nothing) is +0.0
            // (not when the sum started from a given value, which is added exactly as given)
            let is_sum = op == ReduceOp::Sum && !started;
            floats(
                val_f64
                    .into_iter()
                    .map(|s| T::from_f64(if is_sum { s + 0.0 } else { s }))
                    .collect(),
            )
        }
        Some(ReduceOp::Min | ReduceOp::Max) => floats(val_t),
        Some(ReduceOp::Any | ReduceOp::All) => Values::Bool(val_t.iter().map(|x| x.is_true()).collect()),
        Some(ReduceOp::ArgMin | ReduceOp::ArgMax) => Values::I64(idx.into_iter().map(Into::into).collect()),
    };
    let shape = if st.mode == Mode::Map {
        kernel.shape.clone()
    } else {
        geo.out_shape.clone()
    };
    Tensor { shape, values }
}
