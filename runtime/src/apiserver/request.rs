// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! What a request asks to do, read from its method, path and query as k8s.io/apiserver's
//! request-info resolver reads them: the attributes authorization, priority and fairness and
//! the metrics work from, and the query's booleans as the parameter codec reads them.

use axum::http::Method;
use k8s_openapi::api::authorization::v1::{NonResourceAttributes, ResourceAttributes};

/// What a request asks to do, for the SubjectAccessReview: resource attributes for a
/// resource request, non-resource attributes (path, verb) for the rest.
#[derive(Debug, Clone, PartialEq)]
pub enum Attributes {
    /// `/apis/<group>/<version>/[namespaces/<ns>/]<resource>[/<name>[/<subresource>]]`.
    Resource(Box<ResourceAttributes>),
    /// Discovery, OpenAPI, `/version` and any other path.
    NonResource(NonResourceAttributes),
}

/// The authorization attributes of a request, as k8s.io/apiserver's request-info resolver
/// derives them: under `/apis/<group>/<version>/` the path names a resource (a
/// `namespaces/<ns>/` segment sets the namespace; then resource, name, subresource), and the
/// verb comes from the method (POST create, GET/HEAD get, PUT update, PATCH patch, DELETE
/// delete), with a GET without a name `list`, or `watch` when `watch` is true (as the parameter codec
/// reads a boolean, [`query_bool`]), and a DELETE
/// without a name `deletecollection`; a `metadata.name=` field selector names the object of a
/// list or watch. Every other path is non-resource with the lower-case method as verb.
pub fn attributes(method: &Method, path: &str, query: Option<&str>) -> Attributes {
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let non_resource = || {
        Attributes::NonResource(NonResourceAttributes {
            path: Some(path.to_owned()),
            verb: Some(method.as_str().to_ascii_lowercase()),
        })
    };
    let (group, version, mut rest) = match parts.as_slice() {
        ["apis", g, v, rest @ ..] if !rest.is_empty() => (*g, *v, rest),
        ["api", v, rest @ ..] if !rest.is_empty() => ("", *v, rest),
        _ => return non_resource(),
    };
    let mut verb = match *method {
        Method::POST => "create",
        Method::GET | Method::HEAD => "get",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "",
    }
    .to_owned();
    let mut namespace = None;
    if rest.first() == Some(&"namespaces") && rest.len() > 1 {
        namespace = Some(rest[1].to_owned());
        // `namespaces/<name>` alone is the namespace object itself.
        if rest.len() > 2 {
            rest = &rest[2..];
        }
    }
    let resource = rest.first().map(|s| (*s).to_owned());
    let mut name = rest.get(1).map(|s| (*s).to_owned());
    let subresource = rest.get(2).map(|s| (*s).to_owned());
    let params: Vec<(String, String)> = query
        .map(|q| {
            q.split('&')
                .map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                    (percent_decode(k), percent_decode(&v.replace('+', " ")))
                })
                .collect()
        })
        .unwrap_or_default();
    let param = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    if name.is_none() && verb == "get" {
        verb = match param("watch").as_deref() {
            Some(w) if query_bool(w) => "watch",
            _ => "list",
        }
        .to_owned();
        if let Some(selector) = param("fieldSelector") {
            for term in selector.split(',') {
                if let Some(v) = term
                    .trim()
                    .strip_prefix("metadata.name=")
                    .map(|v| v.trim_start_matches('='))
                {
                    name = Some(v.to_owned());
                }
            }
        }
    }
    if name.is_none() && verb == "delete" {
        verb = "deletecollection".to_owned();
    }
    Attributes::Resource(Box::new(ResourceAttributes {
        group: Some(group.to_owned()),
        version: Some(version.to_owned()),
        resource,
        subresource,
        namespace,
        name,
        verb: Some(verb),
        ..Default::default()
    }))
}

