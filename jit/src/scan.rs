//! Scan kernels: the body (the scan's elementwise producer, fused) and the carried state in one
//! Cranelift function.
//!
//! The iteration space is `outer` blocks of `len` points along the scanned axis, `inner` elements
//! apart (see [`kiln_ir::Scan::lines`]). A scan is a [`Mode`] of the one kernel framework: its code
//! has every kernel's signature and frame (frame.rs), its segments are the blocks (`seg_begin..seg_end`
//! of the kernel ABI), `out_val` its output (`n` elements) and `out_idx` the unit's own row of carried
//! states (`inner` of them, for `inner > 1`); `len` and `inner` are the parameters
//! [`Structure::LINE_LEN`] and [`Structure::LINE_STRIDE`]; `lo` and `hi` are unused:
//!
//! ```text
//! for o in seg_begin..seg_end:
//! inner == 1 (the innermost axis, or the flattened array): one line per block, in vectors:
//!     v = body(lanes points); exclusive: v = (prev, v[..lanes-1]), prev = v's last lane
//!     p = in-register prefix of v (log2(lanes) shifts filling with the identity)
//!     out = carry ⊕ p; carry = carry ⊕ splat(p's last lane)  (the carry splat in a vector
//!                                       through the vector loops, four vectors an iteration;
//!                                       a scalar tail finishes the line in order)
//! inner > 1 (an outer axis): vectorised across the `inner` independent lines of a block:
//!     state[c] = start; for each k along the axis: v = body(row k); out/state updated per column
//! ```
//!
//! The carried state of a sum or product is f64 (an f32 vector is widened into two F64X2 halves and
//! each output rounded once from its f64 value); cummax / cummin carry the data type. A typed
//! kernel's float32 values in float64 lanes are scanned as float64 data (widened where read, each
//! output rounded to float32 once where stored). Along an outer
//! axis every column folds in sequential order, bit-exact with the interpreter. Along the innermost
//! axis the in-register prefix reassociates a sum or product within each vector (`carry + (a + b)`
//! instead of `(carry + a) + b`): the error bound is that of a sum reassociated in blocks of `lanes`
//! (2 for f64, 4 for f32 in the f64 state), `|err| <= (len + lanes) * eps * sum |x|` for the f64
//! state; max and min are exact (they are associative, NaN and signed zeros included). A float64
//! sum's vector whose results come near float64's overflow (not finite, or 2^1000 or more in
//! magnitude) is folded again point by point, in a cold block: there one order may overflow where
//! the other does not, and an infinity met by its opposite gives NaN (`cumsum([1e308, 1e308,
//! -1e308, -1e308])` is inf in order, was NaN). A product
//! of float values folds point by point along such a line (scalar code, in order): reassociated,
//! its underflow and overflow would differ (`cumprod([1e-300, 1e-300, 1e300, 1e300])`: 0 in
//! order, NaN as `carry · (a · b)`). The reverse
//! scan walks the line from its end with the mirrored shifts. Lines are never split between work
//! units, so the bits never depend on the thread count.
//!
//! A typed kernel's scan of complex values (a cumulative sum or product, [`Complex`]) folds point
//! by point in a state of the values' type (the parts' registers along a line; the columns' states
//! interleaved as the type, lanewise in vectors across the columns), the interpreter's formulas in
//! its order, so its bits are the interpreter's: no in-register prefix (it would reassociate).
//!
//! Inputs are read as the plan says, from the start of the row that holds the points: a flat plan
//! (no outer axes) is one row of every point (contiguous or materialised inputs at the flat index, a
//! strided run of the whole array, `x[::-1]`, at the flat index times its stride); a per-row plan
//! ([`kiln_ir::Scan::row_axes`] outer axes) has a row per line (`inner == 1`) or, per step of a block
//! (`inner > 1`: the `inner` points side by side), one row of them or several rows of the axes after
//! (`inner / row_len` rows, each its own row start), so every input is read per row in place as
//! a map's rows are (runs, strided rows, splats; each row's start from its outer strides, any sign,
//! at run time). A scan of the flattened array planned per row (rows of the trailing axes after
//! its outer axes) walks its one line row by row in scan order (rows reversed for a reverse scan),
//! the carry and an exclusive scan's held-back value going on from one row into the next: where
//! every row holds whole vectors (the planner's condition for a sum or product, src/executor.rs)
//! its vectors are those of the flat walk, so the bits are those of the flat walk over a copy.
//! Every read is a point of a plan row, which check.rs bounds before the call.

use crate::clif::{cast, mem};
use crate::frame::{Frame, counted_loop};
use crate::layout::{Access, Mode, Structure};
use crate::lower::complex::Z;
use crate::lower::{Gen, W};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{ConstantData, Immediate, InstBuilder, Value, types};
use cranelift_frontend::Variable;
use kiln_ir::{ElemType, Scan, ScanOp};

/// Vectors of a line one iteration of its hot loop scans (a line's carry passes from one to the
/// next through one operation, so the loop's own counting and branch were a large share of an
/// int64 cumsum's instructions).
const UNROLL: i64 = 4;

