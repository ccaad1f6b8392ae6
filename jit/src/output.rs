//! The output side of a run: the buffers the code writes, allocated from the run plan with exactly
//! the elements it writes (see call.rs), and, after the code ran, the [`Tensor`] the interpreter would
//! give: the second pass over the partials of a chunked reduction ([`ReduceOp::merge`] in chunk order),
//! the result type of `KernelIR::output_type` (bool for logical maps, any and all; int64 for argmin,
//! argmax and sums of truth values), sums rounded once from their f64 accumulator with
//! [`ReduceOp::finish`]'s sign rule.

use crate::call::{Decides, Ran, Targets, uninit_output, written_output};
use crate::compound::SLOT_F64S;
use crate::error::{Result, oom};
use crate::layout::{Geometry, Structure};
use crate::layout::{Mode, Parts};
use crate::plan::RunPlan;
use crate::run::{Elem, OutSlice, RunConfig, Workspace};
use kiln_ir::{CompoundOp, ElemType, KernelIR, ReduceOp, Start, Tensor, Values};

/// The buffers one run writes: the value output (the caller's slice, a fresh buffer, or the
/// workspace's partials), the indices of arg reductions, and the scans' carried states.
pub(crate) struct Outputs<'a, T: Elem> {
    op: Option<ReduceOp>,
    /// A compound reduction: four f64 per slot in the f64 buffer (see compound.rs).
    compound: Option<CompoundOp>,
    /// Sibling reductions: one f64 word per component in each slot of the f64 buffer (see
    /// [`Parts`]; [`SiblingWords`] says where: interleaved, or a run per component).
    siblings: Option<Parts>,
    /// A kept reduction or kept sibling reductions ([`Mode::keeps`]): sibling components' words
    /// each a run of their own.
    kept: bool,
    /// A typed kernel's reduction (or sibling reductions) of bool or integer values (their type):
    /// one int64 word per slot (per component) in the f64 buffer (see int_acc.rs).
    ints: Option<ElemType>,
    /// A typed kernel's reduction of complex values (their type): two f64 words (re, im) per slot
    /// in the f64 buffer (see complex_acc.rs).
    complex: Option<ElemType>,
    /// A reduction folding into `dest` itself ([`Structure::accumulates_in`]).
    in_dest: bool,
    chunked: bool,
    /// The caller's buffer a map or scan writes into (of the dtype, or a typed kernel's result type).
    dest: Option<OutSlice<'a>>,
    ws: &'a mut Workspace,
    val_t: Vec<T>,
    val_f64: Vec<f64>,
    idx: Vec<T::Idx>,
    /// Scans along an outer axis: one row of carried states per unit (f64 words hold either state
    /// type at any alignment the code needs).
    state: Vec<f64>,
    /// A typed map's or scan's result type, and its fresh output (zeroed elements of that type, written by the
    /// code through its address shifted up as a stored input's: see [`Gen::store_value`]).
    ///
    /// [`Gen::store_value`]: crate::lower::Gen::store_value
    typed_map: Option<ElemType>,
    typed_out: Option<Values>,
    /// The element count of a fresh map or scan output (`val_t`, allocated uninitialised: the run
    /// writes every element, and [`Outputs::written`] gives it its length).
    fresh: Option<usize>,
}

impl<'a, T: Elem> Outputs<'a, T> {
    /// No buffers yet: [`Outputs::allocate`] makes them.
    #[inline]
    pub fn new(st: &Structure, plan: &RunPlan, dest: Option<OutSlice<'a>>, ws: &'a mut Workspace) -> Self {
        Outputs {
            op: st.mode.reduce_op(),
            compound: match st.mode {
                Mode::Compound(op) => Some(op),
                _ => None,
            },
            siblings: st.mode.parts(),
            kept: st.mode.keeps(),
            ints: st
                .typed
                .filter(|t| t.int_acc() && (st.mode.reduce_op().is_some() || st.mode.parts().is_some()))
                .map(|t| t.values),
            complex: st
                .typed
                .filter(|t| {
                    t.complex_acc() && st.mode.reduce_op().is_some_and(crate::complex_acc::folds_pairs)
                })
                .map(|t| t.values),
            typed_map: st.typed.filter(|_| st.mode.stores_points()).map(|t| t.output),
            typed_out: None,
            in_dest: plan.chunks.is_none() && dest.as_ref().is_some_and(|d| st.accumulates_in(d.ty())),
            chunked: plan.chunks.is_some(),
            dest,
            ws,
            val_t: Vec::new(),
            val_f64: Vec::new(),
            idx: Vec::new(),
            state: Vec::new(),
            fresh: None,
        }
    }

