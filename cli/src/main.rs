//! The `kiln` command line: evaluate and explain text expressions over `.npy` files.

use clap::{Args, Parser, Subcommand};
use kiln::npy::{self, NpyArray};
use kiln::{ArrayArg, FusedRunner, Output};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "kiln",
    version,
    about = "A JIT kernel-fusion engine for array expressions"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate an expression over .npy inputs and print the result or write it as .npy. Several
    /// expressions separated by `;` give one result each (printed one per line, or one --out each).
    ///
    /// Inputs may be f64, f32, int64 (<i8), int32 (<i4) or bool (|b1) arrays of any dimension, in C
    /// or Fortran order; other integer types (i1 i2 u1 u2 u4) are widened exactly to int64, and u8 to
    /// int64 when every value fits (else an error). Types follow NumPy 2 (NEP 50): int32 + int32 is
    /// int32, int32 + float32 float64, literals are weak; a kernel with an integer or bool value is
    /// compiled by the JIT in its values' own types, or interpreted where it declines (`kiln explain`
    /// says which). The result keeps its type (--out writes it in that type); argmin/argmax
    /// give int64; any, all, comparisons and logical results give bool. An expression with no array
    /// input gives a 0-d array.
    Eval(EvalArgs),
    /// Print the kernel's IR and its broadcast plan.
    ///
    /// Each --input is a .npy file or a dtype and shape, `NAME=f32[3,4]` (f64, f32, i64, i32, bool, c64, c128). An input not given is
    /// assumed to be f64[1024] when no input is given, else an f64 scalar.
    Explain(ExplainArgs),
    /// Race the seed kernels: fused SIMD, fused scalar, unfused ndarray and a hand-written loop.
    ///
    /// The float kernels run in each --dtype (f64, f32); the integer kernels intmod, masksum, midsum
    /// and intcumsum have fixed types (int32; int64 and bool; int64; int64) and run once per N where
    /// --dtype is not given or names `int`. Every variant is checked against the interpreter before it is timed. Prints a table (ns per
    /// element, GB/s of compulsory traffic, ratios to ndarray and to the loop), or JSON lines.
    Bench(BenchArgs),
}

#[derive(Args)]
struct BenchArgs {
    /// Comma-separated kernels: axpy, horner, sumsq, logistic, trig, cumsum, rowsum (an (N/1000, 1000)
    /// array summed along axis 1), colsum (the same along axis 0); and the integer kernels intmod
    /// (`(i*3 + j) % 7`, int32), masksum (`sum(where(p, i, 0))`, int64 i, bool p), midsum
    /// (`sum(i, axis=1)` of int64 i as (N/160, 16, 10)) and intcumsum (`cumsum(i)`, int64 i).
    #[arg(long, value_delimiter = ',')]
    kernels: Option<Vec<String>>,
    /// Comma-separated sizes, `10000` or `1e4`.
    #[arg(long, value_delimiter = ',')]
    n: Option<Vec<String>>,
    /// Comma-separated dtypes: f64, f32 (the float kernels' type), int (the integer kernels, which
    /// have fixed types: intmod int32, masksum int64 and bool, midsum and intcumsum int64, each run
    /// once per N). Default: all
    /// three; a list without `int` leaves the integer kernels out, one without f64 or f32 the float ones.
    #[arg(long, value_delimiter = ',')]
    dtype: Option<Vec<String>>,
    /// Threads of the kiln variants (default 1, as the baselines, which always run on one).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// The profile of the kiln variants: default, approximate or reproducible.
    #[arg(long, default_value = "default", value_parser = ["default", "approximate", "reproducible"])]
    profile: String,
    /// Milliseconds spent timing each variant.
    #[arg(long, default_value_t = 150)]
    budget_ms: u64,
    /// Print one JSON object per line instead of the table (progress goes to stderr); with
    /// --programs, one per program.
    #[arg(long)]
    json: bool,
    /// Also draw throughput against N as an SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Time whole programs instead (Black-Scholes, softmax, logsumexp, layer norm, the particle
    /// step, `tanh(M)*2 + M**2`), each against plain ndarray/Rust, checked to agree first.
    #[arg(long)]
    programs: bool,
    /// Time every function of numexpr's set instead (exp, log, sin, cos, tan, sqrt, tanh, sinh,
    /// cosh, arcsin, arccos, arctan, arcsinh, arccosh, arctanh, log1p, expm1, log2, log10, exp2,
    /// cbrt, arctan2, hypot, x**y, x**1.5, 2.5**x), kiln's call against std's scalar loop, each
    /// checked against the interpreter first; `--kernels` picks functions by name. Default N 1e6.
    #[arg(long, conflicts_with = "programs")]
    functions: bool,
}

