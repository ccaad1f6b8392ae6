//! Byte strings end to end (issue 25 item 3): NumPy `S` arrays and `b'...'` constants compared and
//! searched with numexpr's rules ([`kiln_ir::bytes`]), through the text language and the builder,
//! on the default backend (compiled where kiln-jit compiles them) and on the interpreter, against
//! an independent reference written here: NumPy's order (strings as bytes, trailing NULs stripped,
//! bytes unsigned) and numexpr's `contains` (each operand up to its first NUL). The values in the
//! tables were checked against NumPy 2 and numexpr 2.14 (`s == b'abc'`, `np.char.find`).

use kiln::{ArrayArg, ByteStrings, Expr, FusedRunner, Output, Strings};
use ndarray::ArrayD;

/// `n` strings of `width` bytes each, NUL-padded, in C order.
fn strings(list: &[&[u8]], width: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for s in list {
        assert!(s.len() <= width);
        out.extend_from_slice(s);
        out.resize(out.len() + width - s.len(), 0);
    }
    out
}

/// Runs `src` on the named byte-string inputs (data, width, shape) on both backends; the results,
/// checked equal.
fn run(src: &str, inputs: &[(&str, &[u8], usize, &[usize])]) -> kiln::Result<Output> {
    let args: Vec<(&str, ArrayArg<'_>)> = inputs
        .iter()
        .map(|&(n, data, w, shape)| (n, ArrayArg::Bytes(Strings::new(data, w, shape).unwrap())))
        .collect();
    let jit = FusedRunner::compile_text(src)?.run(&args);
    let interp = FusedRunner::compile_text(src)?
        .with_backend(kiln::interpreter())
        .run(&args);
    match (&jit, &interp) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{src}: the default backend and the interpreter differ"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{src}"),
        _ => panic!("{src}: {jit:?} against {interp:?}"),
    }
    jit
}

fn bools(out: Output) -> Vec<bool> {
    match out {
        Output::Bool(a) => a.iter().copied().collect(),
        other => panic!("not bools: {other:?}"),
    }
}

/// NumPy's order of two `S` elements: trailing NULs stripped, bytes compared unsigned.
fn numpy_cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let strip = |s: &[u8]| s[..s.iter().rposition(|&c| c != 0).map_or(0, |e| e + 1)].to_vec();
    strip(a).cmp(&strip(b))
}

/// numexpr's contains: the needle up to its first NUL inside the haystack up to its first NUL.
fn numexpr_contains(h: &[u8], n: &[u8]) -> bool {
    let c = |s: &[u8]| s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())].to_vec();
    let (h, n) = (c(h), c(n));
    (0..=h.len()).any(|i| h[i..].starts_with(&n))
}

#[test]
fn comparisons_pad_with_nuls() {
    let s = strings(&[b"abc", b"ab", b"abd", b"", b"\x80a", b"a\0b", b"abc\0"], 4);
    let shape = [7usize];
    let one = |src| bools(run(src, &[("s", &s, 4, &shape)]).unwrap());
    assert_eq!(
        one("s == b'abc'"),
        [true, false, false, false, false, false, true]
    );
    assert_eq!(one("s == b'abc\\0\\0'"), one("s == b'abc'"));
    assert_eq!(one("b'ab' < s"), [true, false, true, false, true, false, true]);
    assert_eq!(one("s >= b''"), [true; 7]);
    assert_eq!(one("s != b''"), [true, true, true, false, true, true, true]);
    // bytes compare unsigned (NumPy's order; numexpr on x86 compares signed chars)
    assert_eq!(
        one("s > b'\\x7f'"),
        [false, false, false, false, true, false, false]
    );
    // a NUL inside a string counts: b'a\0b' > b'a'
    assert_eq!(one("s > b'a'"), [true, true, true, false, true, true, true]);
    assert_eq!(
        one("s <= b'a\\0b'"),
        [false, false, false, true, false, true, false]
    );
}

