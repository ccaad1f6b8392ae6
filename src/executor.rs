//! The executor: binds inputs by name, settles the dtype and the iteration shape, plans the
//! broadcasts, asks the backend to prepare the kernel, materialises what the plan says, and runs.
//!
//! Specialisations (the kernel, its plan and the backend's executable for one set of input dtypes,
//! shapes and layouts) are cached per runner, so running again on inputs of the same form costs no
//! planning and no compilation.

use crate::array::{ArrayArg, Converted, Float, on_view};
use crate::backend::{Backend, Buffer, BufferData, Buffers, Executable, TypedBuffer, TypedData};
use crate::error::{Error, Result};
use crate::explain::{Engine, Explained};
use crate::profile::Settings;
use crate::program::Program;
use kiln_ir::passes::{contract, prefix_scan, strength};
use kiln_ir::typed::{TypedKernel, needs_typing};
use kiln_ir::{BroadcastPlan, ElemType, InputLayout, InputPlan, KernelIR, KernelKind, Node, PlanOptions};
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
pub(crate) fn kernel_dtype(args: &[&ArrayArg<'_>]) -> ElemType {
    args.iter()
        .map(|a| a.dtype())
        .reduce(ElemType::promote_float)
        .unwrap_or(ElemType::F64)
}

/// Element-wise equality of two short slices, without a call to `memcmp` (on the hot path of every
/// run; glibc's AVX-512 `memcmp` measured about 100 ns a call here).
#[inline]
pub(crate) fn same<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && (0..a.len()).all(|i| a[i] == b[i])
}

pub(crate) fn strides<'s>(a: &'s ArrayArg<'_>) -> &'s [isize] {
    on_view!(a, v => v.strides())
}

/// Whether the argument is C-contiguous (ndarray's standard layout), computed from its shape and
/// strides without allocating (ndarray's own test builds the default strides first: this runs on
/// every call).
pub(crate) fn is_standard(a: &ArrayArg<'_>) -> bool {
    // byte strings reach a kernel in C order (`typed_buffers`: copied where they are not)
    if let ArrayArg::Bytes(_) = a {
        return true;
    }
    let (shape, strides) = on_view!(a, v => (v.shape(), v.strides()));
    standard_layout(shape, strides)
}

