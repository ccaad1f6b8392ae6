//! How a compiled typed kernel reads each input (issue 15): C-contiguous at the flat point, one
//! element splat, or **strided in place**: the element of point `k` at `Σ (k / c[a] % d[a]) * s[a]`
//! elements from the input's first element, `d` the kernel's shape, `c` its C strides and `s` the
//! input's element strides over it (0 on broadcast axes, negative where a view steps backwards).
//! This is how a reversed or stepped view (`x[::-1]`, `x[:, ::2]`), a transposed one and a broadcast
//! input are read without a copy.
//!
//! The strides are the specialisation's (kiln specialises a kernel per input strides), so they are
//! constants of the code: axes of one point and broadcast axes drop out, axes that step as one are
//! merged (`x[::-2, ::-1]` of contiguous rows is one axis), and the divisions are by constants. A
//! vector of lanes on an innermost axis reads a base and a step (`lanes` scalar loads, the lanes
//! inserted: Cranelift has no gather; stride -1 one vector load and a lane reversal) where its
//! lanes lie in one row of that axis (one compare per vector), and each lane from its own point
//! where they cross into the next row; any other geometry lane by lane. Bools are bytes: gathered
//! as bytes, widened to lane masks.
//!
//! What is read is checked before every call by [`crate::check::check_typed_read`]: a view's
//! strides over the kernel's shape are exactly the compiled ones (so every offset is one of the
//! view's elements), a buffer holds every offset read.

use crate::clif::cast;
pub use crate::run::TypedView;
use crate::typed_lower::{TypedGen, bits};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{ConstantData, InstBuilder, Value, types};
use kiln_ir::ElemType;

/// How a compiled typed kernel reads one input.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypedRead {
    /// `n` elements in C order, point `k` at element `k`.
    Flat,
    /// One element, read once and splat.
    Splat,
    /// In place with these element strides over the kernel's shape (see the module doc).
    Strided(Vec<isize>),
}

impl TypedRead {
    /// How an input of `shape`, its elements at `strides` (None: C-contiguous) is read by a kernel
    /// of iteration shape `target` (into which `shape` broadcasts).
    ///
    /// # Errors
    /// [`kiln_ir::IrError::Broadcast`] where `shape` does not broadcast to `target`.
    pub fn of(shape: &[usize], strides: Option<&[isize]>, target: &[usize]) -> kiln_ir::Result<TypedRead> {
        let size: usize = shape.iter().product();
        let n: usize = target.iter().product();
        if size == 1 {
            return Ok(TypedRead::Splat);
        }
        match strides {
            None if size == n && shape.len() <= target.len() && target.ends_with(shape) => {
                Ok(TypedRead::Flat)
            }
            _ => {
                let own = strides.map_or_else(|| kiln_ir::shape::c_strides(shape), <[isize]>::to_vec);
                let s = kiln_ir::shape::broadcast_strides(shape, &own, target)?;
                Ok(if s == kiln_ir::shape::c_strides(target) {
                    TypedRead::Flat
                } else {
                    TypedRead::Strided(s)
                })
            }
        }
    }

    /// One line for `kiln explain`.
    pub fn describe(&self) -> String {
        match self {
            TypedRead::Flat => "contiguous".into(),
            TypedRead::Splat => "one element, splat".into(),
            TypedRead::Strided(s) => format!("in place, element strides {s:?}"),
        }
    }
}

/// One axis of a strided read after merging: point `k`'s index on it is `k / c % d` (`d` None where
/// `k / c` is below the extent for every point), times `s` elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadAxis {
    c: i64,
    d: Option<i64>,
    s: i64,
}

