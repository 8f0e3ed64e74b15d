// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The request path, parsed: discovery documents, or a resource (group, version, namespace,
//! plural, name, subresource), in the shapes k8s.io/apiserver's `endpoints` installs.

/// The subresource a request path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sub {
    /// The collection or the object itself.
    None,
    /// `/status`.
    Status,
    /// `/scale` (an `autoscaling/v1` Scale).
    Scale,
}

/// The parsed request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route<'a> {
    /// `/api`.
    Api,
    /// `/apis`.
    Apis,
    /// `/apis/<group>`.
    Group(&'a str),
    /// `/apis/<group>/<version>`, or `/api/<version>` (group "").
    GroupVersion(&'a str, &'a str),
    /// `/apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>[/status|/scale]]`, or
    /// `/api/<version>/...` (group "").
    Resource {
        /// The API group.
        group: &'a str,
        /// The version.
        version: &'a str,
        /// The namespace, for a namespaced path.
        namespace: Option<&'a str>,
        /// The resource's plural.
        plural: &'a str,
        /// The object's name; `None` for the collection.
        name: Option<&'a str>,
        /// The subresource.
        sub: Sub,
    },
}

/// `path` parsed. Out: `None` for a path that names nothing served here (404).
pub fn route(path: &str) -> Option<Route<'_>> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    Some(match segs.as_slice() {
        ["api"] => Route::Api,
        // The core group (Pods, ConfigMaps, Namespaces, ...) under `/api/<version>`, as group
        // "". `namespaces/<n>/status` is the Namespace's own subresource, not a collection.
        ["api", v] => Route::GroupVersion("", v),
        ["api", v, "namespaces", n, "status"] => {
            resource("", v, None, "namespaces", &[n, "status"])?
        }
        ["api", v, "namespaces", ns, p, rest @ ..] => resource("", v, Some(ns), p, rest)?,
        ["api", v, p, rest @ ..] => resource("", v, None, p, rest)?,
        ["apis"] => Route::Apis,
        ["apis", g] if !g.is_empty() => Route::Group(g),
        ["apis", g, v] if !g.is_empty() => Route::GroupVersion(g, v),
        ["apis", g, v, "namespaces", ns, p, rest @ ..] if !g.is_empty() => {
            resource(g, v, Some(ns), p, rest)?
        }
        ["apis", g, v, p, rest @ ..] if !g.is_empty() => resource(g, v, None, p, rest)?,
        _ => return None,
    })
}

fn resource<'a>(
    group: &'a str,
    version: &'a str,
    namespace: Option<&'a str>,
    plural: &'a str,
    rest: &[&'a str],
) -> Option<Route<'a>> {
    let (name, sub) = match rest {
        [] => (None, Sub::None),
        [n] => (Some(*n), Sub::None),
        [n, "status"] => (Some(*n), Sub::Status),
        [n, "scale"] => (Some(*n), Sub::Scale),
        _ => return None,
    };
    Some(Route::Resource {
        group,
        version,
        namespace,
        plural,
        name,
        sub,
    })
}
