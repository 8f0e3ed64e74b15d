//! The random grammar of kube-rs type files: for a seed and an index, one [`Case`] drawn from
//! the space rsbuilder supports (std and k8s-openapi types with nesting, enums in every serde
//! representation, serde / schemars / `#[kube]` / `#[x_kube]` attributes, doc comments,
//! defaults), weighted so most kinds are valid for `crd()`, with a share of shapes `crd()`
//! panics on or the API server rejects.
//!
//! Determinism: each kind draws from its own `fastrand::Rng` seeded from `(seed, index)`, so a
//! kind is the same bytes whatever the number of kinds generated with it, and the model holds
//! no hash-ordered collections.

use fastrand::Rng;

use super::model::*;

/// Optional parts of the grammar. Each is on by default since rsbuilder handles what it
/// exercises (the evaluator of default expressions, `cfg` attributes, and so on).
/// `RSBUILDER_DIFFTEST_FEATURES` names the ones to add to a narrowed set: a comma-separated
/// list of the names below, or `all`. `RSBUILDER_DIFFTEST_FEATURES=none` turns them all off.
#[derive(Clone, Debug)]
pub struct Features {
    /// `struct-update`: `Type { a: 1, ..Default::default() }` / `..Self::default()` over a
    /// hand-written `impl Default`.
    pub struct_update_over_hand_default: bool,
    /// `to-string`: `.to_string()` of numeric and bool constants into `String` defaults.
    pub to_string_of_numbers: bool,
    /// `f32`: f32 defaults that are not exact binary fractions inside containers
    /// (serde_json widens f32 to f64).
    pub inexact_f32: bool,
    /// `cfg`: `#[cfg(...)]` / `#[cfg_attr(...)]` on fields and items.
    pub cfg: bool,
    /// `conversions`: `.unwrap()` / `.expect()` of fallible conversions of literals in
    /// defaults (`"80".parse::<u16>()`, `u16::try_from(80i128)`, `NonZeroU32::new(3)`).
    pub conversions: bool,
    /// `lexical`: the spellings rustc normalizes when it reads a file. Some files are written
    /// with CRLF line endings, a byte order mark and identifiers in Unicode NFD; some fields,
    /// types and variants get accented names; some string literals (CEL rules, descriptions,
    /// docs, defaults) are raw strings, some of them over two lines. Drawn from a random
    /// stream of their own, so the kinds have the same shapes with the feature on or off.
    pub lexical: bool,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            struct_update_over_hand_default: true,
            to_string_of_numbers: true,
            inexact_f32: true,
            cfg: true,
            conversions: true,
            lexical: true,
        }
    }
}

impl Features {
    /// The default features and those named in `RSBUILDER_DIFFTEST_FEATURES`.
    pub fn from_env() -> Result<Self, String> {
        let spec = std::env::var("RSBUILDER_DIFFTEST_FEATURES").unwrap_or_default();
        Self::parse(&spec)
    }

    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut f = Features::default();
        for name in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match name {
                "all" => {
                    f = Features {
                        struct_update_over_hand_default: true,
                        to_string_of_numbers: true,
                        inexact_f32: true,
                        cfg: true,
                        conversions: true,
                        lexical: true,
                    }
                }
                "none" => {
                    f = Features {
                        struct_update_over_hand_default: false,
                        to_string_of_numbers: false,
                        inexact_f32: false,
                        cfg: false,
                        conversions: false,
                        lexical: false,
                    }
                }
                "struct-update" => f.struct_update_over_hand_default = true,
                "to-string" => f.to_string_of_numbers = true,
                "f32" => f.inexact_f32 = true,
                "cfg" => f.cfg = true,
                "conversions" => f.conversions = true,
                "lexical" => f.lexical = true,
                other => {
                    return Err(format!(
                        "RSBUILDER_DIFFTEST_FEATURES: unknown feature `{other}` (struct-update, to-string, f32, cfg, conversions, lexical, all, none)"
                    ));
                }
            }
        }
        Ok(f)
    }
}

/// The generator's RNG for kind `index` of `seed` (splitmix64 of both, so neighbouring
/// seeds and indices give unrelated streams).
fn rng_for(seed: u64, index: u64) -> Rng {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(index.wrapping_mul(0xD1B5_4A32_D192_ED03))
        .wrapping_add(0x2545_F491_4F6C_DD1D);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Rng::with_seed(z ^ (z >> 31))
}

/// Kind `index` of `seed`.
pub fn generate(seed: u64, index: u64, features: &Features, k8s: &[String]) -> Case {
    let mut rng = rng_for(seed, index);
    // The lexical layer's own stream: the kind's shape does not depend on it.
    let mut lex = features
        .lexical
        .then(|| rng_for(seed ^ 0x1E71_CA15_1E71_CA15, index));
    let spelling = match lex.as_mut() {
        Some(l) => Spelling {
            crlf: l.u32(0..100) < 50,
            bom: l.u32(0..100) < 30,
            nfd: l.u32(0..100) < 50,
        },
        None => Spelling::default(),
    };
    let names = KindNames::draw(&mut rng);
    let versions = if rng.u32(0..100) < 8 {
        rng.usize(2..=3)
    } else {
        1
    };
    // Exactly one stored version, except rarely (merge_crds refuses both shapes).
    let mut storage: Vec<bool> = (0..versions).map(|i| i == versions - 1).collect();
    if versions > 1 && rng.u32(0..100) < 10 {
        if rng.bool() {
            storage.iter_mut().for_each(|s| *s = true);
        } else {
            storage.iter_mut().for_each(|s| *s = false);
        }
    }
    let version_names = ["v1alpha1", "v1beta1", "v1", "v2"];
    let first = if versions == 1 {
        rng.usize(0..version_names.len())
    } else {
        rng.usize(0..=version_names.len() - versions)
    };
    let mut modules = Vec::new();
    for (v, stored) in storage.iter().enumerate() {
        let version = version_names[first + v];
        let mut g = Gen {
            rng: rng.fork(),
            features,
            k8s,
            items: Vec::new(),
            counter: 0,
            in_default: 0,
            lex: lex.as_mut().map(Rng::fork),
        };
        g.kind(&names, version, *stored, versions > 1);
        modules.push(Module {
            name: (versions > 1).then(|| version.to_string()),
            items: g.items,
        });
    }
    Case {
        name: format!("s{seed}_k{index}"),
        seed,
        index,
        modules,
        spelling,
    }
}

/// The names shared by every version of a kind.
struct KindNames {
    group: String,
    kind: String,
    /// Optional `#[kube]` arguments that must agree across versions (plural, shortnames, ...).
    shared: Vec<Attr>,
    namespaced: bool,
}

const KINDS: &[&str] = &[
    "Widget", "Gadget", "Database", "Cache", "Queue", "Gateway", "Pipeline", "Bucket", "Tenant",
    "Model", "Route", "Shard", "Backup", "Mesh", "Agent", "Proxy", "Index", "Policy", "Batch",
    "Sketch", "Quiz", "Story", "Key", "Fleet", "Runner",
];
const GROUP_WORDS: &[&str] = &["apps", "data", "ai", "net", "storage", "ops", "edge", "ml"];
const DOMAINS: &[&str] = &["example.com", "difftest.io", "k8s.example.org"];
const FIELD_WORDS: &[&str] = &[
    "name",
    "replicas",
    "image",
    "port",
    "size",
    "mode",
    "labels",
    "selector",
    "timeout",
    "retries",
    "endpoint",
    "region",
    "tier",
    "weight",
    "enabled",
    "args",
    "env",
    "limits",
    "target",
    "source",
    "schedule",
    "paused",
    "storage_class",
    "version",
    "config",
    "policy",
    "rules",
    "owner",
    "zone",
    "priority",
    "threshold",
    "interval",
    "path",
    "host",
    "protocol",
    "backend",
    "secret_ref",
    "volume",
    "capacity",
    "max_surge",
    "min_ready_seconds",
    "http_get",
    "api_version_hint",
    "display_name",
    "ratio",
    "count",
    "tags",
    "annotations",
    "phase",
    "message",
    "ready",
    "url",
    "id",
    "level",
    "window",
    "burst",
    "min",
    "max",
    "items",
    "conditions",
    "observed_generation",
    "type",
    "match",
    "ref",
    "kind_hint",
    "x",
    "a_b_c",
];
const TYPE_WORDS: &[&str] = &[
    "Endpoint", "Backend", "Rule", "Target", "Limits", "Probe", "Volume", "Port", "Selector",
    "Schedule", "Config", "Tier", "Mode", "Phase", "Protocol", "Strategy", "Storage", "Network",
    "Auth", "Window", "Spec", "Item", "Entry", "Source",
];
const RENAME_ALL: &[&str] = &[
    "camelCase",
    "camelCase",
    "camelCase",
    "lowercase",
    "UPPERCASE",
    "PascalCase",
    "snake_case",
    "SCREAMING_SNAKE_CASE",
    "kebab-case",
    "SCREAMING-KEBAB-CASE",
];
const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "fast",
    "slow",
    "on",
    "off",
    "primary",
    "replica",
    "x-y",
    "a.b",
    "with space",
    "Ünïcode",
    "quote\"d",
    "back\\slash",
    "",
];