/// The axes of a read with `strides` over `shape` that move it (see the module doc), innermost first.
pub(crate) fn read_axes(shape: &[usize], strides: &[isize]) -> Vec<ReadAxis> {
    let n: usize = shape.iter().product();
    let mut axes: Vec<(usize, usize, isize)> = Vec::new();
    let mut c = 1usize;
    for (&d, &s) in shape.iter().zip(strides).rev() {
        if d > 1 && s != 0 {
            match axes.last_mut() {
                // this axis continues the last one (its points and elements follow on)
                Some(last) if last.0 * last.1 == c && last.2 * last.1 as isize == s => last.1 *= d,
                _ => axes.push((c, d, s)),
            }
        }
        c *= d.max(1);
    }
    axes.into_iter()
        .map(|(c, d, s)| ReadAxis {
            c: c as i64,
            d: (c * d < n).then_some(d as i64),
            s: s as i64,
        })
        .collect()
}

/// The element offset of point `k` (an i64) on `axes`.
fn offset(g: &mut TypedGen<'_, '_>, axes: &[ReadAxis], k: Value) -> Value {
    let mut off = None;
    for a in axes {
        let q = if a.c > 1 { g.b.ins().udiv_imm_u(k, a.c) } else { k };
        let i = match a.d {
            Some(d) => g.b.ins().urem_imm_u(q, d),
            None => q,
        };
        let term = g.b.ins().imul_imm_s(i, a.s);
        off = Some(match off {
            None => term,
            Some(o) => g.b.ins().iadd(o, term),
        });
    }
    off.unwrap_or_else(|| g.b.ins().iconst(types::I64, 0))
}

/// The address `off` elements of `t` from `base`.
fn at(g: &mut TypedGen<'_, '_>, base: Value, off: Value, t: ElemType) -> Value {
    let bytes = g.b.ins().imul_imm_s(off, i64::from(bits(t) / 8));
    g.b.ins().iadd(base, bytes)
}

/// Input of type `t` at `base`, read on `axes` at point `k` (scalar) or points `k .. k + lanes`
/// (a vector of the kernel's type for `t`, as [`TypedGen::load`] gives).
pub(crate) fn load(
    g: &mut TypedGen<'_, '_>,
    base: Value,
    axes: &[ReadAxis],
    k: Value,
    t: ElemType,
    vector: bool,
) -> Value {
    if !vector {
        let off = offset(g, axes, k);
        let addr = at(g, base, off, t);
        return g.load(t, addr, false);
    }
    let lanes = i64::from(g.lanes);
    match axes.first() {
        // one axis of the flat index itself: lane l at the first lane's offset plus l strides
        Some(&ReadAxis { c: 1, d: None, s }) => {
            let first = offset(g, axes, k);
            along(g, base, first, s, t)
        }
        // rows of `d` points: where the lanes lie in one row (most vectors of long rows), the same;
        // where they cross into the next, each lane from its own point
        Some(&ReadAxis { c: 1, d: Some(d), s }) if d >= lanes => {
            let vt = g.ty(t, true);
            let (fast, slow, done) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
            g.b.append_block_param(done, vt);
            let j = g.b.ins().urem_imm_u(k, d);
            let fits = g.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, j, d - lanes);
            g.b.ins().brif(fits, fast, &[], slow, &[]);
            g.b.switch_to_block(fast);
            let first = offset(g, axes, k);
            let v = along(g, base, first, s, t);
            g.b.ins().jump(done, &[v.into()]);
            g.b.switch_to_block(slow);
            let v = each(g, base, axes, k, t);
            g.b.ins().jump(done, &[v.into()]);
            g.b.switch_to_block(done);
            g.b.block_params(done)[0]
        }
        _ => each(g, base, axes, k, t),
    }
}

