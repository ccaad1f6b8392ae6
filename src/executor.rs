//! The executor: binds inputs by name, settles the dtype and the iteration shape, plans the
//! broadcasts, asks the backend to prepare the kernel, materialises what the plan says, and runs.
//!
//! Specialisations (the kernel, its plan and the backend's executable for one set of input dtypes,
//! shapes and layouts) are cached per runner, so running again on inputs of the same form costs no
//! planning and no compilation.

use crate::array::{ArrayArg, Converted, Float};
use crate::backend::{Backend, Buffer, BufferData, Buffers, Executable};
use crate::error::{Error, Result};
use crate::profile::Settings;
use crate::program::Program;
use kiln_ir::passes::{contract, prefix_scan, strength};
use kiln_ir::{BroadcastPlan, DType, InputLayout, InputPlan, KernelIR, KernelKind, PlanOptions};
use ndarray::IxDyn;
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

/// The arguments of a run, in the order of `names`.
pub(crate) fn bind<'b, 'a>(
    names: &[String],
    args: &'b [(&str, ArrayArg<'a>)],
) -> Result<Vec<&'b ArrayArg<'a>>> {
    for (i, (name, _)) in args.iter().enumerate() {
        if args[..i].iter().any(|(n, _)| same(n.as_bytes(), name.as_bytes())) {
            return Err(Error::DuplicateInput {
                name: name.to_string(),
            });
        }
    }
    names
        .iter()
        .map(|name| {
            args.iter()
                .find(|(n, _)| same(n.as_bytes(), name.as_bytes()))
                .map(|(_, a)| a)
                .ok_or_else(|| Error::MissingInput { name: name.clone() })
        })
        .collect()
}

/// The dtype a kernel over `args` computes in: f64 if any input is f64 or there is none, else f32.
pub(crate) fn kernel_dtype(args: &[&ArrayArg<'_>]) -> DType {
    args.iter()
        .map(|a| a.dtype())
        .reduce(DType::promote)
        .unwrap_or(DType::F64)
}

/// Element-wise equality of two short slices, without a call to `memcmp` (on the hot path of every
/// run; glibc's AVX-512 `memcmp` measured about 100 ns a call here).
#[inline]
pub(crate) fn same<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && (0..a.len()).all(|i| a[i] == b[i])
}

pub(crate) fn strides<'s>(a: &'s ArrayArg<'_>) -> &'s [isize] {
    match a {
        ArrayArg::F64(v) => v.strides(),
        ArrayArg::F32(v) => v.strides(),
    }
}

/// Whether the argument is C-contiguous (ndarray's standard layout), computed from its shape and
/// strides without allocating (ndarray's own test builds the default strides first: this runs on
/// every call).
pub(crate) fn is_standard(a: &ArrayArg<'_>) -> bool {
    let (shape, strides) = match a {
        ArrayArg::F64(v) => (v.shape(), v.strides()),
        ArrayArg::F32(v) => (v.shape(), v.strides()),
    };
    if shape.contains(&0) {
        return true;
    }
    let mut expect = 1isize;
    for (&d, &s) in shape.iter().zip(strides).rev() {
        if d != 1 && s != expect {
            return false;
        }
        expect = expect.wrapping_mul(d as isize);
    }
    true
}

/// The element strides of a view that is not C-contiguous, for the planner to read it in place (per
/// row, with these strides, where its rows are contiguous): None where the kernel reads it in another
/// shape (a rewrite dropped size-1 axes), which is then materialised. The planner declines negative
/// strides and rows that are not contiguous.
fn in_place_strides(a: &ArrayArg<'_>, shape: &[usize]) -> Option<Vec<isize>> {
    let (s, strides) = match a {
        ArrayArg::F64(v) => (v.shape(), v.strides()),
        ArrayArg::F32(v) => (v.shape(), v.strides()),
    };
    same(s, shape).then(|| strides.to_vec())
}