impl KindNames {
    fn draw(rng: &mut Rng) -> Self {
        let mut kind = pick(rng, KINDS).to_string();
        if rng.u32(0..100) < 15 {
            kind.push_str(&rng.u32(1..100).to_string());
        }
        let group = format!("{}.{}", pick(rng, GROUP_WORDS), pick(rng, DOMAINS));
        let lower = kind.to_lowercase();
        let mut shared = Vec::new();
        if rng.u32(0..100) < 10 {
            shared.push(Attr::new(format!("plural = \"{lower}items\"")));
        }
        if rng.u32(0..100) < 5 {
            shared.push(Attr::new(format!("singular = \"{lower}one\"")));
        }
        if rng.u32(0..100) < 20 {
            shared.push(Attr::new(format!("shortname = \"{}\"", &lower[..2])));
            if rng.bool() {
                shared.push(Attr::new(format!("shortname = \"{}x\"", &lower[..1])));
            }
        }
        if rng.u32(0..100) < 10 {
            shared.push(Attr::new("category = \"all\""));
            if rng.bool() {
                shared.push(Attr::new("category = \"difftest\""));
            }
        }
        KindNames {
            group,
            kind,
            shared,
            namespaced: rng.bool(),
        }
    }
}

fn pick<'a>(rng: &mut Rng, xs: &'a [&'a str]) -> &'a str {
    xs[rng.usize(0..xs.len())]
}

/// What a field is generated for.
#[derive(Clone, Copy)]
struct FieldCtx {
    depth: usize,
    kube_schema: bool,
}

struct Gen<'a> {
    rng: Rng,
    features: &'a Features,
    k8s: &'a [String],
    items: Vec<Item>,
    counter: usize,
    /// Inside the value of a hand-written `Default` impl: no calls that could come back to it.
    in_default: usize,
    /// The lexical layer's stream (see [`Features::lexical`]), `None` when it is off.
    lex: Option<Rng>,
}

/// Serialized name of a Rust field name under a serde `rename_all` rule (serde's own rules,
/// for the snake_case ASCII names the grammar uses).
pub fn serde_case(name: &str, rule: Option<&str>) -> String {
    let name = name.strip_prefix("r#").unwrap_or(name);
    let words: Vec<&str> = name.split('_').collect();
    let cap = |w: &str| {
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
            .unwrap_or_default()
    };
    match rule {
        None | Some("snake_case") | Some("lowercase") => name.to_string(),
        Some("UPPERCASE") | Some("SCREAMING_SNAKE_CASE") => name.to_ascii_uppercase(),
        Some("PascalCase") => words.iter().map(|w| cap(w)).collect(),
        Some("camelCase") => {
            let p: String = words.iter().map(|w| cap(w)).collect();
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_ascii_lowercase().to_string() + c.as_str())
                .unwrap_or_default()
        }
        Some("kebab-case") => name.replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => name.replace('_', "-").to_ascii_uppercase(),
        Some(_) => name.to_string(),
    }
}