    /// Allocates (or refills) the buffers of `plan`, each output slot starting at its start value or
    /// the op's identity; a map or scan with `dest` writes straight into it.
    #[inline]
    pub fn allocate(&mut self, plan: &RunPlan, cfg: &RunConfig<'_>) -> Result<()> {
        let (op, chunked) = (self.op, self.chunked);
        let o = self;
        let n = plan.n_slots;
        let start_of = |s: usize| if chunked { None } else { cfg.start.at(s) };
        let from_identity = chunked || cfg.start == Start::Identity;
        let (ws_acc, ws_t, ws_idx) = T::partials(o.ws);
        let (vt, vf, vi) = if chunked {
            (ws_t, ws_acc, ws_idx)
        } else {
            (&mut o.val_t, &mut o.val_f64, &mut o.idx)
        };
        let (compound, siblings) = (o.compound, o.siblings);
        if let (Some(op), Some(ct)) = (op, o.complex) {
            // each slot at its start (v + 0i, as the interpreter folds from it), else the identity
            // (a chunked one's partials at the identity, merged from the start in `finish`)
            let id = crate::complex_acc::identity(op);
            if from_identity {
                return refill(vf, n.saturating_mul(2), |i| id[i % 2]);
            }
            return refill(vf, n.saturating_mul(2), |i| match start_of(i / 2) {
                Some(v) => crate::complex_acc::start(op, ct, v)[i % 2],
                None => id[i % 2],
            });
        }
        if let (Some(op), Some(vt)) = (op, o.ints) {
            // a typed reduction starts at its identity, or each output at its start as int64 (a
            // chunked one's partials at the identity, merged from its start in `finish`)
            if o.in_dest
                && let Some(OutSlice::I64(d)) = o.dest.as_mut()
            {
                let id = int_identity(op);
                if from_identity {
                    d.fill(id);
                } else {
                    for (s, w) in d.iter_mut().enumerate() {
                        *w = int_start(op, vt, start_of(s))?;
                    }
                }
                return Ok(());
            }
            if from_identity {
                // (a chunked run's start, checked here, is merged in `finish`)
                int_start(op, vt, cfg.start.at(0))?;
                fill(vf, n, f64::from_bits(int_identity(op) as u64))?;
            } else {
                let words = (0..n)
                    .map(|s| int_start(op, vt, start_of(s)).map(|x| f64::from_bits(x as u64)))
                    .collect::<Result<Vec<f64>>>()?;
                refill(vf, n, |s| words[s])?;
            }
            if op.is_arg() {
                refill(vi, n, |_| T::NO_INDEX)?;
            }
            return Ok(());
        }
        match op {
            None if let Some(p) = siblings => {
                let ops = p.ops();
                let int = o.ints.is_some();
                if int && cfg.start != Start::Identity {
                    return Err(crate::JitError::Unsupported(
                        "sibling reductions of bool or integer values from a start other than their identities"
                            .into(),
                    ));
                }
                let (k, kept) = (ops.len(), o.kept);
                let identity = |op: ReduceOp| {
                    if int {
                        f64::from_bits(int_identity(op) as u64)
                    } else if kept && packs::<T>(op) {
                        // two float32 identities a word: the run's first half holds its `n`
                        let b = u64::from((op.identity() as f32).to_bits());
                        f64::from_bits(b << 32 | b)
                    } else {
                        op.identity()
                    }
                };
                // (filled run by run or slot by slot: an index divided per word cost 2 us of the
                // 2,000 words of `max(m, axis=0) - min(m, axis=0)` over 10 x 1000)
                let words = n.saturating_mul(k);
                vf.clear();
                vf.try_reserve_exact(words).map_err(|_| oom(words))?;
                if kept {
                    for &op in ops {
                        vf.resize(vf.len() + n, identity(op));
                    }
                } else {
                    let slot: Vec<f64> = ops.iter().map(|&op| identity(op)).collect();
                    for _ in 0..n {
                        vf.extend_from_slice(&slot);
                    }
                }
            }
            None if let Some(c) = compound => {
                let empty = c.empty_slot();
                refill(vf, n.saturating_mul(SLOT_F64S), |i| empty[i % SLOT_F64S])?;
            }
            None if let Some(t) = o.typed_map.filter(|_| o.dest.is_none()) => {
                o.typed_out = Some(typed_fresh(t, n)?);
            }
            // every element of a fresh map or scan output is written by the code before it is read
            None if o.dest.is_none() => {
                *vt = uninit_output(n)?;
                o.fresh = Some(n);
            }
            None => {}
            // every slot at the identity: one fill (a closure that matches on the start per element
            // cost about 19 instructions per output, 2 us of a 1000-column sum of 10 rows)
            Some(op @ (ReduceOp::Sum | ReduceOp::Prod)) if from_identity => fill(vf, n, op.identity())?,
            Some(op) if from_identity => fill(vt, n, T::from_f64(op.identity()))?,
            Some(op @ (ReduceOp::Sum | ReduceOp::Prod)) => {
                refill(vf, n, |s| start_of(s).unwrap_or(op.identity()))?;
            }
            Some(op) => {
                let id = T::from_f64(op.identity());
                refill(vt, n, |s| start_of(s).map_or(id, T::from_f64))?;
            }
        }
        if op.is_some_and(ReduceOp::is_arg) {
            refill(vi, n, |_| T::NO_INDEX)?;
        }
        if plan.runs && plan.state_row_bytes > 0 {
            let words = plan.n_units.saturating_mul(plan.state_row_bytes).div_ceil(8);
            o.state.try_reserve_exact(words).map_err(|_| oom(words))?;
            o.state.resize(words, 0.0);
        }
        Ok(())
    }

