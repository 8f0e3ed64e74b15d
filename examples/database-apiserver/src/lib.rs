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

//! database-apiserver: a Kubernetes operator written in Rust on kube-rs, scaffolded by rsbuilder.
//!
//! The manager, its metrics, TLS serving and the controller machinery are the runtime's
//! (`rsbuilder_runtime`, tool-owned sources under `rsbuilder-runtime/`).
//! `rsbuilder create api` adds the `api` (custom resource types) and `controller` modules;
//! `rsbuilder create webhook` adds `webhook`.

pub mod apiserver;
pub mod custom;
// +kubebuilder:scaffold:modules
