//! The results of `kiln bench`: one [`Row`] per kernel, size, dtype and variant, printed as a table or
//! as JSON lines.

use std::fmt::Write;

/// One measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub kernel: &'static str,
    pub n: usize,
    pub dtype: &'static str,
    pub variant: &'static str,
    pub threads: usize,
    pub ns_per_elem: f64,
    /// Compulsory traffic (arrays read and written) per second, in GB/s.
    pub gbps: f64,
    /// Whether the variant's result agreed with the interpreter within the kernel's tolerance.
    pub ok: bool,
}

fn json_number(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.4}")
    } else {
        "null".into()
    }
}

impl Row {
    /// One JSON object on one line.
    pub fn json(&self) -> String {
        format!(
            r#"{{"kernel":"{}","n":{},"dtype":"{}","variant":"{}","threads":{},"ns_per_elem":{},"gbps":{},"ok":{}}}"#,
            self.kernel,
            self.n,
            self.dtype,
            self.variant,
            self.threads,
            json_number(self.ns_per_elem),
            json_number(self.gbps),
            self.ok
        )
    }
}

/// A readable table: per kernel, size and dtype, each variant with its ratio to the baselines
/// (`x ndarray` > 1 means faster than ndarray; `x loop` > 1 faster than the hand loop).
pub fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<9} {:>9} {:<4} {:<12} {:>3} {:>9} {:>8} {:>10} {:>8}  ok",
        "kernel", "n", "type", "variant", "thr", "ns/elem", "GB/s", "x ndarray", "x loop"
    );
    let mut i = 0;
    while i < rows.len() {
        let group: Vec<&Row> = rows[i..]
            .iter()
            .take_while(|r| (r.kernel, r.n, r.dtype) == (rows[i].kernel, rows[i].n, rows[i].dtype))
            .collect();
        let base = |name: &str| group.iter().find(|r| r.variant == name).map(|r| r.ns_per_elem);
        let (nd, lp) = (base("ndarray"), base("rust-loop"));
        for r in &group {
            let ratio = |b: Option<f64>| {
                b.map(|b| format!("{:.2}", b / r.ns_per_elem))
                    .unwrap_or("-".into())
            };
            let _ = writeln!(
                out,
                "{:<9} {:>9} {:<4} {:<12} {:>3} {:>9.3} {:>8.2} {:>10} {:>8}  {}",
                r.kernel,
                r.n,
                r.dtype,
                r.variant,
                r.threads,
                r.ns_per_elem,
                r.gbps,
                ratio(nd),
                ratio(lp),
                if r.ok { "ok" } else { "WRONG" }
            );
        }
        i += group.len();
    }
    out
}
