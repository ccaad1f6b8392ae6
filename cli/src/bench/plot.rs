//! `--plot FILE.svg`: throughput against N, a line per variant, a panel per kernel (f64 solid, f32
//! dashed). Plain SVG written directly: a few rectangles, lines and labels need no plotting crate.

use super::report::Row;
use std::fmt::Write;

const PANEL_W: f64 = 360.0;
const PANEL_H: f64 = 240.0;
const MARGIN: f64 = 48.0;
const COLORS: [&str; 6] = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];

/// The SVG document for `rows`.
pub fn svg(rows: &[Row]) -> String {
    let mut kernels: Vec<&str> = Vec::new();
    let mut variants: Vec<&str> = Vec::new();
    for r in rows {
        if !kernels.contains(&r.kernel) {
            kernels.push(r.kernel);
        }
        if !variants.contains(&r.variant) {
            variants.push(r.variant);
        }
    }
    let cols = kernels.len().clamp(1, 3);
    let panels_down = kernels.len().div_ceil(cols).max(1);
    let (w, h) = (
        cols as f64 * (PANEL_W + MARGIN) + MARGIN,
        panels_down as f64 * (PANEL_H + MARGIN) + 60.0,
    );
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for (vi, v) in variants.iter().enumerate() {
        let x = MARGIN + vi as f64 * 110.0;
        let _ = writeln!(
            s,
            r#"<line x1="{x}" y1="16" x2="{}" y2="16" stroke="{}" stroke-width="2"/><text x="{}" y="20">{v}</text>"#,
            x + 20.0,
            COLORS[vi % COLORS.len()],
            x + 24.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="20">solid f64, dashed f32; y: GB/s, x: N</text>"#,
        MARGIN + variants.len() as f64 * 110.0
    );
    for (ki, k) in kernels.iter().enumerate() {
        let ox = MARGIN + (ki % cols) as f64 * (PANEL_W + MARGIN);
        let oy = 40.0 + (ki / cols) as f64 * (PANEL_H + MARGIN);
        panel(&mut s, rows, k, &variants, ox, oy);
    }
    s.push_str("</svg>\n");
    s
}

fn panel(s: &mut String, rows: &[Row], kernel: &str, variants: &[&str], ox: f64, oy: f64) {
    let mine: Vec<&Row> = rows
        .iter()
        .filter(|r| r.kernel == kernel && r.gbps.is_finite())
        .collect();
    let (nmin, nmax) = mine.iter().fold((f64::MAX, f64::MIN), |(a, b), r| {
        let l = (r.n.max(1) as f64).log10();
        (a.min(l), b.max(l))
    });
    let ymax = mine.iter().map(|r| r.gbps).fold(0.0f64, f64::max).max(1e-9) * 1.1;
    let span = (nmax - nmin).max(1.0);
    let px = |n: usize| ox + ((n.max(1) as f64).log10() - nmin) / span * PANEL_W;
    let py = |g: f64| oy + PANEL_H - g / ymax * PANEL_H;
    let _ = writeln!(
        s,
        r##"<rect x="{ox}" y="{oy}" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="#888"/><text x="{}" y="{}" font-weight="bold">{kernel}</text>"##,
        ox + 4.0,
        oy + 14.0
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}">{:.1}</text>"#,
        ox - 40.0,
        oy + 10.0,
        ymax
    );
    let _ = writeln!(s, r#"<text x="{}" y="{}">0</text>"#, ox - 12.0, oy + PANEL_H);
    for (vi, v) in variants.iter().enumerate() {
        for (dtype, dash) in [("f64", ""), ("f32", r#" stroke-dasharray="5,3""#)] {
            let mut pts: Vec<&&Row> = mine
                .iter()
                .filter(|r| r.variant == *v && r.dtype == dtype)
                .collect();
            pts.sort_by_key(|r| r.n);
            if pts.is_empty() {
                continue;
            }
            let path: Vec<String> = pts
                .iter()
                .map(|r| format!("{:.1},{:.1}", px(r.n), py(r.gbps)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5"{dash}/>"#,
                path.join(" "),
                COLORS[vi % COLORS.len()]
            );
        }
    }
    let mut ns: Vec<usize> = mine.iter().map(|r| r.n).collect();
    ns.sort_unstable();
    ns.dedup();
    for n in ns {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{n:.0e}</text>"#,
            px(n),
            oy + PANEL_H + 14.0
        );
    }
}