    /// The addresses the code writes through, and the bytes behind each.
    #[inline]
    pub fn targets(&mut self, plan: &RunPlan) -> Targets {
        let size = std::mem::size_of::<T>();
        let chunked = self.chunked;
        let (ws_acc, ws_t, ws_idx) = T::partials(self.ws);
        let (vt, vf, vi) = if chunked {
            (ws_t, ws_acc, ws_idx)
        } else {
            (&mut self.val_t, &mut self.val_f64, &mut self.idx)
        };
        let (out_val, val_bytes): (*mut u8, usize) = match (self.op, self.dest.as_mut()) {
            // the int64 words of a reduction folding into its destination
            (Some(_), Some(d)) if self.in_dest => (d.ptr(), d.len() * 8),
            _ if self.compound.is_some() || self.siblings.is_some() || self.ints.is_some() => {
                (vf.as_mut_ptr().cast(), vf.len() * 8)
            }
            (None, Some(d)) => {
                let (ptr, len, t) = (d.ptr(), d.len(), d.ty());
                shifted(ptr, len, t, size)
            }
            // a typed map's or scan's output: its address shifted as far as a stored input's (run.rs,
            // `InputRef::base`), so the code steps it in elements of `T` and shifts each store's
            // address back; as many bytes as elements of `T` it holds, which is what it steps over
            _ if let Some(v) = self.typed_out.as_mut() => typed_target(v, size),
            (Some(ReduceOp::Sum | ReduceOp::Prod), _) => (vf.as_mut_ptr().cast(), vf.len() * 8),
            // a fresh map or scan output: its room, which the run fills
            _ if self.fresh.is_some() => (vt.as_mut_ptr().cast(), vt.capacity() * size),
            _ => (vt.as_mut_ptr().cast(), vt.len() * size),
        };
        let (out_idx, idx_bytes, idx_unit_bytes) = if self.op.is_some_and(ReduceOp::is_arg) {
            (vi.as_mut_ptr().cast(), vi.len() * size, 0)
        } else if !self.state.is_empty() {
            (
                self.state.as_mut_ptr().cast(),
                self.state.len() * 8,
                plan.state_row_bytes,
            )
        } else {
            (std::ptr::null_mut(), 0, 0)
        };
        Targets {
            out_val,
            val_bytes,
            out_idx,
            idx_bytes,
            idx_unit_bytes,
            decides: self.decides(),
        }
    }

    /// How one chunk's partial decides this run, where it is a chunked whole-array `any` or `all`,
    /// or a max, min, argmax or argmin of bools ([`Decides`]; every slot started at the identity,
    /// [`Outputs::allocate`]).
    fn decides(&self) -> Option<Decides> {
        let op = self.op?;
        let bools = self.ints == Some(ElemType::Bool);
        let plain = self.compound.is_none() && self.siblings.is_none() && self.complex.is_none();
        let when = match op {
            ReduceOp::Any => true,
            ReduceOp::All => false,
            ReduceOp::Max | ReduceOp::ArgMax if bools => true,
            ReduceOp::Min | ReduceOp::ArgMin if bools => false,
            _ => return None,
        };
        (self.chunked && plain).then_some(Decides {
            word: self.ints.is_some(),
            when,
        })
    }

    /// After the run `ran` (of these outputs' targets): a fresh map or scan output holds its elements.
    pub fn written(&mut self, ran: &Ran) {
        if let Some(n) = self.fresh.take() {
            written_output(&mut self.val_t, n, ran);
        }
    }

