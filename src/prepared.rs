//! [`Prepared`]: a runner bound once to its inputs' names, dtypes and shapes, called by position.
//!
//! A call by name has to find each name, look the specialisation up in the runner's cache and walk
//! the plan's stages: about half a microsecond, which is the whole cost of a kernel over a hundred
//! elements (the runner therefore keeps handles of its recent signatures, `src/bindings.rs`, and
//! calls them). A [`Prepared`] handle does the naming, the specialisation and the
//! compilation once ([`FusedRunner::prepared`](crate::FusedRunner::prepared)); a call ([`Prepared::run_into`]) passes the inputs in
//! the order they were bound and the output to write, and checks only their count, dtypes and shapes
//! before it calls the compiled code.
//!
//! The fast path (no name lookup, no lock, no allocation, no thread pool below the runner's
//! threshold) is taken by a one-kernel expression whose kernel is a map, a scan or a reduction
//! compiled by the JIT, float or typed (integer, bool, complex and byte-string values), where every
//! input has the type and layout it was bound with (a C-contiguous array, or a view of the same
//! strides the plan reads in place): the executable's direct call ([`crate::Executable::direct`]),
//! inputs of the compiled kernel's lanes as slices or views and every other type as its own
//! elements. [`Prepared::run`] takes it too, into a fresh result, and [`Prepared::run_into_out`]
//! into a buffer of the result's type. Byte strings are read in place at any address. An
//! expression of several kernels runs stage by stage, each kernel by a handle of its own bound to
//! its arguments' forms (`prepared/staged.rs`: compound and sibling stages too, by one handle or
//! as their reductions; the stage loop only for typed sibling reductions over many points and
//! contractions). Everything else (the interpreter, a typed kernel the typed interpreter runs,
//! several results) runs through the runner's own stage loop, still without names.
//!
//! A handle bound to Fortran or transposed inputs that share one axis order runs in memory order
//! (see [`crate::memory_order`]): it holds the permutation and a handle of the remapped plan bound to
//! the permuted views (C-contiguous: the fast path where it applies), and a call permutes its inputs
//! (views, no copy), runs that handle, and gives the result in the inputs' layout.

use crate::Reduction;
use crate::array::{ArrayArg, Element, Float, Output, on_view};
use crate::backend::OutSlice;
use crate::compiled::{Compiled, MemoryRun};
use crate::error::{Error, Result};
use crate::executor::{Specialised, bind, is_standard, same, standard_layout, strides};
use kiln_ir::{BroadcastPlan, ElemType, InputPlan, KernelIR, KernelKind, Start};
use kiln_jit::{InputRef, Stored};
use ndarray::{ArrayViewMut, Dimension};
use std::sync::Arc;

mod many;
mod staged;
pub(crate) use many::{OutArrays, assign_view};

/// Inputs up to this count are reordered on the stack (more take one allocation per call).
const STACK_INPUTS: usize = 16;

/// A call's inputs by position: arrays (a handle's own call), or named arrays in the order the
/// handle was bound with (a runner's call that found its binding: see [`crate::bindings`]).
pub(crate) trait Args<'a> {
    /// How many inputs the call passes.
    fn count(&self) -> usize;
    /// Input `i`.
    fn at(&self, i: usize) -> &ArrayArg<'a>;
    /// Input `i`'s elements, where it is a C-contiguous array of `L` (the serial paths' inputs).
    fn slice<L: Float>(&self, i: usize) -> Option<&'a [L]> {
        L::slice_of(self.at(i))
    }
    /// Input `i` as the direct call in lanes of `L` reads it ([`direct_input`]).
    fn direct<L: Float>(&self, i: usize) -> Option<InputRef<'a, L>> {
        direct_input::<L>(self.at(i))
    }
    /// Whether input `i` is laid out as `f` was bound: C-contiguous, or with the same strides.
    fn laid_out(&self, i: usize, f: &Form) -> bool {
        let a = self.at(i);
        f.standard == is_standard(a) && (f.standard || same(strides(a), &f.strides))
    }
}

impl<'a> Args<'a> for [ArrayArg<'a>] {
    fn count(&self) -> usize {
        self.len()
    }
    fn at(&self, i: usize) -> &ArrayArg<'a> {
        &self[i]
    }
}

impl<'a> Args<'a> for [(&str, ArrayArg<'a>)] {
    fn count(&self) -> usize {
        self.len()
    }
    fn at(&self, i: usize) -> &ArrayArg<'a> {
        &self[i].1
    }
}

/// A call's inputs given as their own elements in C order ([`Stored`]), checked by
/// [`Prepared::check_stored`] (the bound count, each of its bound type and element count, none a
/// view): the serial and direct paths read them as they are; a path that needs arrays (the
/// runner's general run, memory order) views them in their bound shapes, once per call, a bool
/// input holding bytes other than 0 and 1 from its copy in `copies` (true where nonzero, as
/// compiled code reads it: a Rust `bool` may hold no other byte).
pub(crate) struct StoredArgs<'s, 'a> {
    stored: &'s [Stored<'a>],
    forms: &'s [Form],
    copies: &'s BoolCopies,
    arrays: std::cell::OnceCell<Vec<ArrayArg<'s>>>,
}

/// The truths of a call's bool inputs that hold bytes other than 0 and 1 (None for every other
/// input), made where a path views the inputs as arrays ([`StoredArgs`]), at most once a call.
#[derive(Default)]
pub(crate) struct BoolCopies(std::cell::OnceCell<Vec<Option<Vec<bool>>>>);

impl<'s, 'a> StoredArgs<'s, 'a> {
    /// `stored`, checked against `forms` by [`Prepared::check_stored`], its bools copied into
    /// `copies` where a path views them and must.
    pub(crate) fn new(stored: &'s [Stored<'a>], forms: &'s [Form], copies: &'s BoolCopies) -> Self {
        StoredArgs {
            stored,
            forms,
            copies,
            arrays: std::cell::OnceCell::new(),
        }
    }
}

impl<'s, 'a: 's> Args<'s> for StoredArgs<'s, 'a> {
    fn count(&self) -> usize {
        self.stored.len()
    }
    fn at(&self, i: usize) -> &ArrayArg<'s> {
        let arrays = self.arrays.get_or_init(|| {
            let copies = self.copies.0.get_or_init(|| {
                self.stored
                    .iter()
                    .map(|s| match s {
                        Stored::Bool(d) if Stored::as_bools(d).is_none() => {
                            Some(d.iter().map(|&b| b != 0).collect())
                        }
                        _ => None,
                    })
                    .collect()
            });
            self.stored
                .iter()
                .zip(self.forms)
                .zip(copies)
                // check_stored holds every input to its form's type and element count, and
                // refuses views, so each is an array of its bound shape (a bool input's bytes
                // all 0 or 1 where it has no copy)
                .map(|((s, f), copy)| {
                    let s = match copy {
                        Some(c) => Stored::bools(c),
                        None => s.view(),
                    };
                    array_of(&s, &f.shape).expect("inputs checked by check_stored")
                })
                .collect()
        });
        &arrays[i]
    }
    fn slice<L: Float>(&self, i: usize) -> Option<&'s [L]> {
        L::stored_slice(&self.stored[i])
    }
    fn direct<L: Float>(&self, i: usize) -> Option<InputRef<'s, L>> {
        let stored: &'s [Stored<'a>] = self.stored;
        Some(stored_input::<L>(&stored[i].view()))
    }
    fn laid_out(&self, _: usize, f: &Form) -> bool {
        // elements in C order: as bound where the input was bound C-contiguous
        f.standard
    }
}