/// Emits a scan kernel into the frame's function (after the entry block's loads).
pub fn emit(g: &mut Gen<'_, '_>, frame: &Frame<'_>) {
    let Mode::Scan { scan, columns } = frame.st.mode else {
        unreachable!("scan::emit is called for scan kernels only")
    };
    let st = frame.st;
    let k = st.outer_axes;
    let ints = g.int_values().map(|vt| {
        let int = |s: kiln_ir::typed::Scalar| match s {
            kiln_ir::typed::Scalar::Bool(b) => i64::from(b),
            kiln_ir::typed::Scalar::I32(v) => i64::from(v),
            kiln_ir::typed::Scalar::I64(v) => v,
            _ => unreachable!("integer states"),
        };
        let neutral = scan.with_initial(None);
        let start = crate::typed::scan_start(&scan, vt).expect("typed::why_not checked the start");
        let identity = crate::typed::scan_start(&neutral, vt).expect("a neutral element");
        Ints {
            out: if scan.op.wide() { ElemType::I64 } else { vt },
            start: int(start),
            identity: int(identity),
        }
    });
    let complex = g
        .typed
        .map(|t| t.value_type())
        .filter(|t| t.is_complex())
        .map(|t| Complex {
            t,
            initial: scan.initial(),
        });
    let e = Emitter {
        f: frame,
        ints,
        complex,
        widened: g.typed.is_some_and(|t| t.value_type() == ElemType::F32) && g.dtype == ElemType::F64,
        scan,
        vector: frame.vector,
        len: frame.param(g, Structure::LINE_LEN),
        inner: frame.param(g, Structure::LINE_STRIDE),
        row_len: frame.param(g, Structure::ROW_LEN),
        outer: (0..k)
            .map(|a| (frame.param(g, st.p_outer(a)), frame.param(g, st.p_outer(a) + 1)))
            .collect(),
        strides: (0..st.inputs.len())
            .map(|i| match st.inputs[i] {
                acc if acc.per_row() => (0..k).map(|a| frame.param(g, st.p_stride(i, a))).collect(),
                _ => Vec::new(),
            })
            .collect(),
    };
    frame.segments(g, |g, o| match (columns, e.complex) {
        (true, _) => e.columns(g, o),
        (false, Some(c)) => e.complex_line(g, o, c),
        (false, None) => e.line(g, o),
    });
}

struct Emitter<'f, 'k> {
    f: &'f Frame<'k>,
    /// A typed kernel's scan of bool or integer values: its int64 state (see [`Ints`]).
    ints: Option<Ints>,
    /// A typed kernel's scan of complex values (see [`Complex`]).
    complex: Option<Complex>,
    /// A typed kernel's scan of float32 values in float64 lanes (beside 64-bit values): each value
    /// widened where it is read (its lanes 0 and 1) and scanned as float64 data, each output
    /// rounded to float32 once where it is stored (a float32 scan's f64 state, as below).
    widened: bool,
    scan: Scan,
    vector: bool,
    /// Points along a line, and the distance between them.
    len: Value,
    inner: Value,
    /// The plan's row length, the `(dim, row-count stride)` of each outer axis and each per-row
    /// input's outer strides (loaded once in the entry block; none for a flat plan).
    row_len: Value,
    outer: Vec<(Value, Value)>,
    strides: Vec<Vec<Value>>,
}

/// The state of a typed kernel's scan of bool or integer values: int64 lanes (each value widened,
/// a bool 0 / 1), sums and products wrapping, max and min exact; each output narrowed to its type
/// (int64 for sums and products, the value type for max and min) where it is stored.
#[derive(Clone, Copy)]
struct Ints {
    out: ElemType,
    /// The state at a line's start (its `initial`, else the neutral element), and the neutral
    /// element (an exclusive scan's held-back value before the first).
    start: i64,
    identity: i64,
}

/// The state of a typed kernel's scan of complex values (a sum or a product: the typing refuses
/// their cummax and cummin): a complex value of the values' type, its two parts in registers of the
/// parts' type (a line's) or interleaved as the type is in the row of carried states (columns',
/// [`Complex::state_bytes`] each), folded point by point in scan order as the interpreter folds
/// them (`kiln_ir::typed`'s scan state): `s + v` part by part, `s * v` by the oracle's formula
/// (`lower/complex.rs`), in the parts' type, so the bits are the interpreter's. Without an
/// `initial` a line's state starts at its first value itself (NumPy's accumulate: `cumprod([inf +
/// 1j])` is `inf + 1j`, not `(1 + 0i)(inf + 1j)`), which a flag (a line's) or the step count
/// (columns') picks; an exclusive scan's first output is then `0` or `1` (`+0i`). With one, the
/// state starts at `initial + 0i` in the values' type.
#[derive(Clone, Copy)]
struct Complex {
    t: ElemType,
    initial: Option<f64>,
}

impl Complex {
    /// Bytes of one column's state: one value of the type.
    fn state_bytes(self) -> i64 {
        self.t.size() as i64
    }

    /// `x + 0i` in the values' type.
    fn scalar(self, x: f64) -> kiln_ir::typed::Scalar {
        kiln_ir::typed::Scalar::F64(x).cast(self.t)
    }
}

/// The variables of a complex scan's line: its state's parts, its first-value flag (without an
/// `initial`) and the count of points done in the current row.
struct LineState {
    re: Variable,
    im: Variable,
    fresh: Option<Variable>,
    t: Variable,
}

/// Where the inputs of one plan row are: the row's first flat point, each read input's row start
/// (None for splats) and each splatted input's value (kernel-wide or per row).
#[derive(Clone)]
struct Row {
    rs: Value,
    ptrs: Vec<Option<Value>>,
    splats: Vec<Option<[Value; 2]>>,
}

impl Emitter<'_, '_> {
    /// Plan row `r` (0 for a flat plan): its first point and its inputs' row starts, as the map
    /// skeleton's rows (skeleton.rs `row_state`): outer index `(r / ocs) % dim` per outer axis times
    /// the input's outer stride there.
    fn row(&self, g: &mut Gen<'_, '_>, r: Value) -> Row {
        let st = self.f.st;
        let size = g.size;
        let outer_idx: Vec<Value> = (self.outer.iter())
            .map(|&(dim, ocs)| {
                let q = g.b.ins().udiv(r, ocs);
                g.b.ins().urem(q, dim)
            })
            .collect();
        let rs = g.b.ins().imul(r, self.row_len);
        let mut ptrs = vec![None; st.inputs.len()];
        let mut splats = self.f.splats.clone();
        for (i, &acc) in st.inputs.iter().enumerate() {
            let base = self.f.ins[i];
            let row_start = |g: &mut Gen<'_, '_>| g.row_addr(base, &outer_idx, &self.strides[i], size);
            match acc {
                Access::Splat => {}
                Access::Contiguous => ptrs[i] = Some(g.elem_addr(base, rs, size)),
                Access::RowRun | Access::RowStrided { .. } => ptrs[i] = Some(row_start(g)),
                Access::RowSplat => {
                    let addr = row_start(g);
                    let s = g.load_input(W::Scalar, i, addr, 0, st.stored[i]);
                    splats[i] = Some([s, g.splat_input(s, st.stored[i])]);
                }
            }
        }
        Row { rs, ptrs, splats }
    }

