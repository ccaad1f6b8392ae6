//! Golden texts: a test renders each case to text and compares it with `tests/golden/<dir>/NAME.txt`;
//! `KILN_BLESS=1` rewrites the files instead. Shared by every golden test of kiln's `tests/`, each
//! including it with `#[path]`.

use std::path::PathBuf;

/// The golden files of one directory and the mismatches found so far.
pub struct Golden {
    dir: PathBuf,
    bless: bool,
    failures: Vec<String>,
}

impl Golden {
    /// The golden texts under `tests/golden/<sub>` (`sub` may be empty).
    pub fn new(sub: &str) -> Golden {
        Golden {
            dir: PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/golden")
                .join(sub),
            bless: std::env::var_os("KILN_BLESS").is_some(),
            failures: Vec::new(),
        }
    }

    /// Compares `got` with the file `NAME.txt` (or writes it when blessing).
    pub fn check(&mut self, name: &str, got: &str) {
        let path = self.dir.join(format!("{name}.txt"));
        if self.bless {
            std::fs::create_dir_all(&self.dir).expect("golden directory");
            std::fs::write(&path, got).expect("golden file written");
            return;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if got != want {
            self.failures
                .push(format!("--- {name} (expected)\n{want}+++ {name} (got)\n{got}"));
        }
    }

    /// Fails the test with every mismatch.
    pub fn finish(self) {
        assert!(
            self.failures.is_empty(),
            "golden mismatches (KILN_BLESS=1 to rewrite):\n{}",
            self.failures.join("\n")
        );
    }
}
