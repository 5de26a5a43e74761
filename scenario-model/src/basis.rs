//! What a check rests on: an MCP requirement (`must`, `should`) with the spec sentence, or a
//! rule of our own SPEC.md (`project`). A verdict is a claim about someone's software, so a
//! third-party client fails only on `must`; `should` is a warning and `project` a note for
//! it, while the bundled client, which SPEC.md describes, is held to all three.
//!
//! Written beside the check's kind in the same mapping:
//!
//! ```yaml
//! checks:
//!   - http: {http_method: GET, header: Accept, value: text/event-stream, every: true}
//!     must: "2025-11-25 basic/transports: The client MUST include an Accept header, listing text/event-stream"
//!   - outcome: {step: 2, error: "Request timeout after 200ms"}
//!     project: "SPEC §2 timeout text"
//! ```
//!
//! A check without one is *unclassified*: judged as before the model existed (it fails
//! every target) until someone reads the spec for it.
//!
//! A field bug often breaks no MCP sentence but a client's own documented promise (an SDK's
//! docs, an accepted bug report). Such a check rests on `promise:`, with the URL it is
//! written at and the targets it binds; it fails those targets, and is a note for any other
//! client (the promise is not theirs), never an MCP verdict:
//!
//! ```yaml
//!   - sent: {method: tools/list, count: 1}
//!     promise:
//!       url: "https://example.org/sdk/docs/client#caching"
//!       says: "listTools() results are cached for the connection"
//!       targets: [typescript/run]
//! ```

use crate::checks::Check;
use schemars::JsonSchema;
use serde::de::{self, Deserializer, EnumAccess, IntoDeserializer, MapAccess, VariantAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How much a failed check weighs, by where its rule is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// An MCP MUST / MUST NOT (or JSON-RPC's): fails every target.
    Must,
    /// An MCP SHOULD / SHOULD NOT: fails the bundled client, warns a third-party one.
    Should,
    /// A rule SPEC.md sets for our bundled transports: fails the bundled client, a note for
    /// a third-party one.
    Project,
    /// No basis written yet: fails every target, as every check did before bases existed.
    Unclassified,
    /// The driver contract (clients/README.md): a plan field the driver must honour or report
    /// `unsupported` (the driver self-test, `scenarios/driver-selftest/`). Fails every target.
    Driver,
    /// Harm with no MCP sentence behind it, named by what the client did: it crashed on
    /// input, hung to the run deadline, flooded the server (a retry loop), took one response
    /// for another, left processes or work behind. No host wants it: fails the bundled
    /// client, warns a third-party one (fails it under `--strict`), the same in every
    /// scenario. The always-on rules set it; a check writes it as `robustness: "<the harm>"`.
    Robustness,
    /// A promise a client makes of itself (an SDK's documentation, an accepted bug report),
    /// with its URL: fails the targets its `targets:` names, a note for every other client.
    /// Never an MCP verdict: reports show it apart from MCP's rules.
    Promise,
}

impl Level {
    /// The key a scenario writes it under (`must:`, `should:`, `project:`, `driver:`,
    /// `robustness:`).
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "must",
            Level::Should => "should",
            Level::Project => "project",
            Level::Unclassified => "unclassified",
            Level::Driver => "driver",
            Level::Robustness => "robustness",
            Level::Promise => "promise",
        }
    }

    fn from_key(key: &str) -> Option<Level> {
        match key {
            "must" => Some(Level::Must),
            "should" => Some(Level::Should),
            "project" => Some(Level::Project),
            "driver" => Some(Level::Driver),
            "robustness" => Some(Level::Robustness),
            _ => None,
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A level with the sentence or section it rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Basis {
    /// How much a failure weighs.
    pub level: Level,
    /// For `must` / `should`: the revision, spec page and sentence; for `project`: the
    /// SPEC.md section; for `promise`: what the client promises, then its URL.
    pub reference: String,
    /// For `promise`: the targets it binds (see [`Basis::binds`]); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
}

impl Basis {
    /// Whether this basis judges the target given as `target` (`--target` text): every basis
    /// but `promise` does; a promise binds the targets whose text contains one of its
    /// `targets:` (`typescript/run` binds `cmd:clients/typescript/run` and its `cmd+persistent:`
    /// form, `bundled` the bundled client).
    pub fn binds(&self, target: &str) -> bool {
        self.level != Level::Promise || self.targets.iter().any(|t| target.contains(t.as_str()))
    }
}

/// `promise:`'s mapping.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Promise {
    /// Where the promise is written: the SDK's documentation page, the bug report.
    url: String,
    /// What it promises, in a sentence (quoted from the page where it can be).
    says: String,
    /// The targets it binds: text each `--target` it applies to contains, e.g.
    /// `typescript/run`, `python/run-v2`, `bundled`.
    targets: Vec<String>,
}

/// One item of a scenario's `checks:`: the check and, optionally, its basis.
#[derive(Debug, Clone)]
pub struct CheckEntry {
    /// The check.
    pub check: Check,
    /// What it rests on; `None`: unclassified.
    pub basis: Option<Basis>,
}

impl CheckEntry {
    /// The level a failure of this check carries.
    pub fn level(&self) -> Level {
        self.basis.as_ref().map_or(Level::Unclassified, |b| b.level)
    }
}

impl<'de> Deserialize<'de> for CheckEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EntryVisitor)
    }
}

struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = CheckEntry;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a check: one kind (e.g. `outcome: {step: 2, ok: true}`) and optionally its basis (`must:`, `should:` or `project:` with the sentence it rests on)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CheckEntry, A::Error> {
        let (mut check, mut basis): (Option<Check>, Option<Basis>) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            if key == "promise" {
                if let Some(b) = &basis {
                    return Err(de::Error::custom(format!(
                        "`promise:` after `{}:`: a check rests on one basis; keep the stronger and drop the other",
                        b.level
                    )));
                }
                let p: Promise = map.next_value()?;
                if !(p.url.starts_with("https://") || p.url.starts_with("http://")) {
                    return Err(de::Error::custom(format!(
                        "`promise.url` is {:?}: write the page the promise is written on, e.g. \"https://example.org/sdk/docs#caching\" (a promise without its source is no basis)",
                        p.url
                    )));
                }
                if p.says.trim().is_empty() {
                    return Err(de::Error::custom(
                        "`promise.says` is empty: write what the client promises, e.g. \"listTools() results are cached\"",
                    ));
                }
                if p.targets.is_empty() || p.targets.iter().any(|t| t.trim().is_empty()) {
                    return Err(de::Error::custom(
                        "`promise.targets` is empty: name the clients it binds, e.g. [typescript/run] (text their --target contains)",
                    ));
                }
                basis = Some(Basis {
                    level: Level::Promise,
                    reference: format!("{} ({})", p.says.trim(), p.url),
                    targets: p.targets,
                });
            } else if let Some(level) = Level::from_key(&key) {
                if let Some(b) = &basis {
                    return Err(de::Error::custom(format!(
                        "`{key}:` after `{}:`: a check rests on one basis; keep the stronger and drop the other",
                        b.level
                    )));
                }
                let reference: String = map.next_value()?;
                if reference.trim().is_empty() {
                    return Err(de::Error::custom(format!(
                        "`{key}:` is empty: write what it rests on — {}",
                        if level == Level::Project {
                            "the SPEC.md section, e.g. \"SPEC §4 GET listener\""
                        } else if level == Level::Driver {
                            "the plan field the driver must honour, e.g. \"connect.headers reach the wire\""
                        } else if level == Level::Robustness {
                            "the harm, e.g. \"a refused GET retried without limit floods the server\""
                        } else {
                            "the revision, spec page and sentence, e.g. \"2025-11-25 basic/transports: The client MUST …\""
                        }
                    )));
                }
                basis = Some(Basis { level, reference, targets: Vec::new() });
            } else if check.is_some() {
                // A misspelt basis reads as a second check kind: say which basis it looks like.
                let basis = ["must", "should", "project", "driver", "robustness", "promise"]
                    .into_iter()
                    .find(|b| strsim::levenshtein(b, &key) <= 2);
                return Err(de::Error::custom(match basis {
                    Some(b) => format!(
                        "`{key}:` is no basis; did you mean `{b}:`? (a check rests on must, should, project, driver, robustness or promise)"
                    ),
                    None => format!("`{key}`: one item holds one check; write it as its own `- {key}: …` item"),
                }));
            } else {
                check = Some(Check::deserialize(KindDeserializer { key, map: &mut map })?);
            }
        }
        let check = check.ok_or_else(|| {
            de::Error::custom("the item has a basis but no check: add its kind, e.g. `outcome: {step: 2, ok: true}`")
        })?;
        Ok(CheckEntry { check, basis })
    }
}