/// A boolean query parameter as k8s.io/apimachinery's parameter codec reads one
/// (`Convert_Slice_string_To_bool`, `Convert_Slice_string_To_Pointer_bool`): only `0` and
/// `false` in any case (Go's `strings.EqualFold`, which also folds `ſ` to `s`) are false;
/// every other value, the empty one included, is true. Never an error: `force=maybe` forces,
/// as it does on kube-apiserver.
pub fn query_bool(value: &str) -> bool {
    let folds_to_false = value.chars().count() == 5
        && value
            .chars()
            .zip("false".chars())
            .all(|(c, want)| c.eq_ignore_ascii_case(&want) || (want == 's' && c == '\u{017F}'));
    !(value == "0" || folds_to_false)
}

/// `%XX` escapes decoded (the extra header keys' encoding); anything malformed is kept as is.
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(hex) = std::str::from_utf8(&bytes[i + 1..i + 3])
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(attrs: Attributes) -> ResourceAttributes {
        match attrs {
            Attributes::Resource(r) => *r,
            other => panic!("not a resource request: {other:?}"),
        }
    }

    #[test]
    fn request_attributes_follow_the_request_info_rules() {
        let r = resource(attributes(
            &Method::GET,
            "/apis/db.example.com/v1/namespaces/ns1/databases",
            Some("watch=true&fieldSelector=metadata.name%3Dmain"),
        ));
        assert_eq!(r.verb.as_deref(), Some("watch"));
        assert_eq!(r.group.as_deref(), Some("db.example.com"));
        assert_eq!(r.version.as_deref(), Some("v1"));
        assert_eq!(r.resource.as_deref(), Some("databases"));
        assert_eq!(r.namespace.as_deref(), Some("ns1"));
        assert_eq!(r.name.as_deref(), Some("main"));

        let r = resource(attributes(
            &Method::GET,
            "/apis/db.example.com/v1/databases",
            None,
        ));
        assert_eq!((r.verb.as_deref(), r.namespace), (Some("list"), None));
        let r = resource(attributes(
            &Method::PUT,
            "/apis/db.example.com/v1/namespaces/ns1/databases/main/status",
            None,
        ));
        assert_eq!(r.verb.as_deref(), Some("update"));
        assert_eq!(r.name.as_deref(), Some("main"));
        assert_eq!(r.subresource.as_deref(), Some("status"));
        // `kubectl scale`: a patch of the scale subresource, which RBAC grants as
        // `databases/scale`.
        let r = resource(attributes(
            &Method::PATCH,
            "/apis/db.example.com/v1/namespaces/ns1/databases/main/scale",
            None,
        ));
        assert_eq!(
            (
                r.verb.as_deref(),
                r.resource.as_deref(),
                r.subresource.as_deref(),
                r.name.as_deref()
            ),
            (
                Some("patch"),
                Some("databases"),
                Some("scale"),
                Some("main")
            )
        );
        let r = resource(attributes(
            &Method::DELETE,
            "/apis/db.example.com/v1/namespaces/ns1/databases",
            None,
        ));
        assert_eq!(r.verb.as_deref(), Some("deletecollection"));
        let r = resource(attributes(
            &Method::GET,
            "/apis/db.example.com/v1/namespaces/ns1/databases/main",
            None,
        ));
        assert_eq!(r.verb.as_deref(), Some("get"));

        for path in [
            "/apis",
            "/apis/db.example.com",
            "/apis/db.example.com/v1",
            "/openapi/v2",
            "/version",
        ] {
            assert_eq!(
                attributes(&Method::GET, path, None),
                Attributes::NonResource(NonResourceAttributes {
                    path: Some(path.into()),
                    verb: Some("get".into()),
                }),
                "{path}"
            );
        }
    }

    #[test]
    fn percent_escapes_are_decoded_and_bad_ones_kept() {
        assert_eq!(percent_decode("a%2Fb"), "a/b");
        assert_eq!(percent_decode("a%zz%2"), "a%zz%2");
    }
}
