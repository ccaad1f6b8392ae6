//! Profiles and the rewrites they allow, in the spirit of a compiler's -O levels.
//!
//! - [`Profile::Default`]: exact elementwise algebra, reductions reassociated within their bound (the
//!   same bits for any thread count), exact rewrites only (NumPy's fast paths of `pow`);
//!   `prefix_scan` off unless asked for;
//! - [`Profile::Approximate`]: also the approximate rewrites (`prefix_scan` on, integer powers as
//!   multiplication chains, [`kiln_ir::passes::strength`]) and FMA contraction (`a*b + c` rounded
//!   once, [`kiln_ir::passes::contract`]; the interpreter and the JIT agree on it bit for bit);
//! - [`Profile::Reproducible`]: the same bits on any machine and thread count: `prefix_scan` pinned
//!   off (asking for it is an error), every reduction and scan in an order fixed by the sizes alone:
//!   whole-array reductions chunked by the default tuning whatever the runner says, and the 128-bit
//!   vectors kiln-jit uses on every machine, so a scan along the innermost axis reassociates within
//!   the same blocks of lanes everywhere (the in-register prefix, as under the other profiles).
//!
//! The prefix-scan rewrite is approximate because it is not exact on every input: a product mask
//! `v[i] * (i <= o)` with an infinite or NaN `v[i]` outside the triangle makes the composed form NaN
//! (`inf * 0`) while the scan never reads that value; a suffix scan (`i >= o`) adds in the reverse
//! order. On finite inputs a prefix scan adds in the composed form's order and agrees bit for bit.

use crate::error::{Error, Result};
use std::fmt;

/// A profile: which rewrites and which freedoms of order a runner allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Profile {
    /// Exact rewrites only (NumPy's fast paths of `**`); the prefix-scan rewrite off unless asked.
    #[default]
    Default,
    /// The prefix-scan rewrite on, integer powers as multiplication chains, FMA contraction.
    Approximate,
    /// The same bits on any machine and thread count: the prefix-scan rewrite pinned off, reductions chunked by the default tuning.
    Reproducible,
}

impl Profile {
    /// Every profile.
    pub const ALL: [Profile; 3] = [Profile::Default, Profile::Approximate, Profile::Reproducible];

    /// The name `--profile` takes.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Default => "default",
            Profile::Approximate => "approximate",
            Profile::Reproducible => "reproducible",
        }
    }

    /// The profile named `name`.
    pub fn from_name(name: &str) -> Result<Profile> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                Error::Unsupported(format!(
                    "unknown profile '{name}' (default, approximate, reproducible)"
                ))
            })
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A runner's settings: its profile and the rewrites it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Settings {
    /// The profile.
    pub profile: Profile,
    /// Replace triangular-mask contractions by scans ([`kiln_ir::passes::prefix_scan`]).
    pub prefix_scan: bool,
    /// `a*b + c` contracted into `fma` ([`kiln_ir::passes::contract`]; approximate only).
    pub fma: bool,
}

impl Settings {
    /// The settings of `profile`, with `prefix_scan` as asked (`None`: the profile's choice).
    ///
    /// # Errors
    /// `prefix_scan: Some(true)` under the reproducible profile.
    pub fn new(profile: Profile, prefix_scan: Option<bool>) -> Result<Settings> {
        let default_scan = profile == Profile::Approximate;
        if profile == Profile::Reproducible && prefix_scan == Some(true) {
            return Err(Error::Unsupported(
                "the reproducible profile pins prefix_scan off (the rewrite changes results)".into(),
            ));
        }
        Ok(Settings {
            profile,
            prefix_scan: prefix_scan.unwrap_or(default_scan),
            fma: profile == Profile::Approximate,
        })
    }

    /// Whether the order of every reduction and scan must not depend on the machine.
    pub fn reproducible(&self) -> bool {
        self.profile == Profile::Reproducible
    }
}