    /// The run's result (after the code ran): `None` when it was written into the caller's slice.
    #[inline]
    pub fn finish(
        &mut self,
        kernel: &KernelIR,
        st: &Structure,
        geo: &Geometry,
        cfg: &RunConfig<'_>,
    ) -> Option<Tensor> {
        if let Some(values) = self.typed_out.take() {
            let shape = match st.mode {
                Mode::Scan { .. } => geo.out_shape.clone(),
                _ => kernel.shape.clone(),
            };
            return Some(Tensor { shape, values });
        }
        if self.dest.is_some() {
            return None;
        }
        let started = cfg.start != Start::Identity;
        let mut val_t = std::mem::take(&mut self.val_t);
        let mut val_f64 = std::mem::take(&mut self.val_f64);
        let mut idx = std::mem::take(&mut self.idx);
        if let Some(c) = self.compound {
            let slots: &[f64] = if self.chunked {
                T::partials(self.ws).0
            } else {
                &val_f64
            };
            let merged: Vec<kiln_ir::compound::Slot> = if self.chunked {
                vec![slots.chunks_exact(SLOT_F64S).fold(c.empty_slot(), |a, s| {
                    c.merge_slots(a, s.try_into().expect("a slot's words"))
                })]
            } else {
                slots
                    .chunks_exact(SLOT_F64S)
                    .map(|s| s.try_into().expect("a slot's words"))
                    .collect()
            };
            let n = merged.len();
            let mut out = vec![T::ZERO; 2 * n];
            for (o, s) in merged.into_iter().enumerate() {
                let [a, b] = c.finish_slot(s);
                out[o] = T::from_f64(a);
                out[n + o] = T::from_f64(b);
            }
            let shape = std::iter::once(2).chain(geo.out_shape.iter().copied()).collect();
            return Some(Tensor {
                shape,
                values: T::values(out),
            });
        }
        if let (Some(ct), Some(op)) = (self.complex, self.op) {
            let words: &[f64] = if self.chunked {
                T::partials(self.ws).0
            } else {
                &val_f64
            };
            return Some(complex_tensor(op, ct, words, self.chunked, cfg.start, geo));
        }
        if let (Some(vt), Some(op)) = (self.ints, self.op) {
            let (words, idx): (&[f64], Vec<i64>) = if self.chunked {
                let (acc, _, ids) = T::partials(self.ws);
                (acc, ids.iter().map(|&i| i.into()).collect())
            } else {
                (&val_f64, idx.iter().map(|&i| i.into()).collect())
            };
            return Some(int_tensor(
                op,
                vt,
                words,
                &idx,
                self.chunked,
                cfg.start.at(0),
                geo,
            ));
        }
        if let Some(parts) = self.siblings {
            let words = SiblingWords::new(
                if self.chunked {
                    T::partials(self.ws).0
                } else {
                    &val_f64
                },
                parts.ops().len(),
                self.kept,
            );
            if self.ints.is_some() {
                return Some(int_siblings_tensor(parts, words, self.chunked, geo));
            }
            return Some(siblings_tensor::<T>(parts, words, self.chunked, geo));
        }
        if self.chunked {
            let op = self.op.expect("chunks are reductions");
            let (acc, vals, ids) = T::partials(self.ws);
            let start = cfg.start.at(0);
            match op {
                ReduceOp::Sum | ReduceOp::Prod => {
                    val_f64 = vec![
                        acc.iter()
                            .fold(start.unwrap_or(op.identity()), |a, &p| op.merge(a, p)),
                    ]
                }
                _ => {
                    let (v, i) = merge_partials::<T>(op, start, vals, ids);
                    val_t = vec![v];
                    idx = if op.is_arg() { vec![i] } else { Vec::new() };
                }
            }
        }
        Some(tensor::<T>(kernel, st, geo, val_t, val_f64, idx, started))
    }
}

/// Where the words of sibling reductions hold component `c` of slot `s`: trailing siblings
/// interleave them (`words[s * k + c]`); kept siblings ([`Mode::KeptSiblings`]) give each
/// component a run of its own (`words[c * n + s]`, `n` slots), in which a float32 min or max
/// keeps float32 values, as the code loads and stores them (`crate::reduce::acc_bytes`): the `n`
/// of them packed into the run's first half ([`packs`]).
#[derive(Clone, Copy)]
struct SiblingWords<'w> {
    words: &'w [f64],
    k: usize,
    kept: bool,
    /// The slots: `words.len() / k`, divided once (not once per value read).
    slots: usize,
}

impl<'w> SiblingWords<'w> {
    /// The words of `k` components, interleaved (trailing) or in runs (`kept`).
    fn new(words: &'w [f64], k: usize, kept: bool) -> Self {
        let slots = words.len() / k;
        SiblingWords {
            words,
            k,
            kept,
            slots,
        }
    }