    /// The row holding block `o`'s line (`inner == 1`): the line itself on a per-row plan, the
    /// whole space on a flat one.
    fn line_row(&self, g: &mut Gen<'_, '_>, o: Value) -> Row {
        let r = if self.outer.is_empty() {
            g.b.ins().iconst(types::I64, 0)
        } else {
            o
        };
        self.row(g, r)
    }

    /// The body at width `w` for the point(s) at flat position `flat` of row `row`.
    fn body(&self, g: &mut Gen<'_, '_>, w: W, row: &Row, flat: Value) -> Value {
        let pos = g.b.ins().isub(flat, row.rs);
        let jb = g.b.ins().imul_imm_s(pos, g.size);
        let v = self
            .f
            .body(g, w, &row.ptrs, None, &row.splats, &|_| None, jb, 0, flat);
        // a typed scan folds int64 lanes
        match self.ints {
            Some(_) => g.int_value(v),
            None if self.widened && w == W::Vector => g.b.ins().fvpromote_low(v),
            None if self.widened => g.b.ins().fpromote(types::F64, v),
            None => v,
        }
    }

    /// Stores output value(s) `out` (of the state type) at `addr`: a typed scan's narrowed to its
    /// output type.
    fn store_out(&self, g: &mut Gen<'_, '_>, out: Value, addr: Value) {
        match self.ints {
            Some(i) => {
                let v = g.cast(out, ElemType::I64, i.out);
                let v = if i.out == ElemType::Bool && g.b.func.dfg.value_type(v).is_vector() {
                    g.bool_mask(v)
                } else {
                    v
                };
                g.store_typed(i.out, v, addr, 0);
            }
            None if self.widened => {
                let v = if g.b.func.dfg.value_type(out).is_vector() {
                    g.b.ins().fvdemote(out)
                } else {
                    g.b.ins().fdemote(types::F32, out)
                };
                g.store_typed(ElemType::F32, v, addr, 0);
            }
            None => {
                g.b.ins().store(mem(), out, addr, 0);
            }
        }
    }

    /// The neutral element as a scalar of the data type (an exclusive scan's held-back value).
    fn identity_scalar(&self, g: &mut Gen<'_, '_>) -> Value {
        match self.ints {
            Some(i) => g.b.ins().iconst(types::I64, i.identity),
            None => g.fconst(W::Scalar, self.op().identity()),
        }
    }

    /// The neutral element splat to a vector of the data type.
    fn identity_vector(&self, g: &mut Gen<'_, '_>) -> Value {
        match self.ints {
            Some(i) => {
                let x = g.b.ins().iconst(types::I64, i.identity);
                g.b.ins().splat(types::I64X2, x)
            }
            None => g.fconst(W::Vector, self.op().identity()),
        }
    }

    fn op(&self) -> ScanOp {
        self.scan.op
    }

    /// `a ⊕ b` (vectors or scalars, state or data type).
    fn combine(&self, g: &mut Gen<'_, '_>, a: Value, b: Value) -> Value {
        if self.ints.is_some() {
            return match self.op() {
                ScanOp::Sum => g.b.ins().iadd(a, b),
                ScanOp::Prod => g.b.ins().imul(a, b),
                ScanOp::Max => g.b.ins().smax(a, b),
                ScanOp::Min => g.b.ins().smin(a, b),
            };
        }
        match self.op() {
            ScanOp::Sum => g.b.ins().fadd(a, b),
            ScanOp::Prod => g.b.ins().fmul(a, b),
            ScanOp::Max => g.maximum(a, b),
            ScanOp::Min => g.minimum(a, b),
        }
    }

    /// The state type (scalar).
    fn state_ty(&self, g: &Gen<'_, '_>) -> types::Type {
        if self.ints.is_some() {
            types::I64
        } else if self.op().wide() {
            types::F64
        } else {
            g.t
        }
    }

    /// Bytes of one state in the row of carried states (columns).
    fn state_bytes(&self, g: &Gen<'_, '_>) -> i64 {
        if let Some(c) = self.complex {
            c.state_bytes()
        } else if self.ints.is_some() || self.op().wide() {
            8
        } else {
            g.size
        }
    }

    /// The state a line starts from, a scalar: the scan's start ([`Scan::start`], or a typed
    /// scan's [`Ints::start`]).
    fn start_state(&self, g: &mut Gen<'_, '_>) -> Value {
        if let Some(i) = self.ints {
            return g.b.ins().iconst(types::I64, i.start);
        }
        let x = self.scan.start();
        if self.op().wide() {
            g.b.ins().f64const(x)
        } else {
            g.fconst(W::Scalar, x)
        }
    }

    /// A data value folded into a scalar state.
    fn push_scalar(&self, g: &mut Gen<'_, '_>, state: Value, v: Value) -> Value {
        let v = if self.op().wide() && g.dtype == ElemType::F32 && self.ints.is_none() {
            g.b.ins().fpromote(types::F64, v)
        } else {
            v
        };
        self.combine(g, state, v)
    }

    /// A scalar state rounded to the data type.
    fn round_scalar(&self, g: &mut Gen<'_, '_>, state: Value) -> Value {
        if self.op().wide() && g.dtype == ElemType::F32 && self.ints.is_none() {
            g.b.ins().fdemote(types::F32, state)
        } else {
            state
        }
    }