/// Whether a view of `shape` and (element) `strides` is C-contiguous: [`is_standard`] of its parts.
#[inline]
pub(crate) fn standard_layout(shape: &[usize], strides: &[isize]) -> bool {
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
/// row, with these strides: a run where its rows are contiguous, a strided row where its inner axes
/// step alike, a reversed, stepped or transposed last axis): None where the kernel reads it in
/// another shape (a rewrite dropped size-1 axes), which is then materialised.
fn in_place_strides(a: &ArrayArg<'_>, shape: &[usize]) -> Option<Vec<isize>> {
    let (s, strides) = on_view!(a, v => (v.shape(), v.strides()));
    same(s, shape).then(|| strides.to_vec())
}

/// A kernel specialised for its arguments: the kernel and plan, what each rewrite did (for `kiln
/// explain`), and the typed kernel where the typed path computes it ([`typing`]).
pub(crate) type Specialisation = (KernelIR, BroadcastPlan, Vec<String>, Option<TypedKernel>);

/// The path a kernel takes, by the one typing rule ([`typing`]).
#[derive(Debug)]
pub(crate) enum Path {
    /// The float path, the kernel as it is.
    Float,
    /// The float path in this dtype, each input of another type (per input: `Some` of it) read by
    /// the kernel where it is, converted as it is read ([`kiln_ir::InputDecl::stored`]).
    Stored(ElemType, Vec<Option<ElemType>>),
    /// The typed path ([`kiln_ir::typed`]), and why.
    Typed(String, Box<TypedKernel>),
}

impl Path {
    /// The float dtype a float path computes in (`kernel`'s where it is the kernel as it is);
    /// None for the typed path.
    pub(crate) fn float_dtype(&self, kernel: &KernelIR) -> Option<ElemType> {
        match self {
            Path::Float => Some(kernel.dtype),
            Path::Stored(d, _) => Some(*d),
            Path::Typed(..) => None,
        }
    }
}

/// The one typing rule of every path (a run, several outputs, a prepared handle): which path
/// computes `kernel` over inputs of `elems` ([`Path`]). Typing by NumPy 2's rules always runs. A
/// kernel with an integer or bool input takes the float path where NumPy computes it in a float
/// type reading those inputs only cast to it ([`TypedKernel::stored_inputs`]: `mean(i)`,
/// `sum(i * 0.5)`, `sin(i)`, `x32 * b`), each read converted where the kernel reads it; any other
/// (a cast, an integer operator, `i + 1`, `i > 0`) the typed path. So does a kernel of float inputs
/// whose NumPy types the float path would not give ([`TypedKernel::float_path_differs`]: `1 + 1` is
/// int64, `(a > 0) + (b > 0)` bool, `0.25 * (a < 5)` float64 beside float32 `a`; and of float32
/// inputs beside float64 ones, a result NumPy gives in float32: `a32 * (b64 > 0)`).
/// Left on the float path as before: a compound reduction of float inputs (two statistics in one
/// pass), and a kernel whose constants fold to a strong float64 ([`Program::strong_f64`]).
pub(crate) fn typing(program: &Program, kernel: &KernelIR, args: &[&ArrayArg<'_>]) -> Result<Path> {
    let elems: Vec<ElemType> = args.iter().map(|a| a.elem()).collect();
    let elems = &elems[..];
    let mean = program.reduction().is_some_and(|r| r.mean);
    let why = match elems.iter().position(|t| !t.is_float()) {
        Some(i) => Some(format!("input '{}' is {}", program.names[i], elems[i])),
        None => needs_typing(kernel),
    };
    if let Some(why) = why {
        if elems.iter().any(|t| !t.is_float())
            && needs_typing(kernel).is_none()
            && !counts_bools(kernel, elems, mean)
            && let Some(path) = stored_path(kernel, elems, mean)
        {
            return Ok(path);
        }
        return Ok(Path::Typed(why, Box::new(TypedKernel::new(kernel, elems, mean)?)));
    }
    // the float path reads float inputs in the kernel's float dtype (an f32 input beside an f64 one
    // widened as it is read, or into a copy where strided), so it is asked of them typed as that
    // dtype
    let floats = vec![kernel.dtype; elems.len()];
    // a kernel whose constants fold to a strong float64 is typed all the same, for its type errors
    // (`recip(~x) + exp(0.0)` is refused as `recip(~x)` is: the fuzz finding of 2026-12-07)
    if program.strong_f64 {
        TypedKernel::new(kernel, &floats, mean)?;
    }
    // sibling reductions of float inputs: the plan merged only bodies the float path computes as
    // each alone would ([`crate::sibling_pass`])
    if matches!(
        kernel.kind,
        KernelKind::Compound { .. } | KernelKind::Siblings { .. }
    ) || program.strong_f64
        || plainly_float(&kernel.arena)
    {
        return Ok(Path::Float);
    }
    let typed = TypedKernel::new(kernel, &floats, mean)?;
    // the float path's mean divides its sum in the float dtype (`mean(a > 0)` is float64 in both)
    let float_output = if mean { kernel.dtype } else { kernel.output_type() };
    // a float32 input beside float64 ones: the float path widens it where it is read, and its
    // results are float64; where NumPy's are float32 (`x32 * (x64 > 0)`: the float64 input only
    // compared) the typed path computes the kernel, each input read in its own type (the fuzz
    // finding of 2026-12-07: the float path gave float64 there, a several-output kernel's typed
    // code float32)
    if elems.iter().any(|&t| t != kernel.dtype) {
        let own = TypedKernel::new(kernel, elems, mean)?;
        let float_type = |o: usize| match o {
            0 => float_output,
            _ => kernel.output_type_of(o),
        };
        if let Some(o) = (0..kernel.n_outputs()).find(|&o| own.output_type_of(o) != float_type(o)) {
            let t = own.output_type_of(o);
            let why = match kernel.n_outputs() {
                1 => format!("NumPy's result is {t}"),
                _ => format!("NumPy's result {} is {t}", o + 1),
            };
            return Ok(Path::Typed(why, Box::new(own)));
        }
    }
    Ok(match typed.float_path_differs(kernel.dtype, float_output) {
        // the typed path reads each input in its own type: an f32 input beside an f64 one is
        // widened where NumPy widens it (`isinf(x32) & (x64 > 0)` reads x32 as float32)
        Some(why) if elems.iter().any(|&t| t != kernel.dtype) => {
            Path::Typed(why, Box::new(TypedKernel::new(kernel, elems, mean)?))
        }
        Some(why) => Path::Typed(why, Box::new(typed)),
        None => Path::Float,
    })
}

/// The typed kernel of a float map where a result is of another type, a bool (`x > 0`; `x*2; x >
/// 0`; `~b` of a bool `b`, which the float path reads converted), and the JIT compiles it: the
/// float path writes a logical result as 1 / 0 in the dtype, to be typed after (8 bytes a float64
/// point, then a pass over them); the typed kernel's code writes each result in its own type (a
/// bool one byte), straight into the caller's arrays. The same values: the float path is NumPy's
/// here ([`typing`] chose it, its inputs of other types only cast to the dtype), so is the typed
/// one, each input read in its own type (but for edge cases: a float32 kernel's literal too small
/// for float32, `8.7e-48 & x`, is 0 on the float path and nonzero on the typed one). So the path is
/// decided here, the same on every backend (the JIT's capability asked of `kiln_jit` directly, not
/// of the backend: the interpreter must run the kernel the JIT runs, to be its oracle; asking the
/// backend put the interpreter on the float path and the fuzz parity suite caught the edge case).
fn bool_results(kernel: &KernelIR, args: &[&ArrayArg<'_>]) -> Option<TypedKernel> {
    let own = kernel.dtype;
    if kernel.kind != KernelKind::Map || (0..kernel.n_outputs()).all(|o| kernel.output_type_of(o) == own) {
        return None;
    }
    let elems: Vec<ElemType> = args.iter().map(|a| a.elem()).collect();
    let mut typed = TypedKernel::new(kernel, &elems, false).ok()?;
    // each input read in its own type (the float path's conversions as it reads go)
    for decl in &mut typed.kernel.inputs {
        decl.stored = None;
    }
    kiln_jit::typed::why_not(&typed).is_none().then_some(typed)
}

/// Whether `kernel` over inputs of `elems` is a sum, `any`, `all`, max or min of bools alone over
/// its trailing axes (`sum(b & c)`, `any(~b)`, `sum(m & n, axis=1)`): the typed path computes it,
/// whose trailing reductions of bools fold 16 bytes a vector ([`kiln_jit::typed::bools_alone`]),
/// where the float path would read each bool converted to a float64 lane, two a vector. The same
/// values (a count is exact in either). A kept one (`sum(m & n, axis=0)`) stays on the float path,
/// which was faster there (0.66-0.70x NumPy against 0.52-0.66x typed, in int64 lanes), and so does
/// one that writes further map outputs (whose typed code keeps int64 lanes). (A transposed input
/// whose plan is not a trailing reduction runs the typed path in int64 lanes: the same values.)
fn counts_bools(kernel: &KernelIR, elems: &[ElemType], mean: bool) -> bool {
    use kiln_ir::ReduceOp::{All, Any, Max, Min, Sum};
    let KernelKind::Reduce {
        op: Sum | Any | All | Max | Min,
        ref axes,
    } = kernel.kind
    else {
        return false;
    };
    let mut axes = axes.clone();
    axes.sort_unstable();
    let rank = kernel.shape.len();
    let trailing = axes.iter().enumerate().all(|(k, &a)| a + axes.len() == rank + k);
    trailing
        && !mean
        && kernel.extra.is_empty()
        && TypedKernel::new(kernel, elems, mean).is_ok_and(|t| kiln_jit::typed::bools_alone(&t))
}

/// The float path of a kernel over integer or bool inputs, where NumPy computes it in a float type
/// reading them only cast to it ([`TypedKernel::stored_inputs`]); a compound reduction (the moments
/// of `var(i)`) where its values are, as NumPy's mean and variance of integers, float64.
fn stored_path(kernel: &KernelIR, elems: &[ElemType], mean: bool) -> Option<Path> {
    let map;
    let (typed_as, mean) = match kernel.kind {
        KernelKind::Compound {
            op: kiln_ir::CompoundOp::Moments,
            ..
        } => {
            map = KernelIR {
                kind: KernelKind::Map,
                ..kernel.clone()
            };
            (&map, true)
        }
        // sibling reductions: their values, each root a map's output, each of the float type
        KernelKind::Siblings { .. } => {
            map = KernelIR {
                kind: KernelKind::Map,
                ..kernel.clone()
            };
            (&map, false)
        }
        _ => (kernel, mean),
    };
    let typed = TypedKernel::new(typed_as, elems, mean).ok()?;
    let dtype = typed.kernel.dtype;
    let float_output = match typed_as.output_type() {
        _ if mean => dtype,
        t if t.is_float() => dtype,
        other => other,
    };
    let stored = typed.stored_inputs(dtype, float_output).ok()?;
    Some(Path::Stored(dtype, stored))
}

/// `kernel` in `dtype` reading its inputs stored as `stored` says.
fn with_stored(kernel: KernelIR, dtype: ElemType, stored: &[Option<ElemType>]) -> KernelIR {
    let mut kernel = KernelIR { dtype, ..kernel };
    for (decl, &t) in kernel.inputs.iter_mut().zip(stored) {
        decl.stored = t.filter(|&t| t.converts_into(dtype));
    }
    kernel
}

/// `kernel`, after a note for `kiln explain` of the inputs it reads stored in another type.
fn stored_note(kernel: KernelIR, notes: &mut Vec<String>) -> KernelIR {
    let read: Vec<String> = kernel
        .inputs
        .iter()
        .filter_map(|d| d.stored.map(|t| format!("'{}' {t}", d.name)))
        .collect();
    if !read.is_empty() {
        notes.push(format!(
            "stored: the {} kernel reads {} in place, converting each element as it is read",
            kernel.dtype.short(),
            read.join(", ")
        ));
    }
    kernel
}

/// The float dtype `program` over `args` computes in, or None where it is a typed kernel: the one
/// rule of [`typing`] (a kernel that does not type, which its own run reports,
/// counts as typed: it runs alone).
pub(crate) fn float_path_of(program: &crate::program::Program, args: &[&ArrayArg<'_>]) -> Option<ElemType> {
    if args.iter().all(|a| a.elem().is_float()) && plainly_float(&program.arena) {
        return Some(kernel_dtype(args));
    }
    let kernel = kernel_for(program, args).ok()?;
    typing(program, &kernel, args).ok()?.float_dtype(&kernel)
}

/// Whether every node of `arena` is a float input or literal or an operation NumPy computes in the
/// floats' own type (no integer literal, index, cast, comparison, logical operator or `where`):
/// over float inputs the float path then computes NumPy's types, which [`typing`] need not check
/// (a cheap test: [`crate::many`] asks at every call).
pub(crate) fn plainly_float(arena: &kiln_ir::ExprArena) -> bool {
    (0..arena.len()).all(|i| float_node(*arena.node_at(i), false))
}

/// Whether `node` is computed in the float dtype whatever else the kernel holds: an input, a float
/// literal, a float operation (not logical, not integer), and where `weak_ints`, an integer
/// literal (a weak Python int beside the float values it meets: `x * 2`).
pub(crate) fn float_node(node: Node, weak_ints: bool) -> bool {
    match node {
        Node::Input(_) | Node::Literal(_) | Node::Fma(..) => true,
        // (the complex opcodes are typed: a complex number, or its parts)
        Node::Unary(op, _) => {
            !op.is_logical() && op != kiln_ir::UnaryOp::Invert && !kiln_ir::UnaryOp::COMPLEX.contains(&op)
        }
        Node::Binary(op, _, _) => {
            !op.is_logical() && !kiln_ir::BinaryOp::INTEGER.contains(&op) && op != kiln_ir::BinaryOp::Complex
        }
        Node::Int(_) => weak_ints,
        Node::Index(_) | Node::Cast(..) | Node::Where(..) | Node::Bytes(_) => false,
    }
}

/// `program`'s kernel over `args`: their broadcast shape, in their float dtype (f64 where its
/// constants fold to a strong float64).
pub(crate) fn kernel_for(program: &Program, args: &[&ArrayArg<'_>]) -> Result<KernelIR> {
    let shapes: Vec<Vec<usize>> = args.iter().map(|a| a.shape().to_vec()).collect();
    let dtype = if program.strong_f64 {
        ElemType::F64
    } else {
        kernel_dtype(args)
    };
    program.kernel(dtype, &shapes)
}

/// The kernel and its plan for these arguments, after the rewrites `settings` allow; what each
/// rewrite did, for `kiln explain`. A typed kernel ([`typing`]) takes no rewrites (but a float map
/// with a bool result, [`bool_results`], which takes the float path's literal and strength
/// rewrites first): it is compiled by the JIT in its values' own types where it compiles, else run
/// on the typed interpreter (see [`Backend::prepare_typed`]).
pub(crate) fn specialise(
    program: &Program,
    args: &[&ArrayArg<'_>],
    options: PlanOptions,
    settings: Settings,
    backend: &dyn Backend,
) -> Result<Specialisation> {
    let kernel = kernel_for(program, args)?;
    let mut notes = Vec::new();
    let kernel = match typing(program, &kernel, args)? {
        Path::Float => {
            // a float32 input of a float64 kernel is read where it is, widened (exactly) as it is
            // read
            let stored: Vec<Option<ElemType>> = args
                .iter()
                .map(|a| {
                    (kernel.dtype == ElemType::F64 && a.elem() == ElemType::F32).then_some(ElemType::F32)
                })
                .collect();
            let dtype = kernel.dtype;
            with_stored(kernel, dtype, &stored)
        }
        Path::Stored(dtype, stored) => with_stored(kernel, dtype, &stored),
        Path::Typed(why, typed) => return typed_specialisation(*typed, &why, args, notes, backend),
    };
    // a float kernel reads an integer literal as the nearest f64, as every float literal
    let kernel = kiln_ir::passes::rebuild(&kernel, |arena, _, node| match node {
        Node::Int(v) => Some(arena.literal(v as f64)),
        _ => None,
    })
    .unwrap_or(kernel);
    // NumPy's fast paths of `pow` in every profile; multiplication chains when approximate
    let (mut kernel, reduced) =
        strength::rewrite(&kernel, settings.profile == crate::profile::Profile::Approximate);
    if !reduced.is_empty() {
        notes.push(format!("strength: {}", strength::describe(&reduced)));
    }
    if let Some(typed) = bool_results(&kernel, args) {
        let why = "a map with a bool result, each result written in its own type";
        return typed_specialisation(typed, why, args, notes, backend);
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
    let layouts: Vec<InputLayout> = args
        .iter()
        .zip(&kernel.inputs)
        .map(|(a, decl)| {
            // an input of another type is read where it is (stored), or converted into a copy
            let converted = a.elem() != kernel.dtype && decl.stored.is_none();
            let contiguous = converted || is_standard(a);
            InputLayout {
                shape: decl.shape.clone(),
                contiguous,
                strides: (!contiguous).then(|| in_place_strides(a, &decl.shape)).flatten(),
            }
        })
        .collect();
    let plan = match kernel.kind {
        KernelKind::Scan(scan) => scan_plan(&kernel, &scan, &layouts, options, &mut notes)?,
        _ => BroadcastPlan::new(&kernel.shape, &layouts, options)?,
    };
    // an input the plan materialises is converted into the copy: the kernel reads the dtype there
    for (decl, p) in kernel.inputs.iter_mut().zip(&plan.inputs) {
        decl.stored = decl.stored.filter(|_| p.reads_stored());
    }
    let kernel = stored_note(kernel, &mut notes);
    Ok((kernel, plan, notes, None))
}

/// The specialisation of a kernel the typed path computes (see [`typing`]); its first note is why
/// the kernel is typed, `why` (which [`explained`] says with the engine that runs it). Its plan is
/// the one it runs by: `backend`'s, one that reads every input where it is, C-contiguous or a
/// strided view of the shape the kernel declares ([`Backend::typed_plan`]: the JIT's compiled code
/// reads no converted copy), else the planner's first, which copies (the typed interpreter then
/// runs the kernel).
fn typed_specialisation(
    typed: TypedKernel,
    why: &str,
    args: &[&ArrayArg<'_>],
    mut notes: Vec<String>,
    backend: &dyn Backend,
) -> Result<Specialisation> {
    // (said with the engine that runs it by `explained`), before the rewrites' notes
    notes.insert(0, why.to_string());
    let k = &typed.kernel;
    let layouts: Vec<InputLayout> = args
        .iter()
        .zip(&k.inputs)
        .map(|(a, decl)| {
            let strides = in_place_view(&decl.shape, a);
            InputLayout {
                shape: decl.shape.clone(),
                contiguous: strides.is_none(),
                strides,
            }
        })
        .collect();
    let plan = match backend.typed_plan(k, &layouts)? {
        Some(plan) => plan,
        None if matches!(k.kind, KernelKind::Scan(_)) => {
            BroadcastPlan::with_outer_axes(&k.shape, &layouts, 0)?
        }
        None => BroadcastPlan::new(&k.shape, &layouts, PlanOptions::default())?,
    };
    Ok((typed.kernel.clone(), plan, notes, Some(typed)))
}

/// The plan of a float scan (see jit/src/scan.rs): flat (every point one row) where that copies
/// nothing, else the per-row plan ([`kiln_ir::Scan::row_axes`]: one row per line, or one or more per
/// step of a block, or rows of the flattened array's one line) that copies fewest inputs, of the
/// fewest outer axes among those, where that is fewer than the flat plan's and its rows hold at
/// least `min_row` points (shorter rows cost an outer index per few points: a copy is cheaper, as
/// for maps) and, for a sum or product of the flattened array, whole vectors (so the bits are the
/// flat walk's). Says in `notes` why a view is still copied.
fn scan_plan(
    kernel: &KernelIR,
    scan: &kiln_ir::Scan,
    layouts: &[InputLayout],
    options: PlanOptions,
    notes: &mut Vec<String>,
) -> Result<BroadcastPlan> {
    let shape = &kernel.shape;
    let mut plan = BroadcastPlan::with_outer_axes(shape, layouts, 0)?;
    let rows = scan.row_axes(shape);
    let mut short = None;
    // a flattened array's line walked row by row keeps the flat walk's vectors (and so its bits)
    // only where every row holds whole vectors: a sum or product reassociates within a vector (see
    // jit/src/scan.rs); max and min give the same bits in any grouping
    let lanes = 16 / kernel.dtype.size();
    let mut split = None;
    if plan.copies() > 0 {
        for k in rows.clone().filter(|&k| k > 0) {
            let candidate = BroadcastPlan::with_outer_axes(shape, layouts, k)?;
            if candidate.copies() >= plan.copies() {
                continue;
            }
            if scan.axis.is_none() && scan.op.wide() && candidate.row_len % lanes != 0 {
                split.get_or_insert(candidate.row_len);
            } else if candidate.row_len >= options.min_row {
                plan = candidate;
            } else if short.is_none() {
                short = Some(candidate.row_len);
            }
        }
    }
    for ((layout, decl), input) in layouts.iter().zip(&kernel.inputs).zip(&plan.inputs) {
        if layout.contiguous || *input != InputPlan::Materialise {
            continue;
        }
        let why = match (short, split) {
            (_, Some(len)) => format!(
                "read in place, its rows would be of {len} points, not whole vectors of {lanes}: the \
                 sum's vectors would straddle rows and group the flattened array otherwise than the \
                 copy's walk (the copy keeps its bits)"
            ),
            (Some(len), None) => format!(
                "read in place, its rows would be of {len} points, shorter than min_row {} (an outer \
                 loop around so few points costs more than the copy)",
                options.min_row
            ),
            (None, None) if rows.clone().all(|k| k == 0) => "the scan reads the whole array as one \
                row (its leading axis of lines), and this view is not one run of strided elements"
                .to_string(),
            (None, None) => "it is read neither as one run of strided elements over the whole array nor per \
                     row of the scan's lines or blocks"
                .to_string(),
        };
        notes.push(format!("scan: input '{}' copied: {why}", decl.name));
    }
    Ok(plan)
}

/// A kernel as `kiln explain` shows it, on `backend`:
/// its engine ([`Engine`]), and for a typed kernel what its specialisation noted first (why the
/// kernel is typed: [`typed_specialisation`]) said in the backend's note ([`Backend::typed_note`]), with
/// the typed kernel.
pub(crate) fn explained(
    kernel: KernelIR,
    plan: BroadcastPlan,
    mut notes: Vec<String>,
    typed: Option<&TypedKernel>,
    backend: &dyn Backend,
) -> Explained {
    let (engine, engine_note) = match typed {
        None => (Engine::Float, Some(backend.float_note(&kernel))),
        Some(t) => {
            let why = if notes.is_empty() {
                String::new()
            } else {
                notes.remove(0)
            };
            let (compiled, note) = backend.typed_note(t, &plan, &why);
            let engine = if compiled {
                Engine::TypedCompiled
            } else {
                Engine::TypedInterpreted
            };
            let note = format!("{note}; the typed kernel:\n{}", t.to_string().trim_end());
            (engine, Some(note))
        }
    };
    Explained {
        kernel,
        plan,
        rewrites: notes,
        engine,
        engine_note,
        typed: typed.cloned(),
    }
}

/// A kernel specialised for one form of inputs, readied by a backend.
#[derive(Debug)]
pub(crate) struct Specialised {
    /// Per input: dtype, shape, and whether it is C-contiguous; the strides of one that is not (the
    /// plan may read it in place with them).
    signature: Signature,
    pub kernel: KernelIR,
    /// The typed kernel, where the kernel is one (compiled by the JIT, or run on
    /// kiln-ir's typed interpreter where that declines: [`Backend::prepare_typed`]).
    pub typed: Option<std::sync::Arc<TypedKernel>>,
    pub plan: BroadcastPlan,
    pub exe: Box<dyn Executable>,
}

impl Specialised {
    /// The element type of the kernel's result: the typed kernel's where it is one (NumPy's), the
    /// float kernel's otherwise.
    pub(crate) fn output_type(&self) -> ElemType {
        match &self.typed {
            Some(t) => t.output_type(),
            None => self.kernel.output_type(),
        }
    }

    fn matches(&self, args: &[&ArrayArg<'_>]) -> bool {
        fits(&self.signature, args)
    }
}

/// The one cache of a stage's specialisations: the kernels readied for the last few forms of its
/// inputs, of the stage's own program (part 0) and of the reductions a compound or sibling stage
/// merged (part 1, 2, ...: where the stage runs apart), and, per form, whether the stage runs in
/// one pass or apart ([`SpecCache::decided`]): each decided once, when the form is first seen.
#[derive(Debug, Default)]
pub(crate) struct SpecCache {
    entries: Mutex<Vec<(usize, Arc<Specialised>)>>,
    /// Per form of the stage's arguments (dtype, shape and layout of each): its plan decision.
    decisions: Mutex<Vec<(Signature, Passes)>>,
}

/// How a compound or sibling stage runs for one form of its arguments, decided once per form
/// ([`SpecCache::decided`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Passes {
    /// In one pass, as planned (any other stage too).
    One,
    /// As the reductions it merged, one after the other, over an iteration space of `shape`
    /// reducing `axes`: integer or bool values (the typed path has no such form), or axes the
    /// backend does not reduce in one pass.
    Apart {
        /// The iteration shape.
        shape: Vec<usize>,
        /// The reduced axes, sorted.
        axes: Vec<usize>,
    },
    /// The maps a fused kernel merged, each run alone: for these arguments their iteration shapes
    /// or types differ (`Compiled::fuses`).
    Alone,
}

/// Per input: dtype, shape, whether C-contiguous, and the strides of one that is not.
type Signature = Vec<(ElemType, Vec<usize>, bool, Vec<isize>)>;

/// The signature of `args`.
fn signature(args: &[&ArrayArg<'_>]) -> Signature {
    args.iter()
        .map(|a| {
            let c = is_standard(a);
            let st = if c { Vec::new() } else { strides(a).to_vec() };
            (a.elem(), a.shape().to_vec(), c, st)
        })
        .collect()
}

/// Whether `args` have the form `sig`.
fn fits(sig: &Signature, args: &[&ArrayArg<'_>]) -> bool {
    sig.len() == args.len()
        && sig.iter().zip(args).all(|((d, s, c, st), a)| {
            *d == a.elem() && same(s, a.shape()) && *c == is_standard(a) && (*c || same(st, strides(a)))
        })
}

/// At most this many specialisations per part of a stage, and plan decisions per stage.
const SPEC_CACHE_SIZE: usize = 8;

impl SpecCache {
    /// The specialisation of the stage's own program for `args`, made (and remembered) if new.
    pub(crate) fn get(
        &self,
        program: &Program,
        backend: &dyn Backend,
        args: &[&ArrayArg<'_>],
        options: PlanOptions,
        settings: Settings,
    ) -> Result<Arc<Specialised>> {
        self.get_part(0, program, backend, args, options, settings)
    }

    /// The specialisation of part `part` (0: the stage's program; `i` > 0: the `i`-th reduction a
    /// compound or sibling stage merged, `program`) for `args`, made (and remembered) if new.
    pub(crate) fn get_part(
        &self,
        part: usize,
        program: &Program,
        backend: &dyn Backend,
        args: &[&ArrayArg<'_>],
        options: PlanOptions,
        settings: Settings,
    ) -> Result<Arc<Specialised>> {
        if let Some(hit) = self.find(part, args) {
            return Ok(hit);
        }
        self.keep(
            part,
            specialise(program, args, options, settings, backend)?,
            backend,
            args,
        )
    }

    /// The kept specialisation of part `part` for `args`, if there is one.
    fn find(&self, part: usize, args: &[&ArrayArg<'_>]) -> Option<Arc<Specialised>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .iter()
            .find(|(p, s)| *p == part && s.matches(args))
            .map(|(_, hit)| hit.clone())
    }

    /// The specialisation `made` of part `part` for `args` (see [`SpecCache::get_part`]), readied
    /// by `backend` and remembered (unless one is already): for a caller that made it to decide on
    /// it first.
    pub(crate) fn keep(
        &self,
        part: usize,
        made: Specialisation,
        backend: &dyn Backend,
        args: &[&ArrayArg<'_>],
    ) -> Result<Arc<Specialised>> {
        if let Some(hit) = self.find(part, args) {
            return Ok(hit);
        }
        let (kernel, plan, _, typed) = made;
        let typed = typed.map(std::sync::Arc::new);
        let exe: Box<dyn Executable> = match &typed {
            Some(t) => backend.prepare_typed(t, &plan)?,
            None => backend.prepare(&kernel, &plan)?,
        };
        let spec = Arc::new(Specialised {
            signature: signature(args),
            kernel,
            typed,
            plan,
            exe,
        });
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.insert(0, (part, spec.clone()));
        // the oldest of this part beyond the bound goes
        if let Some(old) = entries
            .iter()
            .enumerate()
            .filter(|(_, (p, _))| *p == part)
            .nth(SPEC_CACHE_SIZE)
            .map(|(i, _)| i)
        {
            entries.remove(old);
        }
        Ok(spec)
    }

    /// The stage's plan decision for arguments of the form of `args`: `decide`'s, made once per
    /// form and remembered (the caller's buffers are still checked at every call: this decides
    /// only how the stage runs).
    pub(crate) fn decided(
        &self,
        args: &[&ArrayArg<'_>],
        decide: impl FnOnce() -> Result<Passes>,
    ) -> Result<Passes> {
        {
            let kept = self.decisions.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, d)) = kept.iter().find(|(sig, _)| fits(sig, args)) {
                return Ok(d.clone());
            }
        }
        let d = decide()?;
        let mut kept = self.decisions.lock().unwrap_or_else(|e| e.into_inner());
        kept.insert(0, (signature(args), d.clone()));
        kept.truncate(SPEC_CACHE_SIZE);
        Ok(d)
    }
}

/// The buffers of one run, as the specialisation's plan says.
pub(crate) fn buffers<'a>(spec: &Specialised, args: &[&ArrayArg<'a>]) -> Result<Buffers<'a>> {
    if spec.typed.is_some() {
        return typed_buffers(&spec.kernel, args).map(Buffers::Typed);
    }
    Ok(match spec.kernel.dtype {
        ElemType::F64 => Buffers::F64(prepare::<f64>(&spec.kernel, &spec.plan, args)?),
        ElemType::F32 => Buffers::F32(prepare::<f32>(&spec.kernel, &spec.plan, args)?),
        _ => unreachable!("only float types (f32, f64) reach here"),
    })
}

/// The element strides with which a typed kernel reads an input in place ([`TypedData::View`]): a
/// strided view of the shape the kernel declares for it (the compiled code reads it with them; the
/// specialisation is for them); None where it is C-contiguous, or copied (a view whose shape the
/// kernel rewrote, dropping axes of one element).
fn in_place_view(decl: &[usize], a: &ArrayArg<'_>) -> Option<Vec<isize>> {
    (!is_standard(a)).then(|| in_place_strides(a, decl)).flatten()
}

/// A typed kernel's inputs, read in the shape the kernel declares: the caller's memory where it is
/// C-contiguous or a strided view of that shape (read in place, see [`in_place_view`]), else a
/// copy in C order.
fn typed_buffers<'a>(kernel: &KernelIR, args: &[&ArrayArg<'a>]) -> Result<Vec<TypedBuffer<'a>>> {
    fn view<'a, T: Copy>(v: &crate::view::View<'a, T>, name: &str) -> Result<Cow<'a, [T]>> {
        if let Some(s) = v.to_slice() {
            return Ok(Cow::Borrowed(s));
        }
        let mut data = Vec::new();
        data.try_reserve_exact(v.len())
            .map_err(|_| kiln_ir::IrError::Allocation {
                what: format!("a copy of input '{name}'"),
                elements: v.len(),
            })?;
        data.extend(v.to_dyn().iter().copied());
        Ok(Cow::Owned(data))
    }
    args.iter()
        .zip(&kernel.inputs)
        .map(|(a, decl)| {
            let n = &decl.name;
            if let ArrayArg::Bytes(s) = a {
                // byte strings are read in C order
                return Ok(TypedBuffer {
                    data: TypedData::Bytes(s.c_order()?, s.width),
                    shape: decl.shape.clone(),
                });
            }
            if in_place_view(&decl.shape, a).is_some() {
                use kiln_jit::TypedView;
                let data = TypedData::View(match a {
                    ArrayArg::Bool(v) => TypedView::Bool(v.to_dyn()),
                    ArrayArg::I32(v) => TypedView::I32(v.to_dyn()),
                    ArrayArg::I64(v) => TypedView::I64(v.to_dyn()),
                    ArrayArg::F32(v) => TypedView::F32(v.to_dyn()),
                    ArrayArg::F64(v) => TypedView::F64(v.to_dyn()),
                    ArrayArg::C64(v) => TypedView::C64(v.to_dyn()),
                    ArrayArg::C128(v) => TypedView::C128(v.to_dyn()),
                    ArrayArg::Bytes(_) => unreachable!("byte strings are read in C order above"),
                });
                return Ok(TypedBuffer {
                    data,
                    shape: decl.shape.clone(),
                });
            }
            let data = match a {
                ArrayArg::Bool(v) => TypedData::Bool(view(v, n)?),
                ArrayArg::I32(v) => TypedData::I32(view(v, n)?),
                ArrayArg::I64(v) => TypedData::I64(view(v, n)?),
                ArrayArg::F32(v) => TypedData::F32(view(v, n)?),
                ArrayArg::F64(v) => TypedData::F64(view(v, n)?),
                ArrayArg::C64(v) => TypedData::C64(view(v, n)?),
                ArrayArg::C128(v) => TypedData::C128(view(v, n)?),
                ArrayArg::Bytes(_) => unreachable!("byte strings are read in C order above"),
            };
            Ok(TypedBuffer {
                data,
                shape: decl.shape.clone(),
            })
        })
        .collect()
}

/// Appends the elements of `v` in C order, row by row along its last axis: a one-dimensional
/// strided loop per row rather than a dynamic-rank index per element (which cost about 50 ns an
/// element on a transposed 1000x1000 array, against about 10 ns).
fn extend_c_order<T: Copy>(data: &mut Vec<T>, v: &ndarray::ArrayViewD<'_, T>) {
    if v.ndim() == 0 {
        data.extend(v.iter().copied());
        return;
    }
    for row in v.rows() {
        data.extend(row.iter().copied());
    }
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
            // `specialise` keeps `stored` only where the plan reads the input in place
            if kernel.inputs[i].stored.is_some() {
                let per_row = matches!(input_plan, InputPlan::PerRow { .. });
                return Ok(Buffer {
                    data: BufferData::Stored(stored_elements(arg, &kernel.inputs[i], per_row)?),
                    shape: kernel.inputs[i].shape.clone(),
                });
            }
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
                extend_c_order(&mut data, &expanded);
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
                        extend_c_order(&mut data, &v);
                        BufferData::Contiguous(Cow::Owned(data))
                    }
                },
                Converted::Owned(a) => BufferData::Contiguous(Cow::Owned(a.into_raw_vec_and_offset().0)),
            };
            Ok(Buffer { data, shape })
        })
        .collect()
}