    /// The slots.
    fn slots(&self) -> usize {
        self.slots
    }

    /// Component `c`'s words, slot by slot.
    fn column(&self, c: usize) -> impl Iterator<Item = f64> + 'w {
        let (run, stride, at) = if self.kept {
            (&self.words[c * self.slots..(c + 1) * self.slots], 1, 0)
        } else {
            (self.words, self.k, c)
        };
        run.chunks_exact(stride).map(move |w| w[at])
    }

    /// Component `c`'s packed float32 values of kept siblings, slot by slot, as `T` (float32: its
    /// bits as stored, a signalling NaN's too).
    fn packed<T: Elem>(&self, c: usize) -> impl Iterator<Item = T> + 'w {
        let run = &self.words[c * self.slots..];
        (0..self.slots).map(move |s| {
            let x = f32::from_bits((run[s / 2].to_bits() >> (32 * (s % 2))) as u32);
            let mut v = [x];
            T::of_out(OutSlice::F32(&mut v)).map_or_else(|| T::from_f64(f64::from(x)), |t| t[0])
        })
    }
}

/// Whether kept sibling reductions keep component `op`'s float accumulators packed, narrower than
/// a word (a float32 min or max).
fn packs<T: Elem>(op: ReduceOp) -> bool {
    crate::reduce::acc_bytes(op, T::DTYPE) < 8
}

/// The result of sibling reductions from their words ([`SiblingWords`]): each component as its
/// reduction alone gives it: the chunks' partials merged in chunk order from the identity (sums
/// and products in f64, min and max in `T`), a sum rounded once with [`ReduceOp::finish`]'s sign
/// rule; component-major, then the kept axes.
fn siblings_tensor<T: Elem>(parts: Parts, words: SiblingWords<'_>, chunked: bool, geo: &Geometry) -> Tensor {
    let ops = parts.ops();
    let k = ops.len();
    let n_slots = words.slots();
    let n_out = if chunked { 1 } else { n_slots };
    let mut out = Vec::with_capacity(k * n_out);
    for (c, &op) in ops.iter().enumerate() {
        if words.kept && packs::<T>(op) {
            out.extend(words.packed::<T>(c));
            continue;
        }
        let column = words.column(c);
        let wide = matches!(op, ReduceOp::Sum | ReduceOp::Prod);
        let finish = |x: f64| {
            if wide {
                T::from_f64(op.finish(x, false))
            } else {
                T::from_f64(x)
            }
        };
        if !chunked {
            out.extend(column.map(finish));
        } else if wide {
            out.push(finish(column.fold(op.identity(), |a, p| op.merge(a, p))));
        } else {
            let id = T::from_f64(op.identity());
            out.push(column.fold(id, |a, p| op.merge(a, T::from_f64(p))));
        }
    }
    Tensor {
        shape: std::iter::once(k).chain(geo.out_shape.iter().copied()).collect(),
        values: T::values(out),
    }
}

/// The address the code writes a typed output `v` through in a kernel of elements of `size` bytes:
/// its address shifted up as far as a stored input's (run.rs, `InputRef::base`), so the code steps
/// it in elements of the kernel's dtype and shifts each store's address back; and as many bytes as
/// elements of that dtype it holds, which is what the code steps over.
fn typed_target(v: &mut Values, size: usize) -> (*mut u8, usize) {
    let (ptr, len, t) = values_ptr(v);
    shifted(ptr, len, t, size)
}

/// [`typed_target`] of a caller's buffer `o` (of its own element type: the dtype's address itself).
pub(crate) fn out_target(o: &mut OutSlice<'_>, size: usize) -> (*mut u8, usize) {
    let (len, t) = (o.len(), o.ty());
    shifted(o.ptr(), len, t, size)
}

/// A fresh buffer's elements as the caller's buffer the run writes (None: byte strings, which no
/// compiled kernel writes).
pub(crate) fn values_out(v: &mut Values) -> Option<OutSlice<'_>> {
    Some(match v {
        Values::Bool(x) => OutSlice::Bool(x),
        Values::I32(x) => OutSlice::I32(x),
        Values::I64(x) => OutSlice::I64(x),
        Values::F32(x) => OutSlice::F32(x),
        Values::F64(x) => OutSlice::F64(x),
        Values::C64(x) => OutSlice::C64(x),
        Values::C128(x) => OutSlice::C128(x),
        Values::Bytes { .. } => return None,
    })
}