/// The kernel and its plan for these arguments, after the rewrites `settings` allow; what each
/// rewrite did, for `kiln explain`.
pub(crate) fn specialise(
    program: &Program,
    args: &[&ArrayArg<'_>],
    options: PlanOptions,
    settings: Settings,
) -> Result<(KernelIR, BroadcastPlan, Vec<String>)> {
    let shapes: Vec<Vec<usize>> = args.iter().map(|a| a.shape().to_vec()).collect();
    let dtype = if program.strong_f64 {
        DType::F64
    } else {
        kernel_dtype(args)
    };
    let kernel = program.kernel(dtype, &shapes)?;
    let mut notes = Vec::new();
    // NumPy's fast paths of `pow` in every profile; multiplication chains when approximate
    let (mut kernel, reduced) =
        strength::rewrite(&kernel, settings.profile == crate::profile::Profile::Approximate);
    if !reduced.is_empty() {
        notes.push(format!("strength: {}", strength::describe(&reduced)));
    }
    let reads_index = kernel
        .arena
        .reachable(kernel.body)
        .iter()
        .any(|&id| matches!(kernel.arena.node(id), kiln_ir::Node::Index(_)));
    if matches!(kernel.kind, KernelKind::Reduce { .. }) && reads_index {
        let mean_or_keep = program.reduction().is_some_and(|r| r.mean || r.keepdims);
        if !settings.prefix_scan {
            notes.push(format!("prefix_scan: off (profile {})", settings.profile));
        } else if mean_or_keep {
            notes.push("prefix_scan: declined: a mean or keepdims reduction".into());
        } else {
            let initial = program.reduction().and_then(|r| r.initial);
            match prefix_scan::rewrite(&kernel, initial) {
                Ok(scan) => {
                    notes.push(format!("prefix_scan: fired: {}", prefix_scan::describe(&scan)));
                    kernel = scan;
                }
                Err(why) => notes.push(format!("prefix_scan: declined: {why}")),
            }
        }
    }
    // `a*b + c` rounded once where approximate (after the prefix scan, which reads products)
    if settings.fma {
        let (fused, n) = contract::rewrite(&kernel);
        if n > 0 {
            notes.push(format!("contract: {}", contract::describe(n)));
            kernel = fused;
        }
    }
    // scans read their inputs flat: no outer loop (a broadcast input is materialised)
    let options = match kernel.kind {
        KernelKind::Scan(_) => PlanOptions { min_row: usize::MAX },
        _ => options,
    };
    let layouts: Vec<InputLayout> = args
        .iter()
        .zip(&kernel.inputs)
        .map(|(a, decl)| {
            let contiguous = a.dtype() != kernel.dtype || is_standard(a);
            InputLayout {
                shape: decl.shape.clone(),
                contiguous,
                strides: (!contiguous).then(|| in_place_strides(a, &decl.shape)).flatten(),
            }
        })
        .collect();
    let plan = BroadcastPlan::new(&kernel.shape, &layouts, options)?;
    Ok((kernel, plan, notes))
}

/// A kernel specialised for one form of inputs, readied by a backend.
#[derive(Debug)]
pub(crate) struct Specialised {
    /// Per input: dtype, shape, and whether it is C-contiguous; the strides of one that is not (the
    /// plan may read it in place with them).
    signature: Vec<(DType, Vec<usize>, bool, Vec<isize>)>,
    pub kernel: KernelIR,
    pub plan: BroadcastPlan,
    pub exe: Box<dyn Executable>,
}

impl Specialised {
    fn matches(&self, args: &[&ArrayArg<'_>]) -> bool {
        self.signature.len() == args.len()
            && self.signature.iter().zip(args).all(|((d, s, c, st), a)| {
                *d == a.dtype() && same(s, a.shape()) && *c == is_standard(a) && (*c || same(st, strides(a)))
            })
    }
}

/// The most recent specialisations of one runner.
#[derive(Debug, Default)]
pub(crate) struct SpecCache {
    entries: Mutex<Vec<Arc<Specialised>>>,
}

const SPEC_CACHE_SIZE: usize = 8;

impl SpecCache {
    /// The specialisation for `args`, made (and remembered) if it is new.
    pub(crate) fn get(
        &self,
        program: &Program,
        backend: &dyn Backend,
        args: &[&ArrayArg<'_>],
        options: PlanOptions,
        settings: Settings,
    ) -> Result<Arc<Specialised>> {
        {
            let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(hit) = entries.iter().find(|s| s.matches(args)) {
                return Ok(hit.clone());
            }
        }
        let (kernel, plan, _) = specialise(program, args, options, settings)?;
        let exe = backend.prepare(&kernel, &plan)?;
        let signature = args
            .iter()
            .map(|a| {
                let c = is_standard(a);
                let st = if c { Vec::new() } else { strides(a).to_vec() };
                (a.dtype(), a.shape().to_vec(), c, st)
            })
            .collect();
        let spec = Arc::new(Specialised {
            signature,
            kernel,
            plan,
            exe,
        });
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.insert(0, spec.clone());
        entries.truncate(SPEC_CACHE_SIZE);
        Ok(spec)
    }
}

/// The buffers of one run, as the specialisation's plan says.
pub(crate) fn buffers<'a>(spec: &Specialised, args: &[&ArrayArg<'a>]) -> Result<Buffers<'a>> {
    Ok(match spec.kernel.dtype {
        DType::F64 => Buffers::F64(prepare::<f64>(&spec.kernel, &spec.plan, args)?),
        DType::F32 => Buffers::F32(prepare::<f32>(&spec.kernel, &spec.plan, args)?),
    })
}

