//! Scans in the builder: `cumsum`, `cumprod`, `cummax`, `cummin` of an expression, fused with their
//! elementwise producer (`(&x * &x).cumsum(Some(0))` is one kernel).
//!
//! The semantics are [`kiln_ir::scan`]'s: inclusive by default, exclusive (`y[0]` is the start),
//! reverse (from the end), along one axis or, without an axis, over the flattened array (a 1-D
//! result, as NumPy's `cumsum(x)`), from an optional `initial` value.
//!
//! ```
//! use kiln::{Expr, FusedRunner, ScanOptions};
//! use ndarray::array;
//! let x = Expr::input("x");
//! let runner = FusedRunner::compile(&x.cumsum(None))?;
//! let a = array![1.0, 2.0, 3.0, 4.0];
//! let out = runner.run(&[("x", (&a).into())])?;
//! assert_eq!(out.into_f64().into_raw_vec_and_offset().0, vec![1.0, 3.0, 6.0, 10.0]);
//! let excl = x.scan(kiln::ScanOp::Sum, ScanOptions { exclusive: true, initial: Some(10.0), ..Default::default() });
//! let out = FusedRunner::compile(&excl)?.run(&[("x", (&a).into())])?;
//! assert_eq!(out.into_f64().into_raw_vec_and_offset().0, vec![10.0, 11.0, 13.0, 16.0]);
//! # Ok::<(), kiln::Error>(())
//! ```

use crate::expr::{Expr, ExprNode};
pub use crate::scan_options::ScanOptions;
use kiln_ir::ScanOp;

impl Expr {
    /// The scan `op` of this expression with `options`.
    pub fn scan(&self, op: ScanOp, options: ScanOptions) -> Expr {
        Expr::new(ExprNode::Scan {
            op,
            options,
            arg: self.clone(),
        })
    }

    /// The inclusive cumulative sum along `axis` (`None`: the flattened array), as NumPy's `cumsum`.
    pub fn cumsum(&self, axis: Option<isize>) -> Expr {
        self.scan(
            ScanOp::Sum,
            ScanOptions {
                axis,
                ..Default::default()
            },
        )
    }

    /// The inclusive cumulative product, as NumPy's `cumprod`.
    pub fn cumprod(&self, axis: Option<isize>) -> Expr {
        self.scan(
            ScanOp::Prod,
            ScanOptions {
                axis,
                ..Default::default()
            },
        )
    }

    /// The running maximum, as NumPy's `maximum.accumulate` (NaN from the first NaN on).
    pub fn cummax(&self, axis: Option<isize>) -> Expr {
        self.scan(
            ScanOp::Max,
            ScanOptions {
                axis,
                ..Default::default()
            },
        )
    }

    /// The running minimum, as NumPy's `minimum.accumulate` (NaN from the first NaN on).
    pub fn cummin(&self, axis: Option<isize>) -> Expr {
        self.scan(
            ScanOp::Min,
            ScanOptions {
                axis,
                ..Default::default()
            },
        )
    }
}