    /// `v` (a 128-bit float vector of lanes `esz` bytes wide) moved `s` lanes towards the end of the
    /// scan (up for a forward scan, down for a reverse one), the vacated lanes taken from `fill`.
    fn shift(&self, g: &mut Gen<'_, '_>, v: Value, fill: Value, s: usize) -> Value {
        let ty = g.b.func.dfg.value_type(v);
        let esz = (ty.lane_bits() / 8) as usize;
        let lanes = ty.lane_count() as usize;
        let mut mask = Vec::with_capacity(16);
        for byte in 0..16usize {
            let lane = byte / esz;
            let src = if !self.scan.reverse {
                (lane >= s).then(|| byte - s * esz)
            } else {
                (lane + s < lanes).then(|| byte + s * esz)
            };
            mask.push(src.unwrap_or(16 + byte) as u8);
        }
        let a = g.b.ins().bitcast(types::I8X16, cast(), v);
        let f = g.b.ins().bitcast(types::I8X16, cast(), fill);
        let imm: Immediate = g.b.func.dfg.immediates.push(ConstantData::from(mask));
        let r = g.b.ins().shuffle(a, f, imm);
        g.b.ins().bitcast(ty, cast(), r)
    }

    /// The in-register inclusive prefix (in scan direction) of a float vector.
    fn prefix(&self, g: &mut Gen<'_, '_>, v: Value, ident: Value) -> Value {
        let lanes = g.b.func.dfg.value_type(v).lane_count() as usize;
        let mut p = v;
        let mut s = 1;
        while s < lanes {
            let sh = self.shift(g, p, ident, s);
            // earlier values (shifted in) on the left: max and min keep the later of equal values
            p = self.combine(g, sh, p);
            s *= 2;
        }
        p
    }

    /// The lane that comes last in scan order, in every lane.
    fn last_splat(&self, g: &mut Gen<'_, '_>, v: Value) -> Value {
        let ty = g.b.func.dfg.value_type(v);
        let esz = (ty.lane_bits() / 8) as usize;
        let lane = if self.scan.reverse {
            0
        } else {
            ty.lane_count() as usize - 1
        };
        let mask: Vec<u8> = (0..16).map(|byte| (lane * esz + byte % esz) as u8).collect();
        let a = g.b.ins().bitcast(types::I8X16, cast(), v);
        let imm: Immediate = g.b.func.dfg.immediates.push(ConstantData::from(mask));
        let r = g.b.ins().shuffle(a, a, imm);
        g.b.ins().bitcast(ty, cast(), r)
    }

    /// The vector type of the carried state (see [`Self::state_ty`]).
    fn state_vector_ty(&self, g: &Gen<'_, '_>) -> types::Type {
        match self.state_ty(g) {
            types::I64 => types::I64X2,
            types::F64 => types::F64X2,
            _ => types::F32X4,
        }
    }

    /// The lane that comes last in scan order.
    fn last_lane(&self, g: &mut Gen<'_, '_>, v: Value) -> Value {
        let lanes = g.b.func.dfg.value_type(v).lane_count() as u8;
        let lane = if self.scan.reverse { 0 } else { lanes - 1 };
        g.b.ins().extractlane(v, lane)
    }

    /// Splits an F32X4 into two F64X2 halves (lanes 0-1, lanes 2-3).
    fn widen(&self, g: &mut Gen<'_, '_>, v: Value) -> (Value, Value) {
        let lo = g.b.ins().fvpromote_low(v);
        let bytes = g.b.ins().bitcast(types::I8X16, cast(), v);
        let mask: Vec<u8> = (8..16).chain(8..16).collect();
        let imm: Immediate = g.b.func.dfg.immediates.push(ConstantData::from(mask));
        let sh = g.b.ins().shuffle(bytes, bytes, imm);
        let h = g.b.ins().bitcast(types::F32X4, cast(), sh);
        let hi = g.b.ins().fvpromote_low(h);
        (lo, hi)
    }

    /// Two F64X2 halves rounded into one F32X4.
    fn narrow(&self, g: &mut Gen<'_, '_>, lo: Value, hi: Value) -> Value {
        let a = g.b.ins().fvdemote(lo);
        let b = g.b.ins().fvdemote(hi);
        let a8 = g.b.ins().bitcast(types::I8X16, cast(), a);
        let b8 = g.b.ins().bitcast(types::I8X16, cast(), b);
        let mask: Vec<u8> = (0..8).chain(16..24).collect();
        let imm: Immediate = g.b.func.dfg.immediates.push(ConstantData::from(mask));
        let r = g.b.ins().shuffle(a8, b8, imm);
        g.b.ins().bitcast(types::F32X4, cast(), r)
    }

    /// One step of a complex scan (see [`Complex`]) from the state `s` with the value(s) `z`
    /// (scalars or vectors of the parts' type): the output(s) and the next state. `fresh` (an i8,
    /// where the scan has no `initial`) is nonzero where `z` is the line's first value: the next
    /// state is then `z` itself, an exclusive scan's output the identity.
    fn complex_step(&self, g: &mut Gen<'_, '_>, s: Z, z: Z, fresh: Option<Value>) -> (Z, Z) {
        let folded = match self.op() {
            ScanOp::Sum => Z {
                re: g.b.ins().fadd(s.re, z.re),
                im: g.b.ins().fadd(s.im, z.im),
            },
            ScanOp::Prod => g.mul(s, z),
            ScanOp::Max | ScanOp::Min => {
                unreachable!("the typing refuses cummax and cummin of complex values")
            }
        };
        let next = match fresh {
            Some(f) => Z {
                re: g.b.ins().select(f, z.re, folded.re),
                im: g.b.ins().select(f, z.im, folded.im),
            },
            None => folded,
        };
        if !self.scan.exclusive {
            return (next, next);
        }
        let out = match fresh {
            Some(f) => {
                // `0 + 0i` or `1 + 0i` (the interpreter's, a sum's `+0`)
                let id_re = g.like(s.re, self.op().neutral());
                let id_im = g.like(s.im, 0.0);
                Z {
                    re: g.b.ins().select(f, id_re, s.re),
                    im: g.b.ins().select(f, id_im, s.im),
                }
            }
            None => s,
        };
        (out, next)
    }