#[test]
fn numexpr_prefix_cases() {
    for (a, b) in [
        (&b"foo"[..], &b"foobar"[..]),
        (b"foo", b"foo\0bar"),
        (b"foo\0a", b"foo\0bar"),
    ] {
        let out = run(
            "(s1 < s2) & (s1 <= s2) & ~(s1 == s2) & ~(s1 >= s2) & ~(s1 > s2)",
            &[("s1", a, a.len(), &[]), ("s2", b, b.len(), &[])],
        )
        .unwrap();
        assert_eq!(bools(out), [true], "{a:?} {b:?}");
    }
    let out = run("s1 == s2", &[("s1", b"foo", 3, &[]), ("s2", b"foo\0\0", 5, &[])]).unwrap();
    assert_eq!(bools(out), [true]);
}

#[test]
fn contains_as_numexpr() {
    let h = strings(
        &[
            b"abckkk", b"adef", b"xyz", b"x11abcp", b"za", b"abc", b"", b"a\0bc",
        ],
        7,
    );
    let n = strings(&[b"abc", b"def", b"aterr", b"oot", b"zu", b"ab", b"", b"bc"], 5);
    let out = run("contains(h, n)", &[("h", &h, 7, &[8]), ("n", &n, 5, &[8])]).unwrap();
    assert_eq!(bools(out), [true, true, false, false, false, true, true, false]);
    let out = run("contains(b'test abc here', n)", &[("n", &n, 5, &[8])]).unwrap();
    assert_eq!(bools(out), [true, false, false, false, false, true, true, true]);
    // the needle ends at its first NUL
    let out = run("contains(h, b'ab\\0zz')", &[("h", &h, 7, &[8])]).unwrap();
    assert_eq!(bools(out), [true, false, false, true, false, true, false, false]);
    let out = run("contains(h, b'')", &[("h", &h, 7, &[8])]).unwrap();
    assert_eq!(bools(out), [true; 8]);
    let long = run(
        "contains(b'1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', b'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')",
        &[],
    );
    assert_eq!(bools(long.unwrap()), [true]);
}

#[test]
fn strings_combine_with_numbers_and_broadcast() {
    // a column of strings against a row of them, a constant, and a float condition
    let col = strings(&[b"b", b"ab", b"c"], 2);
    let row = strings(&[b"a", b"b", b"bb", b"c"], 2);
    let x = ndarray::array![[1.0, -1.0, 2.0, 0.5]].into_dyn();
    let args = vec![
        ("c", ArrayArg::Bytes(Strings::new(&col, 2, &[3, 1]).unwrap())),
        ("r", ArrayArg::Bytes(Strings::new(&row, 2, &[1, 4]).unwrap())),
        ("x", ArrayArg::from(&x)),
    ];
    let src = "where((c < r) & (x > 0), x, 0.0)";
    let jit = FusedRunner::compile_text(src).unwrap().run(&args).unwrap();
    let interp = FusedRunner::compile_text(src)
        .unwrap()
        .with_backend(kiln::interpreter())
        .run(&args)
        .unwrap();
    assert_eq!(jit, interp);
    let Output::F64(a) = jit else { panic!("{jit:?}") };
    let want = ArrayD::from_shape_vec(
        vec![3, 4],
        vec![0.0, 0.0, 2.0, 0.5, 0.0, 0.0, 2.0, 0.5, 0.0, 0.0, 0.0, 0.0],
    )
    .unwrap();
    assert_eq!(a, want);
}

#[test]
fn a_string_input_alone_is_copied() {
    let s = strings(&[b"\0\0foo\0", b"ab"], 6);
    let out = run("s", &[("s", &s, 6, &[2])]).unwrap();
    assert_eq!(
        out,
        Output::Bytes(ByteStrings {
            shape: vec![2],
            width: 6,
            data: s.clone()
        })
    );
}