/// The address the code writes `len` elements of `t` at `ptr` through in a kernel of elements of
/// `size` bytes, and the bytes it steps over ([`typed_target`]): the pointer itself where `t` is as
/// wide as the kernel's elements.
fn shifted(ptr: *mut u8, len: usize, t: ElemType, size: usize) -> (*mut u8, usize) {
    match crate::run::stored_shift(size, t) {
        0 => (ptr, len * size),
        shift => {
            // an exposed address no Rust code dereferences through this pointer
            let addr = crate::run::code_address(ptr.expose_provenance(), shift);
            (std::ptr::without_provenance_mut(addr), len * size)
        }
    }
}

/// `n` zeroed elements of `t` (calloc's untouched zero pages, as the float maps' fresh outputs).
pub(crate) fn typed_fresh(t: ElemType, n: usize) -> Result<Values> {
    use crate::call::zeroed;
    Ok(match t {
        ElemType::Bool => Values::Bool(zeroed(n, false)?),
        ElemType::I32 => Values::I32(zeroed(n, 0)?),
        ElemType::I64 => Values::I64(zeroed(n, 0)?),
        ElemType::F32 => Values::F32(zeroed(n, 0.0)?),
        ElemType::F64 => Values::F64(zeroed(n, 0.0)?),
        ElemType::C64 => Values::C64(zeroed(n, Default::default())?),
        ElemType::C128 => Values::C128(zeroed(n, Default::default())?),
        ElemType::Bytes(w) => {
            let width = (w as usize).max(1);
            let bytes = n.checked_mul(width).ok_or(crate::JitError::Unsupported(
                "a byte-string result larger than the address space".into(),
            ))?;
            Values::Bytes {
                width,
                data: zeroed(bytes, 0u8)?,
            }
        }
    })
}

/// The first element's address, the length and the element type of `v`.
fn values_ptr(v: &mut Values) -> (*mut u8, usize, ElemType) {
    match v {
        Values::Bool(x) => (x.as_mut_ptr().cast(), x.len(), ElemType::Bool),
        Values::I32(x) => (x.as_mut_ptr().cast(), x.len(), ElemType::I32),
        Values::I64(x) => (x.as_mut_ptr().cast(), x.len(), ElemType::I64),
        Values::F32(x) => (x.as_mut_ptr().cast(), x.len(), ElemType::F32),
        Values::F64(x) => (x.as_mut_ptr().cast(), x.len(), ElemType::F64),
        Values::C64(x) => (x.as_mut_ptr().cast(), x.len(), ElemType::C64),
        Values::C128(x) => (x.as_mut_ptr().cast(), x.len(), ElemType::C128),
        Values::Bytes { width, data } => (
            data.as_mut_ptr(),
            data.len() / (*width).max(1),
            ElemType::Bytes(u32::try_from(*width).unwrap_or(u32::MAX)),
        ),
    }
}

/// The identity of `op`'s int64 accumulator (int_acc.rs).
pub(crate) fn int_identity(op: ReduceOp) -> i64 {
    match op {
        ReduceOp::Sum | ReduceOp::Any => 0,
        ReduceOp::Prod | ReduceOp::All => 1,
        ReduceOp::Min | ReduceOp::ArgMin => i64::MAX,
        ReduceOp::Max | ReduceOp::ArgMax => i64::MIN,
    }
}

/// The result of a reduction of bool or integer values of type `vt` from its int64 words (and
/// indices, arg reductions): a chunked whole array's partials merged in chunk order from `start`
/// (the first extreme kept), then each word as the result type: sums and products int64, min and max the
/// value type, any and all bool, arg reductions their indices.
fn int_tensor(
    op: ReduceOp,
    vt: ElemType,
    words: &[f64],
    idx: &[i64],
    chunked: bool,
    start: Option<f64>,
    geo: &Geometry,
) -> Tensor {
    let ints = words.iter().map(|w| w.to_bits() as i64);
    let (vals, idx): (Vec<i64>, Vec<i64>) = if !chunked {
        (ints.collect(), idx.to_vec())
    } else if op.is_arg() {
        let mut best: Option<(i64, i64)> = None;
        for (v, &i) in ints.zip(idx) {
            let better = |b: i64| if op == ReduceOp::ArgMin { v < b } else { v > b };
            if i >= 0 && best.is_none_or(|(b, _)| better(b)) {
                best = Some((v, i));
            }
        }
        let (v, i) = best.unwrap_or((int_identity(op), -1));
        (vec![v], vec![i])
    } else {
        // the start was checked when the partials were allocated
        let s0 = int_start(op, vt, start).unwrap_or(int_identity(op));
        (vec![ints.fold(s0, |a, b| int_merge(op, a, b))], Vec::new())
    };
    let values = match op {
        ReduceOp::Sum | ReduceOp::Prod => Values::I64(vals),
        ReduceOp::Any | ReduceOp::All => Values::Bool(vals.into_iter().map(|v| v != 0).collect()),
        ReduceOp::ArgMin | ReduceOp::ArgMax => Values::I64(idx),
        ReduceOp::Min | ReduceOp::Max => match vt {
            ElemType::Bool => Values::Bool(vals.into_iter().map(|v| v != 0).collect()),
            ElemType::I32 => Values::I32(vals.into_iter().map(|v| v as i32).collect()),
            _ => Values::I64(vals),
        },
    };
    Tensor {
        shape: geo.out_shape.clone(),
        values,
    }
}

