//! The benchmark runs end to end (figures are printed, never asserted on).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use signer::bench::{BenchArgs, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_runs_and_prints_a_table() {
    let args = BenchArgs {
        seconds: 1,
        connections: 4,
        sign_seconds: 1,
        entries: 3,
        max_requests: 200,
    };
    let report = run(args).await.unwrap();
    assert!(report.load.accepted > 0);
    assert_eq!(report.load.failures, 0);
    assert!(report.raw_signs > 0);
    assert!(report.raw_verifies > 0);
    // Every request the load sent was authenticated and signed: none failed.
    assert!(report.load.accepted <= 200);
    let table = report.markdown();
    for row in [
        "| POST /v1/receipts, signed by an enrolled install |",
        "| latency p50 |",
        "| latency p99 |",
        "| raw ed25519-dalek sign, 1 core |",
        "| raw p256 ECDSA verify, 1 core |",
        "| service / raw signing |",
        "| service / raw (verify + sign), 1 core |",
    ] {
        assert!(table.contains(row), "{table}");
    }
    println!("{table}");
}
