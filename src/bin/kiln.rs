//! The `kiln` command line: evaluate and explain text expressions over `.npy` files.

use clap::{Args, Parser, Subcommand};
use kiln::npy::{self, NpyArray};
use kiln::{ArrayArg, FusedRunner, Output};
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
    /// Evaluate an expression over .npy inputs and print the result or write it as .npy.
    ///
    /// Inputs may be f64 or f32 arrays of any dimension, in C or Fortran order; integer and bool
    /// arrays are converted to f64. The result keeps the kernel's dtype (f32 only when every input is
    /// f32); argmin/argmax give int64; any, all, comparisons and logical results give bool. An
    /// expression with no array input gives a 0-d f64 array.
    Eval(EvalArgs),
    /// Print the kernel's IR and its broadcast plan.
    ///
    /// Each --input is a .npy file or a dtype and shape, `NAME=f32[3,4]`. An input not given is
    /// assumed to be f64[1024] when no input is given, else an f64 scalar.
    Explain(ExplainArgs),
    /// Race the seed kernels: fused SIMD, fused scalar, unfused ndarray and a hand-written loop.
    ///
    /// Every variant is checked against the interpreter before it is timed. Prints a table (ns per
    /// element, GB/s of compulsory traffic, ratios to ndarray and to the loop), or JSON lines.
    Bench(BenchArgs),
}

#[derive(Args)]
struct BenchArgs {
    /// Comma-separated kernels: axpy, horner, sumsq, logistic, trig.
    #[arg(long, value_delimiter = ',')]
    kernels: Option<Vec<String>>,
    /// Comma-separated sizes, `10000` or `1e4`.
    #[arg(long, value_delimiter = ',')]
    n: Option<Vec<String>>,
    /// Comma-separated dtypes: f64, f32.
    #[arg(long, value_delimiter = ',')]
    dtype: Option<Vec<String>>,
    /// Threads per kernel (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Milliseconds spent timing each variant.
    #[arg(long, default_value_t = 150)]
    budget_ms: u64,
    /// Print one JSON object per line instead of the table (progress goes to stderr).
    #[arg(long)]
    json: bool,
    /// Also draw throughput against N as an SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

#[derive(Args)]
struct EvalArgs {
    /// The expression, numexpr style: `a*x + y`, `sum(x*x, axis=1)`, `where(x > 0, x, 0)`.
    #[arg(allow_hyphen_values = true)]
    expr: String,
    /// An input, NAME=PATH.npy (repeatable). Inputs the expression does not name are ignored.
    #[arg(long = "input", short = 'i', value_name = "NAME=PATH")]
    inputs: Vec<String>,
    /// Write the result to this .npy file instead of printing it.
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
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
    /// default (exact rewrites only), approximate (prefix_scan on, FMA allowed) or reproducible (the
    /// same bits on any machine; prefix_scan pinned off).
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
        kiln::Settings::new(profile, scan).map_err(|e| e.to_string())
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
    /// The JIT schedule the dumps are for: `jit` (SIMD) or `jit-scalar`.
    #[arg(long, default_value = "jit", value_parser = ["jit", "jit-scalar"])]
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
        Err(e) => {
            eprintln!("kiln: error: {e}");
            ExitCode::FAILURE
        }
    }
}

type CliResult<T> = Result<T, String>;

fn split_binding(s: &str) -> CliResult<(&str, &str)> {
    s.split_once('=')
        .filter(|(n, v)| !n.is_empty() && !v.is_empty())
        .ok_or_else(|| format!("--input '{s}' is not of the form NAME=VALUE"))
}

fn load_inputs(specs: &[String]) -> CliResult<Vec<(String, NpyArray)>> {
    let mut out: Vec<(String, NpyArray)> = Vec::new();
    for spec in specs {
        let (name, value) = split_binding(spec)?;
        if out.iter().any(|(n, _)| n == name) {
            return Err(format!("input '{name}' is given twice"));
        }
        let array = match parse_shape_spec(value)? {
            Some(a) => a,
            None => npy::read(value.as_ref()).map_err(|e| e.to_string())?,
        };
        out.push((name.to_string(), array));
    }
    Ok(out)
}

/// `f64[3,4]` or `f32[]`: an array of zeros of that dtype and shape (for explain only).
fn parse_shape_spec(value: &str) -> CliResult<Option<NpyArray>> {
    let Some((dtype, rest)) = value.split_once('[') else {
        return Ok(None);
    };
    if dtype != "f64" && dtype != "f32" {
        return Ok(None);
    }
    let dims = rest
        .strip_suffix(']')
        .ok_or_else(|| format!("shape spec '{value}' is missing its closing ']'"))?;
    let shape = dims
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            d.parse::<usize>()
                .map_err(|_| format!("bad dimension '{d}' in '{value}'"))
        })
        .collect::<CliResult<Vec<usize>>>()?;
    let size = kiln::kiln_ir::shape::checked_size(&shape).map_err(|e| e.to_string())?;
    if size > 1 << 24 {
        return Err(format!(
            "shape spec '{value}' is too large for explain (over 2^24 elements)"
        ));
    }
    let shape = ndarray::IxDyn(&shape);
    Ok(Some(if dtype == "f64" {
        NpyArray::F64(ndarray::ArrayD::zeros(shape))
    } else {
        NpyArray::F32(ndarray::ArrayD::zeros(shape))
    }))
}

