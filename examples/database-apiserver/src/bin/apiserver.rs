// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The aggregated API server of this project: serves the kinds of `src/apiserver/` under
//! `/apis/<group>/<version>`, as kube-apiserver serves a CRD, from `rsbuilder-runtime`'s
//! `apiserver` module (discovery, OpenAPI, every verb, watch, Table output, status).
//! In a cluster, kube-apiserver reaches it through the APIServices of `config/apiserver/`.
//!
//! Flags (`apiserver --help`; `rsbuilder_runtime::apiserver::args::ApiServerArgs`):
//! `--bind-address`, `--store-path` (the redb file), `--etcd-servers` (etcd instead of redb;
//! build with `--features rsbuilder-runtime/etcd`), `--cert-dir`, `--delegated-auth` (needs a
//! cluster; config/apiserver's Deployment passes it), API priority and fairness
//! (`--enable-priority-and-fairness`, `--flowcontrol-config`), and the limits:
//! `--max-requests-inflight`, `--max-mutating-requests-inflight` (the seats), with
//! `--enable-priority-and-fairness=false` only `--max-watches-inflight`,
//! `--max-user-share-percent`; `--request-timeout-seconds`, `--max-request-body-bytes`.
//!
//! `rsbuilder create apiserver` adds each new kind above the `apiserver-kinds` marker. A kind's
//! defaulting and validation: `ApiKind::of::<K>()?.admission(KAdmission)`
//! (`rsbuilder_runtime::apiserver::admission`).

use rsbuilder_runtime::apiserver::args::{ApiServerArgs, Parser as _};
use rsbuilder_runtime::apiserver::kind::ApiKind;
use rsbuilder_runtime::manager::{LogFormat, init_tracing};

// `kinds` is filled one push per kind, each added above the marker by rsbuilder.
#[allow(clippy::vec_init_then_push)]
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = ApiServerArgs::parse();
    init_tracing(LogFormat::Text);

    let mut kinds: Vec<ApiKind> = Vec::new();
    kinds.push(
        ApiKind::of::<database_apiserver::apiserver::v1::Database>().map_err(anyhow::Error::msg)?,
    );
    // +kubebuilder:scaffold:apiserver-kinds

    // Routes of your own (not a fallback), served beside the API's and behind the same
    // checks: the specification's `/custom` (src/custom.rs).
    args.run(kinds, database_apiserver::custom::routes()).await
}
