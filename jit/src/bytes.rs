//! Byte strings ([`kiln_ir::bytes`]) in compiled kernels: which typed kernels holding them the
//! code generator compiles.

use kiln_ir::typed::TypedKernel;

/// Why the code generator does not compile `kernel`'s byte strings, if it holds any.
pub(crate) fn why_not(kernel: &TypedKernel) -> Option<String> {
    let k = &kernel.kernel;
    let strings = kernel.input_types.iter().any(|t| t.is_bytes())
        || k.arena
            .reachable_all(&k.roots())
            .into_iter()
            .any(|id| kernel.type_of(id).is_bytes());
    strings.then(|| "byte strings (not compiled yet: the typed interpreter compares them)".into())
}
