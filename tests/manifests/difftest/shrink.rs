//! Shrinking a failing case: remove modules, fields, variants, attributes, docs and whole
//! types, and simplify types, for as long as the failure persists.
//!
//! Each round builds every one-step reduction of the current case in one batch (compiling
//! kube-derive cases one at a time would cost a build each) and keeps the smallest candidate
//! that still fails the same way; the round's candidates include halves of each field list,
//! so a large case loses most of itself in the first rounds.

use super::model::*;

/// Every one-step reduction of `case`, garbage-collected, smallest first, without repeats.
pub fn candidates(case: &Case) -> Vec<Case> {
    let mut out: Vec<Case> = Vec::new();
    if case.modules.len() > 1 {
        for i in 0..case.modules.len() {
            let mut c = case.clone();
            c.modules.remove(i);
            if c.modules.len() == 1 {
                c.modules[0].name = None;
            }
            out.push(c);
        }
    }
    for (mi, m) in case.modules.iter().enumerate() {
        for (ii, item) in m.items.iter().enumerate() {
            let mut edit = |f: &mut dyn FnMut(&mut Item) -> bool| {
                let mut c = case.clone();
                if f(&mut c.modules[mi].items[ii]) {
                    out.push(c);
                }
            };
            match item {
                Item::Struct(s) => {
                    if let Body::Named(fs) = &s.body {
                        let n = fs.len();
                        // Halves and quarters, then each field.
                        let mut chunks = Vec::new();
                        if n >= 2 {
                            chunks.push((0, n / 2));
                            chunks.push((n / 2, n));
                        }
                        if n >= 8 {
                            for q in 0..4 {
                                chunks.push((q * n / 4, (q + 1) * n / 4));
                            }
                        }
                        for j in 0..n {
                            chunks.push((j, j + 1));
                        }
                        for (a, b) in chunks {
                            edit(&mut |it| {
                                if let Item::Struct(s) = it
                                    && let Body::Named(fs) = &mut s.body
                                {
                                    fs.drain(a..b);
                                    return true;
                                }
                                false
                            });
                        }
                        for j in 0..n {
                            field_edits(&fs[j], &mut |f| {
                                edit(&mut |it| {
                                    if let Item::Struct(s) = it
                                        && let Body::Named(fs) = &mut s.body
                                    {
                                        return f(&mut fs[j]);
                                    }
                                    false
                                })
                            });
                        }
                    }
                    if let Body::Newtype(f) = &s.body {
                        field_edits(f, &mut |g| {
                            edit(&mut |it| match it {
                                Item::Struct(Struct {
                                    body: Body::Newtype(f),
                                    ..
                                }) => g(f),
                                _ => false,
                            })
                        });
                    }
                    for k in 0..s.kube.len() {
                        edit(&mut |it| {
                            if let Item::Struct(s) = it {
                                s.kube.remove(k);
                            }
                            true
                        });
                    }
                    for k in 0..s.attrs.len() {
                        edit(&mut |it| {
                            if let Item::Struct(s) = it {
                                s.attrs.remove(k);
                            }
                            true
                        });
                    }
                    if !s.doc.is_empty() {
                        edit(&mut |it| {
                            if let Item::Struct(s) = it {
                                s.doc.clear();
                            }
                            true
                        });
                    }
                    if s.hand_default.as_ref().is_some_and(|v| *v != Val::Zero) {
                        edit(&mut |it| {
                            if let Item::Struct(s) = it {
                                s.hand_default = Some(Val::Zero);
                            }
                            true
                        });
                    }
                    if s.derives.kube_schema {
                        edit(&mut |it| {
                            if let Item::Struct(s) = it {
                                s.derives.kube_schema = false;
                                s.attrs.retain(|a| !a.text.starts_with("#[x_kube"));
                                if let Body::Named(fs) = &mut s.body {
                                    for f in fs {
                                        f.attrs.retain(|a| !a.text.starts_with("#[x_kube"));
                                    }
                                }
                            }
                            true
                        });
                    }
                }
                Item::Enum(e) => {
                    if e.variants.len() > 1 {
                        for j in 0..e.variants.len() {
                            edit(&mut |it| {
                                if let Item::Enum(e) = it {
                                    let gone = e.variants.remove(j);
                                    if e.default_variant.as_ref() == Some(&gone.name) {
                                        return false;
                                    }
                                }
                                true
                            });
                        }
                    }
                    for j in 0..e.variants.len() {
                        let v = &e.variants[j];
                        if !matches!(v.body, Body::Unit) {
                            edit(&mut |it| {
                                if let Item::Enum(e) = it {
                                    e.variants[j].body = Body::Unit;
                                }
                                true
                            });
                        }
                        if let Body::Named(fs) = &v.body {
                            for k in 0..fs.len() {
                                edit(&mut |it| {
                                    if let Item::Enum(e) = it
                                        && let Body::Named(fs) = &mut e.variants[j].body
                                    {
                                        fs.remove(k);
                                    }
                                    true
                                });
                            }
                        }
                        for k in 0..v.attrs.len() {
                            edit(&mut |it| {
                                if let Item::Enum(e) = it {
                                    e.variants[j].attrs.remove(k);
                                }
                                true
                            });
                        }
                        if !v.doc.is_empty() {
                            edit(&mut |it| {
                                if let Item::Enum(e) = it {
                                    e.variants[j].doc.clear();
                                }
                                true
                            });
                        }
                    }
                    for k in 0..e.attrs.len() {
                        edit(&mut |it| {
                            if let Item::Enum(e) = it {
                                e.attrs.remove(k);
                            }
                            true
                        });
                    }
                    if !e.doc.is_empty() {
                        edit(&mut |it| {
                            if let Item::Enum(e) = it {
                                e.doc.clear();
                            }
                            true
                        });
                    }
                }
                Item::Fn(f) => {
                    if f.body != Val::Zero {
                        edit(&mut |it| {
                            if let Item::Fn(f) = it {
                                f.body = Val::Zero;
                            }
                            true
                        });
                    }
                }
                Item::Const(_) => {}
            }
        }
    }
    // Each spelling of the lexical layer dropped (the file as a user on Linux writes it).
    for drop in [
        |s: &mut Spelling| s.crlf = false,
        |s: &mut Spelling| s.bom = false,
        |s: &mut Spelling| s.nfd = false,
    ] {
        let mut c = case.clone();
        drop(&mut c.spelling);
        if c.spelling != case.spelling {
            out.push(c);
        }
    }
    for c in &mut out {
        collect_garbage(c);
    }
    let here = render(case);
    let mut seen = std::collections::BTreeSet::new();
    let mut out: Vec<(usize, Case)> = out
        .into_iter()
        .filter_map(|c| {
            let text = render(&c);
            let n = text.len();
            (text != here && seen.insert(text)).then_some((n, c))
        })
        .collect();
    out.sort_by_key(|(n, _)| *n);
    out.into_iter().map(|(_, c)| c).collect()
}

