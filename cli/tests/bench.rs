//! The benchmark harness checks kiln's variants against the interpreter before it times them.

use kiln::profile::Profile;

/// `kiln bench --profile approximate` checks its kiln variants against the interpreter under the
/// same profile: horner and axpy, exact kernels, are contracted in both and agree bit for bit (and
/// the baselines, as written, against the default profile's interpreter).
#[test]
fn bench_under_approximate_checks_kiln_against_its_own_profile() {
    use kiln_cli::bench::{Config, kernels::Kernel, run};
    let config = Config {
        kernels: vec![Kernel::Axpy, Kernel::Horner],
        int_kernels: Vec::new(),
        ns: vec![1001],
        dtypes: vec![kiln::kiln_ir::ElemType::F64, kiln::kiln_ir::ElemType::F32],
        threads: 1,
        profile: Profile::Approximate,
        budget: std::time::Duration::from_millis(1),
    };
    let rows = run(&config, |_| {}).unwrap();
    assert_eq!(rows.len(), 2 * 2 * 4);
    for r in &rows {
        assert!(
            r.ok,
            "{} {} {} is not ok under approximate",
            r.kernel, r.dtype, r.variant
        );
    }
}