/// The int64 accumulator of `op` over values of type `vt` from `start`: the identity, or the
/// start as [`kiln_ir::typed::reduce_start`] takes it.
fn int_start(op: ReduceOp, vt: ElemType, start: Option<f64>) -> Result<i64> {
    match start {
        None => Ok(int_identity(op)),
        Some(v) => Ok(kiln_ir::typed::reduce_start(op, vt, v)?),
    }
}

/// Two int64 accumulators of `op` (not an arg reduction) merged: wrapping sums and products,
/// min and max (of truths 0 / 1: all and any).
fn int_merge(op: ReduceOp, a: i64, b: i64) -> i64 {
    match op {
        ReduceOp::Sum => a.wrapping_add(b),
        ReduceOp::Prod => a.wrapping_mul(b),
        ReduceOp::Min | ReduceOp::All => a.min(b),
        _ => a.max(b),
    }
}

/// The result of sibling reductions of bool or integer values from their int64 words
/// ([`SiblingWords`]): a chunked whole array's partials merged, then every component's int64
/// (component-major, then the kept axes), which its caller narrows to the component's type
/// ([`kiln_ir::typed::TypedKernel::component_type`]: exact, as each holds a value of that type).
fn int_siblings_tensor(parts: Parts, words: SiblingWords<'_>, chunked: bool, geo: &Geometry) -> Tensor {
    let ops = parts.ops();
    let n_slots = words.slots();
    let mut out = Vec::with_capacity(ops.len() * if chunked { 1 } else { n_slots });
    for (c, &op) in ops.iter().enumerate() {
        let column = words.column(c).map(|w| w.to_bits() as i64);
        if chunked {
            out.push(column.fold(int_identity(op), |a, b| int_merge(op, a, b)));
        } else {
            out.extend(column);
        }
    }
    Tensor {
        shape: std::iter::once(ops.len())
            .chain(geo.out_shape.iter().copied())
            .collect(),
        values: Values::I64(out),
    }
}

/// `v` cleared and refilled with `n` values `f(0..n)`.
fn refill<X>(v: &mut Vec<X>, n: usize, f: impl Fn(usize) -> X) -> Result<()> {
    v.clear();
    v.try_reserve_exact(n).map_err(|_| oom(n))?;
    v.extend((0..n).map(f));
    Ok(())
}

/// The result of a reduction of complex values of type `ct` from its slots' words (`words[2s]`,
/// `words[2s + 1]`: slot `s`'s real and imaginary parts, see complex_acc.rs), each slot started at
/// its output's start where `start` gives one ([`crate::complex_acc::start`]): a chunked one's
/// partials (each from the identity) merged in chunk order into one from the start, a sum's parts
/// finished as float sums are ([`ReduceOp::finish`]'s sign rule, where no start was given: a
/// started sum's imaginary part started at `+0.0`, as the interpreter's) and rounded once to the
/// parts' type.
fn complex_tensor(
    op: ReduceOp,
    ct: ElemType,
    words: &[f64],
    chunked: bool,
    start: Start<'_>,
    geo: &Geometry,
) -> Tensor {
    use kiln_ir::num_complex::Complex;
    fn values<P: kiln_ir::Real>(
        op: ReduceOp,
        ct: ElemType,
        words: &[f64],
        chunked: bool,
        start: Start<'_>,
    ) -> Vec<Complex<P>> {
        let started = start != Start::Identity;
        let slots = words
            .chunks_exact(2)
            .map(|w| Complex::new(P::from_f64(w[0]), P::from_f64(w[1])));
        let finish = |z: Complex<f64>| {
            Complex::new(
                P::from_f64(op.finish(z.re, started)),
                P::from_f64(op.finish(z.im, started)),
            )
        };
        // a chunked whole array's one start: its partials merged from it
        let [re0, im0] = match chunked.then(|| start.at(0)).flatten() {
            Some(v) => crate::complex_acc::start(op, ct, v),
            None => crate::complex_acc::identity(op),
        };
        match op {
            // a product's words hold its parts' own values (widened exactly)
            ReduceOp::Prod if chunked => {
                let first = Complex::new(P::from_f64(re0), P::from_f64(im0));
                vec![slots.fold(first, kiln_ir::complex::mul)]
            }
            ReduceOp::Prod => slots.collect(),
            _ => {
                let sums = words.chunks_exact(2).map(|w| Complex::new(w[0], w[1]));
                if chunked {
                    let total = sums.fold(Complex::new(re0, im0), |a, p| {
                        Complex::new(op.merge(a.re, p.re), op.merge(a.im, p.im))
                    });
                    vec![finish(total)]
                } else {
                    sums.map(finish).collect()
                }
            }
        }
    }
    let values = match ct {
        ElemType::C64 => Values::C64(values::<f32>(op, ct, words, chunked, start)),
        _ => Values::C128(values::<f64>(op, ct, words, chunked, start)),
    };
    Tensor {
        shape: geo.out_shape.clone(),
        values,
    }
}