/// The one-step reductions of a field: each attribute, its doc, its type made simpler.
/// An edit of a field: whether it applies.
type FieldEdit<'a> = &'a mut dyn FnMut(&mut Field) -> bool;

fn field_edits(f: &Field, push: &mut dyn FnMut(FieldEdit<'_>)) {
    for k in 0..f.attrs.len() {
        push(&mut |g: &mut Field| {
            g.attrs.remove(k);
            true
        });
    }
    if !f.doc.is_empty() {
        push(&mut |g: &mut Field| {
            g.doc.clear();
            true
        });
    }
    let inner = match &f.ty {
        Ty::Option(x) | Ty::Vec(x) | Ty::VecDeque(x) | Ty::Array(x, _) | Ty::Set(_, x) => {
            Some((**x).clone())
        }
        Ty::Ptr(_, x) => Some((**x).clone()),
        Ty::Map(_, _, v) => Some((**v).clone()),
        _ => None,
    };
    if let Some(inner) = inner {
        push(&mut |g: &mut Field| {
            g.ty = inner.clone();
            true
        });
    }
    if f.ty != Ty::Leaf("String") {
        push(&mut |g: &mut Field| {
            g.ty = Ty::Leaf("String");
            g.attrs
                .retain(|a| !a.text.contains("default") && !a.text.contains("skip"));
            true
        });
    }
}

/// Shrinks `case` while `fails` (called with a batch of candidates, answering for each)
/// says a candidate still fails; at most `rounds` rounds of at most `per_round` candidates.
pub fn shrink(
    case: Case,
    rounds: usize,
    per_round: usize,
    mut fails: impl FnMut(&[Case]) -> Vec<bool>,
) -> Case {
    let mut best = case;
    for _ in 0..rounds {
        let cands: Vec<Case> = candidates(&best).into_iter().take(per_round).collect();
        if cands.is_empty() {
            break;
        }
        let verdicts = fails(&cands);
        match cands.into_iter().zip(verdicts).find(|(_, f)| *f) {
            Some((c, _)) => best = c,
            None => break,
        }
    }
    best
}