#[derive(Args)]
struct EvalArgs {
    /// The expression, numexpr style: `a*x + y`, `sum(x*x, axis=1)`, `where(x > 0, x, 0)`.
    #[arg(allow_hyphen_values = true)]
    expr: String,
    /// An input, NAME=PATH.npy (repeatable). Inputs the expression does not name are ignored.
    #[arg(long = "input", short = 'i', value_name = "NAME=PATH")]
    inputs: Vec<String>,
    /// Write the result to this .npy file instead of printing it; one --out per result for several
    /// expressions separated by `;` (`"call; put" --out call.npy --out put.npy`).
    #[arg(long, value_name = "PATH")]
    out: Vec<PathBuf>,
    /// The backend that runs the kernel.
    #[arg(long, default_value = "jit", value_parser = kiln::BACKENDS)]
    backend: String,
    /// Threads (default: every core; the result's bits do not depend on it).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    threads: Option<u64>,
    #[command(flatten)]
    rewrites: RewriteArgs,
}

/// The profile and the rewrites it allows (eval and explain).
#[derive(Args)]
struct RewriteArgs {
    /// default (exact rewrites only), approximate (prefix_scan on, integer powers as multiplication
    /// chains, FMA allowed) or reproducible (the same bits on any machine; prefix_scan pinned off).
    #[arg(long, default_value = "default", value_parser = ["default", "approximate", "reproducible"])]
    profile: String,
    /// Replace triangular-mask contractions by O(n) scans (default: the profile's choice).
    #[arg(long, value_parser = ["on", "off"])]
    prefix_scan: Option<String>,
}

impl RewriteArgs {
    fn settings(&self) -> CliResult<kiln::Settings> {
        let profile = kiln::Profile::from_name(&self.profile).map_err(|e| e.to_string())?;
        let scan = self.prefix_scan.as_deref().map(|s| s == "on");
        Ok(kiln::Settings::new(profile, scan).map_err(|e| e.to_string())?)
    }
}