/// Feeds one `kind: {…}` entry of the item's mapping to [`Check`]'s derived (externally
/// tagged) deserializer, so the kinds stay listed once, in the enum, and serde's own
/// "unknown variant, expected one of …" message lists them.
struct KindDeserializer<'a, A> {
    key: String,
    map: &'a mut A,
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for KindDeserializer<'_, A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

impl<'de, A: MapAccess<'de>> EnumAccess<'de> for KindDeserializer<'_, A> {
    type Error = A::Error;
    type Variant = Self;

    fn variant_seed<V: de::DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), A::Error> {
        let key: de::value::StrDeserializer<'_, A::Error> = self.key.as_str().into_deserializer();
        let variant = seed.deserialize(key)?;
        Ok((variant, self))
    }
}

impl<'de, A: MapAccess<'de>> VariantAccess<'de> for KindDeserializer<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        Err(de::Error::custom(format!("`{}` needs its fields", self.key)))
    }

    fn newtype_variant_seed<T: de::DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value, A::Error> {
        Err(de::Error::custom(format!("`{}` takes a mapping of fields", self.key)))
    }

    fn struct_variant<V: Visitor<'de>>(self, _fields: &'static [&'static str], _v: V) -> Result<V::Value, A::Error> {
        Err(de::Error::custom(format!("`{}` takes a mapping of fields", self.key)))
    }
}

impl Serialize for CheckEntry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let check = serde_json::to_value(&self.check).map_err(serde::ser::Error::custom)?;
        let mut m = s.serialize_map(None)?;
        if let serde_json::Value::Object(kind) = check {
            for (k, v) in kind {
                m.serialize_entry(&k, &v)?;
            }
        }
        match &self.basis {
            Some(b) if b.level == Level::Promise => {
                let (says, url) = b.reference.rsplit_once(" (").unwrap_or((&b.reference, ""));
                let promise = serde_json::json!({
                    "url": url.trim_end_matches(')'), "says": says, "targets": b.targets,
                });
                m.serialize_entry("promise", &promise)?;
            }
            Some(b) => m.serialize_entry(b.level.as_str(), &b.reference)?,
            None => {}
        }
        m.end()
    }
}