    /// One line (`inner == 1`) of a complex scan: point by point in scan order (see [`Complex`]),
    /// the flattened array's plan rows one after another as [`Self::line`] walks them.
    fn complex_line(&self, g: &mut Gen<'_, '_>, o: Value, c: Complex) {
        let part = c.t.real_part().expect("a complex type");
        let ty = g.ty(part, false);
        let (re, im) = (g.b.declare_var(ty), g.b.declare_var(ty));
        let s0 = g.complex_konst(c.scalar(c.initial.unwrap_or(0.0)), false);
        let z0 = g.z(s0);
        g.b.def_var(re, z0.re);
        g.b.def_var(im, z0.im);
        let fresh = c.initial.is_none().then(|| {
            let f = g.b.declare_var(types::I8);
            let one = g.b.ins().iconst(types::I8, 1);
            g.b.def_var(f, one);
            f
        });
        let vars = LineState {
            re,
            im,
            fresh,
            t: g.b.declare_var(types::I64),
        };
        self.line_rows(g, o, |e, g, row, base, len, _| {
            e.complex_walk(g, c, row, base, len, &vars)
        });
    }

    /// Step `i` of `n` in scan order: `i` forward, `n - 1 - i` reversed.
    fn in_order(&self, g: &mut Gen<'_, '_>, n: Value, i: Value) -> Value {
        if self.scan.reverse {
            let r = g.b.ins().isub(n, i);
            g.b.ins().iadd_imm_s(r, -1)
        } else {
            i
        }
    }

    /// Walks line `o` (`inner == 1`) with `walk(self, g, row, base, len, more)`: the line whole
    /// (block `o` holds points `o * len .. (o + 1) * len`, `more` false), or the flattened array
    /// read per row, the plan's rows in scan order (`base` each row's start, `more` true).
    fn line_rows(
        &self,
        g: &mut Gen<'_, '_>,
        o: Value,
        walk: impl Fn(&Self, &mut Gen<'_, '_>, &Row, Value, Value, bool),
    ) {
        if self.scan.axis.is_some() || self.outer.is_empty() {
            let base = g.b.ins().imul(o, self.len);
            let row = self.line_row(g, o);
            walk(self, g, &row, base, self.len, false);
            return;
        }
        let zero = g.b.ins().iconst(types::I64, 0);
        let one = g.b.ins().iconst(types::I64, 1);
        let empty = g.b.ins().icmp_imm_s(IntCC::Equal, self.row_len, 0);
        let div = g.b.ins().select(empty, one, self.row_len);
        let rows = g.b.ins().udiv(self.len, div);
        let q_var = g.b.declare_var(types::I64);
        g.b.def_var(q_var, zero);
        counted_loop(g, q_var, rows, 1, |g, q| {
            let e = self;
            let r = e.in_order(g, rows, q);
            let row = e.row(g, r);
            let rs = row.rs;
            walk(e, g, &row, rs, e.row_len, true);
        });
    }

    /// Points `base .. base + len` of a complex scan's line (all in plan row `row`) in scan order,
    /// one at a time, from and into the state in `vars`.
    fn complex_walk(
        &self,
        g: &mut Gen<'_, '_>,
        c: Complex,
        row: &Row,
        base: Value,
        len: Value,
        vars: &LineState,
    ) {
        let zero = g.b.ins().iconst(types::I64, 0);
        g.b.def_var(vars.t, zero);
        counted_loop(g, vars.t, len, 1, |g, t| {
            let e = self;
            let k = e.in_order(g, len, t);
            let flat = g.b.ins().iadd(base, k);
            let v = e.body(g, W::Scalar, row, flat);
            let z = g.z(v);
            let s = Z {
                re: g.b.use_var(vars.re),
                im: g.b.use_var(vars.im),
            };
            let fresh = vars.fresh.map(|f| g.b.use_var(f));
            let (out, next) = e.complex_step(g, s, z, fresh);
            g.b.def_var(vars.re, next.re);
            g.b.def_var(vars.im, next.im);
            if let Some(f) = vars.fresh {
                let no = g.b.ins().iconst(types::I8, 0);
                g.b.def_var(f, no);
            }
            let addr = g.elem_addr(e.f.out_val, flat, g.size);
            let out = g.complex_value(out);
            g.store_typed(c.t, out, addr, 0);
        });
    }

    /// One line (`inner == 1`): block `o` holds points `o * len .. (o + 1) * len`.
    fn line(&self, g: &mut Gen<'_, '_>, o: Value) {
        let ty = self.state_ty(g);
        let carry = g.b.declare_var(ty);
        let start = self.start_state(g);
        g.b.def_var(carry, start);
        // exclusive scans shift the line by one: `prev` holds the last value not yet folded
        let prev = g.b.declare_var(self.ints.map_or(g.t, |_| types::I64));
        let id_t = self.identity_scalar(g);
        g.b.def_var(prev, id_t);
        let t_var = g.b.declare_var(types::I64);
        // read per row, the carry and an exclusive scan's held-back value go on from row to row:
        // where every row holds whole vectors (the planner's condition for a sum or product) the
        // vectors are those of the flat walk, so the bits are the same
        self.line_rows(g, o, |e, g, row, base, len, more| {
            e.walk(g, row, base, len, [carry, prev, t_var], more)
        });
    }

