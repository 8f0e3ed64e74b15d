// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! Server-side apply of large set and map lists (docs/benchmarks.md, "Server-side apply of
//! large lists"): manager `a` applies a Database with `BENCH_ITEMS` finalizers (default
//! 20,000), manager `b` applies as many others, then a merge patch changes one other field,
//! through the registry as the API server's PATCH handler calls it (redb store in a
//! temporary directory; no HTTP). Each step runs once and prints its wall-clock time; the
//! results are checked (every item kept, each manager owning its own).

use std::time::Instant;

use rsbuilder_runtime::apiserver::kind::ApiKind;
use rsbuilder_runtime::apiserver::registry::{Part, PatchType, Registry};
use rsbuilder_runtime::apiserver::storage::RedbStore;
use serde_json::{Value, json};

fn kind() -> ApiKind {
    ApiKind {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Database".into(),
        list_kind: "DatabaseList".into(),
        plural: "databases".into(),
        singular: "database".into(),
        short_names: vec![],
        categories: vec![],
        namespaced: true,
        columns: vec![],
        status_subresource: true,
        scale: None,
        schema: None,
        merge_facts: None,
        admission: None,
    }
}

fn config(who: &str, n: usize) -> Vec<u8> {
    let finalizers: Vec<String> = (0..n).map(|i| format!("example.com/{who}{i}")).collect();
    serde_json::to_vec(&json!({"apiVersion": "example.com/v1", "kind": "Database",
        "metadata": {"name": "a", "finalizers": finalizers}}))
    .unwrap()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let n: usize = std::env::var("BENCH_ITEMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let dir = tempfile::tempdir().unwrap();
    let r = Registry::new(RedbStore::open(&dir.path().join("db")).unwrap());
    let k = kind();
    let ns = Some("ns");
    println!("| step ({n} finalizers per manager) | wall clock |");
    println!("|---|---|");
    let step = |name: &str, start: Instant| {
        println!("| {name} | {:.3} s |", start.elapsed().as_secs_f64());
    };
    let start = Instant::now();
    let body = config("a", n);
    r.apply(&k, ns, "a", Part::Main, &body, "a", false)
        .await
        .unwrap();
    step("apply by a (creates the object)", start);
    let start = Instant::now();
    let body = config("b", n);
    let (both, _) = r
        .apply(&k, ns, "a", Part::Main, &body, "b", false)
        .await
        .unwrap();
    step("apply by b (merged over a's)", start);
    assert_eq!(
        both["metadata"]["finalizers"].as_array().unwrap().len(),
        2 * n
    );
    let start = Instant::now();
    let body = config("a", n / 2);
    let (half, _) = r
        .apply(&k, ns, "a", Part::Main, &body, "a", false)
        .await
        .unwrap();
    step("apply by a of half its items (the rest pruned)", start);
    assert_eq!(
        half["metadata"]["finalizers"].as_array().unwrap().len(),
        n + n / 2
    );
    let start = Instant::now();
    let patched: Value = r
        .patch(
            &k,
            ns,
            "a",
            Part::Main,
            PatchType::Merge,
            br#"{"spec":{"replicas":3}}"#,
            "c",
        )
        .await
        .unwrap();
    step("merge patch of spec.replicas by c", start);
    assert_eq!(
        patched["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}
