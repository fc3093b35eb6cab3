//! `issuer-bench` runs end to end (figures are not asserted, only that every batch was issued).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use tacit_issuer::bench::{BenchArgs, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bench_issues_batches_and_reports_them() {
    let report = run(BenchArgs {
        seconds: 1,
        batch: 2,
        requests: 3,
    })
    .await
    .unwrap();
    assert!(report.raw_signs_per_sec > 0.0);
    assert!(report.batches_per_sec_in_process > 0.0);
    assert!((1..=3).contains(&report.http_batches), "{report:?}");
    let markdown = report.markdown();
    assert!(markdown.contains("POST /v1/credentials"), "{markdown}");
    assert!(markdown.contains("raw ES256 sign"), "{markdown}");
}
