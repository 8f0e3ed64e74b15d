// Tool-owned: written by rsbuilder, refreshed by `rsbuilder alpha update`; do not edit.
//! The CEL that rules are written in, as Kubernetes sets it up: the standard library with the
//! `strings` and `lists` extensions, `indexOf`/`lastIndexOf` on lists and `cel.bind` (in
//! [`ENV`], where rules compile), and the list and regex functions Kubernetes adds
//! (`isSorted`, `sum`, `min`, `max`, `find`, `findAll`, in [`context`], where rules run).

use std::sync::{Arc, LazyLock};

use cel::common::ast::{Expr, IdedExpr};
use cel::common::types::{CelInt, DYN_TYPE, LIST_TYPE};
use cel::common::value::CowVal;
use cel::extractors::This;
use cel::{Context, Env, ExecutionError, Value as Cel};

/// The CEL environment every rule compiles and runs in.
pub(super) static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    // Both extensions only add overloads to a fresh standard environment: they cannot clash.
    env.add_extension(cel::extensions::strings)
        .expect("the strings extension loads on the standard library");
    env.add_extension(cel::extensions::lists)
        .expect("the lists extension loads on the standard library");
    // The Kubernetes `lists` library's `indexOf`/`lastIndexOf`, beside the strings ones: an
    // overload on lists, so that the name keeps meaning both.
    env.add_member_overload(
        "indexOf",
        "list.indexOf(dyn)",
        LIST_TYPE,
        vec![DYN_TYPE],
        list_index_of,
    )
    .expect("no list overload of indexOf exists");
    env.add_member_overload(
        "lastIndexOf",
        "list.lastIndexOf(dyn)",
        LIST_TYPE,
        vec![DYN_TYPE],
        list_last_index_of,
    )
    .expect("no list overload of lastIndexOf exists");
    env.add_macro(cel::parser::Macro::receiver("bind", 3, bind))
        .expect("no bind macro exists");
    Arc::new(env)
});

/// A context with this module's functions; the caller binds `self` and `oldSelf`.
pub(super) fn context() -> Context<'static, 'static> {
    let mut ctx = Context::with_env(ENV.clone());
    // None of these names is declared by the environment: adding them cannot fail.
    let _ = ctx.add_function("isSorted", is_sorted);
    let _ = ctx.add_function("sum", sum);
    let _ = ctx.add_function("min", |This(this): This<Cel>| extreme(this, true));
    let _ = ctx.add_function("max", |This(this): This<Cel>| extreme(this, false));
    let _ = ctx.add_function("find", find);
    let _ = ctx.add_function("findAll", find_all);
    ctx
}

fn list(v: &Cel, f: &str) -> Result<Arc<Vec<Cel>>, ExecutionError> {
    match v {
        Cel::List(l) => Ok(l.clone()),
        other => Err(ExecutionError::no_such_member_overload(
            f,
            vec![other.type_of().to_string()],
        )),
    }
}

/// `list.isSorted()` of the Kubernetes `lists` library.
fn is_sorted(This(this): This<Cel>) -> Result<bool, ExecutionError> {
    let l = list(&this, "isSorted")?;
    for w in l.windows(2) {
        match w[0].partial_cmp(&w[1]) {
            Some(std::cmp::Ordering::Greater) => return Ok(false),
            Some(_) => {}
            None => {
                return Err(ExecutionError::ValuesNotComparable(
                    w[0].clone(),
                    w[1].clone(),
                ));
            }
        }
    }
    Ok(true)
}

/// `cel.bind(name, init, expr)` of cel-go's bindings extension (Kubernetes' environment has
/// it): `expr` with `name` bound to `init`, evaluated once; expanded, as cel-go expands it,
/// into a comprehension over no element whose accumulator is `name`. A `bind` on another
/// target is left alone (and refused as an unknown function).
fn bind(
    helper: &mut cel::parser::MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
) -> Result<Option<IdedExpr>, cel::parser::ParseError> {
    use cel::common::ast::{ComprehensionExpr, ListExpr, LiteralValue};
    if !matches!(target.as_ref().map(|t| &t.expr), Some(Expr::Ident(ns)) if ns == "cel") {
        return Ok(None);
    }
    let name = match args.first().map(|a| &a.expr) {
        Some(Expr::Ident(name)) => name.clone(),
        _ => {
            let id = args.first().map_or(0, |a| a.id);
            return Err(
                helper.new_error(id, "cel.bind() variable names must be simple identifiers")
            );
        }
    };
    let body = args.pop().unwrap_or_default();
    let init = args.pop().unwrap_or_default();
    let unused = ComprehensionExpr {
        iter_range: helper.next_expr(Expr::List(ListExpr::new(Vec::new()))),
        iter_var: "#unused".to_owned(),
        iter_var2: None,
        accu_var: name.clone(),
        accu_init: init,
        loop_cond: helper.next_expr(Expr::Literal(LiteralValue::Boolean(false.into()))),
        loop_step: helper.next_expr(Expr::Ident(name)),
        result: body,
    };
    Ok(Some(
        helper.next_expr(Expr::Comprehension(Box::new(unused))),
    ))
}

