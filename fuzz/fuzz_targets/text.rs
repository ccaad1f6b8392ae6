//! The text front end: any byte string parses to `Ok` or `Err`, never a panic or a hang; whatever
//! parses is compiled and run on small inputs bound to every name it uses, which must not panic either.
#![no_main]

use kiln::{ArrayArg, FusedRunner};
use libfuzzer_sys::fuzz_target;
use ndarray::{ArrayD, IxDyn};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(runner) = FusedRunner::compile_text(&text) else {
        return;
    };
    let a = ArrayD::from_shape_fn(IxDyn(&[3, 4]), |i| i[0] as f64 - i[1] as f64 * 0.5);
    let args: Vec<(&str, ArrayArg<'_>)> = runner
        .input_names()
        .iter()
        .map(|n| (n.as_str(), (&a).into()))
        .collect();
    let _ = runner.run(&args);
});