impl JsonSchema for CheckEntry {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CheckEntry".into()
    }

    /// [`Check`]'s schema (one object per kind), each kind's object also allowing the
    /// basis keys.
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = Check::json_schema(generator);
        let basis = |text: &str| serde_json::json!({"type": "string", "minLength": 1, "description": text});
        let keys = [
            (
                "must",
                basis(
                    "An MCP MUST / MUST NOT this check rests on: revision, spec page and sentence. Fails every client.",
                ),
            ),
            (
                "should",
                basis(
                    "An MCP SHOULD / SHOULD NOT this check rests on: revision, spec page and sentence. Fails the bundled client; a warning for others.",
                ),
            ),
            (
                "project",
                basis(
                    "The SPEC.md rule this check rests on (our bundled transports). Fails the bundled client; a note for others.",
                ),
            ),
            (
                "driver",
                basis(
                    "The driver-contract plan field this check holds to the wire (the driver self-test). Fails every client.",
                ),
            ),
            (
                "robustness",
                basis(
                    "The harm this check catches where no MCP sentence applies (a retry loop, a crash on input, one response taken for another, work left behind). Fails the bundled client; a warning for others (--strict fails them).",
                ),
            ),
        ];
        let promise = serde_json::json!({
            "type": "object",
            "description": "A promise the client makes of itself (an SDK's documentation, an accepted bug report), not an MCP rule: fails the targets it names, a note for every other client.",
            "additionalProperties": false,
            "required": ["url", "says", "targets"],
            "properties": {
                "url": {"type": "string", "pattern": "^https?://", "description": "Where the promise is written: the SDK's documentation page, the bug report."},
                "says": {"type": "string", "minLength": 1, "description": "What it promises, in a sentence (quoted from the page where it can be)."},
                "targets": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}, "description": "The targets it binds: text each --target it applies to contains, e.g. typescript/run, python/run-v2, bundled."}
            }
        });
        if let Some(variants) = schema.get_mut("oneOf").and_then(|v| v.as_array_mut()) {
            for variant in variants {
                if let Some(props) = variant.get_mut("properties").and_then(|p| p.as_object_mut()) {
                    for (k, v) in &keys {
                        props.insert((*k).into(), v.clone());
                    }
                    props.insert("promise".into(), promise.clone());
                }
            }
        }
        schema
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<Vec<CheckEntry>, String> {
        serde_saphyr::from_str(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn a_basis_sits_beside_the_kind() {
        let entries =
            parse("- sent: {method: ping}\n  must: \"2025-11-25 basic/utilities/ping: …\"\n- sent: {method: ping}\n")
                .expect("parses");
        assert_eq!(entries[0].level(), Level::Must);
        assert_eq!(entries[0].basis.as_ref().map(|b| b.reference.as_str()), Some("2025-11-25 basic/utilities/ping: …"));
        assert_eq!(entries[1].level(), Level::Unclassified);
        assert!(matches!(entries[1].check, Check::Sent(_)));
    }

    #[test]
    fn a_promise_binds_the_targets_it_names() {
        let entries = parse(
            "- sent: {method: tools/list, count: 1}\n  promise:\n    url: \"https://example.org/sdk#cache\"\n    says: \"lists are cached\"\n    targets: [typescript/run, bundled]\n",
        )
        .expect("parses");
        let basis = entries[0].basis.as_ref().expect("a basis");
        assert_eq!(
            (basis.level, basis.reference.as_str()),
            (Level::Promise, "lists are cached (https://example.org/sdk#cache)")
        );
        assert!(basis.binds("cmd+persistent:clients/typescript/run") && basis.binds("bundled"));
        assert!(!basis.binds("cmd+persistent:clients/typescript-v2/run") && !basis.binds("cmd:clients/rmcp/run"));
        let back: Vec<CheckEntry> = parse(&serde_saphyr::to_string(&entries).expect("writes")).expect("reads back");
        assert_eq!(back[0].basis, entries[0].basis);
        let no_url = parse("- sent: {method: ping}\n  promise: {url: \"docs page\", says: a, targets: [x]}\n")
            .expect_err("no URL");
        assert!(no_url.contains("`promise.url`") && no_url.contains("https://"), "{no_url}");
        let no_targets = parse("- sent: {method: ping}\n  promise: {url: \"https://x.org\", says: a, targets: []}\n")
            .expect_err("none");
        assert!(no_targets.contains("`promise.targets` is empty"), "{no_targets}");
    }

    #[test]
    fn mistakes_say_what_to_write() {
        let mistakes: [(&str, &[&str]); 7] = [
            ("- sent: {method: ping}\n  must: a\n  project: b\n", &["rests on one basis"]),
            ("- sent: {method: ping}\n  should: \"\"\n", &["is empty: write what it rests on"]),
            ("- sent: {method: ping}\n  not_sent: {method: x}\n", &["own `- not_sent: …` item"]),
            ("- snet: {method: ping}\n", &["unknown variant `snet`", "not_sent"]),
            ("- must: a\n", &["no check"]),
            ("- sent: {methd: ping}\n", &["unknown field `methd`"]),
            ("- sent: {method: ping}\n  shuold: a\n", &["`shuold:` is no basis; did you mean `should:`?"]),
        ];
        for (yaml, said) in mistakes {
            let message = parse(yaml).expect_err(yaml);
            assert!(said.iter().all(|s| message.contains(s)), "{yaml}: {message}");
        }
    }

    #[test]
    fn serialises_back_to_the_same_shape() {
        let entries = parse("- sent: {method: ping}\n  project: \"SPEC §2\"\n").expect("parses");
        let json = serde_json::to_value(&entries).expect("serialises");
        assert_eq!(json[0]["project"], "SPEC §2");
        assert_eq!(json[0]["sent"]["method"], "ping");
        let back: Vec<CheckEntry> = serde_json::from_value(json).expect("reads back");
        assert_eq!(back[0].level(), Level::Project);
    }
}