/// `v` cleared and refilled with `n` copies of `x`.
fn fill<X: Copy>(v: &mut Vec<X>, n: usize, x: X) -> Result<()> {
    v.clear();
    v.try_reserve_exact(n).map_err(|_| oom(n))?;
    v.resize(n, x);
    Ok(())
}

/// Merges per-chunk partials in chunk order with [`ReduceOp::merge`] and [`ReduceOp::arg_replaces`]:
/// the same answer as one sequential fold (argmin and argmax keep the first extreme and the first
/// NaN, as the chunks come in index order).
fn merge_partials<T: Elem>(op: ReduceOp, start: Option<f64>, vals: &[T], idx: &[T::Idx]) -> (T, T::Idx) {
    let identity = T::from_f64(op.identity());
    if !op.is_arg() {
        let init = start.map_or(identity, T::from_f64);
        return (vals.iter().fold(init, |a, &p| op.merge(a, p)), T::NO_INDEX);
    }
    let mut best: Option<(T, T::Idx)> = None;
    for (&v, &i) in vals.iter().zip(idx) {
        if i.into() < 0 {
            continue;
        }
        if best.is_none_or(|(b, _)| op.arg_replaces(b, v)) {
            best = Some((v, i));
        }
    }
    best.unwrap_or((identity, T::NO_INDEX))
}

/// Builds the result of one run from its buffers.
fn tensor<T: Elem>(
    kernel: &KernelIR,
    st: &Structure,
    geo: &Geometry,
    val_t: Vec<T>,
    val_f64: Vec<f64>,
    idx: Vec<T::Idx>,
    started: bool,
) -> Tensor {
    let out_type = geo.out_type;
    let floats = |v: Vec<T>| match out_type {
        ElemType::Bool => Values::Bool(v.iter().map(|x| x.is_true()).collect()),
        ElemType::I64 | ElemType::I32 => Values::I64(v.iter().map(|x| x.to_f64() as i64).collect()),
        // a typed kernel's float32 values fold in its float64 lanes (exact; sums rounded once here)
        ElemType::F32 if T::DTYPE == kiln_ir::ElemType::F64 => {
            Values::F32(v.iter().map(|x| x.to_f64() as f32).collect())
        }
        ElemType::F32 | ElemType::F64 => T::values(v),
        ElemType::C64 | ElemType::C128 | ElemType::Bytes(_) => {
            unreachable!("typed::why_not compiles maps of complex values only, and no byte-string result")
        }
    };
    let values = match st.mode.reduce_op() {
        None => floats(val_t),
        // `finish` either adds +0.0 (the sign rule) or keeps the value, for every element alike:
        // decided once by its answer for -0.0, so the loop is a plain (vectorised) conversion
        Some(op @ (ReduceOp::Sum | ReduceOp::Prod)) if op.finish(-0.0, started).is_sign_positive() => {
            floats(val_f64.into_iter().map(|s| T::from_f64(s + 0.0)).collect())
        }
        Some(ReduceOp::Sum | ReduceOp::Prod) => floats(val_f64.into_iter().map(T::from_f64).collect()),
        Some(ReduceOp::Min | ReduceOp::Max) => floats(val_t),
        Some(ReduceOp::Any | ReduceOp::All) => Values::Bool(val_t.iter().map(|x| x.is_true()).collect()),
        Some(ReduceOp::ArgMin | ReduceOp::ArgMax) => Values::I64(idx.into_iter().map(Into::into).collect()),
    };
    let shape = if st.mode == crate::layout::Mode::Map {
        kernel.shape.clone()
    } else {
        geo.out_shape.clone()
    };
    Tensor { shape, values }
}