    /// Points `base .. base + len` of one line (all in plan row `row`) in scan order, in vectors then
    /// a scalar tail, from and into the state in `vars` (`[carry, prev, t]`); `more` where further
    /// rows of the same line follow: an exclusive scan's held-back value then joins the carry only
    /// before a tail, so a row of whole vectors hands it to the next row as the flat walk does.
    fn walk(&self, g: &mut Gen<'_, '_>, row: &Row, base: Value, len: Value, vars: [Variable; 3], more: bool) {
        let [carry, prev, t_var] = vars;
        // t counts points done from the scan's start (of this row)
        let zero = g.b.ins().iconst(types::I64, 0);
        g.b.def_var(t_var, zero);
        // a product of float values folds point by point: its in-register prefix would reassociate
        // it, and a product's underflow and overflow depend on the order (`cumprod([1e-300,
        // 1e-300, 1e300, 1e300])` is 0 in order, NaN as `carry · (a · b)`)
        let float_prod = self.op() == ScanOp::Prod && g.int_values().is_none();
        if self.vector && !float_prod {
            let lanes = g.lanes as i64;
            // the carry rides the vector loops splat in a vector of the state type (see
            // `line_vector`), and is a scalar again after them
            let vty = self.state_vector_ty(g);
            let cv = g.b.declare_var(vty);
            let c = g.b.use_var(carry);
            let splat = g.b.ins().splat(vty, c);
            g.b.def_var(cv, splat);
            // UNROLL vectors an iteration while they fit, then one: the same vectors in the same
            // order either way (the unrolled loop only sheds the loop's own instructions)
            for count in [UNROLL, 1] {
                counted_loop(g, t_var, len, count * lanes, |g, t| {
                    let e = self;
                    for u in 0..count {
                        // forward: points [t + u·lanes, ..); reverse: [len - t - (u + 1)·lanes, ..)
                        let k = if e.scan.reverse {
                            let r = g.b.ins().isub(len, t);
                            g.b.ins().iadd_imm_s(r, -(u + 1) * lanes)
                        } else {
                            g.b.ins().iadd_imm_s(t, u * lanes)
                        };
                        let flat = g.b.ins().iadd(base, k);
                        e.line_vector(g, row, flat, cv, prev);
                    }
                });
            }
            let v = g.b.use_var(cv);
            let c = g.b.ins().extractlane(v, 0);
            g.b.def_var(carry, c);
            // the value an exclusive scan held back joins the state before the scalar tail (only
            // where there is one when rows follow; the held-back slot is then the identity again)
            if self.scan.exclusive {
                let c = g.b.use_var(carry);
                let p = g.b.use_var(prev);
                let folded = self.push_scalar(g, c, p);
                if more {
                    let t = g.b.use_var(t_var);
                    let tail = g.b.ins().icmp(IntCC::SignedLessThan, t, len);
                    let c = g.b.ins().select(tail, folded, c);
                    let id_t = self.identity_scalar(g);
                    let p = g.b.ins().select(tail, id_t, p);
                    g.b.def_var(carry, c);
                    g.b.def_var(prev, p);
                } else {
                    g.b.def_var(carry, folded);
                }
            }
        }
        counted_loop(g, t_var, len, 1, |g, t| {
            let e = self;
            let k = e.in_order(g, len, t);
            let flat = g.b.ins().iadd(base, k);
            let v = e.body(g, W::Scalar, row, flat);
            let c = g.b.use_var(carry);
            let addr = g.elem_addr(e.f.out_val, flat, g.size);
            let (out, next) = if e.scan.exclusive {
                (e.round_scalar(g, c), e.push_scalar(g, c, v))
            } else {
                let next = e.push_scalar(g, c, v);
                (e.round_scalar(g, next), next)
            };
            e.store_out(g, out, addr);
            g.b.def_var(carry, next);
        });
    }

    /// One vector of a line: the body, the exclusive shift, the prefix and the carry (`carry`: the
    /// state splat in every lane of a vector of [`Self::state_vector_ty`]).
    ///
    /// The output is `carry ⊕ p` lanewise (`p` the in-register prefix) and the next carry
    /// `carry ⊕ splat(p's last lane)`: the same one operation per vector as the scalar
    /// `carry ⊕ last` on the carry's dependency chain, with no move between a general register and a
    /// vector on it (an int64 cumsum spent a third of its instructions splatting and extracting).
    fn line_vector(&self, g: &mut Gen<'_, '_>, row: &Row, flat: Value, carry: Variable, prev: Variable) {
        let mut v = self.body(g, W::Vector, row, flat);
        let id = self.op().identity();
        if self.scan.exclusive {
            let p = g.b.use_var(prev);
            let fill = match self.ints {
                Some(_) => g.b.ins().splat(types::I64X2, p),
                None => g.splat(W::Vector, p),
            };
            let last = self.last_lane(g, v);
            v = self.shift(g, v, fill, 1);
            g.b.def_var(prev, last);
        }
        let c = g.b.use_var(carry);
        let addr = g.elem_addr(self.f.out_val, flat, g.size);
        let out = if self.op().wide() && g.dtype == ElemType::F32 && self.ints.is_none() {
            let ident = g.f64const(W::Vector, id);
            let (lo, hi) = self.widen(g, v);
            let (first, second) = if self.scan.reverse { (hi, lo) } else { (lo, hi) };
            let p1 = self.prefix(g, first, ident);
            let p2 = self.prefix(g, second, ident);
            let l1 = self.last_splat(g, p1);
            let p2 = self.combine(g, l1, p2);
            let o1 = self.combine(g, c, p1);
            let o2 = self.combine(g, c, p2);
            let total = self.last_splat(g, p2);
            let next = self.combine(g, c, total);
            g.b.def_var(carry, next);
            let (lo, hi) = if self.scan.reverse { (o2, o1) } else { (o1, o2) };
            self.narrow(g, lo, hi)
        } else {
            let ident = self.identity_vector(g);
            let p = self.prefix(g, v, ident);
            let out = self.combine(g, c, p);
            let total = self.last_splat(g, p);
            let next = self.combine(g, c, total);
            let float64 = g.dtype == ElemType::F64 && self.ints.is_none() && !self.widened;
            let (out, next) = if self.op() == ScanOp::Sum && float64 {
                self.near_overflow_in_order(g, c, v, p, out, next)
            } else {
                (out, next)
            };
            g.b.def_var(carry, next);
            out
        };
        self.store_out(g, out, addr);
    }