#[derive(Args)]
struct ExplainArgs {
    /// The expression.
    #[arg(allow_hyphen_values = true)]
    expr: String,
    /// An input, NAME=PATH.npy or NAME=DTYPE[SHAPE] (repeatable).
    #[arg(long = "input", short = 'i', value_name = "NAME=SPEC")]
    inputs: Vec<String>,
    /// Also print the Cranelift IR of the compiled kernel.
    #[arg(long)]
    clif: bool,
    /// Also print the compiled kernel's machine code (Cranelift's lowered VCode listing).
    #[arg(long)]
    asm: bool,
    /// The backend the plan is for (`interp` runs compound reductions: sibling reductions merged),
    /// and the JIT schedule the dumps are for: `jit` (SIMD) or `jit-scalar`.
    #[arg(long, default_value = "jit", value_parser = ["jit", "jit-scalar", "interp"])]
    backend: String,
    #[command(flatten)]
    rewrites: RewriteArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Eval(args) => eval(args),
        Command::Explain(args) => explain(args),
        Command::Bench(args) => bench(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // the reader went away (`kiln eval ... | head`): stop quietly, as Unix tools do
        Err(Failure::BrokenPipe) => ExitCode::SUCCESS,
        Err(Failure::Message(e)) => {
            eprintln!("kiln: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Why a command stopped: an error to report, or a closed standard output.
enum Failure {
    Message(String),
    BrokenPipe,
}

impl From<String> for Failure {
    fn from(s: String) -> Failure {
        Failure::Message(s)
    }
}

impl From<&str> for Failure {
    fn from(s: &str) -> Failure {
        Failure::Message(s.to_string())
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            Failure::Message(format!("writing to standard output: {e}"))
        }
    }
}

type CliResult<T> = Result<T, Failure>;

/// Standard output, buffered; every write's error is handled (a closed pipe ends the command).
fn stdout() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}

fn split_binding(s: &str) -> CliResult<(&str, &str)> {
    let (name, value) = s
        .split_once('=')
        .filter(|(n, v)| !n.is_empty() && !v.is_empty())
        .ok_or_else(|| format!("--input '{s}' is not of the form NAME=VALUE"))?;
    let ident = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        return Err(format!(
            "--input '{s}': '{name}' is not a name (letters, digits and _, not starting with a digit)"
        )
        .into());
    }
    if kiln::text::is_reserved(name) {
        return Err(format!(
            "--input '{s}': '{name}' is a literal or keyword of the language, not an input name"
        )
        .into());
    }
    Ok((name, value))
}

fn load_inputs(specs: &[String]) -> CliResult<Vec<(String, NpyArray)>> {
    let mut out: Vec<(String, NpyArray)> = Vec::new();
    for spec in specs {
        let (name, value) = split_binding(spec)?;
        if out.iter().any(|(n, _)| n == name) {
            return Err(format!("input '{name}' is given twice").into());
        }
        let array = match parse_shape_spec(value)? {
            Some(a) => a,
            None => npy::read(value.as_ref()).map_err(|e| e.to_string())?,
        };
        out.push((name.to_string(), array));
    }
    Ok(out)
}

/// `f64[3,4]`, `f64[7,]` or `f32[]`: an array of zeros of that dtype and shape (for explain only;
/// see [`npy::shape_spec`]).
fn parse_shape_spec(value: &str) -> CliResult<Option<NpyArray>> {
    // `i32[..]`, `i64[..]`, `bool[..]`, `c64[..]`, `c128[..]`: the shape read as an f64 spec's,
    // zeros of that type
    let integer = ["i32", "i64", "bool", "c64", "c128"]
        .into_iter()
        .find(|t| value.strip_prefix(t).is_some_and(|r| r.starts_with('[')));
    let spec = match integer {
        Some(t) => format!("f64{}", &value[t.len()..]),
        None => value.to_string(),
    };
    let Some((dtype, shape)) = npy::shape_spec(&spec).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    if let Some(t) = integer {
        let size: usize = shape.iter().product();
        if size > 1 << 24 {
            return Err(format!("shape spec '{value}' is too large for explain (over 2^24 elements)").into());
        }
        let shape = ndarray::IxDyn(&shape);
        return Ok(Some(match t {
            "i32" => NpyArray::I32(ndarray::ArrayD::zeros(shape)),
            "i64" => NpyArray::I64(ndarray::ArrayD::zeros(shape)),
            "c64" => NpyArray::C64(ndarray::ArrayD::zeros(shape)),
            "c128" => NpyArray::C128(ndarray::ArrayD::zeros(shape)),
            _ => NpyArray::Bool(ndarray::ArrayD::from_elem(shape, false)),
        }));
    }
    let size: usize = shape.iter().product();
    if size > 1 << 24 {
        return Err(format!("shape spec '{value}' is too large for explain (over 2^24 elements)").into());
    }
    let shape = ndarray::IxDyn(&shape);
    Ok(Some(match dtype {
        kiln::kiln_ir::ElemType::F64 => NpyArray::F64(ndarray::ArrayD::zeros(shape)),
        kiln::kiln_ir::ElemType::F32 => NpyArray::F32(ndarray::ArrayD::zeros(shape)),
        _ => unreachable!("only float types (f32, f64) reach here"),
    }))
}

fn args_of(inputs: &[(String, NpyArray)]) -> Vec<(&str, ArrayArg<'_>)> {
    inputs.iter().map(|(name, a)| (name.as_str(), a.arg())).collect()
}

fn eval(args: EvalArgs) -> CliResult<()> {
    let runner = FusedRunner::compile_text(&args.expr)
        .map_err(|e| e.to_string())?
        .with_backend(kiln::backend_by_name(&args.backend).map_err(|e| e.to_string())?)
        .with_settings(args.rewrites.settings()?);
    let runner = match args.threads {
        Some(t) => runner.with_threads(t as usize),
        None => runner,
    };
    if !args.out.is_empty() && args.out.len() != runner.n_results() {
        return Err(format!(
            "{} --out given for {} results: give one per result, or none to print them",
            args.out.len(),
            runner.n_results()
        )
        .into());
    }
    let inputs = load_inputs(&args.inputs)?;
    let outs = if runner.n_results() == 1 {
        vec![runner.run(&args_of(&inputs)).map_err(|e| e.to_string())?]
    } else {
        runner.run_many(&args_of(&inputs)).map_err(|e| e.to_string())?
    };
    if args.out.is_empty() {
        // one result per line, in the order of the expressions
        let mut w = stdout();
        for out in &outs {
            print_output(&mut w, out)?;
        }
        w.flush()?;
        return Ok(());
    }
    for (path, out) in args.out.iter().zip(&outs) {
        npy::write(path, out).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Prints a result as nested brackets, `[[1.0, 2.0], [3.0, 4.0]]` (a 0-d array as its element),
/// streaming: no text of the whole array is built.
fn print_output(w: &mut impl Write, out: &Output) -> std::io::Result<()> {
    match out {
        Output::F64(a) => nested(w, a.shape(), &mut a.iter(), |w, v| write!(w, "{v:?}")),
        Output::F32(a) => nested(w, a.shape(), &mut a.iter(), |w, v| write!(w, "{v:?}")),
        Output::I64(a) => nested(w, a.shape(), &mut a.iter(), |w, v| write!(w, "{v}")),
        Output::I32(a) => nested(w, a.shape(), &mut a.iter(), |w, v| write!(w, "{v}")),
        Output::Bool(a) => nested(w, a.shape(), &mut a.iter(), |w, v| write!(w, "{v}")),
        Output::C64(a) => nested(w, a.shape(), &mut a.iter(), |w, z| complex(w, z.re, z.im)),
        Output::C128(a) => nested(w, a.shape(), &mut a.iter(), |w, z| complex(w, z.re, z.im)),
        // as NumPy's elements print: trailing NULs dropped
        Output::Bytes(b) => nested(w, &b.shape, &mut b.data.chunks(b.width.max(1)), |w, s| {
            let end = s.iter().rposition(|&c| c != 0).map_or(0, |e| e + 1);
            write!(w, "{}", kiln::kiln_ir::bytes::Repr(&s[..end]))
        }),
    }?;
    writeln!(w)
}

/// A complex number as `(re±imj)`, each part as a float of its own type prints (`0.1` of a
/// complex64 stays `0.1`), NaN and infinities as Python writes them (`(nan+infj)`), the sign of a
/// zero imaginary part kept (`(1.0-0.0j)`).
fn complex<F: Copy + std::fmt::Debug + Into<f64>>(w: &mut impl Write, re: F, im: F) -> std::io::Result<()> {
    let part = |v: F| {
        let x: f64 = v.into();
        if x.is_nan() {
            "nan".to_string()
        } else if x.is_infinite() {
            if x > 0.0 { "inf" } else { "-inf" }.to_string()
        } else {
            format!("{v:?}")
        }
    };
    let i: f64 = im.into();
    let sign = if i.is_sign_negative() && !i.is_nan() {
        "-"
    } else {
        "+"
    };
    write!(w, "({}{sign}{}j)", part(re), part(im).trim_start_matches('-'))
}

/// Writes the next `shape.iter().product()` items of `items` (row-major) as nested brackets.
fn nested<W: Write, T>(
    w: &mut W,
    shape: &[usize],
    items: &mut impl Iterator<Item = T>,
    item: impl Fn(&mut W, T) -> std::io::Result<()> + Copy,
) -> std::io::Result<()> {
    match shape.split_first() {
        None => match items.next() {
            Some(v) => item(w, v),
            None => Ok(()),
        },
        Some((&n, rest)) => {
            w.write_all(b"[")?;
            for i in 0..n {
                if i > 0 {
                    w.write_all(b", ")?;
                }
                nested(w, rest, items, item)?;
            }
            w.write_all(b"]")
        }
    }
}

fn explain(args: ExplainArgs) -> CliResult<()> {
    let mut w = stdout();
    let runner = FusedRunner::compile_text(&args.expr)
        .map_err(|e| e.to_string())?
        .with_settings(args.rewrites.settings()?)
        .with_backend(kiln::backend_by_name(&args.backend).map_err(|e| e.to_string())?);
    let mut inputs = load_inputs(&args.inputs)?;
    let assumed: &[usize] = if inputs.is_empty() { &[1024] } else { &[] };
    for name in runner.input_names() {
        if !inputs.iter().any(|(n, _)| n == name) {
            writeln!(w, "# {name} not given: assumed f64{assumed:?}")?;
            inputs.push((
                name.clone(),
                NpyArray::F64(ndarray::ArrayD::zeros(ndarray::IxDyn(assumed))),
            ));
        }
    }
    let opts = kiln::ExplainOptions {
        clif: args.clif,
        asm: args.asm,
    };
    let text = runner
        .explain_text(&args_of(&inputs), opts)
        .map_err(|e| e.to_string())?;
    write!(w, "{text}")?;
    w.flush()?;
    Ok(())
}

/// `1e4`, `10000` or `1_000_000` as a size.
fn parse_size(s: &str) -> CliResult<usize> {
    let t = s.trim().replace('_', "");
    if let Ok(n) = t.parse::<usize>() {
        return Ok(n);
    }
    match t.parse::<f64>() {
        Ok(v) if v >= 0.0 && v.fract() == 0.0 && v <= 1e15 => Ok(v as usize),
        _ => Err(format!("--n: '{s}' is not a size").into()),
    }
}

fn bench(args: BenchArgs) -> CliResult<()> {
    use kiln_cli::bench::{self, ints::IntKernel, kernels::Kernel};
    let mut config = bench::Config {
        threads: args.threads,
        profile: kiln::Profile::from_name(&args.profile).map_err(|e| e.to_string())?,
        ..Default::default()
    };
    config.budget = std::time::Duration::from_millis(args.budget_ms.max(1));
    let mut functions: Vec<&'static bench::functions::Function> = Vec::new();
    if args.functions {
        use bench::functions::{FUNCTIONS, Function};
        functions = match &args.kernels {
            None => FUNCTIONS.iter().collect(),
            Some(names) => names
                .iter()
                .map(|k| {
                    Function::from_name(k.trim())
                        .ok_or_else(|| format!("--kernels: unknown function '{k}' (with --functions)"))
                })
                .collect::<Result<_, _>>()?,
        };
        config.ns = vec![1_000_000];
    } else if let Some(names) = &args.kernels {
        config.kernels.clear();
        config.int_kernels.clear();
        for k in names {
            match (Kernel::from_name(k.trim()), IntKernel::from_name(k.trim())) {
                (Some(f), _) => config.kernels.push(f),
                (None, Some(i)) => config.int_kernels.push(i),
                (None, None) => return Err(format!("--kernels: unknown kernel '{k}'").into()),
            }
        }
    }
    if let Some(ns) = &args.n {
        config.ns = ns.iter().map(|s| parse_size(s)).collect::<CliResult<_>>()?;
    }
    if let Some(dtypes) = &args.dtype {
        let mut int = false;
        config.dtypes.clear();
        for d in dtypes {
            match d.trim() {
                "f64" => config.dtypes.push(kiln::kiln_ir::ElemType::F64),
                "f32" => config.dtypes.push(kiln::kiln_ir::ElemType::F32),
                "int" => int = true,
                other => return Err(format!("--dtype: '{other}' is not f64, f32 or int").into()),
            }
        }
        if !int {
            config.int_kernels.clear();
        }
    }
    let json = args.json;
    if args.programs {
        let budget = config.budget.max(std::time::Duration::from_millis(300));
        let rows = bench::programs::run(config.threads, budget, |step| eprintln!("# {step}"))
            .map_err(|e| e.to_string())?;
        let mut w = stdout();
        if json {
            for r in &rows {
                writeln!(w, "{}", r.json())?;
            }
        } else {
            write!(w, "{}", bench::programs::table(&rows))?;
        }
        w.flush()?;
        return Ok(());
    }
    let progress = |step: &str| {
        if json {
            eprintln!("# {step}");
        }
    };
    let rows = if args.functions {
        bench::functions::run(&config, &functions, progress)
    } else {
        bench::run(&config, progress)
    }
    .map_err(|e| e.to_string())?;
    let mut w = stdout();
    if json {
        for r in &rows {
            writeln!(w, "{}", r.json())?;
        }
    } else {
        write!(w, "{}", bench::report::table(&rows))?;
    }
    w.flush()?;
    if let Some(path) = &args.plot {
        std::fs::write(path, bench::plot::svg(&rows)).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
