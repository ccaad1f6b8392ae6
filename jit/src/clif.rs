//! The small Cranelift helpers every part of the code generator uses: the flags of loads, stores
//! and bitcasts. A leaf module: it imports nothing of kiln-jit.

use cranelift_codegen::ir::{Endianness, MemFlagsData};

/// Flags of every load and store: the Rust side checked the bounds, so they cannot trap; no alignment
/// is promised (vector loads are unaligned).
pub fn mem() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

/// Flags of bitcasts between vector types.
pub fn cast() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}
