//! The scalar evaluator and the untyped entry point (attribute values).

use super::*;
use crate::manifests::crd::defaults::eval_untyped as eval;
use crate::manifests::crd::resolve::Crate;
use crate::manifests::source::SourceSet;
use serde_json::Value;
use serde_json::json;
use std::path::Path;

fn with_crate<T>(src: &str, f: impl FnOnce(&Crate<'_>) -> T) -> T {
    let set = SourceSet {
        files: vec![SourceSet::parse_text(Path::new("x.rs"), src.into()).unwrap()],
    };
    let k = Crate::build(&set);
    f(&k)
}

#[test]
fn evaluates_literals_consts_and_simple_functions() {
    with_crate(
        "const N: i32 = 3; fn name() -> String { \"db\".to_string() } fn list() -> Vec<String> { vec![String::from(\"a\"), name()] } fn computed() -> i32 { let x = 2; x * N }",
        |k| {
            let e = |s: &str| eval(k, 0, &syn::parse_str(s).unwrap());
            assert_eq!(e("-5").unwrap(), json!(-5));
            assert_eq!(e("1.5").unwrap(), json!(1.5));
            assert_eq!(e("&\"x\"").unwrap(), json!("x"));
            assert_eq!(e("N").unwrap(), json!(3));
            assert_eq!(e("list()").unwrap(), json!(["a", "db"]));
            assert_eq!(e("computed()").unwrap(), json!(6));
            assert_eq!(e("None").unwrap(), Value::Null);
            assert_eq!(e("0.1f32").unwrap(), json!(0.1f32 as f64));
            assert!(
                e("std::process::id()")
                    .unwrap_err()
                    .contains("`std::process::id()`")
            );
        },
    );
    assert_eq!(
        json_tokens(&"{\"a\": [1, true]}".parse().unwrap()).unwrap(),
        json!({"a": [1, true]})
    );
    assert_eq!(json_tokens(&"true".parse().unwrap()).unwrap(), json!(true));
}

fn scalar_of(src: &str, expr: &str, want: Want) -> Res<Scalar> {
    with_crate(src, |k| {
        let cx = Ctx::new(k, 0);
        scalar(&cx, &syn::parse_str(expr).unwrap(), want)
    })
}

#[test]
fn integers_keep_their_type_and_overflow_is_invalid() {
    let u8w = Want::Int(IntTy::U8);
    assert_eq!(scalar_of("", "255", u8w).unwrap(), Scalar::Int(255, None));
    assert_eq!(
        scalar_of("", "!0u8", Want::Any).unwrap(),
        Scalar::Int(255, Some(IntTy::U8))
    );
    assert_eq!(
        scalar_of("", "-128i8", Want::Any).unwrap(),
        Scalar::Int(-128, Some(IntTy::I8))
    );
    assert_eq!(
        scalar_of("", "3u8 << 7", Want::Any).unwrap(),
        Scalar::Int(128, Some(IntTy::U8))
    );
    assert_eq!(
        scalar_of("", "300 as u8", Want::Any).unwrap(),
        Scalar::Int(44, Some(IntTy::U8))
    );
    assert_eq!(
        scalar_of("", "-1.5 as u8", Want::Any).unwrap(),
        Scalar::Int(0, Some(IntTy::U8))
    );
    assert_eq!(
        scalar_of("", "-7 / 2", Want::Any).unwrap(),
        Scalar::Int(-3, Some(IntTy::I32))
    );
    for (expr, want) in [
        ("256", u8w),
        ("255 + 1", u8w),
        ("1 / 0", Want::Any),
        ("1u8 << 8", Want::Any),
        ("-1u32", Want::Any),
    ] {
        let e = scalar_of("", expr, want).unwrap_err();
        assert_eq!(e.cause, Cause::Invalid, "{expr}: {}", e.message);
    }
    // An untyped literal's Display falls back to i32, as rustc's inference does.
    let e = scalar_of("", "3_000_000_000.to_string()", Want::Str).unwrap_err();
    assert_eq!(e.cause, Cause::Invalid, "{}", e.message);
    assert_eq!(
        scalar_of(
            "const BIG: u64 = 3_000_000_000;",
            "BIG.to_string()",
            Want::Str
        )
        .unwrap(),
        Scalar::Str("3000000000".into())
    );
}

#[test]
fn conversions_follow_std_from_impls() {
    let src = "const A: u8 = 7; const B: i64 = -1; const F: f32 = 0.1;";
    assert_eq!(
        scalar_of(src, "A.into()", Want::Int(IntTy::U32)).unwrap(),
        Scalar::Int(7, Some(IntTy::U32))
    );
    assert_eq!(
        scalar_of(src, "u64::from(A)", Want::Any).unwrap(),
        Scalar::Int(7, Some(IntTy::U64))
    );
    assert_eq!(
        scalar_of(src, "F.into()", Want::Float(FloatTy::F64)).unwrap(),
        Scalar::Float(0.1f32 as f64, Some(FloatTy::F64))
    );
    // No `From<i64> for u64`, no `From<u8> for String`: refused, never converted.
    assert!(scalar_of(src, "B.into()", Want::Int(IntTy::U64)).is_err());
    assert!(scalar_of(src, "A.into()", Want::Str).is_err());
    assert!(scalar_of(src, "5.into()", Want::Int(IntTy::U64)).is_err());
}

#[test]
fn floats_are_computed_in_their_type() {
    let f32w = Want::Float(FloatTy::F32);
    assert_eq!(
        scalar_of("", "0.1", f32w).unwrap(),
        Scalar::Float(0.1f32 as f64, Some(FloatTy::F32))
    );
    assert_eq!(
        scalar_of("const F: f32 = 0.1;", "F * 3.0", Want::Any).unwrap(),
        Scalar::Float((0.1f32 * 3.0f32) as f64, Some(FloatTy::F32))
    );
    assert_eq!(
        scalar_of("", "format!(\"{}\", 1e21)", Want::Str).unwrap(),
        Scalar::Str(format!("{}", 1e21))
    );
    assert_eq!(
        scalar_of("", "f32::MAX", Want::Any).unwrap(),
        Scalar::Float(f32::MAX as f64, Some(FloatTy::F32))
    );
    let e = scalar_of("", "1", Want::Float(FloatTy::F64)).unwrap_err();
    assert_eq!(e.cause, Cause::Invalid);
}

#[test]
fn unwrapped_parses_in_attribute_values_need_a_named_target() {
    with_crate("const P: &str = \"443\";", |k| {
        let e = |s: &str| eval(k, 0, &syn::parse_str(s).unwrap());
        assert_eq!(e("\"10\".parse::<u8>().unwrap()").unwrap(), json!(10));
        assert_eq!(e("P.parse::<u16>().expect(\"port\")").unwrap(), json!(443));
        assert_eq!(e("u8::from_str(\"7\").unwrap()").unwrap(), json!(7));
        assert_eq!(e("\"2.5\".parse::<f64>().unwrap()").unwrap(), json!(2.5));
        let untyped = e("\"10\".parse().unwrap()").unwrap_err();
        assert!(untyped.contains("target type"), "{untyped}");
        let into = e("10u32.try_into().unwrap()").unwrap_err();
        assert!(into.contains("try_into"), "{into}");
    });
    let cx_err = with_crate("", |k| {
        let cx = Ctx::new(k, 0);
        scalar(
            &cx,
            &syn::parse_str("\"1_000\".parse::<u32>().unwrap()").unwrap(),
            Want::Int(IntTy::U32),
        )
        .unwrap_err()
    });
    assert_eq!(cx_err.cause, Cause::Invalid);
    assert!(
        cx_err.message.contains("invalid digit"),
        "{}",
        cx_err.message
    );
}
