//! kiln-ir's promotion rules against NumPy 2's answers for every pair of bool, int32, int64, float32,
//! float64 arrays and int/float literals, for `+ - * / // % ** < &` and `where`.
//!
//! The table `tests/data/numpy_promotion.csv` was written by `scripts/numpy_promotion.py` from NumPy
//! itself (its version is in the file's first line); this test needs no NumPy.

use kiln_ir::promote::{ElemType, Operand, PromoteError, PromoteOp, binary};

fn operand(spec: &str) -> Operand {
    if let Some(v) = spec.strip_prefix("int:") {
        Operand::Int(v.parse().expect("an integer literal"))
    } else if let Some(v) = spec.strip_prefix("float:") {
        Operand::Float(v.parse().expect("a float literal"))
    } else {
        Operand::Array(ElemType::from_name(spec).expect("a dtype name"))
    }
}

fn op(name: &str) -> PromoteOp {
    match name {
        "+" | "*" => PromoteOp::Arith,
        "-" => PromoteOp::Sub,
        "/" => PromoteOp::TrueDiv,
        "//" => PromoteOp::FloorDiv,
        "%" => PromoteOp::Rem,
        "**" => PromoteOp::Pow,
        "<" => PromoteOp::Compare,
        "&" => PromoteOp::Bitwise,
        "where" => PromoteOp::Where,
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn every_row_of_numpys_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/numpy_promotion.csv");
    let text = std::fs::read_to_string(path).expect("the promotion table");
    let (mut checked, mut int8, mut wrapped) = (0, 0, 0);
    for line in text.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let [name, a, b, numpy] = f[..] else {
            panic!("malformed row {line}")
        };
        let ours = binary(op(name), operand(a), operand(b));
        match (&ours, numpy) {
            (Ok(t), _) => assert_eq!(t.name(), numpy, "{line}"),
            // NumPy's int8 for `//`, `%`, `**` of two bools: kiln refuses with a message
            (Err(e @ PromoteError::BoolToInt8 { .. }), "int8") => {
                assert_eq!(e.numpy_exception(), "int8");
                int8 += 1;
            }
            // where(c, int32, 3000000000): NumPy wraps the literal to int32; kiln refuses it as the
            // operators do (the one deliberate difference)
            (Err(PromoteError::LiteralOutOfRange { .. }), "int32") if name == "where" => {
                wrapped += 1;
            }
            (Err(e), _) => assert_eq!(
                Some(e.numpy_exception()),
                numpy.strip_prefix("error:"),
                "{line}: kiln says {e}"
            ),
        }
        checked += 1;
    }
    assert_eq!(checked, 650, "every row read");
    assert_eq!(int8, 3, "bool // bool, bool % bool, bool ** bool");
    assert_eq!(wrapped, 2, "where with 3000000000 beside int32, either side");
}