    /// A float64 sum's vector `out` (and next carry `next`) from carry `c` and values `v` by the
    /// in-register prefix `p`, or, where a lane of `out` is not finite or at least 2^1000 in
    /// magnitude, the same vector folded point by point in scan order (cold blocks). The prefix
    /// reassociates (`c + (a + b)` for `(c + a) + b`): its rounding error is bounded (module doc),
    /// but near float64's overflow one order may overflow where the other does not (`1.7e308 +
    /// (1e308 + -1e308)` against `(1.7e308 + 1e308) + -1e308`), and an infinity from the wrong
    /// order meets its opposite as NaN (`cumsum` gave NaN where NumPy gives inf). Every overflow in
    /// either order, and every infinity, shows as such a lane: an overflowing `a + b` makes `c +
    /// inf` infinite, and an overflow in order leaves the reassociated lane within rounding of
    /// 2^1024. Such a vector keeps the prefix's results where the carry is NaN (every result is
    /// then NaN in either order) or infinite while the prefix is finite (every result is then the
    /// carry), so a line past a NaN or an infinity does not fold point by point from there on.
    /// float32 data, summed in the float64 state, cannot overflow. Decided vector by vector: a
    /// test of a whole row's values (their magnitudes' sum, two operations a vector where this
    /// takes three and a branch) would depend on how the plan cuts the line into rows, and a line
    /// read in place row by row gives the bits of its flat walk (tests/strided_views.rs).
    fn near_overflow_in_order(
        &self,
        g: &mut Gen<'_, '_>,
        c: Value,
        v: Value,
        p: Value,
        out: Value,
        next: Value,
    ) -> (Value, Value) {
        let ty = g.b.func.dfg.value_type(out);
        let far = g.b.ins().f64const(2f64.powi(1000));
        let far = g.b.ins().splat(ty, far);
        let mag = g.b.ins().fabs(out);
        let near = g.b.ins().fcmp(FloatCC::UnorderedOrGreaterThanOrEqual, mag, far);
        let any = g.b.ins().vany_true(near);
        let (check, cold, join) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
        g.b.set_cold_block(check);
        g.b.set_cold_block(cold);
        let out_p = g.b.append_block_param(join, ty);
        let next_p = g.b.append_block_param(join, ty);
        g.b.ins().brif(any, check, &[], join, &[out.into(), next.into()]);
        // a NaN carry, or an infinite one beside a finite prefix: the prefix's results stand
        g.b.switch_to_block(check);
        let c0 = g.b.ins().extractlane(c, 0);
        let c_nan = g.b.ins().fcmp(FloatCC::Unordered, c0, c0);
        let inf = g.b.ins().f64const(f64::INFINITY);
        let c_mag = g.b.ins().fabs(c0);
        let c_inf = g.b.ins().fcmp(FloatCC::Equal, c_mag, inf);
        let p_mag = g.b.ins().fabs(p);
        let infs = g.b.ins().splat(ty, inf);
        let p_bad =
            g.b.ins()
                .fcmp(FloatCC::UnorderedOrGreaterThanOrEqual, p_mag, infs);
        let p_bad = g.b.ins().vany_true(p_bad);
        let p_ok = g.b.ins().bxor_imm_u(p_bad, 1);
        let stands = g.b.ins().band(c_inf, p_ok);
        let stands = g.b.ins().bor(c_nan, stands);
        g.b.ins()
            .brif(stands, join, &[out.into(), next.into()], cold, &[]);
        g.b.switch_to_block(cold);
        let lanes = ty.lane_count() as u8;
        let mut s = g.b.ins().extractlane(c, 0);
        let mut seq = out;
        for k in 0..lanes {
            let lane = if self.scan.reverse { lanes - 1 - k } else { k };
            let x = g.b.ins().extractlane(v, lane);
            s = g.b.ins().fadd(s, x);
            seq = g.b.ins().insertlane(seq, s, lane);
        }
        let carried = g.b.ins().splat(ty, s);
        g.b.ins().jump(join, &[seq.into(), carried.into()]);
        g.b.switch_to_block(join);
        (out_p, next_p)
    }

