// Copyright 2026 The rsbuilder authors.
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

//! Admission and conversion webhooks, one module per API version. The server that answers
//! the API server's reviews is the runtime's (`rsbuilder_runtime::webhook`);
//! `src/main.rs` registers each kind's webhooks with it.
//!
//! `rsbuilder create webhook` adds the modules of new versions above the marker below.

pub mod v1;
// +kubebuilder:scaffold:webhook-modules
