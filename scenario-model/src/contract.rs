//! The driver contract's versions and reference. A driver (`clients/README.md`) declares the
//! contract version it was written against and the plan ops and fields it handles; the
//! harness skips, with the field named, any plan that uses one it does not declare, so a
//! driver never runs a plan with a field silently dropped. The reference every driver author
//! reads (`clients/CONTRACT.md`) is generated here from the plan's types and doc comments.
//!
//! A field is *used* by a plan step when the step gives it a value other than its default
//! (`handshake: true` is not a use; `handshake: false` is), so declaring a field means: the
//! driver applies it, or reports the step `unsupported` with the reason for a value it
//! cannot apply.

use crate::ScenarioError;
use crate::plan::ClientStep;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// The contract version this harness speaks, given to every driver as
/// `MCP_HARNESS_CONTRACT`.
pub const VERSION: &str = "2026-12-05.2";

/// What each contract version added over the one before: plan ops (`wait_sent`) and fields
/// (`connect.headers`). The first is the set `clients/README.md` documented before the
/// contract had versions. A test fails when the plan's types and this list disagree, so a
/// new field cannot land without a version that names it.
pub const HISTORY: &[(&str, &[&str])] = &[
    (
        "2026-12-01",
        &[
            "connect",
            "connect.handshake",
            "connect.timeout_ms",
            "connect.env",
            "connect.max_message_bytes",
            "connect.string_ids",
            "connect.roots",
            "request",
            "request.method",
            "request.params",
            "request.timeout_ms",
            "request.background",
            "request.as",
            "request.pad_params",
            "await",
            "await.request",
            "cancel",
            "cancel.request",
            "notify",
            "notify.method",
            "notify.params",
            "wait",
            "wait.ms",
            "wait_notification",
            "wait_notification.method",
            "wait_notification.timeout_ms",
            "wait_closed",
            "wait_closed.timeout_ms",
            "close",
        ],
    ),
    (
        "2026-12-05",
        &[
            "connect.headers",
            "connect.auth_refresh",
            "connect.managed",
            "connect.protocol_version",
            "connect.legacy_fallback",
            "request.new_session",
            "request.reset_timeout_on_progress",
            "request.max_total_timeout_ms",
            "abandon",
            "abandon.request",
            "wait_sent",
            "wait_sent.method",
            "wait_sent.http_method",
            "wait_sent.count",
            "wait_sent.timeout_ms",
            "wait_manager",
            "wait_manager.event",
            "wait_manager.count",
            "wait_manager.timeout_ms",
            "manager_tools",
        ],
    ),
    ("2026-12-05.1", &["notify.pad_params"]),
    ("2026-12-05.2", &["connect.oauth"]),
];

/// The version that added `item` (an op, or `op.field`), if any did.
pub fn since(item: &str) -> Option<&'static str> {
    HISTORY.iter().find(|(_, items)| items.contains(&item)).map(|(v, _)| *v)
}

/// What a driver says of itself when run with `MCP_HARNESS_DECLARE=1`: one stdout line,
/// `{"contract": "2026-12-05.2", "performs": {"connect": ["handshake", …], "close": [], …}}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declaration {
    /// The contract version the driver was written against.
    pub contract: String,
    /// Each plan op it handles, with the fields of that op it handles.
    pub performs: BTreeMap<String, BTreeSet<String>>,
}

impl Declaration {
    /// Parses the declaration line.
    pub fn parse(line: &str) -> Result<Self, ScenarioError> {
        serde_json::from_str(line.trim()).map_err(|source| ScenarioError::NotADeclaration { source, version: VERSION })
    }

    /// The first op or field `step` uses that this driver does not declare, as `op` or
    /// `op.field`.
    pub fn lacks(&self, step: &ClientStep) -> Option<String> {
        let (op, fields) = uses(step);
        let Some(known) = self.performs.get(&op) else { return Some(op) };
        fields.into_iter().find(|f| !known.contains(f)).map(|f| format!("{op}.{f}"))
    }

    /// What contract versions after the driver's added, in order (empty when it is current
    /// or newer).
    pub fn missed(&self) -> Vec<(&'static str, &'static [&'static str])> {
        HISTORY.iter().filter(|(v, _)| *v > self.contract.as_str()).copied().collect()
    }
}

/// The op of `step` and the fields it uses (a value other than the field's default).
pub fn uses(step: &ClientStep) -> (String, Vec<String>) {
    let wire = serde_json::to_value(step).unwrap_or(Value::Null);
    let op = wire.get("op").and_then(Value::as_str).unwrap_or_default().to_string();
    let defaults = cached_model().iter().find(|o| o.name == op).map(|o| o.fields.as_slice()).unwrap_or_default();
    let fields = wire
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| {
            *k != "op" && defaults.iter().find(|f| &f.name == *k).is_none_or(|f| f.default.as_ref() != Some(v))
        })
        .map(|(k, _)| k.clone())
        .collect();
    (op, fields)
}

