"""The Database example's Python scenario against the API server, with the official
`kubernetes` client: CustomObjectsApi create, list, get, patch, the status and scale
subresources, watch.Watch().stream, dry runs (dry_run="All"), server-side apply
(field_manager, force, application/apply-patch+yaml), and delete.
Usage: python_client.py KUBECONFIG. Exits non-zero (AssertionError) on any mismatch."""
import sys
import threading
import time

import urllib3
from kubernetes import client, config, watch

urllib3.disable_warnings()
config.load_kube_config(config_file=sys.argv[1])
api = client.CustomObjectsApi()
G, V, NS, P = "example.com", "v1", "default", "databases"

body = {
    "apiVersion": "example.com/v1",
    "kind": "Database",
    "metadata": {"name": "py", "labels": {"app": "database"}},
    "spec": {"engine": "mysql", "version": "8.0", "replicas": 2},
}
created = api.create_namespaced_custom_object(G, V, NS, P, body)
assert created["metadata"]["generation"] == 1, created
assert created["metadata"]["uid"], created

listed = api.list_namespaced_custom_object(G, V, NS, P, label_selector="app=database")
assert [i["metadata"]["name"] for i in listed["items"]] == ["py"], listed
assert listed["kind"] == "DatabaseList", listed

got = api.get_namespaced_custom_object(G, V, NS, P, "py")
assert got["spec"]["replicas"] == 2, got

patched = api.patch_namespaced_custom_object(G, V, NS, P, "py", {"spec": {"replicas": 3}})
assert patched["spec"]["replicas"] == 3 and patched["metadata"]["generation"] == 2, patched

status = api.patch_namespaced_custom_object_status(
    G, V, NS, P, "py",
    {"status": {"phase": "Running", "nodes": ["node-1"], "replicas": 2, "selector": "app=database"}})
assert status["status"]["phase"] == "Running", status

scale = api.get_namespaced_custom_object_scale(G, V, NS, P, "py")
assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1"), scale
assert scale["metadata"]["name"] == "py" and scale["metadata"]["uid"] == created["metadata"]["uid"], scale
assert scale["metadata"]["resourceVersion"] == status["metadata"]["resourceVersion"], scale
assert scale["spec"] == {"replicas": 3}, scale
assert scale["status"] == {"replicas": 2, "selector": "app=database"}, scale

scaled = api.patch_namespaced_custom_object_scale(G, V, NS, P, "py", {"spec": {"replicas": 5}})
assert scaled["spec"]["replicas"] == 5 and scaled["status"]["replicas"] == 2, scaled
got = api.get_namespaced_custom_object(G, V, NS, P, "py")
assert got["spec"]["replicas"] == 5 and got["metadata"]["generation"] == 3, got
assert got["status"]["phase"] == "Running", got

try:
    api.patch_namespaced_custom_object_scale(G, V, NS, P, "py", {"spec": {"replicas": 11}})
    raise AssertionError("a scale to 11 replicas (the type allows 1..10) succeeded")
except client.exceptions.ApiException as e:
    assert e.status == 422, e

try:
    api.get_namespaced_custom_object(G, V, NS, P, "absent")
    raise AssertionError("get of an absent object succeeded")
except client.exceptions.ApiException as e:
    assert e.status == 404, e

rv = listed["metadata"]["resourceVersion"]


def later_patch():
    time.sleep(0.5)
    api.patch_namespaced_custom_object(G, V, NS, P, "py", {"spec": {"replicas": 4}})


threading.Thread(target=later_patch).start()
seen = []
w = watch.Watch()
for event in w.stream(api.list_namespaced_custom_object, G, V, NS, P,
                      resource_version=rv, timeout_seconds=10):
    seen.append((event["type"], event["object"]["spec"]["replicas"]))
    if event["object"]["spec"]["replicas"] == 4:
        w.stop()
# After the list's revision: the spec patch (3), the status patch (3), the scale patch (5),
# then the later one (4).
assert seen == [("MODIFIED", 3), ("MODIFIED", 3), ("MODIFIED", 5), ("MODIFIED", 4)], seen

# Dry runs answer as the write would and store nothing.
would = api.create_namespaced_custom_object(
    G, V, NS, P, dict(body, metadata={"name": "dry"}), dry_run="All")
assert would["metadata"]["name"] == "dry" and "resourceVersion" not in would["metadata"], would
try:
    api.get_namespaced_custom_object(G, V, NS, P, "dry")
    raise AssertionError("a dry-run create stored the object")
except client.exceptions.ApiException as e:
    assert e.status == 404, e
before = api.get_namespaced_custom_object(G, V, NS, P, "py")
dry = api.patch_namespaced_custom_object(
    G, V, NS, P, "py", {"spec": {"replicas": 6}}, dry_run="All")
assert dry["spec"]["replicas"] == 6, dry
after = api.get_namespaced_custom_object(G, V, NS, P, "py")
assert after["spec"]["replicas"] == 4, after
assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"], after

# Server-side apply, as the client sends it: the applied configuration as the body of a PATCH
# with application/apply-patch+yaml, the field manager and force as parameters.
applied = api.patch_namespaced_custom_object(
    G, V, NS, P, "py",
    {"apiVersion": "example.com/v1", "kind": "Database", "metadata": {"name": "py"},
     "spec": {"replicas": 7}},
    field_manager="py-apply", force=True, _content_type="application/apply-patch+yaml")
assert applied["spec"]["replicas"] == 7 and applied["spec"]["engine"] == "mysql", applied
managers = {(m["manager"], m["operation"]) for m in applied["metadata"]["managedFields"]}
assert ("py-apply", "Apply") in managers, managers
try:
    api.patch_namespaced_custom_object(
        G, V, NS, P, "py",
        {"apiVersion": "example.com/v1", "kind": "Database", "metadata": {"name": "py"},
         "spec": {"replicas": 8}},
        field_manager="other", _content_type="application/apply-patch+yaml")
    raise AssertionError("an apply over another manager's field did not conflict")
except client.exceptions.ApiException as e:
    assert e.status == 409 and "conflict" in e.body, (e.status, e.body)

deleted = api.delete_namespaced_custom_object(G, V, NS, P, "py")
assert deleted["status"] == "Success", deleted
assert api.list_namespaced_custom_object(G, V, NS, P)["items"] == []
print("python scenario passed")