impl Gen<'_> {
    fn pct(&mut self, p: u32) -> bool {
        self.rng.u32(0..100) < p
    }

    /// A string literal holding `s`: its escaped form, or with the lexical layer sometimes a raw
    /// string (`r#"..."#`), then sometimes with its first space made a line break.
    fn lit(&mut self, s: &str) -> String {
        let Some(lex) = self.lex.as_mut() else {
            return format!("{s:?}");
        };
        if lex.u32(0..100) >= 30 || s.contains("\"#") || s.contains('\r') {
            return format!("{s:?}");
        }
        let s = if lex.bool() {
            s.replacen(' ', "\n", 1)
        } else {
            s.to_string()
        };
        format!("r#\"{s}\"#")
    }

    /// `word`, or with the lexical layer sometimes with an accent on its first `a`, `e`, `i`,
    /// `o`, `u` or `n` after the first letter (written in NFC; [`Spelling::nfd`] decomposes it
    /// in the file). Never on the first letter: serde's `camelCase` rule panics on a name that
    /// starts with a non-ASCII letter, so such a crate does not compile.
    fn accent(&mut self, word: &str) -> String {
        let Some(lex) = self.lex.as_mut() else {
            return word.to_string();
        };
        if lex.u32(0..100) >= 15 {
            return word.to_string();
        }
        let accented = |c: char| match c {
            'a' => Some('ä'),
            'e' => Some('é'),
            'i' => Some('ï'),
            'o' => Some('ö'),
            'u' => Some('ü'),
            'n' => Some('ñ'),
            _ => None,
        };
        let mut done = false;
        word.chars()
            .enumerate()
            .map(|(i, c)| match accented(c) {
                Some(a) if !done && i > 0 => {
                    done = true;
                    a
                }
                _ => c,
            })
            .collect()
    }

    fn fresh(&mut self, base: &str) -> String {
        self.counter += 1;
        format!("{base}{}", self.counter)
    }

    fn find(&self, name: &str) -> Option<&Item> {
        self.items.iter().find(|i| i.name() == name)
    }

    fn find_mut(&mut self, name: &str) -> Option<&mut Item> {
        self.items.iter_mut().find(|i| i.name() == name)
    }

    fn can_build(&self, ty: &Ty) -> bool {
        constructible(&self.module(), ty)
    }

    fn module(&self) -> Module {
        Module {
            name: None,
            items: self.items.clone(),
        }
    }

    // ----- the kind -----

    fn kind(&mut self, names: &KindNames, version: &str, stored: bool, multi: bool) {
        let spec_name = format!("{}Spec", names.kind);
        // With no_spec, kube-derive copies the fields into the root struct, where `#[x_kube]`
        // is not an attribute: no KubeSchema then.
        let no_spec = self.pct(3);
        let kube_schema = !no_spec && self.pct(20);
        let ctx = FieldCtx {
            depth: 0,
            kube_schema,
        };
        let n = self.rng.usize(0..=10);
        let (fields, rename_all) = self.named_fields(n, ctx, true);
        let mut kube = names.shared.clone();
        if names.namespaced {
            kube.push(Attr::new("namespaced"));
        }
        if !stored || (!multi && self.pct(3)) {
            kube.push(Attr::new("storage = false"));
        }
        if self.pct(3) {
            kube.push(Attr::new("served = false"));
        }
        if self.pct(5) {
            kube.push(Attr::new(if self.rng.bool() {
                "deprecated".to_string()
            } else {
                format!("deprecated = {:?}", pick(&mut self.rng, WORDS))
            }));
        }
        let mut status_fields: Vec<(String, Ty)> = Vec::new();
        if self.pct(40) {
            let status = format!("{}Status", names.kind);
            let n = self.rng.usize(0..=5);
            let (sf, srename) = self.named_fields(
                n,
                FieldCtx {
                    depth: 1,
                    kube_schema: false,
                },
                false,
            );
            for f in &sf {
                status_fields.push((serde_case(&f.name, srename.as_deref()), f.ty.clone()));
            }
            let mut attrs = Vec::new();
            if let Some(r) = &srename {
                attrs.push(Attr::new(format!("#[serde(rename_all = \"{r}\")]")));
            }
            let doc = self.doc(30);
            self.items.push(Item::Struct(Struct {
                name: status.clone(),
                doc,
                derives: Derives::default(),
                kube_core: None,
                kube: Vec::new(),
                attrs,
                body: Body::Named(sf),
                hand_default: None,
            }));
            kube.push(Attr::new(format!("status = \"{status}\"")).with_ref(status));
            if self.pct(20) {
                kube.push(self.scale(&status_fields));
            }
        } else if self.pct(2) {
            // scale without status: kube-derive emits no subresources.
            kube.push(self.scale(&status_fields));
        }
        let spec_paths: Vec<(String, Ty)> = fields
            .iter()
            .filter(|f| {
                !f.attrs
                    .iter()
                    .any(|a| a.text.contains("flatten") || a.text.contains("skip"))
            })
            .map(|f| (serde_case(&f.name, rename_all.as_deref()), f.ty.clone()))
            .collect();
        if self.pct(20) {
            for _ in 0..self.rng.usize(1..=3) {
                kube.push(self.printcolumn(&spec_paths));
            }
        }
        if self.pct(10) {
            for (p, ty) in spec_paths.iter().filter(|(_, t)| is_scalar(t)).take(2) {
                let _ = ty;
                kube.push(Attr::new(format!("selectable = \".spec.{p}\"")));
            }
        }
        if self.pct(8) {
            kube.push(Attr::new(
                "annotation(\"difftest.io/source\", \"generated\")",
            ));
        }
        if self.pct(8) {
            kube.push(Attr::new("label(\"difftest.io/tier\", \"one\")"));
        }
        if self.pct(10) {
            kube.push(Attr::new(self.cel_rule("self.metadata.name != ''", true)));
        }
        if self.pct(10) {
            let doc = self.sentence();
            let doc = self.lit(&doc);
            kube.push(Attr::new(format!("doc = {doc}")));
        }
        if self.pct(5) {
            kube.push(Attr::new(format!("root = \"{}Root\"", names.kind)));
        }
        if no_spec {
            // The spec's fields at the root of the object instead of under `spec`.
            kube.push(Attr::new("no_spec"));
        }
        if self.pct(3) {
            let derived = self.pct(30);
            if !derived {
                // kube-derive puts a root `validation` in an `#[x_kube]` that only a derived
                // schema defines: with `schema = "disabled"` the crate does not compile.
                kube.retain(|a| !a.text.starts_with("validation"));
            }
            kube.push(Attr::new(if derived {
                "schema = \"derived\""
            } else {
                "schema = \"disabled\""
            }));
        }
        let mut attrs = Vec::new();
        if let Some(r) = &rename_all {
            attrs.push(Attr::new(format!("#[serde(rename_all = \"{r}\")]")));
        }
        self.container_attrs(&mut attrs, kube_schema, true);
        let doc = self.doc(40);
        let spec = Struct {
            name: spec_name,
            doc,
            derives: Derives {
                kube_schema,
                ..Derives::default()
            },
            kube_core: Some(format!(
                "group = \"{}\", version = \"{version}\", kind = \"{}\"",
                names.group, names.kind
            )),
            kube,
            attrs,
            body: Body::Named(fields),
            hand_default: None,
        };
        self.items.insert(0, Item::Struct(spec));
        if self.features.cfg && self.pct(5) {
            self.cfg_test_kind(names, version);
        }
    }

    /// A second custom resource that only exists under `#[cfg(test)]`.
    fn cfg_test_kind(&mut self, names: &KindNames, version: &str) {
        let name = format!("{}TestOnlySpec", names.kind);
        self.items.push(Item::Struct(Struct {
            name,
            doc: Vec::new(),
            derives: Derives::default(),
            kube_core: Some(format!(
                "group = \"{}\", version = \"{version}\", kind = \"{}TestOnly\"",
                names.group, names.kind
            )),
            kube: Vec::new(),
            attrs: vec![Attr::new("#[cfg(test)]")],
            body: Body::Named(vec![Field::plain("a", Ty::Leaf("String"))]),
            hand_default: None,
        }));
    }

    fn scale(&mut self, status: &[(String, Ty)]) -> Attr {
        let status_path = status
            .iter()
            .find(|(_, t)| matches!(t, Ty::Leaf("i32")))
            .map(|(p, _)| format!(".status.{p}"))
            .unwrap_or_else(|| ".status.replicas".into());
        if self.rng.bool() {
            let sel = if self.rng.bool() {
                ", label_selector_path = \".status.selector\""
            } else {
                ""
            };
            Attr::new(format!(
                "scale(spec_replicas_path = \".spec.replicas\", status_replicas_path = \"{status_path}\"{sel})"
            ))
        } else {
            Attr::new(format!(
                "scale = r#\"{{\"specReplicasPath\":\".spec.replicas\", \"statusReplicasPath\":\"{status_path}\"}}\"#"
            ))
        }
    }

    fn printcolumn(&mut self, paths: &[(String, Ty)]) -> Attr {
        let (path, ty) = if paths.is_empty() || self.pct(10) {
            (".metadata.creationTimestamp".to_string(), "date")
        } else {
            let (p, t) = &paths[self.rng.usize(0..paths.len())];
            let ty = match t {
                Ty::Leaf("bool") => "boolean",
                Ty::Leaf("f32" | "f64") => "number",
                Ty::Leaf(l) if l.starts_with('i') || l.starts_with('u') => "integer",
                _ => "string",
            };
            (format!(".spec.{p}"), ty)
        };
        let name = format!("Col{}", self.rng.u32(0..100));
        if self.rng.bool() {
            let mut extra = String::new();
            if self.pct(30) {
                let d = self.sentence();
                let d = self.lit(&d);
                extra.push_str(&format!(", description = {d}"));
            }
            if self.pct(20) {
                extra.push_str(", priority = 1");
            }
            if self.pct(10) && ty == "integer" {
                extra.push_str(", format = \"int32\"");
            }
            Attr::new(format!(
                "printcolumn(name = \"{name}\", type_ = \"{ty}\", json_path = \"{path}\"{extra})"
            ))
        } else {
            let prio = if self.pct(20) {
                ", \"priority\": 1"
            } else {
                ""
            };
            Attr::new(format!(
                "printcolumn = r#\"{{\"name\":\"{name}\", \"type\":\"{ty}\", \"jsonPath\":\"{path}\"{prio}}}\"#"
            ))
        }
    }

    /// A CEL rule in one of kube's spellings.
    /// `root`: for `#[kube(...)]`, where kube-derive does not compile the tuple spelling.
    fn cel_rule(&mut self, rule: &str, root: bool) -> String {
        let rule = self.lit(rule);
        match self.rng.u32(0..5) {
            0 | 1 => format!("validation = {rule}"),
            2 => format!(
                "validation = Rule::new({rule}).message(\"rule {}\")",
                self.rng.u32(0..10)
            ),
            3 if !root => format!("validation = ({rule}, \"must hold\")"),
            3 => format!("validation = {rule}"),
            _ => format!(
                "validation = Rule::new({rule}).reason(Reason::FieldValueInvalid).field_path(\".x\")"
            ),
        }
    }

    fn sentence(&mut self) -> String {
        let n = self.rng.usize(1..=6);
        let words: Vec<&str> = (0..n).map(|_| pick(&mut self.rng, FIELD_WORDS)).collect();
        let mut s = words.join(" ");
        if let Some(f) = s.get_mut(0..1) {
            f.make_ascii_uppercase();
        }
        s.push('.');
        s
    }

    /// Doc comment lines in the spellings schemars reads (`///`, `#[doc]`, headings, blank
    /// lines, indentation), with probability `p` percent.
    fn doc(&mut self, p: u32) -> Doc {
        if !self.pct(p) {
            return Vec::new();
        }
        let mut out = Vec::new();
        match self.rng.u32(0..10) {
            0 => {
                out.push(format!("/// # {}", self.sentence()));
                out.push("///".into());
                out.push(format!("/// {}", self.sentence()));
            }
            1 => {
                let s = self.sentence();
                let s = self.lit(&s);
                out.push(format!("#[doc = {s}]"))
            }
            2 => {
                out.push(format!("/// {}", self.sentence()));
                out.push("///".into());
                out.push(format!("///   indented {}", self.sentence()));
            }
            3 => out.push(format!("///{}", self.sentence())),
            4 => {
                out.push(format!("/// {}", self.sentence()));
                out.push(format!("/// {}", self.sentence()));
            }
            5 => out.push(format!("/// `code` and \"quotes\" {}", self.sentence())),
            6 => out.push(format!("/** {} */", self.sentence())),
            7 => {
                out.push(format!(
                    "/**\n * {}\n *\n * {}\n */",
                    self.sentence(),
                    self.sentence()
                ));
            }
            _ => out.push(format!("/// {}", self.sentence())),
        }
        out
    }

    fn container_attrs(&mut self, attrs: &mut Vec<Attr>, kube_schema: bool, spec: bool) {
        if self.pct(4) {
            attrs.push(Attr::new("#[serde(deny_unknown_fields)]"));
        }
        if self.pct(4) {
            attrs.push(Attr::new(format!(
                "#[schemars(description = {:?})]",
                self.sentence()
            )));
        }
        if !spec && self.pct(3) {
            attrs.push(Attr::new(format!(
                "#[schemars(title = {:?})]",
                self.sentence()
            )));
        }
        if self.pct(3) {
            attrs.push(Attr::new(if self.rng.bool() {
                "#[schemars(extend(\"x-kubernetes-map-type\" = \"atomic\"))]"
            } else {
                "#[schemars(extend(\"x-difftest\" = {\"a\": [1, true, null]}))]"
            }));
        }
        if kube_schema && self.pct(30) {
            let rule = if spec { "self.size() >= 0" } else { "true" };
            let r = self.cel_rule(rule, false);
            attrs.push(Attr::new(format!("#[x_kube({r})]")));
        }
    }

    // ----- fields -----

    /// `n` named fields with distinct names; the struct's `rename_all`, if any.
    fn named_fields(
        &mut self,
        n: usize,
        ctx: FieldCtx,
        spec: bool,
    ) -> (Vec<Field>, Option<String>) {
        let rename_all = self
            .pct(40)
            .then(|| pick(&mut self.rng, RENAME_ALL).to_string());
        let mut used: Vec<String> = Vec::new();
        let mut fields = Vec::new();
        for _ in 0..n {
            let word = pick(&mut self.rng, FIELD_WORDS);
            let mut name = self.accent(word);
            if used.contains(&name) {
                name = self.fresh(&format!("{name}_"));
            }
            used.push(name.clone());
            let rust_name = match name.as_str() {
                "type" | "match" | "ref" => format!("r#{name}"),
                _ => name,
            };
            fields.push(self.field(rust_name, ctx, spec));
        }
        if spec && self.pct(30) && !fields.iter().any(|f| f.name == "replicas") {
            fields.push(Field::plain("replicas", Ty::Leaf("i32")));
        }
        (fields, rename_all)
    }

    fn field(&mut self, name: String, ctx: FieldCtx, spec: bool) -> Field {
        let ty = self.ty(ctx.depth);
        let doc = self.doc(35);
        let mut attrs = Vec::new();
        self.field_attrs(&ty, &mut attrs, ctx, spec);
        Field {
            name,
            ty,
            doc,
            attrs,
        }
    }

    // The `if`s inside the match arms draw from the RNG; as guards they would read as pure.
    #[allow(clippy::collapsible_match)]
    fn field_attrs(&mut self, ty: &Ty, attrs: &mut Vec<Attr>, ctx: FieldCtx, spec: bool) {
        let _ = spec;
        let m = self.module();
        let constructible = constructible(&m, ty);
        let flattenable = self.flattenable(ty);
        if flattenable && self.pct(6) {
            attrs.push(Attr::new("#[serde(flatten)]"));
            return;
        }
        if self.pct(7) {
            let n = self.rng.u32(0..10);
            let suffix = pick(&mut self.rng, &["Name", "_x", "-y", "Z"]);
            attrs.push(Attr::new(format!("#[serde(rename = \"r{n}{suffix}\")]")));
        }
        if self.pct(2) {
            attrs.push(Attr::new("#[serde(alias = \"other\")]"));
        }
        // Defaults (`#[serde(default)]`, `skip` and `skip_deserializing` need `T: Default`).
        if constructible {
            match self.rng.u32(0..100) {
                0..=11 => {
                    if self.make_default(ty) {
                        attrs.push(Attr::new("#[serde(default)]"));
                    }
                }
                12..=23 => {
                    let f = self.default_fn(ty);
                    attrs.push(
                        Attr::new(format!("#[serde(default = \"{}\")]", self.fn_path(&f)))
                            .with_ref(f),
                    );
                }
                24..=25 => {
                    let f = self.default_fn(ty);
                    attrs.push(
                        Attr::new(format!("#[schemars(default = \"{}\")]", self.fn_path(&f)))
                            .with_ref(f),
                    );
                }
                26..=27 => {
                    if self.make_default(ty) {
                        attrs.push(Attr::new(if self.rng.bool() {
                            "#[serde(skip)]"
                        } else {
                            "#[serde(skip_deserializing)]"
                        }));
                    }
                }
                28 => attrs.push(Attr::new("#[serde(skip_serializing)]")),
                29 => {
                    if self.make_default(ty) {
                        attrs.push(Attr::new("#[schemars(default)]"));
                    }
                }
                _ => {}
            }
        }
        match ty {
            Ty::Option(_) if self.pct(15) => attrs.push(Attr::new(
                "#[serde(skip_serializing_if = \"Option::is_none\")]",
            )),
            Ty::Vec(_) if self.pct(5) => attrs.push(Attr::new(
                "#[serde(skip_serializing_if = \"Vec::is_empty\")]",
            )),
            Ty::Leaf("String") if self.pct(3) => attrs.push(Attr::new(
                "#[serde(skip_serializing_if = \"String::is_empty\")]",
            )),
            Ty::Option(_) if self.pct(4) => attrs.push(Attr::new("#[schemars(required)]")),
            _ => {}
        }
        // Validation.
        // KubeSchema registers `validate` but not `garde` as an attribute.
        let spelling = match self.rng.u32(0..20) {
            0 | 1 => "validate",
            2 if !ctx.kube_schema => "garde",
            _ => "schemars",
        };
        let core = strip_option(ty);
        if is_number(core) && self.pct(12) {
            let r = self.range(core);
            attrs.push(Attr::new(format!("#[{spelling}({r})]")));
        }
        if matches!(core, Ty::Leaf("String")) {
            if self.pct(6) {
                let l = self.length();
                attrs.push(Attr::new(format!("#[{spelling}({l})]")));
            }
            if self.pct(5) {
                attrs.push(Attr::new(match self.rng.u32(0..4) {
                    // validate's regex takes a path; garde's contains a bare string.
                    0 => "#[schemars(regex(pattern = r\"^[a-z0-9-]+$\"))]".into(),
                    1 => "#[schemars(pattern(r\"^v[0-9]+$\"))]".into(),
                    2 if spelling == "garde" => "#[garde(contains(\"a.b\"))]".into(),
                    2 => format!("#[{spelling}(contains(pattern = \"a.b\"))]"),
                    _ => format!(
                        "#[{spelling}({})]",
                        pick(&mut self.rng, &["email", "url", "ip", "ipv4", "ipv6"])
                    ),
                }));
            }
        }
        if matches!(core, Ty::Vec(_) | Ty::Set(..) | Ty::Map(..)) && self.pct(5) {
            let l = self.length();
            attrs.push(Attr::new(format!("#[{spelling}({l})]")));
        }
        if let Ty::Vec(inner) = core
            && self.pct(5)
        {
            let inner_rule = if is_number(inner) {
                Some(self.range(inner))
            } else if matches!(**inner, Ty::Leaf("String")) {
                Some(self.length())
            } else {
                None
            };
            if let Some(r) = inner_rule {
                attrs.push(Attr::new(format!("#[schemars(inner({r}))]")));
            }
        }
        // Metadata.
        if self.pct(3) {
            attrs.push(Attr::new(format!(
                "#[schemars(title = {:?})]",
                self.sentence()
            )));
        }
        if self.pct(3) {
            attrs.push(Attr::new(format!(
                "#[schemars(description = {:?})]",
                self.sentence()
            )));
        }
        if self.pct(3) {
            let ex = match core {
                Ty::Leaf("String") => format!("&{:?}", pick(&mut self.rng, WORDS)),
                c if is_number(c) => format!("{}", self.rng.u32(0..50)),
                Ty::Leaf("bool") => "true".into(),
                _ => "&\"example\"".into(),
            };
            attrs.push(Attr::new(format!("#[schemars(example = {ex})]")));
        }
        if matches!(ty, Ty::Json) || matches!(ty, Ty::Vec(x) if **x == Ty::Json) {
            if self.pct(92) {
                attrs.push(Attr::new(
                    "#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]",
                ));
            }
        } else if self.pct(3) {
            attrs.push(Attr::new(match self.rng.u32(0..50) {
                0..=29 => "#[schemars(extend(\"x-difftest\" = \"v\"))]",
                30..=48 => "#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]",
                _ => "#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = false))]",
            }));
        }
        if self.pct(2) {
            attrs.push(Attr::new(format!(
                "#[schemars(with = \"{}\")]",
                pick(
                    &mut self.rng,
                    &[
                        "String",
                        "i64",
                        "Vec<String>",
                        "Option<bool>",
                        "BTreeMap<String, u8>"
                    ]
                )
            )));
        }
        if self.pct(1) {
            attrs.push(Attr::new("#[schemars(rename = \"schemaOnly\")]"));
        }
        if self.pct(1) {
            attrs.push(Attr::new("#[deprecated]"));
        }
        // #[x_kube] on fields of KubeSchema structs.
        if ctx.kube_schema {
            if self.pct(6) {
                let r = self.cel_rule("self == self", false);
                attrs.push(Attr::new(format!("#[x_kube({r})]")));
            }
            if self.pct(8)
                && let Some(ms) = self.merge_strategy(core)
            {
                attrs.push(Attr::new(format!("#[x_kube(merge_strategy = {ms})]")));
            }
        }
        if self.features.cfg && self.pct(3) {
            let pick = self.rng.u32(0..3);
            // serde refuses a second `rename` on a field, also through an applied cfg_attr.
            let renamed = attrs
                .iter()
                .any(|a| a.text.starts_with("#[serde(") && a.text.contains("rename ="));
            if !(pick == 0 && renamed) {
                attrs.push(Attr::new(match pick {
                    0 => "#[cfg_attr(not(feature = \"difftest-off\"), serde(rename = \"viaCfgAttr\"))]",
                    1 => "#[cfg_attr(feature = \"difftest-off\", serde(rename = \"neverApplied\"))]",
                    _ => "#[cfg(not(feature = \"difftest-off\"))]",
                }));
            }
        }
    }

    fn merge_strategy(&mut self, ty: &Ty) -> Option<String> {
        Some(match ty {
            Ty::Vec(inner) => match &**inner {
                Ty::User(n) => {
                    let key = match self.find(n) {
                        Some(Item::Struct(Struct {
                            body: Body::Named(fs),
                            attrs,
                            ..
                        })) if !fs.is_empty() => {
                            let rule = attrs.iter().find_map(|a| {
                                a.text
                                    .strip_prefix("#[serde(rename_all = \"")
                                    .and_then(|r| r.strip_suffix("\")]"))
                            });
                            serde_case(&fs[0].name, rule)
                        }
                        _ => "name".into(),
                    };
                    if self.rng.bool() {
                        format!("ListMerge::Map(vec![\"{key}\".into()])")
                    } else {
                        "ListMerge::Atomic".into()
                    }
                }
                _ => {
                    if self.rng.bool() {
                        "ListMerge::Set".into()
                    } else {
                        "ListMerge::Atomic".into()
                    }
                }
            },
            Ty::Map(..) => {
                if self.rng.bool() {
                    "MapMerge::Atomic".into()
                } else {
                    "MapMerge::Granular".into()
                }
            }
            Ty::User(_) => {
                if self.rng.bool() {
                    "StructMerge::Atomic".into()
                } else {
                    "StructMerge::Granular".into()
                }
            }
            _ => return None,
        })
    }

    fn range(&mut self, ty: &Ty) -> String {
        let float = matches!(ty, Ty::Leaf("f32" | "f64"));
        let signed = matches!(ty, Ty::Leaf(l) if l.starts_with('i') || l.starts_with('f'));
        let lo = if signed && self.rng.bool() {
            -(self.rng.i64(0..100))
        } else {
            self.rng.i64(0..10)
        };
        let hi = lo + self.rng.i64(1..1000);
        let fmt = |v: i64| {
            if float {
                format!("{v}.5")
            } else {
                v.to_string()
            }
        };
        match self.rng.u32(0..3) {
            0 => format!("range(min = {})", fmt(lo)),
            1 => format!("range(max = {})", fmt(hi)),
            _ => format!("range(min = {}, max = {})", fmt(lo), fmt(hi)),
        }
    }

    fn length(&mut self) -> String {
        match self.rng.u32(0..4) {
            0 => format!("length(min = {})", self.rng.u32(0..4)),
            1 => format!("length(max = {})", self.rng.u32(1..64)),
            2 => format!("length(equal = {})", self.rng.u32(1..8)),
            _ => format!("length(min = 1, max = {})", self.rng.u32(2..64)),
        }
    }

    fn flattenable(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Map(_, k, _) => matches!(**k, Ty::Leaf("String")),
            Ty::Json | Ty::JsonMap => true,
            Ty::Option(x) => matches!(&**x, Ty::User(n) if self.is_named_struct(n)),
            Ty::User(n) => {
                self.is_named_struct(n)
                    || matches!(self.find(n), Some(Item::Enum(e)) if e.variants.iter().all(|v| !matches!(v.body, Body::Unit)))
            }
            _ => false,
        }
    }

    fn is_named_struct(&self, n: &str) -> bool {
        matches!(self.find(n), Some(Item::Struct(s)) if matches!(s.body, Body::Named(_)))
    }

    // ----- types -----

    fn ty(&mut self, depth: usize) -> Ty {
        let deep = depth >= 3;
        let r = self.rng.u32(0..1000);
        match r {
            0..=449 => self.leaf(),
            450..=589 => Ty::Option(Box::new(self.ty(depth + 1))),
            590..=689 => Ty::Vec(Box::new(self.ty(depth + 1))),
            690..=749 => {
                let hash = self.pct(35);
                let key = match self.rng.u32(0..100) {
                    0 => Ty::Leaf("i32"),
                    4..=8 => self.unit_enum(true),
                    _ => Ty::Leaf("String"),
                };
                Ty::Map(hash, Box::new(key), Box::new(self.ty(depth + 1)))
            }
            750..=769 => {
                let elem = match self.rng.u32(0..10) {
                    0..=4 => Ty::Leaf("String"),
                    5 => Ty::Leaf("u16"),
                    6 => Ty::Leaf("i64"),
                    7 => Ty::Leaf("char"),
                    _ => self.unit_enum(true),
                };
                Ty::Set(self.pct(40), Box::new(elem))
            }
            770..=789 => {
                let p = pick(&mut self.rng, &["Box", "Box", "Arc", "Rc"]);
                Ty::Ptr(p, Box::new(self.ty(depth + 1)))
            }
            790..=799 => Ty::Array(Box::new(self.leaf()), self.rng.usize(0..4)),
            800..=809 => Ty::VecDeque(Box::new(self.leaf())),
            810..=811 => Ty::Tuple(vec![self.leaf(), self.leaf()]),
            812..=814 => Ty::Leaf("String"),
            815..=834 => Ty::Json,
            835..=839 => Ty::JsonMap,
            840..=889 => self.k8s(),
            _ if deep => self.leaf(),
            890..=959 => self.user_struct(depth),
            960..=994 => self.user_enum(depth),
            995..=996 => self.newtype(depth),
            997 => self.recursive(),
            998 => self.unit_struct(),
            _ => self.tuple_struct(),
        }
    }

    fn leaf(&mut self) -> Ty {
        const LEAVES: &[(&str, u32)] = &[
            ("String", 300),
            ("bool", 90),
            ("i32", 90),
            ("i64", 50),
            ("u32", 50),
            ("u16", 30),
            ("u8", 25),
            ("i8", 15),
            ("i16", 15),
            ("u64", 30),
            ("usize", 15),
            ("isize", 8),
            ("f64", 45),
            ("f32", 35),
            ("char", 8),
            ("i128", 4),
            ("u128", 4),
            ("std::num::NonZeroU32", 4),
            ("std::num::NonZeroI64", 3),
            ("std::num::NonZeroU8", 2),
            ("std::net::IpAddr", 3),
            ("std::net::Ipv4Addr", 2),
            ("std::net::Ipv6Addr", 2),
            ("std::path::PathBuf", 3),
            ("std::time::Duration", 3),
            ("std::borrow::Cow<'static, str>", 3),
            ("std::num::Wrapping<u32>", 2),
            ("std::ops::Range<u32>", 2),
            ("std::time::SystemTime", 1),
            ("std::ffi::OsString", 1),
            ("Result<u8, String>", 1),
            ("std::marker::PhantomData<u8>", 1),
            ("()", 1),
        ];
        let total: u32 = LEAVES.iter().map(|(_, w)| w).sum();
        let mut r = self.rng.u32(0..total);
        for (name, w) in LEAVES {
            if r < *w {
                return Ty::Leaf(name);
            }
            r -= w;
        }
        Ty::Leaf("String")
    }

    fn k8s(&mut self) -> Ty {
        const COMMON: &[&str] = &[
            "apimachinery::pkg::api::resource::Quantity",
            "apimachinery::pkg::util::intstr::IntOrString",
            "apimachinery::pkg::apis::meta::v1::Condition",
            "apimachinery::pkg::apis::meta::v1::Time",
            "apimachinery::pkg::apis::meta::v1::LabelSelector",
            "apimachinery::pkg::apis::meta::v1::ObjectMeta",
            "apimachinery::pkg::apis::meta::v1::MicroTime",
            "api::core::v1::ResourceRequirements",
            "api::core::v1::LocalObjectReference",
            "api::core::v1::SecretKeySelector",
            "api::core::v1::ObjectReference",
            "api::core::v1::EnvVar",
            "api::core::v1::Toleration",
            "api::core::v1::Container",
            "api::core::v1::PodTemplateSpec",
            "api::core::v1::ServicePort",
            "api::core::v1::Volume",
            "api::core::v1::Affinity",
            "api::networking::v1::IngressRule",
            "api::apps::v1::DeploymentStrategy",
        ];
        let path = if self.pct(70) || self.k8s.is_empty() {
            pick(&mut self.rng, COMMON).to_string()
        } else {
            self.k8s[self.rng.usize(0..self.k8s.len())].clone()
        };
        // The one listed type without Deserialize.
        let path = if path.ends_with("::Patch") {
            "api::core::v1::EnvVar".to_string()
        } else {
            path
        };
        Ty::K8s(path, self.rng.u8(0..3))
    }

    fn unit_enum(&mut self, ord: bool) -> Ty {
        let word = pick(&mut self.rng, TYPE_WORDS);
        let word = self.accent(word);
        let name = self.fresh(&word);
        let n = self.rng.usize(1..=4);
        let variants = self.variant_names(n);
        let attrs = self.enum_attrs();
        let doc = self.doc(20);
        let variants = variants
            .into_iter()
            .map(|v| {
                let mut attrs = Vec::new();
                if self.pct(8) {
                    attrs.push(Attr::new(format!(
                        "#[serde(rename = \"{}\")]",
                        v.to_lowercase() + "-x"
                    )));
                }
                Variant {
                    name: v,
                    doc: self.doc(20),
                    attrs,
                    body: Body::Unit,
                }
            })
            .collect();
        self.items.push(Item::Enum(Enum {
            name: name.clone(),
            doc,
            derives: Derives {
                ord,
                ..Derives::default()
            },
            attrs,
            variants,
            default_variant: None,
            hand_default: None,
        }));
        Ty::User(name)
    }

    fn variant_names(&mut self, n: usize) -> Vec<String> {
        const V: &[&str] = &[
            "Fast",
            "Slow",
            "Always",
            "Never",
            "OnFailure",
            "Primary",
            "Replica",
            "A",
            "HttpGet",
            "TcpSocket",
            "Ipv4Only",
        ];
        let mut out: Vec<String> = Vec::new();
        while out.len() < n {
            let v = pick(&mut self.rng, V);
            let v = self.accent(v);
            if out.contains(&v) {
                out.push(self.fresh("V"));
            } else {
                out.push(v);
            }
        }
        out
    }

    fn enum_attrs(&mut self) -> Vec<Attr> {
        let mut attrs = Vec::new();
        if self.pct(40) {
            attrs.push(Attr::new(format!(
                "#[serde(rename_all = \"{}\")]",
                pick(&mut self.rng, RENAME_ALL)
            )));
        }
        if self.pct(3) {
            attrs.push(Attr::new("#[schemars(extend(\"x-enum\" = \"e\"))]"));
        }
        attrs
    }

    fn user_enum(&mut self, depth: usize) -> Ty {
        let repr = self.rng.u32(0..100);
        if repr < 50 {
            return self.unit_enum(false);
        }
        let word = pick(&mut self.rng, TYPE_WORDS);
        let word = self.accent(word);
        let name = self.fresh(&word);
        // Reserve the name before generating payload types.
        self.items.push(Item::Enum(Enum {
            name: name.clone(),
            doc: Vec::new(),
            derives: Derives::default(),
            attrs: Vec::new(),
            variants: Vec::new(),
            default_variant: None,
            hand_default: None,
        }));
        let mut attrs = self.enum_attrs();
        let (tag_attr, untagged, mixed) = match repr {
            50..=79 => (None, false, false),
            80..=91 => (Some("#[serde(untagged)]".to_string()), true, false),
            92..=93 => (Some("#[serde(tag = \"type\")]".to_string()), false, false),
            94..=95 => (
                Some("#[serde(tag = \"t\", content = \"c\")]".to_string()),
                false,
                false,
            ),
            96..=97 => (None, false, true),
            _ => (Some("#[serde(untagged)]".to_string()), true, true),
        };
        let internal = matches!(repr, 92..=93);
        attrs.extend(tag_attr.map(Attr::new));
        if self.pct(10) {
            attrs.push(Attr::new(format!(
                "#[serde(rename_all_fields = \"{}\")]",
                pick(&mut self.rng, RENAME_ALL)
            )));
        }
        let n = self.rng.usize(1..=4);
        let names = self.variant_names(n);
        let mut variants = Vec::new();
        for (i, vname) in names.into_iter().enumerate() {
            let body = if mixed && i == 0 {
                // A unit (or scalar, for untagged) variant next to data variants.
                if untagged {
                    Body::Newtype(Box::new(Field::plain("", self.leaf())))
                } else {
                    Body::Unit
                }
            } else {
                match self.rng.u32(0..40) {
                    0..=19 => {
                        let k = self.rng.usize(0..=3);
                        let (mut fs, _) = self.named_fields(
                            k,
                            FieldCtx {
                                depth: depth + 2,
                                kube_schema: false,
                            },
                            false,
                        );
                        // serde refuses a field named like the internal tag.
                        if internal {
                            fs.retain(|f| f.name != "r#type");
                        }
                        Body::Named(fs)
                    }
                    20..=38 => {
                        let ty = if untagged {
                            self.user_struct(depth + 2)
                        } else {
                            self.ty(depth + 2)
                        };
                        Body::Newtype(Box::new(Field {
                            name: String::new(),
                            ty,
                            doc: Vec::new(),
                            attrs: Vec::new(),
                        }))
                    }
                    // serde refuses tuple variants in internally tagged enums.
                    _ if internal => Body::Unit,
                    _ => Body::Tuple(vec![self.leaf(), self.leaf()]),
                }
            };
            let mut vattrs = Vec::new();
            if self.pct(8) {
                vattrs.push(Attr::new(format!(
                    "#[serde(rename = \"{}\")]",
                    vname.to_lowercase() + "V"
                )));
            }
            if self.pct(2) {
                vattrs.push(Attr::new("#[serde(alias = \"aka\")]"));
            }
            variants.push(Variant {
                name: vname,
                doc: self.doc(25),
                attrs: vattrs,
                body,
            });
        }
        let doc = self.doc(25);
        if let Some(Item::Enum(e)) = self.find_mut(&name) {
            e.attrs = attrs;
            e.variants = variants;
            e.doc = doc;
        }
        Ty::User(name)
    }

    fn user_struct(&mut self, depth: usize) -> Ty {
        let word = pick(&mut self.rng, TYPE_WORDS);
        let word = self.accent(word);
        let name = self.fresh(&word);
        let kube_schema = self.pct(15);
        self.items.push(Item::Struct(Struct {
            name: name.clone(),
            doc: Vec::new(),
            derives: Derives {
                kube_schema,
                ..Derives::default()
            },
            kube_core: None,
            kube: Vec::new(),
            attrs: Vec::new(),
            body: Body::Named(Vec::new()),
            hand_default: None,
        }));
        let n = self.rng.usize(0..=5);
        let (fields, rename_all) = self.named_fields(
            n,
            FieldCtx {
                depth: depth + 1,
                kube_schema,
            },
            false,
        );
        let mut attrs = Vec::new();
        if let Some(r) = rename_all {
            attrs.push(Attr::new(format!("#[serde(rename_all = \"{r}\")]")));
        }
        self.container_attrs(&mut attrs, kube_schema, false);
        let doc = self.doc(30);
        if let Some(Item::Struct(s)) = self.find_mut(&name) {
            s.body = Body::Named(fields);
            s.attrs = attrs;
            s.doc = doc;
        }
        // `#[serde(default)]` on the container: every missing field from the type's Default.
        // (Not with KubeSchema: kube-derive's copy of the struct has no Default impl.)
        if !kube_schema
            && self.pct(5)
            && self.make_default(&Ty::User(name.clone()))
            && let Some(Item::Struct(s)) = self.find_mut(&name)
        {
            s.attrs.push(Attr::new("#[serde(default)]"));
        }
        Ty::User(name)
    }

    fn newtype(&mut self, depth: usize) -> Ty {
        let name = self.fresh("Wrapped");
        let inner = self.ty(depth + 1);
        let mut attrs = Vec::new();
        if self.pct(30) {
            attrs.push(Attr::new("#[serde(transparent)]"));
        }
        let doc = self.doc(30);
        self.items.push(Item::Struct(Struct {
            name: name.clone(),
            doc,
            derives: Derives::default(),
            kube_core: None,
            kube: Vec::new(),
            attrs,
            body: Body::Newtype(Box::new(Field::plain("", inner))),
            hand_default: None,
        }));
        Ty::User(name)
    }

    /// A struct that contains itself (crd() leaves a dangling `$ref`).
    fn recursive(&mut self) -> Ty {
        let name = self.fresh("Node");
        let inner = if self.rng.bool() {
            Ty::Option(Box::new(Ty::Ptr("Box", Box::new(Ty::User(name.clone())))))
        } else {
            Ty::Vec(Box::new(Ty::User(name.clone())))
        };
        self.items.push(Item::Struct(Struct::plain(
            name.clone(),
            Body::Named(vec![
                Field::plain("value", Ty::Leaf("String")),
                Field::plain("children", inner),
            ]),
        )));
        Ty::User(name)
    }

    fn unit_struct(&mut self) -> Ty {
        let name = self.fresh("Marker");
        self.items
            .push(Item::Struct(Struct::plain(name.clone(), Body::Unit)));
        Ty::User(name)
    }

    fn tuple_struct(&mut self) -> Ty {
        let name = self.fresh("Pair");
        let body = Body::Tuple(vec![self.leaf(), self.leaf()]);
        self.items
            .push(Item::Struct(Struct::plain(name.clone(), body)));
        Ty::User(name)
    }

    // ----- defaults -----

    /// Makes `ty` implement `Default` (derived where every field has one, else by hand).
    fn ensure_default(&mut self, ty: &Ty) {
        match ty {
            Ty::User(n) => self.ensure_user_default(n),
            Ty::Array(x, _) | Ty::Ptr(_, x) => self.ensure_default(x),
            Ty::Tuple(xs) => xs.iter().for_each(|x| self.ensure_default(x)),
            _ => {}
        }
    }

    /// Makes `ty` implement `Default` where it can; whether it does.
    fn make_default(&mut self, ty: &Ty) -> bool {
        self.ensure_default(ty);
        self.has_default(ty)
    }

    fn has_default(&self, ty: &Ty) -> bool {
        match ty {
            Ty::User(n) => match self.find(n) {
                Some(Item::Struct(s)) => s.derives.default || s.hand_default.is_some(),
                Some(Item::Enum(e)) => e.derives.default || e.hand_default.is_some(),
                _ => false,
            },
            Ty::K8s(p, _) => k8s_has_default(p),
            Ty::Array(x, _) | Ty::Ptr(_, x) => self.has_default(x),
            Ty::Tuple(xs) => xs.iter().all(|x| self.has_default(x)),
            Ty::Leaf(l) => {
                !l.starts_with("std::num::NonZero")
                    && !l.starts_with("std::net::")
                    && !l.starts_with("std::time::SystemTime")
                    && !l.starts_with("Result")
                    && *l != "std::ops::Range<u32>"
            }
            _ => true,
        }
    }

    fn ensure_user_default(&mut self, n: &str) {
        if self.has_default(&Ty::User(n.into())) {
            return;
        }
        let Some(item) = self.find(n).cloned() else {
            return;
        };
        match item {
            Item::Struct(s) => {
                let fields: Vec<Ty> = match &s.body {
                    Body::Named(fs) => fs.iter().map(|f| f.ty.clone()).collect(),
                    Body::Newtype(f) => vec![f.ty.clone()],
                    Body::Tuple(ts) => ts.clone(),
                    Body::Unit => Vec::new(),
                };
                // A field nothing can be written for (a k8s-openapi type without Default, or
                // a struct holding one) leaves the type without Default.
                let m = self.module();
                if !fields.iter().all(|t| constructible(&m, t)) {
                    return;
                }
                let derive = fields.iter().all(|t| self.has_default(t)) && self.pct(60);
                if derive {
                    if let Some(Item::Struct(s)) = self.find_mut(n) {
                        s.derives.default = true;
                    }
                } else {
                    // Mark first (a field may refer back to this type), then write the value.
                    if let Some(Item::Struct(s)) = self.find_mut(n) {
                        s.hand_default = Some(Val::Zero);
                    }
                    self.in_default += 1;
                    let v = self.value(&Ty::User(n.into()), 0, true);
                    self.in_default -= 1;
                    if let Some(Item::Struct(s)) = self.find_mut(n) {
                        s.hand_default = Some(v);
                    }
                }
            }
            Item::Enum(e) => {
                let unit = e
                    .variants
                    .iter()
                    .filter(|v| matches!(v.body, Body::Unit))
                    .map(|v| v.name.clone())
                    .collect::<Vec<_>>();
                let untagged = e.attrs.iter().any(|a| a.text.contains("untagged"));
                if !unit.is_empty() && self.pct(70) && !untagged {
                    let v = unit[self.rng.usize(0..unit.len())].clone();
                    if let Some(Item::Enum(e)) = self.find_mut(n) {
                        e.derives.default = true;
                        e.default_variant = Some(v);
                    }
                } else {
                    if let Some(Item::Enum(e)) = self.find_mut(n) {
                        e.hand_default = Some(Val::Zero);
                    }
                    self.in_default += 1;
                    let v = self.value(&Ty::User(n.into()), 0, true);
                    self.in_default -= 1;
                    if let Some(Item::Enum(e)) = self.find_mut(n) {
                        e.hand_default = Some(v);
                    }
                }
            }
            _ => {}
        }
    }

    fn fn_path(&self, name: &str) -> String {
        match self.find(name) {
            Some(Item::Fn(DefaultFn { owner: Some(o), .. })) => format!("{o}::{name}"),
            _ => name.to_string(),
        }
    }

    /// A default fn returning a value of `ty`; its name.
    fn default_fn(&mut self, ty: &Ty) -> String {
        let name = self.fresh("default_");
        // An associated fn of a user type sometimes (`Type::default_x`).
        let owner = match ty {
            Ty::User(n) if self.pct(30) => Some(n.clone()),
            _ => None,
        };
        let self_spelling = owner.is_some() && self.rng.bool();
        let body = self.value(ty, 0, false);
        let body = self.maybe_struct_update(ty, body, owner.is_some());
        self.items.push(Item::Fn(DefaultFn {
            name: name.clone(),
            owner,
            ret: ty.clone(),
            body,
            self_spelling,
        }));
        name
    }

    /// Turns a struct value into struct update syntax over the type's Default, where the
    /// features allow it.
    fn maybe_struct_update(&mut self, ty: &Ty, v: Val, in_impl: bool) -> Val {
        let Ty::User(n) = ty else { return v };
        let Val::Struct(kv, _) = v else { return v };
        if !self.pct(35) {
            return Val::Struct(kv, None);
        }
        let derived = matches!(self.find(n), Some(Item::Struct(s)) if s.derives.default);
        let hand = matches!(self.find(n), Some(Item::Struct(s)) if s.hand_default.is_some());
        if !(derived || hand) {
            let all_default = match self.find(n) {
                Some(Item::Struct(Struct {
                    body: Body::Named(fs),
                    ..
                })) => fs.iter().all(|f| self.has_default(&f.ty)),
                _ => false,
            };
            if !all_default {
                return Val::Struct(kv, None);
            }
            if let Some(Item::Struct(s)) = self.find_mut(n) {
                s.derives.default = true;
            }
        } else if hand && !self.features.struct_update_over_hand_default {
            return Val::Struct(kv, None);
        }
        let keep = kv.len().min(self.rng.usize(0..=2));
        let kv = kv.into_iter().take(keep).collect();
        Val::Struct(kv, Some(in_impl && self.rng.bool()))
    }

    /// A random value of `ty`. `exact`: inside a container (or a Default impl), where f32
    /// values must be exact unless the `f32` feature is on.
    fn value(&mut self, ty: &Ty, depth: usize, inner: bool) -> Val {
        if depth > 4 {
            return Val::Zero;
        }
        let d = depth + 1;
        match ty {
            Ty::Leaf(l) => self.leaf_value(l, inner),
            Ty::Option(x) => {
                if self.pct(30) || !self.can_build(x) {
                    Val::None
                } else {
                    Val::Some(Box::new(self.value(x, d, inner)))
                }
            }
            Ty::Vec(x) | Ty::VecDeque(x) => {
                let n = if self.can_build(x) {
                    self.rng.usize(0..=3)
                } else {
                    0
                };
                Val::Seq((0..n).map(|_| self.value(x, d, true)).collect())
            }
            Ty::Array(x, n) => Val::Seq((0..*n).map(|_| self.value(x, d, true)).collect()),
            Ty::Set(hash, x) => {
                // A HashSet of several elements serializes in a random order.
                let n = if !self.can_build(x) {
                    0
                } else if *hash {
                    self.rng.usize(0..=1)
                } else {
                    self.rng.usize(0..=3)
                };
                let mut seen = Vec::new();
                for _ in 0..n {
                    let v = self.value(x, d, true);
                    if !seen.contains(&v) {
                        seen.push(v);
                    }
                }
                Val::Seq(seen)
            }
            Ty::Map(_, k, v) => {
                let n = if self.can_build(v) {
                    self.rng.usize(0..=2)
                } else {
                    0
                };
                let mut kv: Vec<(String, Val)> = Vec::new();
                for i in 0..n {
                    let key = match &**k {
                        Ty::Leaf("String") => pick(&mut self.rng, WORDS).to_string(),
                        Ty::User(e) => {
                            let names: Vec<String> = match self.find(e) {
                                Some(Item::Enum(en)) => {
                                    en.variants.iter().map(|v| v.name.clone()).collect()
                                }
                                _ => Vec::new(),
                            };
                            if names.is_empty() {
                                continue;
                            }
                            names[self.rng.usize(0..names.len())].clone()
                        }
                        _ => (i as i32 * 7 - 3).to_string(),
                    };
                    if kv.iter().any(|(k, _)| k == &key) {
                        continue;
                    }
                    let val = self.value(v, d, true);
                    kv.push((key, val));
                }
                Val::Map(kv)
            }
            Ty::Ptr(_, x) => Val::Ptr(Box::new(self.value(x, d, inner))),
            Ty::Tuple(xs) => Val::Tuple(xs.iter().map(|x| self.value(x, d, true)).collect()),
            Ty::Json => match self.rng.u32(0..4) {
                0 => Val::Expr(
                    "serde_json::json!({\"a\": [1, \"b\", null], \"c\": {\"d\": 2.5}})".into(),
                ),
                1 => Val::Expr("serde_json::Value::String(\"v\".into())".into()),
                2 => Val::Expr("serde_json::json!([true, 3])".into()),
                _ => Val::Zero,
            },
            Ty::JsonMap => Val::Map(Vec::new()),
            Ty::K8s(p, _) => match p.as_str() {
                "apimachinery::pkg::api::resource::Quantity" => Val::Expr(format!(
                    "k8s_openapi::apimachinery::pkg::api::resource::Quantity({:?}.into())",
                    pick(&mut self.rng, &["1Gi", "500m", "2", ""])
                )),
                "apimachinery::pkg::util::intstr::IntOrString" => Val::Expr(if self.rng.bool() {
                    format!(
                        "k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int({})",
                        self.rng.i32(-5..100)
                    )
                } else {
                    "k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(\"50%\".into())".into()
                }),
                _ if self.rng.bool() && k8s_has_default(p) => Val::DefaultCall,
                _ => Val::Zero,
            },
            Ty::User(n) => self.user_value(n, d),
        }
    }

    fn user_value(&mut self, n: &str, d: usize) -> Val {
        let Some(item) = self.find(n).cloned() else {
            return Val::Zero;
        };
        if self.in_default == 0 && self.pct(8) && self.has_default(&Ty::User(n.into())) {
            return Val::DefaultCall;
        }
        if self.in_default == 0 && self.pct(5) {
            // A call to another default fn of the type.
            let f = self.default_fn(&Ty::User(n.into()));
            return Val::Call(f);
        }
        match item {
            Item::Struct(s) => match &s.body {
                Body::Named(fs) => {
                    let mut kv = Vec::new();
                    for f in fs {
                        if self.pct(80) {
                            let v = self.value(&f.ty, d, true);
                            kv.push((f.name.clone(), v));
                        }
                    }
                    Val::Struct(kv, None)
                }
                Body::Newtype(f) => {
                    let v = self.value(&f.ty, d, true);
                    Val::Struct(vec![(String::new(), v)], None)
                }
                _ => Val::Zero,
            },
            Item::Enum(e) => {
                if e.variants.is_empty() {
                    return Val::Zero;
                }
                // A variant whose payload can be written (a k8s type without Default cannot).
                let m = self.module();
                let ok: Vec<&Variant> = e
                    .variants
                    .iter()
                    .filter(|v| match &v.body {
                        Body::Newtype(f) => constructible(&m, &f.ty),
                        Body::Named(fs) => fs.iter().all(|f| constructible(&m, &f.ty)),
                        _ => true,
                    })
                    .collect();
                if ok.is_empty() {
                    return Val::Zero;
                }
                let v = ok[self.rng.usize(0..ok.len())].clone();
                let payload = match &v.body {
                    Body::Unit => None,
                    Body::Newtype(f) => Some(Box::new(self.value(&f.ty, d, true))),
                    Body::Named(fs) => {
                        let kv = fs
                            .iter()
                            .map(|f| (f.name.clone(), self.value(&f.ty, d, true)))
                            .collect();
                        Some(Box::new(Val::Struct(kv, None)))
                    }
                    Body::Tuple(_) => None,
                };
                Val::Variant(v.name, payload)
            }
            _ => Val::Zero,
        }
    }

    fn leaf_value(&mut self, l: &str, inner: bool) -> Val {
        let e = match l {
            "String" => {
                let w = pick(&mut self.rng, WORDS);
                let wl = self.lit(w);
                match self.rng.u32(0..12) {
                    0..=2 => format!("{wl}.to_string()"),
                    3..=4 => format!("{wl}.into()"),
                    5..=6 => format!("String::from({wl})"),
                    7 => format!("{wl}.to_owned()"),
                    8 => "String::new()".into(),
                    9 => {
                        let c = self.constant(Ty::Leaf("&str"), format!("{w:?}"));
                        format!("{c}.to_string()")
                    }
                    10 if self.features.to_string_of_numbers => {
                        let (ty, v) = if self.rng.bool() {
                            ("u16", self.rng.u32(0..9000).to_string())
                        } else {
                            ("bool", "true".to_string())
                        };
                        let c = self.constant(Ty::Leaf(ty), v);
                        format!("{c}.to_string()")
                    }
                    10 => format!("{:?}.to_string()", self.rng.u32(0..9000).to_string()),
                    _ => format!("format!(\"{}\")", w.replace(['"', '\\', '{', '}'], "")),
                }
            }
            "bool" => (if self.rng.bool() { "true" } else { "false" }).into(),
            "char" => format!(
                "{:?}",
                pick(&mut self.rng, &["a", "Z", "-", "é"])
                    .chars()
                    .next()
                    .unwrap()
            ),
            "f32" | "f64" => {
                let exact = inner && l == "f32" && !self.features.inexact_f32;
                let v = if exact {
                    pick(&mut self.rng, &["0.5", "-1.25", "2.0", "1024.0", "0.0"]).to_string()
                } else {
                    pick(
                        &mut self.rng,
                        &[
                            "0.1",
                            "3.14",
                            "-2.5",
                            "1e3",
                            "0.30000000000000004",
                            "1.0",
                            "100.0",
                            "7.0e-3",
                        ],
                    )
                    .to_string()
                };
                if self.pct(15) {
                    self.constant(Ty::Leaf(if l == "f32" { "f32" } else { "f64" }), v)
                } else {
                    v
                }
            }
            "i8" | "i16" | "i32" | "i64" | "isize" | "i128" => {
                let v = match self.rng.u32(0..10) {
                    0 => "-1".to_string(),
                    1 => match l {
                        "i8" => "-128".into(),
                        "i16" => "32767".into(),
                        "i32" => "-2147483648".into(),
                        _ => "9223372036854775807".into(),
                    },
                    2 => "1_000".into(),
                    _ => self.rng.i32(-50..100).to_string(),
                };
                let v = if l == "i8" && v == "1_000" {
                    "100".into()
                } else {
                    v
                };
                if self.pct(12) {
                    self.constant(Ty::Leaf(static_leaf(l)), v)
                } else if self.pct(5) {
                    format!("{v}{l}")
                } else {
                    self.maybe_converted(l, v)
                }
            }
            "u8" | "u16" | "u32" | "u64" | "usize" | "u128" => {
                let v = match self.rng.u32(0..10) {
                    0 => match l {
                        "u8" => "255".into(),
                        "u16" => "65535".into(),
                        "u32" => "4294967295".into(),
                        _ => "18446744073709551615".into(),
                    },
                    1 => "0x1F".into(),
                    _ => self.rng.u32(0..250).to_string(),
                };
                if self.pct(12) {
                    self.constant(Ty::Leaf(static_leaf(l)), v)
                } else {
                    self.maybe_converted(l, v)
                }
            }
            l if l.starts_with("std::num::NonZero") && self.features.conversions => {
                let n = self.rng.u32(1..200);
                if self.rng.bool() {
                    format!("{l}::new({n}).unwrap()")
                } else {
                    format!("{l}::new({n}).expect(\"non-zero\")")
                }
            }
            "std::borrow::Cow<'static, str>" => "std::borrow::Cow::Borrowed(\"cow\")".into(),
            "std::time::Duration" => "std::time::Duration::from_secs(30)".into(),
            "std::path::PathBuf" => "std::path::PathBuf::from(\"/etc/x\")".into(),
            _ => return Val::Zero,
        };
        Val::Expr(e)
    }

    /// The integer literal `v` of type `l`, or (feature `conversions`, 20 %) the same value
    /// through an unwrapped fallible conversion: `"v".parse::<l>()` / `"v".parse()` for a
    /// plain decimal, else `l::try_from(v i128)`. Never in a `const` (the calls are not `const`).
    fn maybe_converted(&mut self, l: &str, v: String) -> String {
        if !self.features.conversions || !self.pct(20) {
            return v;
        }
        let decimal = v
            .trim_start_matches('-')
            .bytes()
            .all(|b| b.is_ascii_digit());
        match self.rng.u32(0..3) {
            0 if decimal => format!("{v:?}.parse::<{l}>().unwrap()"),
            1 if decimal => format!("{v:?}.parse().expect(\"a number\")"),
            _ => format!("{l}::try_from({v}i128).unwrap()"),
        }
    }

    /// A `const C_n: ty = value;` item; its name.
    fn constant(&mut self, ty: Ty, value: String) -> String {
        self.counter += 1;
        let name = format!("C_{}", self.counter);
        self.items.push(Item::Const(Const {
            name: name.clone(),
            ty,
            value,
        }));
        name
    }
}

fn static_leaf(l: &str) -> &'static str {
    match l {
        "i8" => "i8",
        "i16" => "i16",
        "i32" => "i32",
        "i64" => "i64",
        "isize" => "isize",
        "i128" => "i128",
        "u8" => "u8",
        "u16" => "u16",
        "u32" => "u32",
        "u64" => "u64",
        "usize" => "usize",
        "u128" => "u128",
        _ => "i64",
    }
}

fn strip_option(ty: &Ty) -> &Ty {
    match ty {
        Ty::Option(x) => strip_option(x),
        t => t,
    }
}

fn is_number(ty: &Ty) -> bool {
    matches!(
        ty,
        Ty::Leaf(
            "i8" | "i16"
                | "i32"
                | "i64"
                | "isize"
                | "u8"
                | "u16"
                | "u32"
                | "u64"
                | "usize"
                | "f32"
                | "f64"
        )
    )
}

fn is_scalar(ty: &Ty) -> bool {
    is_number(ty) || matches!(ty, Ty::Leaf("String" | "bool"))
}
