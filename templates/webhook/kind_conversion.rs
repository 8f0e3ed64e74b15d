//! Conversion of `{{ n.kind }}` between its API versions. `{{ n.version }}` is the hub: every other
//! (spoke) version converts to the hub and back, so each spoke needs two functions,
//! `<spoke>_to_hub` and `hub_to_<spoke>`. Their scaffolded bodies carry over every field with
//! the same JSON name; replace them where the versions' fields differ (renamed, split or
//! moved fields), and keep the round trip lossless, for example with annotations.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The hub version's type.
pub type Hub = {{ n.type_path }};

/// Converts an object of kind `{{ n.kind }}` to `desired_api_version`, through the hub.
pub fn convert(object: Value, desired_api_version: &str) -> Result<Value, String> {
    let from = object["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let hub: Hub = match from.as_str() {
        "{{ n.api_version }}" => typed(object)?,
{%- for s in spokes %}
        "{{ s.api_version }}" => {{ s.ident }}_to_hub(typed(object)?)?,
{%- endfor %}
        other => return Err(format!("{{ n.kind }}: cannot convert from {other:?}")),
    };
    match desired_api_version {
        "{{ n.api_version }}" => json(&hub),
{%- for s in spokes %}
        "{{ s.api_version }}" => json(&hub_to_{{ s.ident }}(hub)?),
{%- endfor %}
        other => Err(format!("{{ n.kind }}: cannot convert to {other:?}")),
    }
}
{% for s in spokes %}
/// Converts a `{{ s.version }}` object to the hub version `{{ n.version }}`.
pub fn {{ s.ident }}_to_hub(spoke: {{ s.type_path }}) -> Result<Hub, String> {
    carry_over(&spoke, "{{ n.api_version }}")
}

/// Converts a hub object to version `{{ s.version }}`.
pub fn hub_to_{{ s.ident }}(hub: Hub) -> Result<{{ s.type_path }}, String> {
    carry_over(&hub, "{{ s.api_version }}")
}
{% endfor %}
/// Re-reads `from` as the type of another version: fields with the same JSON name carry over.
fn carry_over<A: Serialize, B: DeserializeOwned>(from: &A, api_version: &str) -> Result<B, String> {
    let mut value = serde_json::to_value(from).map_err(|e| e.to_string())?;
    value["apiVersion"] = Value::String(api_version.to_string());
    typed(value)
}

fn typed<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| format!("{{ n.kind }}: {e}"))
}

fn json<T: Serialize>(object: &T) -> Result<Value, String> {
    serde_json::to_value(object).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
{% for s in spokes %}
{%- if s.differs %}
    // `{{ s.version }}` and `{{ n.version }}` differ in required fields, which copying fields by name
    // cannot convert: the two tests below are ignored until `{{ s.ident }}_to_hub` and
    // `hub_to_{{ s.ident }}` convert between them; then remove their #[ignore].
{%- endif %}
    #[test]
{%- if s.differs %}
    #[ignore = "write {{ s.ident }}_to_hub and hub_to_{{ s.ident }} first: the versions differ in required fields"]
{%- endif %}
    fn {{ s.ident }}_round_trips_through_the_hub() {
        let spoke = json!({
            "apiVersion": "{{ s.api_version }}",
            "kind": "{{ n.kind }}",
            "metadata": {"name": "sample"},
            "spec": {{ s.spec }},
        });
        let hub = convert(spoke, "{{ n.api_version }}").unwrap();
        assert_eq!(hub["apiVersion"], "{{ n.api_version }}");
        assert_eq!(hub["metadata"]["name"], "sample");
        let back = convert(hub, "{{ s.api_version }}").unwrap();
        assert_eq!(back["apiVersion"], "{{ s.api_version }}");
        assert_eq!(back["kind"], "{{ n.kind }}");
    }

    #[test]
{%- if s.differs %}
    #[ignore = "write {{ s.ident }}_to_hub and hub_to_{{ s.ident }} first: the versions differ in required fields"]
{%- endif %}
    fn conversion_review_of_{{ s.ident }}_answers_with_the_converted_objects() {
        let body = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {
                "uid": "c0a1b2c3-0000-4000-8000-000000000003",
                "desiredAPIVersion": "{{ n.api_version }}",
                "objects": [{
                    "apiVersion": "{{ s.api_version }}",
                    "kind": "{{ n.kind }}",
                    "metadata": {"name": "sample"},
                    "spec": {{ s.spec }},
                }],
            },
        });
        let answer = crate::webhook::conversion::review(body.to_string().as_bytes());
        let response = answer.response.expect("a response");
        assert_eq!(response.uid, "c0a1b2c3-0000-4000-8000-000000000003");
        assert_eq!(response.converted_objects.len(), 1);
        let converted = &response.converted_objects[0];
        assert_eq!(converted["apiVersion"], "{{ n.api_version }}");
    }
{% endfor -%}
}