/// One input as it was bound: name, dtype, shape, and whether it was C-contiguous.
#[derive(Debug, Clone)]
pub(crate) struct Form {
    pub(crate) name: String,
    pub(crate) dtype: kiln_ir::ElemType,
    pub(crate) shape: Vec<usize>,
    /// The element count of `shape`.
    pub(crate) len: usize,
    pub(crate) standard: bool,
    /// The element strides of one that was not (the plan may read it in place with them).
    strides: Vec<isize>,
}

impl Form {
    /// Whether input `name` of a call is `a` of this form: the same name, dtype, shape and layout
    /// (C-contiguous, or the same strides).
    #[inline]
    fn accepts(&self, name: &str, a: &ArrayArg<'_>) -> bool {
        same(name.as_bytes(), self.name.as_bytes()) && self.fits(a)
    }

    /// [`Form::accepts`] of an update's target, a typed view (compared as it is: no [`ArrayArg`]
    /// made of it).
    #[inline]
    fn accepts_target(&self, name: &str, (elem, shape, strides): (ElemType, &[usize], &[isize])) -> bool {
        same(name.as_bytes(), self.name.as_bytes())
            && elem == self.dtype
            && same(shape, &self.shape)
            && (same(strides, &self.strides) || (self.standard && standard_layout(shape, strides)))
    }

    /// Whether `a` has this form's dtype, shape and layout. The strides it was bound with are the
    /// quick test: the same shape with the same strides is the same layout; other strides are one
    /// only where both are C-contiguous (a length-1 axis may have any stride).
    #[inline]
    fn fits(&self, a: &ArrayArg<'_>) -> bool {
        let (shape, strides) = on_view!(a, v => (v.shape(), v.strides()));
        a.elem() == self.dtype
            && same(shape, &self.shape)
            && (same(strides, &self.strides) || (self.standard && is_standard(a)))
    }
}

/// A [`FusedRunner`](crate::FusedRunner) bound to the names, dtypes and shapes of its inputs: each call passes the inputs
/// by position. See the module doc for what a call costs.
///
/// ```
/// use kiln::{ArrayArg, FusedRunner};
/// use ndarray::Array1;
/// let runner = FusedRunner::compile_text("a*x + y")?;
/// let (x, y) = (Array1::<f64>::ones(100), Array1::<f64>::zeros(100));
/// let h = runner.prepared(&[("x", (&x).into()), ("y", (&y).into()), ("a", (&x).into())])?;
/// let mut out = Array1::<f64>::zeros(100);
/// for _ in 0..3 {
///     h.run_into(&[(&x).into(), (&y).into(), (&x).into()], out.view_mut())?;
/// }
/// assert_eq!(out[0], 1.0);
/// # Ok::<(), kiln::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Prepared {
    pub(crate) runner: Compiled,
    /// The inputs in the order of a call.
    pub(crate) forms: Vec<Form>,
    /// For each of the runner's inputs (in [`FusedRunner::input_names`](crate::FusedRunner::input_names) order), its position in a call.
    pub(crate) order: Vec<usize>,
    /// The calls of several results (and of in-place updates): see prepared/many.rs.
    pub(crate) many: Arc<many::ManyBinding>,
    /// The one kernel's specialisation, where the fast path applies (see the module doc).
    pub(crate) direct: Option<Arc<Specialised>>,
    /// The float dtype of the direct call's inputs (the compiled kernel's lanes: inputs of other
    /// types are given in their own, [`InputRef::Stored`]); meaningful where `direct` is some.
    pub(crate) lanes: kiln_ir::ElemType,
    /// The points of the direct kernel's iteration shape, computed when prepared (`None` where there
    /// is no direct kernel, or its size overflows: then each call computes it and reports that).
    pub(crate) direct_points: Option<usize>,
    /// The partials of a reduction's calls.
    pub(crate) workspace: Arc<std::sync::Mutex<kiln_jit::Workspace>>,
    /// The shape and type of the result, and its element count.
    pub(crate) out_shape: Vec<usize>,
    pub(crate) out_len: usize,
    pub(crate) out_type: ElemType,
    /// Where the inputs are read in memory order: the run, and the handle it calls.
    pub(crate) memory: Option<Arc<InMemory>>,
    /// The dtype of every input, where all were bound C-contiguous of one float dtype and the
    /// handle has a serial kernel (see [`Prepared::run_out_checked`]).
    pub(crate) serial: Option<kiln_ir::ElemType>,
    /// A sum, product, min, max, argmin, argmax or mean (any or all of bool and integer values) on
    /// the calling thread, bound for calls on C-contiguous inputs below the threshold (see
    /// [`Prepared::run_checked`], [`Prepared::call_refs`]).
    pub(crate) serial_reduce: Option<Arc<kiln_jit::SerialReduce>>,
    /// The count a mean divides each of `serial_reduce`'s sums by (as [`crate::compiled::finish`]
    /// divides a run's, in the result's float type), where the reduction is a mean.
    pub(crate) serial_mean: Option<usize>,
    /// A pipeline of several kernels bound stage by stage (see prepared/staged.rs).
    pub(crate) staged: Option<Arc<staged::Staged>>,
}

/// A handle's run in memory order: the permutation (and the result's), and the handle of the
/// remapped plan bound to the permuted inputs.
#[derive(Debug)]
pub(crate) struct InMemory {
    run: MemoryRun,
    inner: Prepared,
}