#[test]
fn the_builder_builds_the_same_kernels() {
    let s = strings(&[b"abc", b"xab", b"b"], 3);
    let args = [("s", ArrayArg::Bytes(Strings::new(&s, 3, &[3]).unwrap()))];
    let e = Expr::input("s")
        .contains(Expr::bytes(b"ab"))
        .or(Expr::input("s").eq(Expr::bytes(b"b")));
    let out = FusedRunner::compile(&e).unwrap().run(&args).unwrap();
    assert_eq!(bools(out), [true, true, true]);
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A string of at most `width` bytes from a small alphabet with NULs and high bytes.
    fn string(&mut self, width: usize) -> Vec<u8> {
        let alphabet = [b'a', b'b', 0, 0x7f, 0x80, 0xff];
        let len = (self.next() % (width as u64 + 1)) as usize;
        (0..len).map(|_| alphabet[(self.next() % 6) as usize]).collect()
    }
}

#[test]
fn random_strings_against_the_reference() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (wa, wb, n) in [(1, 1, 1), (3, 5, 17), (8, 2, 33), (16, 16, 7), (4, 4, 0)] {
        let a: Vec<Vec<u8>> = (0..n).map(|_| rng.string(wa)).collect();
        let b: Vec<Vec<u8>> = (0..n).map(|_| rng.string(wb)).collect();
        let da = strings(&a.iter().map(|s| &s[..]).collect::<Vec<_>>(), wa);
        let db = strings(&b.iter().map(|s| &s[..]).collect::<Vec<_>>(), wb);
        let inputs = [("a", &da[..], wa, &[n][..]), ("b", &db[..], wb, &[n][..])];
        for (op, want) in [
            (
                "a < b",
                std::cmp::Ordering::is_lt as fn(std::cmp::Ordering) -> bool,
            ),
            ("a <= b", std::cmp::Ordering::is_le),
            ("a > b", std::cmp::Ordering::is_gt),
            ("a >= b", std::cmp::Ordering::is_ge),
            ("a == b", std::cmp::Ordering::is_eq),
            ("a != b", std::cmp::Ordering::is_ne),
        ] {
            let got = bools(run(op, &inputs).unwrap());
            let expect: Vec<bool> = (0..n).map(|i| want(numpy_cmp(&a[i], &b[i]))).collect();
            assert_eq!(got, expect, "{op} of {a:?} and {b:?}");
        }
        let got = bools(run("contains(a, b)", &inputs).unwrap());
        let expect: Vec<bool> = (0..n).map(|i| numexpr_contains(&a[i], &b[i])).collect();
        assert_eq!(got, expect, "contains of {a:?} and {b:?}");
    }
}

#[test]
fn what_strings_do_not_have_is_an_error_as_numexpr_names_it() {
    let s = strings(&[b"ab"], 2);
    let x = [1i32];
    for (src, want) in [
        ("s + s", "couldn't find matching opcode for 'add_sss'"),
        ("s >= x", "couldn't find matching opcode for 'ge_bsi'"),
        ("s < 1.0", "couldn't find matching opcode for 'gt_bds'"),
        (
            "contains(s, 1)",
            "couldn't find matching opcode for 'contains_bsi'",
        ),
        ("-s", "couldn't find matching opcode for 'neg_ss'"),
        ("s * 2", "strings can only be operated with strings"),
        (
            "where(s == b'a', s, s)",
            "strings can only be operated with strings",
        ),
        ("sum(s)", "couldn't find matching opcode for 'sum_ssn'"),
        ("sqrt(s)", "couldn't find matching opcode for 'sqrt_ss'"),
        (
            "contains(x, x)",
            "couldn't find matching opcode for 'contains_bii'",
        ),
    ] {
        let args = [
            ("s", ArrayArg::Bytes(Strings::new(&s, 2, &[1]).unwrap())),
            ("x", ArrayArg::from(&x[..])),
        ];
        let runner = FusedRunner::compile_text(src).unwrap();
        let names = runner.input_names();
        let args: Vec<_> = args
            .into_iter()
            .filter(|(n, _)| names.iter().any(|m| m == n))
            .collect();
        let e = runner.run(&args).unwrap_err().to_string();
        assert!(e.contains(want), "{src}: {e}");
    }
}