fn args_of(inputs: &[(String, NpyArray)]) -> Vec<(&str, ArrayArg<'_>)> {
    inputs
        .iter()
        .map(|(name, a)| {
            let arg = match a {
                NpyArray::F64(a) => ArrayArg::from(a),
                NpyArray::F32(a) => ArrayArg::from(a),
            };
            (name.as_str(), arg)
        })
        .collect()
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
    let inputs = load_inputs(&args.inputs)?;
    let out = runner.run(&args_of(&inputs)).map_err(|e| e.to_string())?;
    match args.out {
        Some(path) => npy::write(&path, &out).map_err(|e| e.to_string()),
        None => {
            print_output(&out);
            Ok(())
        }
    }
}

fn print_output(out: &Output) {
    let text = match out {
        Output::F64(a) => nested(a.shape(), &a.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>()),
        Output::F32(a) => nested(a.shape(), &a.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>()),
        Output::I64(a) => nested(a.shape(), &a.iter().map(|v| v.to_string()).collect::<Vec<_>>()),
        Output::Bool(a) => nested(a.shape(), &a.iter().map(|v| v.to_string()).collect::<Vec<_>>()),
    };
    println!("{text}");
}

/// Row-major elements as nested brackets, `[[1.0, 2.0], [3.0, 4.0]]`; a 0-d array as its element.
fn nested(shape: &[usize], items: &[String]) -> String {
    match shape.split_first() {
        None => items.first().cloned().unwrap_or_default(),
        Some((&n, rest)) => {
            let step = rest.iter().product::<usize>();
            let parts: Vec<String> = (0..n)
                .map(|i| nested(rest, &items[i * step..(i + 1) * step]))
                .collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

fn explain(args: ExplainArgs) -> CliResult<()> {
    let runner = FusedRunner::compile_text(&args.expr)
        .map_err(|e| e.to_string())?
        .with_settings(args.rewrites.settings()?);
    let mut inputs = load_inputs(&args.inputs)?;
    let assumed: &[usize] = if inputs.is_empty() { &[1024] } else { &[] };
    for name in runner.input_names() {
        if !inputs.iter().any(|(n, _)| n == name) {
            println!("# {name} not given: assumed f64{assumed:?}");
            inputs.push((
                name.clone(),
                NpyArray::F64(ndarray::ArrayD::zeros(ndarray::IxDyn(assumed))),
            ));
        }
    }
    let mut all = runner
        .explain_rewrites(&args_of(&inputs))
        .map_err(|e| e.to_string())?;
    let settings = runner.settings();
    println!(
        "# profile {}, prefix_scan {}",
        settings.profile,
        if settings.prefix_scan { "on" } else { "off" }
    );
    let notes = |notes: &[String]| {
        for n in notes {
            println!("# rewrite {n}");
        }
    };
    if all.len() > 1 {
        // several kernels: the plan (what flows between them), then each kernel
        print!("{}", runner.pipeline());
        for (k, (kernel, plan, rewrites)) in all.iter().enumerate() {
            println!("# kernel {k}");
            notes(rewrites);
            print!("{kernel}{plan}");
        }
    }
    let (kernel, plan, rewrites) = all.pop().expect("a pipeline has a kernel");
    if runner.pipeline().stages.len() == 1 {
        notes(&rewrites);
        print!("{kernel}{plan}");
    }
    if args.clif || args.asm {
        let schedule = match args.backend.as_str() {
            "jit-scalar" => kiln_jit::Schedule::scalar(),
            _ => kiln_jit::Schedule::for_kernel(&kernel),
        };
        let compiled =
            kiln_jit::CompiledKernel::explain(&kernel, &plan, schedule).map_err(|e| e.to_string())?;
        println!(
            "schedule {:?}, compiled in {:?}",
            compiled.schedule(),
            compiled.compile_time()
        );
        let dumps = compiled.dumps().ok_or("the JIT kept no dumps")?;
        if args.clif {
            println!("; clif\n{}", dumps.clif);
        }
        if args.asm {
            println!(
                "; machine code\n{}",
                dumps.vcode.as_deref().unwrap_or("(not available)")
            );
        }
    }
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
        _ => Err(format!("--n: '{s}' is not a size")),
    }
}

fn bench(args: BenchArgs) -> CliResult<()> {
    use kiln::bench::{self, kernels::Kernel};
    let mut config = bench::Config {
        threads: args.threads.unwrap_or_else(kiln::parallel::available_threads),
        ..Default::default()
    };
    config.budget = std::time::Duration::from_millis(args.budget_ms.max(1));
    if let Some(names) = &args.kernels {
        config.kernels = names
            .iter()
            .map(|k| Kernel::from_name(k.trim()).ok_or_else(|| format!("--kernels: unknown kernel '{k}'")))
            .collect::<CliResult<_>>()?;
    }
    if let Some(ns) = &args.n {
        config.ns = ns.iter().map(|s| parse_size(s)).collect::<CliResult<_>>()?;
    }
    if let Some(dtypes) = &args.dtype {
        config.dtypes = dtypes
            .iter()
            .map(|d| match d.trim() {
                "f64" => Ok(kiln::kiln_ir::DType::F64),
                "f32" => Ok(kiln::kiln_ir::DType::F32),
                other => Err(format!("--dtype: '{other}' is not f64 or f32")),
            })
            .collect::<CliResult<_>>()?;
    }
    let json = args.json;
    let rows = bench::run(&config, |step| {
        if json {
            eprintln!("# {step}");
        }
    })
    .map_err(|e| e.to_string())?;
    if json {
        for r in &rows {
            println!("{}", r.json());
        }
    } else {
        print!("{}", bench::report::table(&rows));
    }
    if let Some(path) = &args.plot {
        std::fs::write(path, bench::plot::svg(&rows)).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