impl Compiled {
    /// Binds this runner to the names, dtypes and shapes (and layouts) of `inputs`, and compiles its
    /// kernels for them: the handle's calls pass inputs of the same forms in the same order.
    ///
    /// # Errors
    /// As [`FusedRunner::run`](crate::FusedRunner::run) (the expression runs once, so that every kernel sees its inputs).
    pub fn prepared(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Prepared> {
        self.bind_prepared(inputs).map(|(p, _)| p)
    }

    /// [`FusedRunner::run`](crate::FusedRunner::run) that also returns a handle bound to the forms of `inputs`: preparing runs
    /// the expression once, and this keeps that run's result instead of running again (a caller that
    /// prepares on the first call of a form, such as the Python package, pays for one run).
    ///
    /// # Errors
    /// As [`FusedRunner::run`](crate::FusedRunner::run).
    pub fn run_prepared(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<(Prepared, Output)> {
        self.single("run")?;
        let (p, mut outs) = self.bind_prepared(inputs)?;
        let out = outs.pop().expect("a runner of one result gives one");
        Ok((p, out))
    }

    /// [`Compiled::run_prepared`] of every result: the handle, and the results of the run that made
    /// it, in the order of the expressions.
    ///
    /// # Errors
    /// As [`FusedRunner::run`](crate::FusedRunner::run).
    pub(crate) fn run_all_prepared(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
    ) -> Result<(Prepared, Vec<Output>)> {
        self.bind_prepared(inputs)
    }

    /// The handle, and the results of the run that made it.
    fn bind_prepared(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<(Prepared, Vec<Output>)> {
        let user = bind(self.input_names(), inputs)?;
        let (forms, order) = self.forms_of(inputs);
        if self.pipeline().is_many() {
            return self.prepared_many(forms, order, &user);
        }
        if let Some(run) = self.in_memory_order(&user) {
            // the handle of the remapped plan, bound to the inputs in memory order
            let moved: Vec<(&str, ArrayArg<'_>)> = inputs
                .iter()
                .map(|(n, _)| *n)
                .zip(run.inputs(inputs.iter().map(|(_, a)| a)))
                .collect();
            let (inner, mut outs) = run.runner.bind_prepared(&moved)?;
            let out = run.restore(outs.pop().expect("one result"));
            let (shape, out_type) = (out.shape().to_vec(), inner.out_type);
            let memory = Some(Arc::new(InMemory { run, inner }));
            return Ok((
                self.indirect(forms, order, shape, out_type, memory, None),
                vec![out],
            ));
        }
        self.bind_as_given(forms, order, &user)
    }

    /// [`Compiled::bind_prepared`] of one result, its inputs (`user`, in the runner's order) read
    /// in the order they are given (not in memory order): stage by stage where the plan is several
    /// kernels that allow it (prepared/staged.rs), else one kernel's handle (direct where it can
    /// be) or the stage loop's. A stage of a pipeline binds its handle so, as the stage loop runs
    /// it (each stage's arguments in the pipeline's order).
    fn bind_as_given(
        &self,
        forms: Vec<Form>,
        order: Vec<usize>,
        user: &[&ArrayArg<'_>],
    ) -> Result<(Prepared, Vec<Output>)> {
        if let Some((staged, out)) = self.bind_staged(user)? {
            let (shape, out_type) = (out.shape().to_vec(), out.elem());
            let staged = Some(Arc::new(staged));
            return Ok((
                self.indirect(forms, order, shape, out_type, None, staged),
                vec![out],
            ));
        }
        let (spec, t) = self.run_stages(user)?;
        let out_type = t.values.output_type();
        let prepared = self.handle(forms, order, user, spec, t.shape.clone(), out_type);
        Ok((prepared, vec![Output::try_from(t)?]))
    }

    /// A handle bound to `inputs` without running them, where that can be known without a run:
    /// an expression of one kernel whose inputs are not run in memory order (None otherwise: a run
    /// binds those, [`FusedRunner::run_prepared`](crate::FusedRunner::run_prepared)).
    ///
    /// # Errors
    /// As [`FusedRunner::run`](crate::FusedRunner::run), before anything runs.
    pub(crate) fn bind_without_run(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Option<Prepared>> {
        if self.pipeline().is_many() || self.pipeline().stages.len() != 1 {
            return Ok(None);
        }
        let user = bind(self.input_names(), inputs)?;
        if self.in_memory_order(&user).is_some() {
            return Ok(None);
        }
        self.bind_user(inputs, &user).map(Some)
    }

    /// [`Compiled::bind_without_run`] of a one-kernel expression whose inputs, bound by name
    /// (`user`, in the runner's order), are not run in memory order.
    ///
    /// # Errors
    /// As [`FusedRunner::run`](crate::FusedRunner::run), before anything runs.
    pub(crate) fn bind_user(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        user: &[&ArrayArg<'_>],
    ) -> Result<Prepared> {
        let (forms, order) = self.forms_of(inputs);
        let (spec, _) = self.ready_last(user)?;
        let (shape, out_type) =
            crate::compiled::result_form(&spec, self.pipeline().last().program.reduction());
        Ok(self.handle(forms, order, user, spec, shape, out_type))
    }

    /// The forms of a named call's inputs, in its order; and for each of the runner's inputs, its
    /// position in the call (every name bound, checked by [`bind`]).
    fn forms_of(&self, inputs: &[(&str, ArrayArg<'_>)]) -> (Vec<Form>, Vec<usize>) {
        let order: Vec<usize> = self
            .input_names()
            .iter()
            .map(|n| {
                inputs
                    .iter()
                    .position(|(m, _)| m == n)
                    .expect("bind found every name")
            })
            .collect();
        let forms = inputs
            .iter()
            .map(|(name, a)| Form {
                name: name.to_string(),
                dtype: a.elem(),
                shape: a.shape().to_vec(),
                len: a.shape().iter().product(),
                standard: is_standard(a),
                strides: strides(a).to_vec(),
            })
            .collect();
        (forms, order)
    }

    /// A handle without a direct call: one that runs in memory order (`memory`), or stage by
    /// stage (`staged`), or by the stage loop (neither), of a result of `shape` and `out_type`.
    fn indirect(
        &self,
        forms: Vec<Form>,
        order: Vec<usize>,
        shape: Vec<usize>,
        out_type: ElemType,
        memory: Option<Arc<InMemory>>,
        staged: Option<Arc<staged::Staged>>,
    ) -> Prepared {
        let many = Arc::new(many::ManyBinding::single(self, None, &order, &shape, out_type));
        Prepared {
            runner: self.clone(),
            forms,
            order,
            many,
            direct: None,
            lanes: kiln_ir::ElemType::F64,
            direct_points: None,
            workspace: Arc::default(),
            out_len: shape.iter().product(),
            out_shape: shape,
            out_type,
            memory,
            serial: None,
            serial_reduce: None,
            serial_mean: None,
            staged,
        }
    }

    /// The handle of a one-result plan whose last kernel is `spec`, of a result of `shape` and
    /// `out_type`: the fast path where it applies (see the module doc).
    fn handle(
        &self,
        forms: Vec<Form>,
        order: Vec<usize>,
        user: &[&ArrayArg<'_>],
        spec: Arc<Specialised>,
        shape: Vec<usize>,
        out_type: ElemType,
    ) -> Prepared {
        let start = direct_start(&spec.kernel, self.pipeline().last().program.reduction());
        // (a compound or sibling kernel is a staged handle's stage run in one pass: `bind_staged`
        // binds one only so)
        let lanes = (self.pipeline().stages.len() == 1
            && (matches!(
                spec.kernel.kind,
                KernelKind::Map | KernelKind::Scan(_) | KernelKind::Reduce { .. }
            ) || matches!(spec.kernel.kind, KernelKind::Compound { .. } | KernelKind::Siblings { .. })
                && spec.typed.is_none())
            // (a float kernel's map or scan of its dtype; a reduction of any result: argmax's
            // indices, sums of truth values, any and all)
            && (spec.typed.is_some()
                || spec.kernel.output_type() == spec.kernel.dtype
                || matches!(spec.kernel.kind, KernelKind::Reduce { .. })))
        .then(|| spec.exe.direct(&start))
        .flatten()
        .filter(|(kernel, plan)| {
            user.len() == kernel.inputs.len()
                && user
                    .iter()
                    .enumerate()
                    .all(|(i, a)| reads_direct(a, kernel, plan, i))
        })
        .map(|(kernel, _)| kernel.dtype);
        // calls of several results and updates take float inputs of the kernel's dtype
        let float = spec.typed.is_none() && user.iter().all(|a| a.elem() == spec.kernel.dtype);
        let direct = lanes.is_some().then_some(spec);
        let direct_points = direct
            .as_ref()
            .and_then(|s| kiln_ir::shape::checked_size(&s.kernel.shape).ok());
        let many = Arc::new(many::ManyBinding::single(
            self,
            direct.as_ref().filter(|_| float),
            &order,
            &shape,
            out_type,
        ));
        // the serial kernel reads slices: where every input was bound C-contiguous (a call's
        // layouts are checked against the bound ones)
        let serial = direct
            .as_ref()
            .filter(|_| many.has_serial() && forms.iter().all(|f| f.standard))
            .map(|s| s.kernel.dtype);
        // a reduction from its identity (no initial; keepdims is only a shape) below the
        // threshold, over inputs the fold takes (byte strings are not: the run reads them); a
        // mean of float values divides each sum by its count after the fold
        let reduction = self.pipeline().last().program.reduction();
        let plain = reduction.is_some_and(|r| r.initial.is_none());
        let folded = forms.iter().all(|f| f.standard && !f.dtype.is_bytes());
        let serial_reduce = match (&direct, direct_points) {
            (Some(spec), Some(n)) if plain && folded => {
                let cfg = self.parallel().jit_config(n, Start::Identity);
                let serial = cfg.max_units == 1;
                serial
                    .then(|| spec.exe.serial_reduce(&cfg))
                    .flatten()
                    .filter(|_| !reduction.is_some_and(|r| r.mean) || spec.kernel.dtype == out_type)
                    .map(Arc::new)
            }
            _ => None,
        };
        let serial_mean = match (&serial_reduce, &direct) {
            (Some(_), Some(spec)) if reduction.is_some_and(|r| r.mean) => {
                Some(crate::compiled::mean_count(&spec.kernel))
            }
            _ => None,
        };
        Prepared {
            runner: self.clone(),
            forms,
            order,
            many,
            direct,
            lanes: lanes.unwrap_or(kiln_ir::ElemType::F64),
            direct_points,
            workspace: Arc::default(),
            out_len: shape.iter().product(),
            out_shape: shape,
            out_type,
            memory: None,
            serial,
            serial_reduce,
            serial_mean,
            staged: None,
        }
    }
}

impl Prepared {
    /// The names of the inputs, in the order a call passes them.
    pub fn input_names(&self) -> impl Iterator<Item = &str> {
        self.forms.iter().map(|f| f.name.as_str())
    }

    /// The result's shape.
    pub fn output_shape(&self) -> &[usize] {
        &self.out_shape
    }

    /// The result's type.
    pub fn output_type(&self) -> ElemType {
        self.out_type
    }

    /// Whether calls take the fast path (see the module doc): for a handle in memory order, whether
    /// the handle it calls does; for one of several kernels bound stage by stage
    /// (`sqrt(sum(x*x))`), whether every stage's handle does.
    pub fn is_direct(&self) -> bool {
        match (&self.memory, &self.staged) {
            (Some(m), _) => m.inner.is_direct(),
            (None, Some(s)) => s.is_direct(),
            (None, None) => self.direct.is_some(),
        }
    }

    /// The axis order in which calls read the inputs (see [`FusedRunner::memory_order`](crate::FusedRunner::memory_order)), where it
    /// is not their own: the handle was bound to Fortran or transposed inputs, and gives its result
    /// in their layout.
    pub fn memory_order(&self) -> Option<&[usize]> {
        self.memory.as_ref().map(|m| m.run.order.as_slice())
    }

    /// Whether `inputs` (in the bound order) have the count, dtypes, shapes and layouts (C-contiguous,
    /// or the same strides) this handle was bound with: the test of a cache of handles, which calls
    /// the one whose forms its inputs have.
    pub fn accepts(&self, inputs: &[ArrayArg<'_>]) -> bool {
        inputs.len() == self.forms.len() && inputs.iter().zip(&self.forms).all(|(a, f)| f.fits(a))
    }

    /// Whether a runner's named call passes the names this handle was bound with, in the same order,
    /// with the count, dtypes, shapes and layouts it was bound with ([`Prepared::accepts`]): the test
    /// of the runner's own bindings ([`crate::bindings`]).
    pub(crate) fn accepts_named(&self, inputs: &[(&str, ArrayArg<'_>)]) -> bool {
        inputs.len() == self.forms.len()
            && inputs
                .iter()
                .zip(&self.forms)
                .all(|((name, a), f)| f.accepts(name, a))
    }

    /// Whether a call of C-contiguous inputs of these element types and shapes, given in the
    /// runner's order of inputs, is one this handle was bound with: its inputs bound in that order,
    /// each C-contiguous of that type and shape (the test of [`crate::FusedRunner::bound_c_order`]).
    #[inline]
    pub(crate) fn accepts_c_order(&self, forms: &[(ElemType, &[usize])]) -> bool {
        forms.len() == self.forms.len()
            && self.order.iter().enumerate().all(|(i, &p)| p == i)
            && self
                .forms
                .iter()
                .zip(forms)
                .all(|(f, (elem, shape))| f.standard && f.dtype == *elem && same(&f.shape, shape))
    }

    /// Whether an in-place update's call (`inputs`, then the updated inputs `targets`, bound last in
    /// their order) is the one this handle was bound with, names, dtypes, shapes and layouts: the
    /// test of the runner's update bindings ([`crate::bindings`]).
    pub(crate) fn accepts_update<T: crate::InPlaceTargets + ?Sized>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        targets: &T,
    ) -> bool {
        let n = inputs.len();
        self.forms.len() == n + targets.count()
            && inputs
                .iter()
                .zip(&self.forms)
                .all(|((name, a), f)| f.accepts(name, a))
            && self.forms[n..]
                .iter()
                .enumerate()
                .all(|(o, f)| f.accepts_target(targets.name(o), targets.form(o)))
    }

    /// Checks the count, dtypes and shapes of a call's inputs against the bound forms.
    pub(crate) fn check<'a, I: Args<'a> + ?Sized>(&self, inputs: &I) -> Result<()> {
        if inputs.count() != self.forms.len() {
            return Err(self.count_error(inputs.count()));
        }
        for (i, f) in self.forms.iter().enumerate() {
            let a = inputs.at(i);
            if a.elem() != f.dtype || !same(a.shape(), &f.shape) {
                return Err(Error::Prepared(format!(
                    "input {i} ('{}') is {} of shape {:?} but was bound as {} of shape {:?}",
                    f.name,
                    a.elem().short_name(),
                    a.shape(),
                    f.dtype.short_name(),
                    f.shape
                )));
            }
        }
        Ok(())
    }

    /// Runs into `out`, of the result's shape and element type (any; as
    /// [`FusedRunner::run_into`](crate::FusedRunner::run_into)); the inputs in the order they were
    /// bound. [`Prepared::call`] with `out`.
    ///
    /// # Errors
    /// A count of inputs other than the bound one, an input of another dtype or shape than it was
    /// bound with (the error names its position and name), an `out` that does not fit the result, and
    /// the errors of [`FusedRunner::run_into`](crate::FusedRunner::run_into).
    pub fn run_into<A: Element, D: Dimension>(
        &self,
        inputs: &[ArrayArg<'_>],
        out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        self.run_into_view(inputs, out)
    }

    /// Runs into `out`: the result's elements in C order, of its type, whichever it is; the inputs
    /// in the order they were bound. [`Prepared::call`] into a C-contiguous array, as
    /// [`Prepared::run_into`] does: no allocation for a map or scan the handle calls directly.
    ///
    /// # Errors
    /// As [`Prepared::run_into`]; an `out` of another type or length than the result's.
    pub fn run_into_out(&self, inputs: &[ArrayArg<'_>], out: OutSlice<'_>) -> Result<()> {
        self.check(inputs)?;
        self.run_out_checked(inputs, out, "run_into_out")
    }

    /// [`Prepared::run_into`]: the inputs checked, then [`Prepared::run_view_checked`].
    pub(crate) fn run_into_view<A: Element, D: Dimension>(
        &self,
        inputs: &[ArrayArg<'_>],
        out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        self.check(inputs)?;
        self.run_view_checked(inputs, out)
    }

    /// The one result into `out`, an array of the result's shape and type in any layout, the
    /// inputs' count, dtypes and shapes checked (by [`Prepared::check`] or
    /// [`Prepared::accepts_named`]): in memory order where the handle runs so; a C-contiguous `out`
    /// as [`Prepared::run_out_checked`]; another layout takes the result fresh, assigned.
    pub(crate) fn run_view_checked<'a, A: Element, D: Dimension, I: Args<'a> + ?Sized>(
        &self,
        inputs: &I,
        mut out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        self.runner.single("run_into")?;
        if !same(out.shape(), &self.out_shape) {
            return Err(Error::output_shape(out.shape(), &self.out_shape));
        }
        // of the result's type (no widening of an int32 result into int64)
        if A::ELEM != self.out_type {
            return Err(Error::Output(format!(
                "an output of {} given for a result of {}",
                A::ELEM.short_name(),
                self.out_type.short_name()
            )));
        }
        // (a handle in memory order has the result's shape and type in the inputs' axes)
        if let Some(m) = &self.memory {
            return m.run_into(inputs, out.into_dyn());
        }
        if let Some(slice) = out.as_slice_mut() {
            if let Some(done) = self.serial_elems(inputs, slice) {
                return done;
            }
            return self.out_rest(inputs, A::out_buffer(slice));
        }
        // another layout: the result fresh, assigned
        let result = A::take(self.run_checked(inputs)?)?;
        out.assign(
            &result
                .into_dimensionality::<D>()
                .map_err(|e| Error::Output(e.to_string()))?,
        );
        Ok(())
    }

    /// That `out` holds the result: of its type and element count.
    fn check_out(&self, out: &OutSlice<'_>) -> Result<()> {
        if out.ty() != self.out_type || out.len() != self.out_len {
            return Err(Error::Output(format!(
                "{} elements of {} given for a result of {} of shape {:?}",
                out.len(),
                out.ty().short_name(),
                self.out_type.short_name(),
                self.out_shape
            )));
        }
        Ok(())
    }

    /// The one result into `out` (its elements in C order), the inputs' count, dtypes and shapes
    /// checked: the serial kernel or fold on the calling thread where the handle has one for
    /// `out`'s float type, the direct call where the inputs are laid out as bound, else the
    /// runner's general run, which writes a last map or scan straight into `out` and copies any
    /// other result in.
    pub(crate) fn run_out_checked<'a, I: Args<'a> + ?Sized>(
        &self,
        inputs: &I,
        mut out: OutSlice<'_>,
        call: &str,
    ) -> Result<()> {
        self.runner.single(call)?;
        self.check_out(&out)?;
        let serial = match out.reborrow() {
            OutSlice::F64(o) => self.serial_into::<f64, I>(inputs, o),
            OutSlice::F32(o) => self.serial_into::<f32, I>(inputs, o),
            _ => None,
        };
        if let Some(done) = serial {
            return done;
        }
        self.out_rest(inputs, out)
    }

    /// [`crate::Accumulate`]'s fold into `out` on inputs whose count, names, dtypes, shapes and
    /// layouts are checked ([`Prepared::accepts_named`], [`Prepared::check`]): the direct call where
    /// it takes them, else the runner's fold of the inputs in its order; no name bound.
    pub(crate) fn accumulate_checked<'a, A: Float, D: Dimension, I: Args<'a> + ?Sized>(
        &self,
        inputs: &I,
        mut out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        self.runner.check_accumulate()?;
        if let Some(done) = self.fold_direct(inputs, &mut out) {
            return done;
        }
        self.with_user(inputs, |user| self.runner.accumulate_user(user, out))
    }

    /// The direct call of a one-kernel reduction from `out`'s values (read first, each converted to
    /// f64: [`Start::Each`], on the stack up to 16 of them) into `out`, where the inputs are laid
    /// out as bound, `out` is C-contiguous, of the result's shape and type, and the executable
    /// takes that start in its direct call; None elsewhere (the caller folds by the runner's run).
    fn fold_direct<'a, A: Float, D: Dimension, I: Args<'a> + ?Sized>(
        &self,
        inputs: &I,
        out: &mut ArrayViewMut<'_, A, D>,
    ) -> Option<Result<()>> {
        let spec = self.direct.as_ref()?;
        let fits = self.memory.is_none()
            && matches!(spec.kernel.kind, KernelKind::Reduce { .. })
            && A::ELEM == self.out_type
            && same(out.shape(), &self.out_shape)
            && self.laid_out_as_bound(inputs);
        if !fits {
            return None;
        }
        let slice = out.as_slice_mut()?;
        let prev: smallvec::SmallVec<[f64; 16]> = slice.iter().map(|v| v.to_f64()).collect();
        spec.exe.direct(&Start::Each(&prev))?;
        let done = self.call_views(spec, inputs, Some(A::out_slice(slice)), Some(Start::Each(&prev)))?;
        Some(done.map(|_| ()))
    }

    /// [`Prepared::run_out_checked`] past its checks and serial paths: the direct call where the
    /// inputs are laid out as bound, else the general run.
    fn out_rest<'a, I: Args<'a> + ?Sized>(&self, inputs: &I, mut out: OutSlice<'_>) -> Result<()> {
        if self.memory.is_some() {
            // the result in the inputs' layout, copied in C order
            return self.run_checked(inputs)?.copy_into(out);
        }
        if let Some(spec) = &self.direct
            && self.laid_out_as_bound(inputs)
            && let Some(done) = self.call_views(spec, inputs, Some(out.reborrow()), None)
        {
            return done.map(|_| ());
        }
        if let Some(staged) = &self.staged {
            return self.with_user(inputs, |user| staged.run_out(&self.runner, user, out));
        }
        self.with_user(inputs, |user| self.runner.run_out_bound(user, out))
    }

    /// [`Prepared::serial_into`] of `out`'s float type, where it is one.
    #[inline]
    fn serial_elems<'a, A: Element, I: Args<'a> + ?Sized>(
        &self,
        inputs: &I,
        out: &mut [A],
    ) -> Option<Result<()>> {
        if A::ELEM == ElemType::F64 {
            return self.serial_into::<f64, I>(inputs, A::as_float_mut::<f64>(out)?);
        }
        if A::ELEM == ElemType::F32 {
            return self.serial_into::<f32, I>(inputs, A::as_float_mut::<f32>(out)?);
        }
        None
    }

    /// The calling thread's serial kernel (a map) or fold (a whole-array reduction) into `out`,
    /// the result's elements of the float type `L`, where the handle has one for inputs bound
    /// C-contiguous of `L` (a call's layouts are those bound: [`Prepared::check`]); None where it
    /// has none, or the serial kernel declined.
    #[inline]
    fn serial_into<'a, L: Float, I: Args<'a> + ?Sized>(
        &self,
        inputs: &I,
        out: &mut [L],
    ) -> Option<Result<()>> {
        if self.serial_inputs::<L>() && self.try_serial_with(|k| inputs.slice::<L>(k), &mut [&mut *out]) {
            return Some(Ok(()));
        }
        let r = self.serial_reduce.as_ref().filter(|_| self.lanes == L::DTYPE)?;
        self.reduce_serially::<L, I>(r, inputs, out)
    }

    /// Runs on inputs given as their own elements in C order ([`Stored`]: each of the type it was
    /// bound with, as many elements as its bound shape holds; a scalar is one element) into `out`
    /// (the result's elements in C order, of its type): [`Prepared::run_into_out`]'s call (the
    /// serial kernel or fold, the direct call, else the runner's run), which reads the elements as
    /// they are where every input was bound C-contiguous (no view made: the cheapest call of a
    /// handle of integer, bool, complex, byte-string or mixed inputs), and views them in their bound
    /// shapes where a path needs arrays.
    ///
    /// # Errors
    /// A count of inputs other than the bound one, an input of another type or element count than
    /// it was bound with or given as a view (the error names it), an `out` of another type or
    /// length than the result's, and the errors of [`Prepared::run_into_out`].
    pub fn run_stored(&self, inputs: &[Stored<'_>], out: OutSlice<'_>) -> Result<()> {
        self.check_stored(inputs, None, "input")?;
        let copies = BoolCopies::default();
        self.run_out_checked(&StoredArgs::new(inputs, &self.forms, &copies), out, "run_stored")
    }

    /// Whether every input was bound C-contiguous and of dtype `A`: the condition (with the call's
    /// arrays laid out alike, which `check` and a slice of each ensure) on which a call may hand
    /// their slices to the serial kernel.
    fn serial_inputs<A: Float>(&self) -> bool {
        self.serial == Some(A::DTYPE)
    }

    /// Runs on C-contiguous slices (each input's elements in C order, of element type `A`; a scalar
    /// is a slice of one) into `out` (the result's elements in C order, of its type `B`): the
    /// cheapest call, nothing but the counts, lengths and types checked before the compiled code
    /// runs. Inputs of several types: [`Prepared::run_stored`], which this call is.
    ///
    /// # Errors
    /// A count of inputs other than the bound one, a slice whose length is not its bound shape's
    /// element count, an input bound with another type than `A`, an `out` whose length or type is
    /// not the result's, and the errors of [`FusedRunner::run_into`](crate::FusedRunner::run_into).
    pub fn run_slices<A: Element, B: Element>(&self, inputs: &[&[A]], out: &mut [B]) -> Result<()> {
        // a float map below the threshold: the serial kernel checks what it reads (on an error, the
        // call of every type says what is wrong)
        if A::serial_slice(self, inputs, out) {
            return Ok(());
        }
        self.run_slices_stored(inputs, out)
    }

    /// [`Element::serial_slice`] of a float type `L`: where the handle has a serial kernel for
    /// inputs and a result of type `L` (a map, or a whole-array reduction below the threshold),
    /// runs it; whether it ran (where it did not, the call of every type checks and runs).
    #[inline]
    pub(crate) fn try_serial_one<L: Float, B: Element>(&self, inputs: &[&[L]], out: &mut [B]) -> bool {
        let Some(out) = B::as_float_mut::<L>(out) else {
            return false;
        };
        if self.many.has_serial() {
            return inputs.len() == self.forms.len()
                && self.try_serial_with(|k| inputs.get(k).copied(), &mut [out]);
        }
        // a whole-array reduction below the threshold: the serial fold, into the one element (the
        // inputs checked first: the fold reads slices of the lengths it is given)
        if let Some(r) = &self.serial_reduce
            && r.takes_slices()
            && self.direct.is_some()
            && self.lanes == L::DTYPE
            && self.out_type == L::DTYPE
            && self.order.len() <= STACK_INPUTS
            && inputs.len() == self.forms.len()
            && inputs
                .iter()
                .zip(&self.forms)
                .all(|(s, f)| s.len() == f.len && f.dtype == L::DTYPE)
        {
            let mut parts = [kiln_jit::Part::Slice(&[][..]); STACK_INPUTS];
            for (p, &pos) in parts.iter_mut().zip(&self.order) {
                *p = kiln_jit::Part::Slice(inputs[pos]);
            }
            let done = r.run_into(&parts[..self.order.len()], out).is_ok();
            if done {
                self.divide_mean(out);
            }
            return done;
        }
        false
    }

    /// [`Prepared::run_slices`] as [`Prepared::run_stored`] (out of line: the serial call above
    /// keeps a small frame).
    #[inline(never)]
    fn run_slices_stored<A: Element, B: Element>(&self, inputs: &[&[A]], out: &mut [B]) -> Result<()> {
        let stored: smallvec::SmallVec<[Stored<'_>; 4]> = inputs.iter().map(|s| A::stored(s)).collect();
        self.run_stored(&stored, B::out_buffer(out))
    }

    pub(crate) fn count_error(&self, given: usize) -> Error {
        Error::Prepared(format!(
            "{given} inputs given, {} bound ({})",
            self.forms.len(),
            self.forms
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }

    /// Whether `inputs` have the layouts the handle was bound with (C-contiguous, or the same
    /// strides), few enough for the stack: the direct path's condition on a call's views.
    fn laid_out_as_bound<'a, I: Args<'a> + ?Sized>(&self, inputs: &I) -> bool {
        inputs.count() <= STACK_INPUTS && self.forms.iter().enumerate().all(|(i, f)| inputs.laid_out(i, f))
    }

    /// [`Prepared::call_direct`] on the call's arrays (their types, shapes and layouts checked),
    /// in the dtype of the kernel's lanes; None where an input is not read as it is (byte strings
    /// not in C order from their memory's start: the caller then runs the general path, which
    /// copies them). `start`: a reduction's start where it is not the handle's own (a fold).
    fn call_views<'a, I: Args<'a> + ?Sized>(
        &self,
        spec: &Specialised,
        inputs: &I,
        out: Option<OutSlice<'_>>,
        start: Option<Start<'_>>,
    ) -> Option<Result<Option<kiln_ir::Tensor>>> {
        match self.lanes {
            kiln_ir::ElemType::F64 => self.call_arrays::<f64, I>(spec, inputs, out, start),
            kiln_ir::ElemType::F32 => self.call_arrays::<f32, I>(spec, inputs, out, start),
            _ => unreachable!("only float types (f32, f64) reach here"),
        }
    }

    /// [`Prepared::call_views`] in lanes of `L`.
    fn call_arrays<'a, L: Float, I: Args<'a> + ?Sized>(
        &self,
        spec: &Specialised,
        inputs: &I,
        out: Option<OutSlice<'_>>,
        start: Option<Start<'_>>,
    ) -> Option<Result<Option<kiln_ir::Tensor>>> {
        let input = |pos: usize| inputs.direct::<L>(pos);
        self.call_direct_k(spec, input, out, start)
    }

    /// [`Prepared::call_direct`] with a stack array of 4 inputs where that holds them, else of
    /// [`STACK_INPUTS`].
    fn call_direct_k<'i, A: Float>(
        &self,
        spec: &Specialised,
        input: impl Fn(usize) -> Option<InputRef<'i, A>>,
        out: Option<OutSlice<'_>>,
        start: Option<Start<'_>>,
    ) -> Option<Result<Option<kiln_ir::Tensor>>> {
        if self.order.len() <= 4 {
            self.call_direct::<A, 4>(spec, input, out, start)
        } else {
            self.call_direct::<A, STACK_INPUTS>(spec, input, out, start)
        }
    }

    /// The executable's direct call ([`crate::Executable::call_into`]) with the runner's inputs in
    /// its order, on the stack (`K` of them at most: a smaller array for the common case is less to
    /// fill and drop), into `out`, or (None) into a fresh result, returned; None where `input`
    /// gives none for an input.
    fn call_direct<'i, A: Float, const K: usize>(
        &self,
        spec: &Specialised,
        input: impl Fn(usize) -> Option<InputRef<'i, A>>,
        out: Option<OutSlice<'_>>,
        start: Option<Start<'_>>,
    ) -> Option<Result<Option<kiln_ir::Tensor>>> {
        let mut refs: [InputRef<'i, A>; K] = std::array::from_fn(|_| InputRef::Slice(&[]));
        for (r, &pos) in refs.iter_mut().zip(&self.order) {
            *r = input(pos)?;
        }
        Some(self.call_refs(spec, &refs[..self.order.len()], out, start))
    }

    /// [`Prepared::call_direct`] of its inputs (a reduction from `start` where given, else from
    /// the handle's own start).
    fn call_refs<A: Float>(
        &self,
        spec: &Specialised,
        refs: &[InputRef<'_, A>],
        out: Option<OutSlice<'_>>,
        start: Option<Start<'_>>,
    ) -> Result<Option<kiln_ir::Tensor>> {
        let reduce = matches!(spec.kernel.kind, KernelKind::Reduce { .. });
        // (a compound or sibling kernel's components go to a fresh tensor, finished, then `out`)
        let maps = matches!(spec.kernel.kind, KernelKind::Map | KernelKind::Scan(_));
        if maps && let Some(out) = out {
            let cfg = self.runner.parallel().jit_config(out.len(), Start::Identity);
            spec.exe.call_into(A::direct_inputs(refs), out, &cfg)?;
            return Ok(None);
        }
        let reduction = self.runner.pipeline().last().program.reduction();
        let start = start.unwrap_or_else(|| direct_start(&spec.kernel, reduction));
        let n = match self.direct_points {
            Some(n) => n,
            None => kiln_ir::shape::checked_size(&spec.kernel.shape)?,
        };
        let cfg = self.runner.parallel().jit_config(n, start);
        let mut out = out;
        // on the calling thread from the identity: the bound serial fold into `out`, of any type
        // (a mean's sums then divided by their count; keepdims is only a shape)
        if let (Some(o), Some(r)) = (out.as_mut(), &self.serial_reduce)
            && cfg.max_units <= 1
            && start == Start::Identity
            && r.run_refs(refs, o.reborrow()).is_some()
        {
            match o.reborrow() {
                OutSlice::F64(v) => self.divide_mean(v),
                OutSlice::F32(v) => self.divide_mean(v),
                // (a mean's result is of its float kernel's dtype: `serial_mean` is set only so)
                _ => {}
            }
            return Ok(None);
        }
        // a reduction folding in `out` itself (no mean to divide by: keepdims is only a shape)
        if let Some(o) = out.as_mut()
            && reduce
            && !reduction.is_some_and(|r| r.mean)
            && spec.exe.reduces_into(o.ty())
        {
            spec.exe.call_into(A::direct_inputs(refs), o.reborrow(), &cfg)?;
            return Ok(None);
        }
        // a reduction (its partials), or a fresh result: in the handle's workspace (a fresh one if
        // another thread holds it), finished (mean, keepdims) and copied into `out` if given
        let t = match self.workspace.try_lock() {
            Ok(mut ws) => spec.exe.call(A::direct_inputs(refs), &cfg, &mut ws)?,
            Err(_) => spec
                .exe
                .call(A::direct_inputs(refs), &cfg, &mut kiln_jit::Workspace::new())?,
        };
        let t = crate::compiled::finish_stage(t, &spec.kernel, &self.runner.pipeline().last().program);
        match out {
            Some(out) => crate::backend::copy_into(t.values, out).map(|_| None),
            None => Ok(Some(t)),
        }
    }

    /// Runs and returns the result (allocated).
    ///
    /// # Errors
    /// As [`Prepared::run_into`].
    pub fn run(&self, inputs: &[ArrayArg<'_>]) -> Result<Output> {
        self.run_args(inputs)
    }

    /// [`Prepared::run`] of any [`Args`].
    pub(crate) fn run_args<'a, I: Args<'a> + ?Sized>(&self, inputs: &I) -> Result<Output> {
        self.check(inputs)?;
        self.run_checked(inputs)
    }

    /// [`Prepared::run_args`] of inputs whose count, dtypes and shapes are checked.
    pub(crate) fn run_checked<'a, I: Args<'a> + ?Sized>(&self, inputs: &I) -> Result<Output> {
        self.runner.single("run")?;
        if let Some(m) = &self.memory {
            let moved = m.inputs(inputs);
            return Ok(m.run.restore(m.inner.run(&moved)?));
        }
        if let Some(r) = &self.serial_reduce
            && let Some(done) = match self.lanes {
                kiln_ir::ElemType::F64 => self.reduce_fresh::<f64, I>(r, inputs),
                kiln_ir::ElemType::F32 => self.reduce_fresh::<f32, I>(r, inputs),
                _ => unreachable!("only float types (f32, f64) reach here"),
            }
        {
            return done;
        }
        if let Some(done) = self.fresh_by_buffer(inputs) {
            return done;
        }
        if let Some(spec) = &self.direct
            && self.laid_out_as_bound(inputs)
            && let Some(t) = self.call_views(spec, inputs, None, None)
        {
            // the compiled code into a fresh result
            return Output::try_from(t?.expect("a run without an output returns its result"));
        }
        if let Some(staged) = &self.staged {
            return self.with_user(inputs, |user| staged.run(&self.runner, user));
        }
        self.with_user(inputs, |user| Output::try_from(self.runner.run_stages(user)?.1))
    }

    /// A fresh result written by the call into a buffer ([`Prepared::run_out_checked`]: the
    /// serial kernel or fold on the calling thread, the direct call else), where that call writes
    /// it straight: a map of the direct kernel, or a reduction the handle folds serially, over
    /// inputs laid out as bound. The array is allocated zeroed (fresh pages cost no write), then
    /// written; None elsewhere (byte strings: no buffer of them).
    fn fresh_by_buffer<'a, I: Args<'a> + ?Sized>(&self, inputs: &I) -> Option<Result<Output>> {
        let spec = self.direct.as_ref()?;
        let serial_fold =
            self.serial_reduce.is_some() && matches!(spec.kernel.kind, KernelKind::Reduce { .. });
        if !(matches!(spec.kernel.kind, KernelKind::Map) || serial_fold) || !self.laid_out_as_bound(inputs) {
            return None;
        }
        let n = self.out_len;
        macro_rules! fresh {
            ($variant:ident, $zero:expr) => {{
                let mut v = zeroed(n, $zero);
                let done = self.run_out_checked(inputs, Element::out_buffer(&mut v), "run");
                Some(done.and_then(|()| {
                    let a = ndarray::ArrayD::from_shape_vec(self.out_shape.as_slice(), v)
                        .map_err(|e| Error::Output(e.to_string()))?;
                    Ok(Output::$variant(a))
                }))
            }};
        }
        match self.out_type {
            ElemType::F64 => fresh!(F64, 0.0f64),
            ElemType::F32 => fresh!(F32, 0.0f32),
            ElemType::I64 => fresh!(I64, 0i64),
            ElemType::I32 => fresh!(I32, 0i32),
            ElemType::Bool => fresh!(Bool, false),
            ElemType::C64 => fresh!(C64, kiln_ir::num_complex::Complex32::new(0.0, 0.0)),
            ElemType::C128 => fresh!(C128, kiln_ir::num_complex::Complex64::new(0.0, 0.0)),
            ElemType::Bytes(_) => None,
        }
    }

    /// The serial reduction of the inputs (their slices, in the kernel's order, on the stack) into
    /// `out` (the result's elements in C order); None where an input is not a C-contiguous array
    /// of `A` (the caller then runs the general path).
    #[inline(always)]
    fn reduce_serially<'a, A: Float, I: Args<'a> + ?Sized>(
        &self,
        r: &kiln_jit::SerialReduce,
        inputs: &I,
        out: &mut [A],
    ) -> Option<Result<()>> {
        if self.order.len() > STACK_INPUTS || !r.takes_slices() {
            return None;
        }
        let mut parts: [kiln_jit::Part<'_, A>; STACK_INPUTS] = [kiln_jit::Part::Slice(&[]); STACK_INPUTS];
        for (p, &pos) in parts.iter_mut().zip(&self.order) {
            *p = kiln_jit::Part::Slice(inputs.slice::<A>(pos)?);
        }
        let done = r.run_into(&parts[..self.order.len()], out);
        Some(done.map(|()| self.divide_mean(out)).map_err(Into::into))
    }

    /// A mean's sums (folded serially into `out`) divided by their count, in `out`'s type, as
    /// [`crate::compiled::finish`] divides a run's; nothing for another reduction.
    #[inline]
    fn divide_mean<A: Float>(&self, out: &mut [A]) {
        if let Some(count) = self.serial_mean {
            let c = A::from_f64(count as f64);
            for v in out.iter_mut() {
                *v = *v / c;
            }
        }
    }

    /// [`Prepared::reduce_serially`] into a fresh zero-dimensional result (other shapes:
    /// [`Prepared::fresh_by_buffer`]).
    #[inline]
    fn reduce_fresh<'a, A: Float, I: Args<'a> + ?Sized>(
        &self,
        r: &kiln_jit::SerialReduce,
        inputs: &I,
    ) -> Option<Result<Output>> {
        if !self.out_shape.is_empty() {
            return None;
        }
        let mut one = [A::from_f64(0.0)];
        let done = self.reduce_serially::<A, I>(r, inputs, &mut one)?;
        Some(done.map(|()| A::output(ndarray::arr0(one[0]).into_dyn())))
    }

    /// Runs and returns every result, fresh (the runner's stage loop, without the names).
    ///
    /// # Errors
    /// As [`Prepared::run`].
    pub(crate) fn run_all(&self, inputs: &[ArrayArg<'_>]) -> Result<Vec<Output>> {
        self.check(inputs)?;
        self.run_all_checked(inputs)
    }

    /// [`Prepared::run_all`] of inputs whose count, dtypes and shapes are checked (by
    /// [`Prepared::check`] or [`Prepared::accepts_named`]).
    pub(crate) fn run_all_checked<'a, I: Args<'a> + ?Sized>(&self, inputs: &I) -> Result<Vec<Output>> {
        // one result: the handle's own run (memory order, direct call, serial fold), as the run
        // that bound it
        if !self.runner.pipeline().is_many() {
            return Ok(vec![self.run_checked(inputs)?]);
        }
        self.with_user(inputs, |user| self.runner.run_many_bound(user))
    }

    /// Calls `f` with the inputs in the runner's order.
    fn with_user<'a, R, I: Args<'a> + ?Sized>(
        &self,
        inputs: &I,
        f: impl FnOnce(&[&ArrayArg<'a>]) -> Result<R>,
    ) -> Result<R> {
        let k = self.order.len();
        if k <= STACK_INPUTS && inputs.count() > 0 {
            let user: [&ArrayArg<'a>; STACK_INPUTS] =
                std::array::from_fn(|i| inputs.at(self.order.get(i).copied().unwrap_or(0)));
            return f(&user[..k]);
        }
        let user: Vec<&ArrayArg<'a>> = self.order.iter().map(|&p| inputs.at(p)).collect();
        f(&user)
    }
}

impl InMemory {
    /// A call's inputs (in the order bound) as the inner handle reads them: views in memory order.
    fn inputs<'a, I: Args<'a> + ?Sized>(&self, inputs: &I) -> Vec<ArrayArg<'a>> {
        self.run.inputs((0..inputs.count()).map(|i| inputs.at(i)))
    }

    /// Runs into `out` (of the result's shape, checked by the inner handle): in memory order where
    /// `out` with its axes in the result's order is C-contiguous (a Fortran output of Fortran
    /// inputs), else into a fresh result copied into `out`.
    fn run_into<'a, A: Element, I: Args<'a> + ?Sized>(
        &self,
        inputs: &I,
        out: ndarray::ArrayViewMutD<'_, A>,
    ) -> Result<()> {
        let moved = self.inputs(inputs);
        // the result's shape in the user's axes: the inner handle's, its axes put back
        let inner = self.inner.output_shape();
        if inner.len() == self.run.result.len() {
            let mut want = vec![0; inner.len()];
            for (&d, &axis) in inner.iter().zip(&self.run.result) {
                want[axis] = d;
            }
            if out.shape() != want.as_slice() {
                return Err(Error::output_shape(out.shape(), &want));
            }
        }
        let order = ndarray::IxDyn(&self.run.result);
        if out.ndim() == self.run.result.len() && out.view().permuted_axes(order.clone()).is_standard_layout()
        {
            return self.inner.run_into(&moved, out.permuted_axes(order));
        }
        let mut out = out;
        let got = A::take(self.run.restore(self.inner.run(&moved)?))?;
        if got.shape() != out.shape() {
            return Err(Error::output_shape(out.shape(), got.shape()));
        }
        out.assign(&got);
        Ok(())
    }
}

/// The start of a bound handle's direct call of `kernel`: a reduction's `initial`, else the
/// identity (a scan carries its start in its kernel).
fn direct_start(kernel: &KernelIR, reduction: Option<&Reduction>) -> Start<'static> {
    match reduction.and_then(|r| r.initial) {
        Some(v) if matches!(kernel.kind, KernelKind::Reduce { .. }) => Start::Initial(v),
        _ => Start::Identity,
    }
}

/// Whether the direct call of `kernel` read as `plan` takes argument `a` as its input `i` as it is
/// ([`crate::Executable::direct`]): of the kernel's lanes where the kernel reads it so, else of the
/// type the kernel stores it in; C-contiguous, or a view the plan reads in place, per row with its
/// own strides (byte strings: in C order, checked at each call).
fn reads_direct(a: &ArrayArg<'_>, kernel: &KernelIR, plan: &BroadcastPlan, i: usize) -> bool {
    let (Some(decl), Some(p)) = (kernel.inputs.get(i), plan.inputs.get(i)) else {
        return false;
    };
    let typed = if a.elem() == kernel.dtype {
        decl.stored.is_none()
    } else {
        decl.stored == Some(a.elem())
    };
    let in_place = is_standard(a)
        || (!matches!(a, ArrayArg::Bytes(_))
            && matches!(p, InputPlan::PerRow { .. })
            && same(a.shape(), &decl.shape));
    typed && in_place
}

/// A C-order input given as its own elements as the direct call in lanes of `L` reads it: a slice
/// of `L`, else stored ([`Prepared::run_stored`]).
fn stored_input<'a, L: Float>(s: &Stored<'a>) -> InputRef<'a, L> {
    match L::stored_slice(s) {
        Some(x) => InputRef::Slice(x),
        None => InputRef::Stored(s.clone()),
    }
}

/// The array of `shape` whose elements in C order are `s` (checked to hold them; bool bytes all
/// 0 or 1).
fn array_of<'a>(s: &Stored<'a>, shape: &[usize]) -> Result<ArrayArg<'a>> {
    fn view<'a, T>(d: &'a [T], shape: &[usize]) -> Result<ndarray::ArrayViewD<'a, T>> {
        ndarray::ArrayViewD::from_shape(shape, d).map_err(|e| Error::Prepared(e.to_string()))
    }
    Ok(match *s {
        Stored::Bool(d) => {
            let bools = Stored::as_bools(d)
                .ok_or_else(|| Error::Prepared("bool bytes other than 0 and 1 viewed as bools".into()))?;
            ArrayArg::from(view(bools, shape)?)
        }
        Stored::I32(d) => ArrayArg::from(view(d, shape)?),
        Stored::I64(d) => ArrayArg::from(view(d, shape)?),
        Stored::F32(d) => ArrayArg::from(view(d, shape)?),
        Stored::F64(d) => ArrayArg::from(view(d, shape)?),
        Stored::C64(d) => ArrayArg::from(view(d, shape)?),
        Stored::C128(d) => ArrayArg::from(view(d, shape)?),
        Stored::Bytes(d, w) => ArrayArg::Bytes(crate::Strings::new(d, w as usize, shape)?),
        Stored::View(_) => return Err(Error::Prepared("a view given as C-order elements".into())),
    })
}

/// Argument `a` as the direct call in lanes of `L` reads it: a slice or view of `L`, or its own
/// elements ([`InputRef::Stored`]); None for byte strings that are not in C order from their
/// memory's start (read from a copy).
fn direct_input<'a, L: Float>(a: &ArrayArg<'a>) -> Option<InputRef<'a, L>> {
    if let Some(s) = L::slice_of(a) {
        return Some(InputRef::Slice(s));
    }
    if let Some(v) = L::view_of(a) {
        return Some(InputRef::View(v));
    }
    crate::executor::stored_of(a).map(InputRef::Stored)
}

/// `n` copies of `zero` (a type's zero): filled in place where small (the allocator's cache; a
/// zeroed allocation takes a slower path), allocated zeroed where large (fresh pages cost no
/// write, for the floats, integers and bools whose zero the standard library allocates zeroed;
/// complex zeros are written).
fn zeroed<T: Clone>(n: usize, zero: T) -> Vec<T> {
    if n.saturating_mul(std::mem::size_of::<T>()) <= 1 << 16 {
        let mut v = Vec::with_capacity(n);
        v.resize(n, zero);
        v
    } else {
        vec![zero; n]
    }
}
