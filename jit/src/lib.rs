//! kiln-jit: the Cranelift backend (in progress).