/// `list.indexOf(x)`: the first index of an element equal to `x`, -1 when none.
fn list_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (list, x) = list_and_element(&args, "indexOf")?;
    let i = list.iter().position(|e| *e == x);
    Ok(CowVal::Owned(Box::new(CelInt::from(
        i.map_or(-1, |i| i as i64),
    ))))
}

/// `list.lastIndexOf(x)`: the last index of an element equal to `x`, -1 when none.
fn list_last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (list, x) = list_and_element(&args, "lastIndexOf")?;
    let i = list.iter().rposition(|e| *e == x);
    Ok(CowVal::Owned(Box::new(CelInt::from(
        i.map_or(-1, |i| i as i64),
    ))))
}

fn list_and_element(
    args: &[CowVal<'_, '_>],
    f: &str,
) -> Result<(Arc<Vec<Cel>>, Cel), ExecutionError> {
    let [list, x] = args else {
        return Err(ExecutionError::invalid_argument_count(2, args.len()));
    };
    let list = Cel::try_from(list.as_ref())?;
    Ok((self::list(&list, f)?, Cel::try_from(x.as_ref())?))
}

/// `list.sum()`: 0 for an empty list, errors on overflow.
fn sum(This(this): This<Cel>) -> Result<Cel, ExecutionError> {
    let l = list(&this, "sum")?;
    let mut acc = match l.first() {
        Some(Cel::Float(_)) => Cel::Float(0.0),
        Some(Cel::UInt(_)) => Cel::UInt(0),
        _ => Cel::Int(0),
    };
    for x in l.iter() {
        acc = match (&acc, x) {
            (Cel::Int(a), Cel::Int(b)) => Cel::Int(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            ),
            (Cel::UInt(a), Cel::UInt(b)) => Cel::UInt(a.checked_add(*b).ok_or_else(|| {
                ExecutionError::function_error("sum", "unsigned integer overflow")
            })?),
            (Cel::Float(a), Cel::Float(b)) => Cel::Float(a + b),
            (a, b) => {
                return Err(ExecutionError::no_such_member_overload(
                    "sum",
                    vec![a.type_of().to_string(), b.type_of().to_string()],
                ));
            }
        };
    }
    Ok(acc)
}

/// `list.min()` / `list.max()`: an error on an empty list.
fn extreme(this: Cel, min: bool) -> Result<Cel, ExecutionError> {
    let f = if min { "min" } else { "max" };
    let l = list(&this, f)?;
    let mut best = l.first().ok_or_else(|| {
        ExecutionError::function_error(f, "min called on empty list".replace("min", f))
    })?;
    for x in l.iter().skip(1) {
        match x.partial_cmp(best) {
            Some(std::cmp::Ordering::Less) if min => best = x,
            Some(std::cmp::Ordering::Greater) if !min => best = x,
            Some(_) => {}
            None => return Err(ExecutionError::ValuesNotComparable(best.clone(), x.clone())),
        }
    }
    Ok(best.clone())
}

fn pattern(v: &Cel, f: &str) -> Result<String, ExecutionError> {
    match v {
        Cel::String(s) => Ok(s.to_string()),
        other => Err(ExecutionError::no_such_member_overload(
            f,
            vec!["string".into(), other.type_of().to_string()],
        )),
    }
}

fn regex(re: &str, f: &str) -> Result<regex::Regex, ExecutionError> {
    regex::Regex::new(re).map_err(|e| ExecutionError::function_error(f, e))
}

/// `string.find(regex)`: the first match, `""` when none (the Kubernetes `regex` library).
fn find(This(this): This<Arc<String>>, re: Cel) -> Result<Cel, ExecutionError> {
    Ok(Cel::from(
        regex(&pattern(&re, "find")?, "find")?
            .find(&this)
            .map_or("", |m| m.as_str()),
    ))
}

/// `string.findAll(regex)` and `string.findAll(regex, n)`: the matches (at most `n` when
/// `n >= 0`).
fn find_all(
    This(this): This<Arc<String>>,
    cel::extractors::Arguments(args): cel::extractors::Arguments,
) -> Result<Cel, ExecutionError> {
    let re = pattern(args.first().unwrap_or(&Cel::Null), "findAll")?;
    let limit = match args.get(1) {
        Some(Cel::Int(n)) if *n >= 0 => Some(*n as usize),
        Some(Cel::Int(_)) | None => None,
        Some(other) => {
            return Err(ExecutionError::no_such_member_overload(
                "findAll",
                vec![
                    "string".into(),
                    "string".into(),
                    other.type_of().to_string(),
                ],
            ));
        }
    };
    let all: Vec<Cel> = regex(&re, "findAll")?
        .find_iter(&this)
        .take(limit.unwrap_or(usize::MAX))
        .map(|m| Cel::from(m.as_str()))
        .collect();
    Ok(Cel::List(Arc::new(all)))
}
