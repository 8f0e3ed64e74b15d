//! The value of an expression of a type rsbuilder knows by path: the std and k8s-openapi
//! leaf types (durations, IP addresses, times, non-zero integers, quantities, JSON values),
//! evaluated from their constructors and constants as serde serializes them.

use serde_json::Value;

use super::strip_parens;
use super::value::{call_path, last_ident, prev_ident};
use crate::manifests::crd::eval;
use crate::manifests::crd::eval::Ctx;
use crate::manifests::crd::eval::Res;
use crate::manifests::crd::eval::Want;

/// A value of a type rsbuilder knows by path.
pub(super) fn leaf_value(cx: &Ctx<'_, '_>, expr: &syn::Expr, path: &str) -> Res<Value> {
    if let Some(want) = Want::of_leaf(path) {
        return eval::scalar(cx, expr, want)?.to_json(cx, expr, want);
    }
    let call = call_path(expr).map(|(p, a)| (last_ident(p), prev_ident(p), a));
    let str_arg =
        |e: &syn::Expr| -> Res<Value> { eval::scalar(cx, e, Want::Str)?.to_json(cx, e, Want::Str) };
    match path {
        "()" => match expr {
            syn::Expr::Tuple(t) if t.elems.is_empty() => Ok(Value::Null),
            _ => Err(cx.refuse(expr, "a `()` value")),
        },
        "serde_json::Value" | "serde_json::value::Value" => match expr {
            syn::Expr::Macro(m) if last_ident(&m.mac.path) == "json" => {
                eval::json_tokens(&m.mac.tokens).map_err(|e| cx.refuse(expr, &e))
            }
            syn::Expr::Path(p) if last_ident(&p.path) == "Null" => Ok(Value::Null),
            _ => match call {
                Some((f, Some(v), a)) if v == "Value" && a.len() == 1 && f == "String" => {
                    str_arg(&a[0])
                }
                Some((f, Some(v), a)) if v == "Value" && a.len() == 1 && f == "Bool" => {
                    eval::scalar(cx, &a[0], Want::Bool)?.to_json(cx, &a[0], Want::Bool)
                }
                _ => Err(cx.refuse(
                    expr,
                    "a serde_json::Value is evaluated from `json!(…)` of literals, `Value::Null`, `Value::String(…)` or `Value::Bool(…)`",
                )),
            },
        },
        p if p.ends_with("::Quantity") => match call {
            Some((f, _, a)) if f == "Quantity" && a.len() == 1 => str_arg(&a[0]),
            _ => Err(cx.refuse(expr, "a Quantity is evaluated from `Quantity(…)`")),
        },
        p if p.ends_with("::IntOrString") => match call {
            Some((f, _, a)) if f == "Int" && a.len() == 1 => {
                let w = Want::Int(eval::IntTy::I32);
                eval::scalar(cx, &a[0], w)?.to_json(cx, &a[0], w)
            }
            Some((f, _, a)) if f == "String" && a.len() == 1 => str_arg(&a[0]),
            _ => Err(cx.refuse(
                expr,
                "an IntOrString is evaluated from `IntOrString::Int(…)` or `IntOrString::String(…)`",
            )),
        },
        "std::time::Duration" => duration_value(cx, expr),
        "std::time::SystemTime" => match expr {
            syn::Expr::Path(p) if last_ident(&p.path) == "UNIX_EPOCH" => {
                Ok(serde_json::json!({"secs_since_epoch": 0, "nanos_since_epoch": 0}))
            }
            _ => Err(cx.refuse(expr, "a SystemTime is evaluated from `UNIX_EPOCH`")),
        },
        "std::net::Ipv4Addr" | "std::net::Ipv6Addr" | "std::net::IpAddr" => ip_value(cx, expr, path),
        p if p.starts_with("std::num::NonZero") => {
            let ty = &p["std::num::NonZero".len()..];
            let found = match expr {
                syn::Expr::Path(e) if prev_ident(&e.path).is_some_and(|t| t.ends_with(ty)) => {
                    eval::nonzero_const(ty, &last_ident(&e.path))
                }
                // `NonZeroU32::new(3).unwrap()`: the value, or the panic `crd()` would hit.
                syn::Expr::MethodCall(mc) if eval::is_unwrap(mc) => {
                    match (call_path(strip_parens(&mc.receiver)), eval::IntTy::from_name(&ty.to_lowercase())) {
                        (Some((f, a)), Some(int))
                            if last_ident(f) == "new"
                                && a.len() == 1
                                && prev_ident(f).is_some_and(|t| t.ends_with(ty)) =>
                        {
                            let want = Want::Int(int);
                            let v = eval::scalar(cx, &a[0], want)?;
                            // Checks the argument's type and range as rustc does.
                            v.to_json(cx, &a[0], want)?;
                            return match v {
                                eval::Scalar::Int(0, _) => Err(eval::panics(
                                    cx,
                                    &mc.receiver,
                                    &format!("`NonZero{ty}::new(0)` is `None`"),
                                )),
                                eval::Scalar::Int(n, _) => eval::Scalar::Int(n, None).to_json(cx, expr, Want::Any),
                                _ => Err(cx.refuse(&a[0], "an integer is expected")),
                            };
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            match found {
                Some(v) => eval::Scalar::Int(v, None).to_json(cx, expr, Want::Any),
                None => Err(cx.refuse(
                    expr,
                    "a NonZero value is evaluated from its `MIN` or `MAX`, or `new(n).unwrap()`",
                )),
            }
        }
        _ => Err(cx.refuse(
            expr,
            &format!("values of `{path}` are not evaluated (only its Default)"),
        )),
    }
}

/// `Ipv4Addr::LOCALHOST` / `UNSPECIFIED` / `BROADCAST`, `Ipv4Addr::new(a, b, c, d)`,
/// `Ipv6Addr::LOCALHOST` / `UNSPECIFIED`, `IpAddr::V4(…)` / `IpAddr::V6(…)`: serialized as
/// their `Display` text, as serde does for human-readable formats such as JSON.
fn ip_value(cx: &Ctx<'_, '_>, expr: &syn::Expr, path: &str) -> Res<Value> {
    use std::net::{Ipv4Addr, Ipv6Addr};
    let v4 = path.ends_with("Ipv4Addr") || path.ends_with("IpAddr");
    let v6 = path.ends_with("Ipv6Addr") || path.ends_with("IpAddr");
    let text = match expr {
        syn::Expr::Path(p) => {
            match (prev_ident(&p.path).as_deref(), last_ident(&p.path).as_str()) {
                (Some("Ipv4Addr"), "LOCALHOST") if v4 => Ipv4Addr::LOCALHOST.to_string(),
                (Some("Ipv4Addr"), "UNSPECIFIED") if v4 => Ipv4Addr::UNSPECIFIED.to_string(),
                (Some("Ipv4Addr"), "BROADCAST") if v4 => Ipv4Addr::BROADCAST.to_string(),
                (Some("Ipv6Addr"), "LOCALHOST") if v6 => Ipv6Addr::LOCALHOST.to_string(),
                (Some("Ipv6Addr"), "UNSPECIFIED") if v6 => Ipv6Addr::UNSPECIFIED.to_string(),
                _ => return Err(cx.refuse(expr, "this address is not evaluated")),
            }
        }
        _ => match call_path(expr).map(|(p, a)| (prev_ident(p), last_ident(p), a)) {
            Some((Some(t), f, a)) if t == "Ipv4Addr" && f == "new" && a.len() == 4 && v4 => {
                let mut octets = [0u8; 4];
                for (o, e) in octets.iter_mut().zip(a) {
                    *o = match eval::scalar(cx, e, Want::Int(eval::IntTy::U8))? {
                        eval::Scalar::Int(v, _) => {
                            u8::try_from(v).map_err(|_| cx.invalid(e, "does not fit in u8"))?
                        }
                        _ => return Err(cx.refuse(e, "a u8 is expected")),
                    };
                }
                Ipv4Addr::from(octets).to_string()
            }
            Some((Some(t), f, a))
                if t == "IpAddr"
                    && (f == "V4" || f == "V6")
                    && a.len() == 1
                    && path.ends_with("::IpAddr") =>
            {
                let inner = if f == "V4" {
                    "std::net::Ipv4Addr"
                } else {
                    "std::net::Ipv6Addr"
                };
                return ip_value(cx, &a[0], inner);
            }
            _ => return Err(cx.refuse(expr, "this address is not evaluated")),
        },
    };
    Ok(Value::String(text))
}

/// `Duration::from_secs(n)`, `from_millis`, `from_micros`, `from_nanos`, `new(s, n)`,
/// `Duration::ZERO`: serialized as serde does, `{"secs": …, "nanos": …}`.
fn duration_value(cx: &Ctx<'_, '_>, expr: &syn::Expr) -> Res<Value> {
    use std::time::Duration;
    let u64_arg = |e: &syn::Expr| -> Res<u64> {
        match eval::scalar(cx, e, Want::Int(eval::IntTy::U64))? {
            eval::Scalar::Int(v, t) if t.is_none_or(|t| t == eval::IntTy::U64) => {
                u64::try_from(v).map_err(|_| cx.invalid(e, "the value does not fit in u64"))
            }
            _ => Err(cx.refuse(e, "a u64 is expected")),
        }
    };
    let d = if let syn::Expr::Path(p) = expr {
        if last_ident(&p.path) == "ZERO" {
            Duration::ZERO
        } else {
            return Err(cx.refuse(expr, "this Duration is not evaluated"));
        }
    } else {
        match call_path(expr).map(|(p, a)| (last_ident(p), a)) {
            Some((f, a)) if a.len() == 1 => {
                let n = u64_arg(&a[0])?;
                match f.as_str() {
                    "from_secs" => Duration::from_secs(n),
                    "from_millis" => Duration::from_millis(n),
                    "from_micros" => Duration::from_micros(n),
                    "from_nanos" => Duration::from_nanos(n),
                    _ => return Err(cx.refuse(expr, "this Duration constructor is not evaluated")),
                }
            }
            Some((f, a)) if f == "new" && a.len() == 2 => {
                let s = u64_arg(&a[0])?;
                let n = match eval::scalar(cx, &a[1], Want::Int(eval::IntTy::U32))? {
                    eval::Scalar::Int(v, _) => {
                        u32::try_from(v).map_err(|_| cx.invalid(&a[1], "does not fit in u32"))?
                    }
                    _ => return Err(cx.refuse(&a[1], "a u32 is expected")),
                };
                s.checked_add(u64::from(n / 1_000_000_000))
                    .ok_or_else(|| cx.invalid(expr, "the Duration overflows"))?;
                Duration::new(s, n)
            }
            _ => return Err(cx.refuse(expr, "this Duration is not evaluated")),
        }
    };
    Ok(serde_json::json!({"secs": d.as_secs(), "nanos": d.subsec_nanos()}))
}