/// The lanes at offsets `first + l * s`: for `s` -1 one vector load and a lane reversal (a vector
/// of `lanes` full lanes, bools aside), else one scalar load per lane.
fn along(g: &mut TypedGen<'_, '_>, base: Value, first: Value, s: i64, t: ElemType) -> Value {
    let lanes = i64::from(g.lanes);
    let vt = g.ty(t, true);
    if s == -1 && t != ElemType::Bool && i64::from(vt.lane_count()) == lanes {
        // lanes l = 0.. at first - l: the block from lane lanes-1 up, one load, lanes reversed
        let low = g.b.ins().iadd_imm_s(first, 1 - lanes);
        let addr = at(g, base, low, t);
        let v = g.load(t, addr, true);
        let size = (bits(t) / 8) as u8;
        let mask: Vec<u8> = (0..lanes as u8)
            .rev()
            .flat_map(|l| (0..size).map(move |b| l * size + b))
            .collect();
        let imm = g.b.func.dfg.immediates.push(ConstantData::from(mask));
        let bytes = g.b.ins().bitcast(types::I8X16, cast(), v);
        let r = g.b.ins().shuffle(bytes, bytes, imm);
        return g.b.ins().bitcast(vt, cast(), r);
    }
    let mut addr = at(g, base, first, t);
    let step = s * i64::from(bits(t) / 8);
    let mut scalars = Vec::with_capacity(lanes as usize);
    for l in 0..lanes {
        if l > 0 {
            addr = g.b.ins().iadd_imm_s(addr, step);
        }
        scalars.push(g.load(t, addr, false));
    }
    assemble(g, scalars, t)
}

/// The lanes each at its own point's offset.
fn each(g: &mut TypedGen<'_, '_>, base: Value, axes: &[ReadAxis], k: Value, t: ElemType) -> Value {
    let scalars = (0..i64::from(g.lanes))
        .map(|l| {
            let kl = g.b.ins().iadd_imm_s(k, l);
            let off = offset(g, axes, kl);
            let addr = at(g, base, off, t);
            g.load(t, addr, false)
        })
        .collect();
    assemble(g, scalars, t)
}

/// One scalar per lane as the kernel's vector for `t`: bools (bytes 0 / 1) widened to the lane's
/// width and negated into masks; lane 0 splat (a half-filled 32-bit vector's lanes 2 and 3 hold
/// copies no result reads), the others inserted.
pub(crate) fn assemble(g: &mut TypedGen<'_, '_>, scalars: Vec<Value>, t: ElemType) -> Value {
    let vt = g.ty(t, true);
    let lane_ty = vt.lane_type();
    let scalars: Vec<Value> = if t == ElemType::Bool {
        scalars
            .into_iter()
            .map(|s| {
                let w = g.b.ins().uextend(lane_ty, s);
                g.b.ins().ineg(w)
            })
            .collect()
    } else {
        scalars
    };
    let mut v = g.b.ins().splat(vt, scalars[0]);
    for (l, &s) in scalars.iter().enumerate().skip(1) {
        v = g.b.ins().insertlane(v, s, l as u8);
    }
    v
}

/// A map's output: `n` elements of the kernel's value type.
#[derive(Debug)]
pub enum TypedSliceMut<'a> {
    /// bool outputs.
    Bool(&'a mut [bool]),
    /// int32 outputs.
    I32(&'a mut [i32]),
    /// int64 outputs.
    I64(&'a mut [i64]),
    /// float32 outputs.
    F32(&'a mut [f32]),
    /// float64 outputs.
    F64(&'a mut [f64]),
}

impl TypedSliceMut<'_> {
    pub(crate) fn ty(&self) -> ElemType {
        match self {
            TypedSliceMut::Bool(_) => ElemType::Bool,
            TypedSliceMut::I32(_) => ElemType::I32,
            TypedSliceMut::I64(_) => ElemType::I64,
            TypedSliceMut::F32(_) => ElemType::F32,
            TypedSliceMut::F64(_) => ElemType::F64,
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            TypedSliceMut::Bool(s) => s.len(),
            TypedSliceMut::I32(s) => s.len(),
            TypedSliceMut::I64(s) => s.len(),
            TypedSliceMut::F32(s) => s.len(),
            TypedSliceMut::F64(s) => s.len(),
        }
    }

    pub(crate) fn ptr(&mut self) -> *mut u8 {
        match self {
            TypedSliceMut::Bool(s) => s.as_mut_ptr().cast(),
            TypedSliceMut::I32(s) => s.as_mut_ptr().cast(),
            TypedSliceMut::I64(s) => s.as_mut_ptr().cast(),
            TypedSliceMut::F32(s) => s.as_mut_ptr().cast(),
            TypedSliceMut::F64(s) => s.as_mut_ptr().cast(),
        }
    }
}
