//! Running the `kiln` binary from a test with environment switches, and temporary paths for its
//! files (shared by the suites that compare the CLI's results under switches a process reads once).

use std::path::PathBuf;
use std::process::Command;

/// Runs `kiln args`, with each `(name, value)` of `env` set (Some) or removed (None), and returns
/// its standard output (panics with its standard error when it fails).
pub fn kiln_with(args: &[&str], env: &[(&str, Option<&str>)]) -> Vec<u8> {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kiln"));
    c.args(args);
    for &(name, value) in env {
        match value {
            Some(v) => c.env(name, v),
            None => c.env_remove(name),
        };
    }
    let o = c.output().expect("kiln runs");
    assert!(
        o.status.success(),
        "kiln {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// The path `name` in this test process's temporary folder for the suite `suite`.
pub fn tmp_in(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-{suite}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}
