//! The results of `kiln bench`: one [`Row`] per kernel, size, dtype and variant, printed as a table or
//! as JSON lines.

use std::fmt::Write;

/// One measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The kernel's name.
    pub kernel: &'static str,
    /// The size N (points of the iteration space).
    pub n: usize,
    /// The element type (`f64`, `f32`; an integer kernel's own types).
    pub dtype: &'static str,
    /// The variant: `kiln-simd`, `kiln-scalar`, `ndarray` or `rust-loop`.
    pub variant: &'static str,
    /// The threads the variant ran on.
    pub threads: usize,
    /// The median time per element, in ns.
    pub ns_per_elem: f64,
    /// Compulsory traffic (arrays read and written) per second, in GB/s.
    pub gbps: f64,
    /// Whether the variant's result agreed with the interpreter within the kernel's tolerance.
    pub ok: bool,
}

/// What the rows of one kernel, size and element type share: each variant's row is its median time
/// over these, per element and as GB/s of the compulsory traffic.
pub(crate) struct Timed {
    /// The kernel's name.
    pub kernel: &'static str,
    /// The size N.
    pub n: usize,
    /// The element type.
    pub dtype: &'static str,
    /// The bytes the kernel must read and write, once.
    pub bytes: f64,
}

impl Timed {
    /// The row of `variant` on `threads` threads, `ns` a median call's time.
    pub(crate) fn row(&self, variant: &'static str, threads: usize, ns: f64, ok: bool) -> Row {
        Row {
            kernel: self.kernel,
            n: self.n,
            dtype: self.dtype,
            variant,
            threads,
            ns_per_elem: ns / self.n.max(1) as f64,
            gbps: self.bytes / ns,
            ok,
        }
    }
}

/// A JSON number with four decimals, or `null` for a NaN or an infinity.
pub(crate) fn json_number(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.4}")
    } else {
        "null".into()
    }
}

/// A JSON string literal: `s` quoted, with `"`, `\\` and control characters escaped.
pub(crate) fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
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
    let _ = writeln!(out, "{}", super::KILN_CALL);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::programs::ProgramRow;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_string(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(json_string("x\ny"), r#""x\u000ay""#);
    }

    #[test]
    fn a_program_row_is_one_json_object() {
        let row = ProgramRow {
            name: "softmax rows",
            size: "1000x1000 f32".into(),
            api: "prepared handle, run_into",
            kiln_ns: 2.0e6,
            plain_ns: 5.0e6,
            max_rel_diff: 5.6e-9,
        };
        assert_eq!(
            row.json(),
            r#"{"program":"softmax rows","size":"1000x1000 f32","api":"prepared handle, run_into","kiln_ns":2000000.0000,"plain_ns":5000000.0000,"ratio":2.5000,"max_rel_diff":5.6e-9}"#
        );
    }
}
