#!/usr/bin/env bash
# Validates the manifests of a scaffolded project the way tests/e2e/manifest_validation.rs does:
#   1. `kubectl kustomize config/default` renders;
#   2. the render validates against the Kubernetes 1.37 OpenAPI schema (kubernetes-validate --strict;
#      kinds without a schema there, such as cert-manager's, are reported as warnings);
#   3. checkov finds nothing but the checks justified in docs/security.md.
# Usage: scripts/validate-manifests.sh [PROJECT_DIR]   (default: the current directory)
# Needs kubectl, and `pip install kubernetes-validate checkov`. Exit status: 0 when every step passes.
set -euo pipefail

project="${1:-.}"
# Keep in step with ACCEPTED_CHECKS in tests/e2e/manifest_validation.rs (a test compares them).
accepted="CKV_K8S_14,CKV_K8S_43,CKV_K8S_38,CKV2_K8S_6"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "== kubectl kustomize $project/config/default"
kubectl kustomize "$project/config/default" > "$work/default.yaml"
echo "$(grep -c '^kind:' "$work/default.yaml") objects"

echo "== kubernetes-validate (Kubernetes 1.37, strict)"
kubernetes-validate --strict --kubernetes-version 1.37.0 "$work/default.yaml"

echo "== checkov (accepted: $accepted)"
checkov -f "$work/default.yaml" --framework kubernetes --skip-check "$accepted" \
  --compact --quiet --skip-download