/// The elements of an input the kernel reads in their own type ([`kiln_ir::InputDecl::stored`]):
/// C-contiguous, or the caller's view where the plan reads it per row with the view's strides
/// (`per_row`; kiln-jit checks them against the plan).
fn stored_elements<'a>(
    arg: &ArrayArg<'a>,
    decl: &kiln_ir::InputDecl,
    per_row: bool,
) -> Result<kiln_jit::Stored<'a>> {
    match stored_of(arg) {
        Some(kiln_jit::Stored::View(_)) if !(per_row && arg.shape() == &decl.shape[..]) => {
            Err(Error::Output(format!(
                "input '{}' is read in place but is neither C-contiguous nor read per row",
                decl.name
            )))
        }
        Some(s) => Ok(s),
        None => Err(Error::Output(format!(
            "input '{}' of byte strings is read in place but is not C-contiguous",
            decl.name
        ))),
    }
}

/// An input's elements in their own type, as compiled code reads an input stored in another type
/// than its kernel's lanes ([`kiln_jit::Stored`]), without a copy: the caller's elements where
/// they are C-contiguous, else its view (read in place where the plan reads it per row with the
/// view's strides); byte strings where they lie in C order from the start of their memory (None
/// otherwise: they are read from a copy).
pub(crate) fn stored_of<'a>(arg: &ArrayArg<'a>) -> Option<kiln_jit::Stored<'a>> {
    use kiln_jit::{Stored, TypedView};
    macro_rules! slice_or_view {
        ($v:expr, $t:ident) => {
            match $v.to_slice() {
                Some(s) => Stored::from(s),
                None => Stored::View(TypedView::$t($v.to_dyn())),
            }
        };
    }
    Some(match arg {
        ArrayArg::Bool(v) => slice_or_view!(v, Bool),
        ArrayArg::I32(v) => slice_or_view!(v, I32),
        ArrayArg::I64(v) => slice_or_view!(v, I64),
        ArrayArg::F32(v) => slice_or_view!(v, F32),
        ArrayArg::F64(v) => slice_or_view!(v, F64),
        ArrayArg::C64(v) => slice_or_view!(v, C64),
        ArrayArg::C128(v) => slice_or_view!(v, C128),
        ArrayArg::Bytes(s) => Stored::Bytes(s.in_c_order()?, s.width),
    })
}
