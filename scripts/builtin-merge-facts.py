#!/usr/bin/env python3
"""Writes runtime/src/testing/builtin_merge.json: for each built-in kind the test cluster serves
(runtime/src/testing/builtin.rs), the facts server-side apply and strategic merge patch need from
Kubernetes' OpenAPI, and nothing else.

Source: the JSON schemas of Kubernetes 1.37 that the Python package kubernetes-validate installs
(`pip install kubernetes-validate`; its kubernetes-json-schema/v1.37.0-local/_definitions.json,
generated from the kube-apiserver OpenAPI). Kept per field: `x-kubernetes-list-type`,
`x-kubernetes-list-map-keys`, `x-kubernetes-map-type`, `x-kubernetes-patch-strategy`,
`x-kubernetes-patch-merge-key`, and the Go default of a list-map key field (GO_DEFAULTS), nested under `properties` / `items` / `additionalProperties`.
A struct always keeps `properties` (possibly empty), so it is told apart from a map; scalars
and fields with nothing below them are left out. Definitions are shared through
`{"$ref": "<definition>"}` (its own x- keys win over the definition's); the runtime expands them.

Regenerate:  python3 scripts/builtin-merge-facts.py > runtime/src/testing/builtin_merge.json
Exit status 3 (and a message on stderr) when kubernetes-validate is not installed.
"""

import json
import os
import sys

VERSION = "v1.37.0-local"

# group/version and kind of every kind builtin.rs serves, in its order.
KINDS = [
    ("v1", "Pod"),
    ("v1", "Service"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("v1", "ServiceAccount"),
    ("v1", "Event"),
    ("v1", "Endpoints"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Namespace"),
    ("v1", "Node"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"),
    ("batch/v1", "CronJob"),
    ("coordination.k8s.io/v1", "Lease"),
    ("events.k8s.io/v1", "Event"),
    ("networking.k8s.io/v1", "Ingress"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("policy/v1", "PodDisruptionBudget"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
]

KEPT = [
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
]

REF = "#/$defs/"

# Key fields of list-map items that the Go types default before structured-merge-diff reads the
# keys (SetDefaults_ContainerPort, SetDefaults_ServicePort); the OpenAPI does not carry these
# defaults, and the test cluster does not run Go defaulting, so a port applied without its
# protocol is keyed as kube-apiserver keys it.
GO_DEFAULTS = {
    "io.k8s.api.core.v1.ContainerPort": {"protocol": "TCP"},
    "io.k8s.api.core.v1.ServicePort": {"protocol": "TCP"},
}


def definitions():
    try:
        import kubernetes_validate
    except ImportError:
        sys.stderr.write("kubernetes-validate is not installed (pip install kubernetes-validate)\n")
        sys.exit(3)
    base = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema", VERSION)
    with open(os.path.join(base, "_definitions.json")) as f:
        return json.load(f)["$defs"]


def main():
    defs = definitions()
    out_defs = {}

    def node(schema):
        """The compact node of `schema`, or None when nothing below it is kept."""
        out = {k: schema[k] for k in KEPT if k in schema}
        ref = schema.get("$ref")
        if ref is not None:
            name = ref[len(REF):] if ref.startswith(REF) else ref.rsplit("/", 1)[-1]
            if name not in out_defs:
                out_defs[name] = None  # in progress: a cycle refers to the name
                compact = node(defs[name])
                for field, default in GO_DEFAULTS.get(name, {}).items():
                    compact["properties"].setdefault(field, {})["default"] = default
                out_defs[name] = compact
            if out_defs[name] is None:
                return out or None
            return {"$ref": name, **out}
        if "properties" in schema:
            props = {}
            for field, sub in sorted(schema["properties"].items()):
                n = node(sub)
                if n is not None:
                    props[field] = n
            out["properties"] = props
        if isinstance(schema.get("items"), dict):
            n = node(schema["items"])
            if n is not None:
                out["items"] = n
        if isinstance(schema.get("additionalProperties"), dict):
            n = node(schema["additionalProperties"])
            if n is not None:
                out["additionalProperties"] = n
        return out or None

    by_gvk = {}
    for name, schema in defs.items():
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            gv = gvk["version"] if gvk["group"] == "" else f"{gvk['group']}/{gvk['version']}"
            by_gvk[(gv, gvk["kind"])] = name
    kinds = {}
    for gv, kind in KINDS:
        name = by_gvk[(gv, kind)]
        node({"$ref": REF + name})
        kinds[f"{gv}/{kind}"] = name
    used = {k: v for k, v in sorted(out_defs.items()) if v is not None}
    # The runtime's files are copied into generated projects as tool-owned: the first line
    # says so (the runtime strips the `#` lines before it reads the JSON).
    sys.stdout.write("# Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.\n")
    sys.stdout.write("# Generated by scripts/builtin-merge-facts.py from Kubernetes' OpenAPI schemas; JSON below.\n")
    json.dump({"kubernetes": VERSION, "kinds": kinds, "definitions": used}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