/// One buffer per input: the caller's memory where it is C-contiguous, or where the plan reads the
/// caller's strided view in place (per row, with the view's strides); else a copy.
fn prepare<'a, T: Float>(
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    args: &[&ArrayArg<'a>],
) -> Result<Vec<Buffer<'a, T>>> {
    args.iter()
        .zip(&plan.inputs)
        .enumerate()
        .map(|(i, (arg, input_plan))| {
            let conv = Converted::<T>::of(arg)?;
            // a rewrite may drop size-1 axes of an input: the same elements, in the same order
            let shape = kernel.inputs[i].shape.clone();
            if *input_plan == InputPlan::Materialise {
                let full = conv.view();
                let view = full.to_shape(IxDyn(&shape)).map_err(|e| {
                    Error::Output(format!(
                        "input of shape {:?} read as {shape:?}: {e}",
                        full.shape()
                    ))
                })?;
                let expanded =
                    view.broadcast(IxDyn(&kernel.shape))
                        .ok_or_else(|| kiln_ir::IrError::Broadcast {
                            left: view.shape().to_vec(),
                            right: kernel.shape.clone(),
                        })?;
                let mut data = Vec::new();
                data.try_reserve_exact(expanded.len())
                    .map_err(|_| kiln_ir::IrError::Allocation {
                        what: format!(
                            "input '{}' broadcast to {:?}",
                            kernel.inputs[i].name, kernel.shape
                        ),
                        elements: expanded.len(),
                    })?;
                data.extend(expanded.iter().copied());
                let data = BufferData::Contiguous(Cow::Owned(data));
                return Ok(Buffer {
                    data,
                    shape: kernel.shape.clone(),
                });
            }
            let data = match conv {
                Converted::View(v) => match v.to_slice() {
                    Some(s) => BufferData::Contiguous(Cow::Borrowed(s)),
                    // the planner read the view's own strides (see `in_place_strides`)
                    None if matches!(input_plan, InputPlan::PerRow { .. }) => {
                        if v.shape() != &shape[..] {
                            return Err(Error::Output(format!(
                                "input '{}': a view of shape {:?} planned as {shape:?}",
                                kernel.inputs[i].name,
                                v.shape()
                            )));
                        }
                        BufferData::Strided(v)
                    }
                    None => {
                        // a strided view the kernel reads contiguously: copied once, fallibly
                        let mut data = Vec::new();
                        data.try_reserve_exact(v.len())
                            .map_err(|_| kiln_ir::IrError::Allocation {
                                what: format!("a contiguous copy of input '{}'", kernel.inputs[i].name),
                                elements: v.len(),
                            })?;
                        data.extend(v.iter().copied());
                        BufferData::Contiguous(Cow::Owned(data))
                    }
                },
                Converted::Owned(a) => BufferData::Contiguous(Cow::Owned(a.into_raw_vec_and_offset().0)),
            };
            Ok(Buffer { data, shape })
        })
        .collect()
}