    /// Columns (`inner > 1`): block `o` is `len` rows of `inner` independent lines, each carried in
    /// `state[c]` (f64 for sums and products), folded row by row in scan order.
    fn columns(&self, g: &mut Gen<'_, '_>, o: Value) {
        let sb = self.state_bytes(g);
        let block = g.b.ins().imul(o, self.len);
        // a flat plan is one row of every point, computed once per block
        let flat_row = self.outer.is_empty().then(|| {
            let zero = g.b.ins().iconst(types::I64, 0);
            self.row(g, zero)
        });
        // reset the state row (a complex scan's to `initial + 0i`, or to zero where its first step
        // takes its values)
        let start = match self.complex {
            Some(c) => {
                let s = g.complex_konst(c.scalar(c.initial.unwrap_or(0.0)), false);
                let z = g.z(s);
                Err(z)
            }
            None => Ok(self.start_state(g)),
        };
        let c_var = g.b.declare_var(types::I64);
        let zero = g.b.ins().iconst(types::I64, 0);
        g.b.def_var(c_var, zero);
        counted_loop(g, c_var, self.inner, 1, |g, c| {
            let e = self;
            let addr = g.elem_addr(e.f.out_idx, c, sb);
            match (start, e.complex) {
                (Ok(start), _) => {
                    g.b.ins().store(mem(), start, addr, 0);
                }
                (Err(z), Some(cx)) => g.store_parts(cx.t, z, addr),
                (Err(_), None) => unreachable!("a complex start for a complex scan"),
            }
        });
        let t_var = g.b.declare_var(types::I64);
        g.b.def_var(t_var, zero);
        counted_loop(g, t_var, self.len, 1, |g, t| {
            let e = self;
            let k = e.in_order(g, e.len, t);
            // a complex scan without an initial: its first step takes its values as the states
            let fresh = e
                .complex
                .filter(|c| c.initial.is_none())
                .map(|_| g.b.ins().icmp_imm_s(IntCC::Equal, t, 0));
            let step = g.b.ins().iadd(block, k);
            let row0 = g.b.ins().imul(step, e.inner);
            match &flat_row {
                Some(row) => e.columns_of(g, row, row0, row0, e.inner, fresh),
                None => {
                    // a per-row plan's rows split the step's `inner` points into `per_step` rows of
                    // `row_len` (one row where the plan's outer axes end at the scanned axis)
                    let one = g.b.ins().iconst(types::I64, 1);
                    let zero = g.b.ins().iconst(types::I64, 0);
                    let empty = g.b.ins().icmp_imm_s(IntCC::Equal, e.row_len, 0);
                    let div = g.b.ins().select(empty, one, e.row_len);
                    let per_step = g.b.ins().udiv(e.inner, div);
                    let first = g.b.ins().imul(step, per_step);
                    let q_var = g.b.declare_var(types::I64);
                    g.b.def_var(q_var, zero);
                    counted_loop(g, q_var, per_step, 1, |g, q| {
                        let r = g.b.ins().iadd(first, q);
                        let row = e.row(g, r);
                        let rs = row.rs;
                        e.columns_of(g, &row, row0, rs, e.row_len, fresh);
                    });
                }
            }
        });
    }

    /// The `count` points from flat position `from` of one step of a block whose first point is
    /// `row0` (all in plan row `row`), each folded into its column's state (`flat - row0`), in
    /// vectors then scalars; `first` (a complex scan's) where this is the block's first step.
    fn columns_of(
        &self,
        g: &mut Gen<'_, '_>,
        row: &Row,
        row0: Value,
        from: Value,
        count: Value,
        first: Option<Value>,
    ) {
        let c_var = g.b.declare_var(types::I64);
        let zero = g.b.ins().iconst(types::I64, 0);
        g.b.def_var(c_var, zero);
        let at = |g: &mut Gen<'_, '_>, c: Value| {
            let flat = g.b.ins().iadd(from, c);
            let col = g.b.ins().isub(flat, row0);
            (flat, col)
        };
        if self.vector {
            let lanes = g.lanes as i64;
            counted_loop(g, c_var, count, lanes, |g, c| {
                let (flat, col) = at(g, c);
                self.column_step(g, W::Vector, row, flat, col, first)
            });
        }
        counted_loop(g, c_var, count, 1, |g, c| {
            let (flat, col) = at(g, c);
            self.column_step(g, W::Scalar, row, flat, col, first)
        });
    }

    /// The point(s) at `flat`, of column(s) `c ..`: out = state ⊕ v (inclusive) or state
    /// (exclusive).
    fn column_step(&self, g: &mut Gen<'_, '_>, w: W, row: &Row, flat: Value, c: Value, first: Option<Value>) {
        let v = self.body(g, w, row, flat);
        if let Some(cx) = self.complex {
            // the states of the columns (interleaved, as the values' type), lanewise
            let z = g.z(v);
            let st_addr = g.elem_addr(self.f.out_idx, c, cx.state_bytes());
            let s = g.load_parts(cx.t, st_addr, w == W::Vector);
            let (out, next) = self.complex_step(g, s, z, first);
            g.store_parts(cx.t, next, st_addr);
            let out_addr = g.elem_addr(self.f.out_val, flat, g.size);
            let out = g.complex_value(out);
            g.store_typed(cx.t, out, out_addr, 0);
            return;
        }
        let out_addr = g.elem_addr(self.f.out_val, flat, g.size);
        let wide = self.op().wide();
        let sb = self.state_bytes(g);
        let st_addr = g.elem_addr(self.f.out_idx, c, sb);
        let out = match (w, wide, g.dtype) {
            (W::Vector, _, _) if self.ints.is_some() => {
                let s = g.b.ins().load(types::I64X2, mem(), st_addr, 0);
                let next = self.combine(g, s, v);
                g.b.ins().store(mem(), next, st_addr, 0);
                if self.scan.exclusive { s } else { next }
            }
            (W::Vector, true, ElemType::F32) => {
                let s_lo = g.b.ins().load(types::F64X2, mem(), st_addr, 0);
                let s_hi = g.b.ins().load(types::F64X2, mem(), st_addr, 16);
                let (lo, hi) = self.widen(g, v);
                let n_lo = self.combine(g, s_lo, lo);
                let n_hi = self.combine(g, s_hi, hi);
                g.b.ins().store(mem(), n_lo, st_addr, 0);
                g.b.ins().store(mem(), n_hi, st_addr, 16);
                if self.scan.exclusive {
                    self.narrow(g, s_lo, s_hi)
                } else {
                    self.narrow(g, n_lo, n_hi)
                }
            }
            (W::Scalar, _, _) => {
                let ty = self.state_ty(g);
                let s = g.b.ins().load(ty, mem(), st_addr, 0);
                let next = self.push_scalar(g, s, v);
                g.b.ins().store(mem(), next, st_addr, 0);
                if self.scan.exclusive {
                    self.round_scalar(g, s)
                } else {
                    self.round_scalar(g, next)
                }
            }
            (W::Vector, _, _) => {
                // f64 data (any op) or f32 max / min: the state has the data's vector type
                let s = g.load_float(W::Vector, st_addr, 0);
                let next = self.combine(g, s, v);
                g.b.ins().store(mem(), next, st_addr, 0);
                if self.scan.exclusive { s } else { next }
            }
        };
        self.store_out(g, out, out_addr);
    }
}