#[test]
fn string_literals_read_as_python_reads_them() {
    let s = strings(&[b"a'b", b"\t\\", b"A"], 3);
    let one = |src| bools(run(src, &[("s", &s, 3, &[3])]).unwrap());
    assert_eq!(one(r#"s == b"a'b""#), [true, false, false]);
    assert_eq!(one(r"s == b'\t\\'"), [false, true, false]);
    assert_eq!(one(r"s == b'\x41'"), [false, false, true]);
    assert_eq!(one(r"s == b'\101'"), [false, false, true]);
    assert_eq!(one("s == 'A'"), [false, false, true]);
    assert!(FusedRunner::compile_text("s == b'\u{e9}'").is_err());
    assert!(FusedRunner::compile_text("s == b'ab").is_err());
}

#[test]
fn compiled_at_any_address_and_across_threads() {
    // strings starting at two neighbouring addresses, of which the width 5 divides one at most
    // (the other is copied for the compiled code), and enough of them for the work to be split
    // between threads
    let n = 300_003;
    let mut rng = Rng(7);
    let list: Vec<Vec<u8>> = (0..n).map(|_| rng.string(5)).collect();
    let mut memory = strings(&list.iter().map(|s| &s[..]).collect::<Vec<_>>(), 5);
    memory.push(0);
    for offset in [0, 1] {
        let data = &memory[offset..offset + n * 5];
        let shape = [n];
        let out = bools(run("contains(s, b'ab') | (s >= b'b\\x80')", &[("s", data, 5, &shape)]).unwrap());
        let expect: Vec<bool> = (0..n)
            .map(|i| {
                let s = &data[i * 5..i * 5 + 5];
                numexpr_contains(s, b"ab") || numpy_cmp(s, b"b\x80").is_ge()
            })
            .collect();
        assert_eq!(out, expect);
    }
}

/// `==` and `!=` (compiled inline: the bytes both strings hold xor-ed 8, 4, 2 and 1 at a time, the
/// longer one's rest against NULs) over every pair of widths whose loads split differently, on
/// strings that mostly agree: equal, equal but for one byte anywhere, equal but for a byte past
/// the shorter width, and with a constant on either side.
#[test]
fn equality_over_every_split_of_the_widths() {
    let widths = [1usize, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24];
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for &wa in &widths {
        for &wb in &widths {
            let (n, m) = (wa.min(wb), wa.max(wb));
            let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            for k in 0..12 {
                let base: Vec<u8> = (0..n).map(|_| 1 + (rng.next() % 255) as u8).collect();
                let (mut a, mut b) = (base.clone(), base);
                match k % 4 {
                    0 => {}
                    1 => {
                        let i = (rng.next() as usize) % n;
                        a[i] ^= 1 << (rng.next() % 8);
                    }
                    // a nonzero byte past the shorter width, in the longer string
                    2 if m > n => {
                        let i = n + (rng.next() as usize) % (m - n);
                        let longer = if wa > wb { &mut a } else { &mut b };
                        longer.resize(i + 1, 0);
                        longer[i] = 0x80;
                    }
                    _ => {
                        let cut = (rng.next() as usize) % (n + 1);
                        a.truncate(cut);
                        b.truncate(cut);
                    }
                }
                pairs.push((a, b));
            }
            let len = pairs.len();
            let da = strings(&pairs.iter().map(|p| &p.0[..]).collect::<Vec<_>>(), wa);
            let db = strings(&pairs.iter().map(|p| &p.1[..]).collect::<Vec<_>>(), wb);
            let inputs = [("a", &da[..], wa, &[len][..]), ("b", &db[..], wb, &[len][..])];
            let eq: Vec<bool> = pairs.iter().map(|(a, b)| numpy_cmp(a, b).is_eq()).collect();
            assert!(
                eq.iter().any(|&e| e) && eq.iter().any(|&e| !e),
                "{wa} {wb}: both outcomes"
            );
            assert_eq!(bools(run("a == b", &inputs).unwrap()), eq, "{wa} {wb}: a == b");
            let ne: Vec<bool> = eq.iter().map(|e| !e).collect();
            assert_eq!(bools(run("b != a", &inputs).unwrap()), ne, "{wa} {wb}: b != a");
            // a constant on either side: the first pair's strings
            let lit = |s: &[u8]| s.iter().map(|c| format!("\\x{c:02x}")).collect::<String>();
            let c = lit(&pairs[0].1);
            let want: Vec<bool> = pairs
                .iter()
                .map(|(a, _)| numpy_cmp(a, &pairs[0].1).is_eq())
                .collect();
            assert_eq!(
                bools(run(&format!("a == b'{c}'"), &inputs).unwrap()),
                want,
                "{wa} {wb}: a == b'{c}'"
            );
            assert_eq!(
                bools(run(&format!("b'{c}' == a"), &inputs).unwrap()),
                want,
                "{wa} {wb}: b'{c}' == a"
            );
        }
    }
}

/// `contains` of a constant needle of 1 to 8 bytes (compiled inline: 8 places of the haystack a
/// word, the needle's bytes constants) over haystack widths 1 to 17 and 24, every needle length,
/// needles cut by a NUL and a longer one (the call), on haystacks of the needle's bytes, NULs and
/// high bytes, the needle placed at every offset.
#[test]
fn equality_with_a_constant_over_every_width() {
    // a constant shorter, as long and longer than the strings (with NULs or other bytes past
    // their width), on either side; 47 strings: the vector loop and its one-point tail
    let mut rng = Rng(0x1405_7b7e_f767_814f);
    let constants: [&[u8]; 9] = [
        b"a",
        b"\xff\x80",
        b"ab\0",
        b"abcab",
        b"abcdefgh",
        b"abcdefgh\0\0",
        b"abcdefghi",
        b"a\0b",
        b"abcdefghijklmnopq",
    ];
    for width in (1..=17).chain([24]) {
        for c in constants {
            let mut list: Vec<Vec<u8>> = Vec::new();
            for k in 0..47 {
                let mut s: Vec<u8> = (0..width)
                    .map(|_| [b'a', b'b', b'c', 0x80, 0xff, 0][(rng.next() % 6) as usize])
                    .collect();
                if k % 3 == 0 {
                    // the constant's first bytes, NUL-padded
                    for (i, x) in s.iter_mut().enumerate() {
                        *x = c.get(i).copied().unwrap_or(0);
                    }
                    if k % 2 == 0 {
                        let i = (rng.next() as usize) % width;
                        s[i] ^= 1 << (rng.next() % 8);
                    }
                }
                list.push(s);
            }
            let data = strings(&list.iter().map(|s| &s[..]).collect::<Vec<_>>(), width);
            let lit: String = c.iter().map(|c| format!("\\x{c:02x}")).collect();
            for (src, ne, flip) in [
                (format!("s == b'{lit}'"), false, false),
                (format!("s != b'{lit}'"), true, false),
                (format!("b'{lit}' == s"), false, true),
                (format!("b'{lit}' != s"), true, true),
            ] {
                let got = bools(run(&src, &[("s", &data, width, &[list.len()])]).unwrap());
                let expect: Vec<bool> = list
                    .iter()
                    .map(|s| {
                        let o = if flip { numpy_cmp(c, s) } else { numpy_cmp(s, c) };
                        o.is_eq() != ne
                    })
                    .collect();
                assert_eq!(got, expect, "{src} over width {width}: {list:?}");
            }
        }
    }
}

#[test]
fn contains_a_constant_needle_over_every_width() {
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    let needles: [&[u8]; 11] = [
        b"a",
        b"\xff",
        b"ab",
        b"ba\x80",
        b"abab",
        b"a\x7fb\xff\x01",
        b"aaaaab",
        b"ab\xffab\x80a",
        b"abababab",
        b"ab\0zz",
        b"abababab\x80",
    ];
    for width in (1..=17).chain([24]) {
        for needle in needles {
            let cut = &needle[..needle.iter().position(|&c| c == 0).unwrap_or(needle.len())];
            let mut list: Vec<Vec<u8>> = Vec::new();
            for k in 0..48 {
                let mut s: Vec<u8> = (0..width)
                    .map(|_| [b'a', b'b', 0x80, 0xff, 0x7f, 0][(rng.next() % 6) as usize])
                    .collect();
                if k % 2 == 0 && cut.len() <= width {
                    let at = (rng.next() as usize) % (width - cut.len() + 1);
                    s[at..at + cut.len()].copy_from_slice(cut);
                    if k % 4 == 0 {
                        // no NUL before it
                        for c in &mut s[..at] {
                            if *c == 0 {
                                *c = b'b';
                            }
                        }
                    }
                }
                list.push(s);
            }
            let data = strings(&list.iter().map(|s| &s[..]).collect::<Vec<_>>(), width);
            let lit: String = needle.iter().map(|c| format!("\\x{c:02x}")).collect();
            let src = format!("contains(s, b'{lit}')");
            let got = bools(run(&src, &[("s", &data, width, &[list.len()])]).unwrap());
            let expect: Vec<bool> = list.iter().map(|s| numexpr_contains(s, needle)).collect();
            assert_eq!(got, expect, "{src} over width {width}: {list:?}");
            assert!(expect.iter().any(|&x| x) || cut.len() > width);
        }
    }
}

/// The reference result of string `i` (a bool as 1 / 0).
type Reference<'a> = Box<dyn Fn(usize) -> f64 + 'a>;

/// Strings read in place at any address (issue 25 item 6): each width's strings start at every
/// offset `0..width` of a larger buffer (every remainder modulo the width, no copy made), the
/// other operand at another offset, compared, searched and selected on by the compiled code (the
/// runner's run, and a bound handle's direct call) exactly as the interpreter does, and as the
/// reference here; vectors and a tail (37 strings).
#[test]
fn read_in_place_at_every_offset() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let n = 37;
    let x = ArrayD::from_shape_vec(vec![n], (0..n).map(|i| i as f64 - 7.5).collect()).unwrap();
    for width in [1usize, 3, 10, 16, 17] {
        let a: Vec<Vec<u8>> = (0..n).map(|_| rng.string(width)).collect();
        let b: Vec<Vec<u8>> = (0..n).map(|_| rng.string(width)).collect();
        let da = strings(&a.iter().map(|s| &s[..]).collect::<Vec<_>>(), width);
        let db = strings(&b.iter().map(|s| &s[..]).collect::<Vec<_>>(), width);
        let cases: [(&str, Reference<'_>); 5] = [
            (
                "a == b",
                Box::new(|i| f64::from(u8::from(numpy_cmp(&a[i], &b[i]).is_eq()))),
            ),
            (
                "a < b",
                Box::new(|i| f64::from(u8::from(numpy_cmp(&a[i], &b[i]).is_lt()))),
            ),
            (
                "contains(a, b)",
                Box::new(|i| f64::from(u8::from(numexpr_contains(&a[i], &b[i])))),
            ),
            (
                "contains(a, b'ab')",
                Box::new(|i| f64::from(u8::from(numexpr_contains(&a[i], b"ab")))),
            ),
            (
                "where(a >= b, x, -x)",
                Box::new(|i| {
                    let x = i as f64 - 7.5;
                    if numpy_cmp(&a[i], &b[i]).is_ge() { x } else { -x }
                }),
            ),
        ];
        for offset in 0..width {
            // the bytes around the strings are not NULs: a string read from the wrong place shows
            let mut ma = vec![0xee; da.len() + width];
            let mut mb = vec![0xee; db.len() + width];
            let ob = width - 1 - offset;
            ma[offset..offset + da.len()].copy_from_slice(&da);
            mb[ob..ob + db.len()].copy_from_slice(&db);
            let (sa, sb) = (&ma[offset..offset + da.len()], &mb[ob..ob + db.len()]);
            let args = [
                ("a", ArrayArg::Bytes(Strings::new(sa, width, &[n]).unwrap())),
                ("b", ArrayArg::Bytes(Strings::new(sb, width, &[n]).unwrap())),
                ("x", ArrayArg::from(&x)),
            ];
            for (src, want) in &cases {
                let runner = FusedRunner::compile_text(src).unwrap();
                let args = &args[..if src.contains('x') { 3 } else { 2 }];
                let interp = FusedRunner::compile_text(src)
                    .unwrap()
                    .with_backend(kiln::interpreter())
                    .run(args)
                    .unwrap();
                let jit = runner.run(args).unwrap();
                assert_eq!(jit, interp, "width {width} offset {offset}: {src}");
                let handle = runner.prepared(args).unwrap();
                assert!(handle.is_direct(), "{src}");
                let positional: Vec<ArrayArg<'_>> = args.iter().map(|(_, a)| a.clone()).collect();
                assert_eq!(
                    handle.run(&positional).unwrap(),
                    interp,
                    "width {width} offset {offset}: {src}"
                );
                let got: Vec<f64> = match interp {
                    Output::Bool(v) => v.iter().map(|&t| f64::from(u8::from(t))).collect(),
                    Output::F64(v) => v.iter().copied().collect(),
                    other => panic!("{src}: {other:?}"),
                };
                let expect: Vec<f64> = (0..n).map(want).collect();
                assert_eq!(got, expect, "width {width} offset {offset}: {src}");
            }
        }
    }
}

/// kiln-jit finds a byte string at its index times its width only: bound to a plan that reads the
/// strings through a row's strides (a Fortran-order layout, which the kiln crate never plans for
/// byte strings), a run is refused, not answered from the wrong bytes.
#[test]
fn kiln_jit_refuses_byte_strings_read_through_strides() {
    use kiln_jit::{InputRef, RunConfig, Schedule, Stored, Workspace};
    let data = strings(&[b"ab", b"cd", b"ab", b"ef"], 2);
    let args = [("x", ArrayArg::Bytes(Strings::new(&data, 2, &[2, 2]).unwrap()))];
    let explained = FusedRunner::compile_text("x == b'ab'")
        .unwrap()
        .explain_kernels(&args)
        .unwrap();
    let typed = explained[0].typed.clone().expect("a typed kernel");
    let kernel = kiln_jit::typed::kernel_of(&typed);
    let layouts = [kiln::kiln_ir::InputLayout {
        shape: vec![2, 2],
        contiguous: false,
        strides: Some(vec![1, 2]),
    }];
    let plan = kiln_jit::typed::plan(&kernel, &layouts).unwrap().expect("a plan");
    let code = kiln_jit::compile_typed(&kernel, &plan, Schedule::for_kernel(&kernel))
        .unwrap()
        .bind(&kernel, &plan)
        .unwrap();
    let inputs = [InputRef::<f64>::Stored(Stored::Bytes(&data, 2))];
    let got = code.run_typed(&inputs, &RunConfig::default(), &mut Workspace::new());
    let e = got.expect_err("byte strings through strides");
    assert!(e.to_string().contains("read through a row's strides"), "{e}");
}

/// An empty array of byte strings of any shape (a zero among other extents: `[0, 2]`, `[2, 0]`,
/// `[1, 0, 3]`) is an input like any other: compared, it gives an empty result of its shape on both
/// backends. (A `.npy` file of shape `[1, 1, 1, 1, 0, 2, 1]` and `<S8` made reading it as an input
/// panic: found by the `npy` fuzz target.)
#[test]
fn empty_arrays_of_strings_of_any_shape() {
    for shape in [
        &[0usize, 2][..],
        &[2, 0],
        &[1, 0, 3],
        &[0],
        &[1, 1, 1, 1, 0, 2, 1],
    ] {
        let out = run("s == b'ab'", &[("s", &[], 8, shape)]).unwrap();
        assert_eq!(out.shape(), shape);
        assert!(bools(out).is_empty());
        let out = run("contains(s, b'a')", &[("s", &[], 3, shape)]).unwrap();
        assert_eq!(out.shape(), shape);
    }
    // a width beyond what a string holds is an error reading the file, never a panic
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    let header = "{'descr': '|S5000000000', 'fortran_order': False, 'shape': (0, 2), }";
    let mut header = header.to_string();
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    file.extend_from_slice(&(header.len() as u16).to_le_bytes());
    file.extend_from_slice(header.as_bytes());
    assert!(kiln::npy::read_bytes(&file).is_err());
}