/// One plan op as the model defines it.
#[derive(Debug, Clone)]
pub struct OpDoc {
    /// `connect`, `request`, …
    pub name: String,
    /// Its doc comment.
    pub doc: String,
    /// Its fields, in declaration order.
    pub fields: Vec<FieldDoc>,
    /// The fields a step must give.
    pub required: Vec<String>,
}

/// One field of a plan op.
#[derive(Debug, Clone)]
pub struct FieldDoc {
    /// The field's name in the plan.
    pub name: String,
    /// Its doc comment (empty when it has none: a test fails on that).
    pub doc: String,
    /// Its default, when absent means something other than "not given".
    pub default: Option<Value>,
    /// Its JSON type in words.
    pub kind: String,
}

/// [`model`], built once: [`uses`] asks it for every step of every run.
fn cached_model() -> &'static [OpDoc] {
    static MODEL: std::sync::OnceLock<Vec<OpDoc>> = std::sync::OnceLock::new();
    MODEL.get_or_init(model)
}

/// Every plan op and its fields, read from the JSON Schema of [`ClientStep`], so the
/// reference cannot drift from the types.
pub fn model() -> Vec<OpDoc> {
    let schema = serde_json::to_value(schemars::schema_for!(ClientStep)).unwrap_or(Value::Null);
    let variants = schema.get("oneOf").and_then(Value::as_array).cloned().unwrap_or_default();
    variants
        .iter()
        .filter_map(|v| {
            let props = v.get("properties")?.as_object()?;
            let name = props.get("op")?.get("const")?.as_str()?.to_string();
            let fields = props
                .iter()
                .filter(|(k, _)| *k != "op")
                .map(|(k, p)| FieldDoc {
                    name: k.clone(),
                    doc: text(p.get("description")),
                    default: p.get("default").cloned(),
                    kind: kind(p),
                })
                .collect();
            let required = v
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|r| *r != "op")
                .map(String::from)
                .collect();
            Some(OpDoc { name, doc: text(v.get("description")), fields, required })
        })
        .collect()
}

fn text(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or_default().replace('\n', " ")
}

/// A field's JSON type in words (`integer`, `string or null`, `Managed`).
fn kind(p: &Value) -> String {
    if let Some(r) = p.get("$ref").and_then(Value::as_str) {
        return r.rsplit('/').next().unwrap_or(r).to_string();
    }
    if let Some(any) = p.get("anyOf").and_then(Value::as_array) {
        return any.iter().map(kind).collect::<Vec<_>>().join(" or ");
    }
    match p.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" or "),
        _ => "any JSON value".into(),
    }
}

