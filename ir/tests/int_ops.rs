//! kiln-ir's integer semantics against NumPy 2 on edge values: every row of
//! `tests/data/numpy_int_ops.csv` (written by `scripts/numpy_int_ops.py` from NumPy itself; its version
//! is in the file's first line). The test needs no NumPy.

use kiln_ir::int::Int;

fn check<T: Int + std::str::FromStr + std::fmt::Display>(op: &str, a: &str, b: &str, want: &str, line: &str)
where
    <T as std::str::FromStr>::Err: std::fmt::Debug,
{
    let want: T = want.parse().expect("an integer result");
    let got = if op == "cast" {
        T::from_f64(a.parse().expect("a float"))
    } else {
        let a: T = a.parse().expect("an integer operand");
        match op {
            "neg" => a.neg(),
            "abs" => a.abs(),
            "sign" => a.sign(),
            "~" => a.not(),
            _ => {
                let b: T = b.parse().expect("an integer operand");
                match op {
                    "+" => a.add(b),
                    "-" => a.sub(b),
                    "*" => a.mul(b),
                    "//" => a.floor_div(b),
                    "%" => a.rem(b),
                    "**" => a.pow(b),
                    "<<" => a.shl(b),
                    ">>" => a.shr(b),
                    "&" => a.and(b),
                    "|" => a.or(b),
                    "^" => a.xor(b),
                    "minimum" => a.min(b),
                    "maximum" => a.max(b),
                    other => panic!("unknown op {other}"),
                }
            }
        }
    };
    assert_eq!(got, want, "{line}");
}

#[test]
fn every_row_of_numpys_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/numpy_int_ops.csv");
    let text = std::fs::read_to_string(path).expect("the integer table");
    let mut rows = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let [ty, op, a, b, want] = f[..] else {
            panic!("malformed row {line}")
        };
        match ty {
            "int32" => check::<i32>(op, a, b, want, line),
            "int64" => check::<i64>(op, a, b, want, line),
            other => panic!("unknown type {other}"),
        }
        rows += 1;
    }
    assert!(rows > 12_000, "the whole table was read: {rows} rows");
}