/// `clients/CONTRACT.md`: every plan op and field with its meaning, default and the
/// contract version that added it.
pub fn reference_markdown() -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# The driver contract, version {VERSION}\n\n\
         Generated from the plan's types (`scenario-model/src/plan.rs`) by `make schema`; do not edit.\n\
         How a driver runs, reports and declares itself: [README.md](README.md).\n\n\
         A driver run with `MCP_HARNESS_DECLARE=1` prints one line and exits 0:\n\
         `{{\"contract\":\"{VERSION}\",\"performs\":{{\"connect\":[\"handshake\",\"timeout_ms\"],\"request\":[\"method\",\"params\"],\"close\":[]}}}}`\n\
         naming each op it handles and, for each, the fields it handles (applies, or reports\n\
         `unsupported` with the reason for a value it cannot apply). The harness skips, naming the\n\
         field, every plan that uses an op or field the driver does not declare. A step *uses* a\n\
         field when it gives it a value other than the default below. Every run's environment has\n\
         `MCP_HARNESS_CONTRACT={VERSION}`.\n"
    );
    let _ = writeln!(s, "## Versions\n");
    for (v, items) in HISTORY {
        let _ = writeln!(s, "- **{v}**: {}", items.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", "));
    }
    let _ = writeln!(s);
    for op in model() {
        let _ = writeln!(s, "## `{}` (since {})\n\n{}\n", op.name, since(&op.name).unwrap_or("?"), op.doc);
        if op.fields.is_empty() {
            let _ = writeln!(s, "No fields.\n");
            continue;
        }
        let _ = writeln!(s, "| field | type | default | since | meaning |\n|---|---|---|---|---|");
        for f in &op.fields {
            let default = match (&f.default, op.required.contains(&f.name)) {
                (_, true) => "required".to_string(),
                (Some(d), _) => format!("`{d}`"),
                (None, _) => "absent".to_string(),
            };
            let item = format!("{}.{}", op.name, f.name);
            let _ = writeln!(
                s,
                "| `{}` | {} | {default} | {} | {} |",
                f.name,
                f.kind,
                since(&item).unwrap_or("?"),
                f.doc.replace('|', "\\|")
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Types\n");
    let schema = serde_json::to_value(schemars::schema_for!(ClientStep)).unwrap_or(Value::Null);
    let defs = schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    for (name, def) in &defs {
        let Some(props) = def.get("properties").and_then(Value::as_object) else { continue };
        let _ = writeln!(s, "### `{name}`\n\n{}\n", text(def.get("description")));
        let _ = writeln!(s, "| field | type | default | meaning |\n|---|---|---|---|");
        for (field, p) in props {
            let default = p.get("default").map_or("absent".to_string(), |d| format!("`{d}`"));
            let _ = writeln!(
                s,
                "| `{field}` | {} | {default} | {} |",
                kind(p),
                text(p.get("description")).replace('|', "\\|")
            );
        }
        let _ = writeln!(s);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_items() -> BTreeSet<String> {
        model()
            .into_iter()
            .flat_map(|op| {
                let name = op.name.clone();
                std::iter::once(name.clone()).chain(op.fields.into_iter().map(move |f| format!("{name}.{}", f.name)))
            })
            .collect()
    }

    #[test]
    fn every_op_and_field_has_a_version_and_every_version_names_real_ones() {
        let model = all_items();
        let history: BTreeSet<String> = HISTORY.iter().flat_map(|(_, i)| i.iter().map(|s| s.to_string())).collect();
        let unversioned: Vec<_> = model.difference(&history).collect();
        assert!(unversioned.is_empty(), "add these to contract::HISTORY under a new VERSION: {unversioned:?}");
        let unknown: Vec<_> = history.difference(&model).collect();
        assert!(unknown.is_empty(), "contract::HISTORY names what the plan has not: {unknown:?}");
        assert_eq!(HISTORY.last().map(|(v, _)| *v), Some(VERSION), "VERSION is the newest entry");
    }

    #[test]
    fn every_op_and_field_has_its_doc() {
        let missing: Vec<String> = model()
            .into_iter()
            .flat_map(|op| {
                let mut m = Vec::new();
                if op.doc.trim().is_empty() {
                    m.push(op.name.clone());
                }
                m.extend(
                    op.fields.iter().filter(|f| f.doc.trim().is_empty()).map(|f| format!("{}.{}", op.name, f.name)),
                );
                m
            })
            .collect();
        assert!(missing.is_empty(), "plan ops/fields without a doc comment (plan.rs): {missing:?}");
    }

    #[test]
    fn a_field_at_its_default_is_not_a_use() {
        let step: ClientStep = serde_json::from_value(serde_json::json!({"op": "connect"})).expect("step");
        assert_eq!(uses(&step), ("connect".into(), vec![]));
        let step: ClientStep =
            serde_json::from_value(serde_json::json!({"op": "connect", "handshake": false, "legacy_fallback": true}))
                .expect("step");
        assert_eq!(uses(&step).1, vec!["handshake".to_string(), "legacy_fallback".into()]);
    }

    #[test]
    fn a_declaration_lacks_what_it_does_not_name() {
        let d = Declaration::parse(r#"{"contract":"2026-12-01","performs":{"connect":["handshake"],"close":[]}}"#)
            .expect("parses");
        let step = |v: Value| -> ClientStep { serde_json::from_value(v).expect("step") };
        assert_eq!(d.lacks(&step(serde_json::json!({"op": "connect", "handshake": false}))), None);
        assert_eq!(
            d.lacks(&step(serde_json::json!({"op": "connect", "protocol_version": "2026-07-28"}))),
            Some("connect.protocol_version".into())
        );
        assert_eq!(d.lacks(&step(serde_json::json!({"op": "wait", "ms": 5}))), Some("wait".into()));
        assert_eq!(
            d.missed().iter().map(|(v, _)| *v).collect::<Vec<_>>(),
            vec!["2026-12-05", "2026-12-05.1", "2026-12-05.2"]
        );
        assert!(
            Declaration::parse("hello").expect_err("not a declaration").to_string().contains("expected one line like")
        );
    }
}
