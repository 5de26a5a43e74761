//! [`Envelope`]: what the stdio mock needs of a client line to route it (whether it is
//! JSON, an object, its `id` and `method`), read in one pass that builds no tree.
//!
//! Why not parse into a [`Value`] and look: most lines of a busy run are unscripted
//! requests the mock answers at once from their `id` and `method` alone, and building,
//! recording and dropping the whole message was most of the mock's time per round trip
//! (`make bench`, "recording floor"). The rest of the line is still checked, through the
//! same parser paths a [`Value`] takes (strings, numbers, nesting depth), so a line is JSON
//! here exactly when `serde_json::from_slice::<Value>` accepts it; a unit test holds the two
//! together. A line that must be kept whole (a scripted message, an answer, a probe) is
//! parsed into a [`Value`] by whoever keeps it ([`Envelope::message`]).

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// A client line's routing: `object` when it is a JSON object; its `id` (`Some(Null)` for
/// an explicit `null`) and its `method` when a string. Duplicate members: the last counts,
/// as in a parsed [`Value`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Envelope<'a> {
    /// The line is a JSON object (else some other JSON value).
    pub object: bool,
    /// The `id` member, if any.
    pub id: Option<Value>,
    /// The `method` member, when it is a string (borrowed from the line unless escaped).
    pub method: Option<Cow<'a, str>>,
}

impl<'a> Envelope<'a> {
    /// The envelope of `line`, or `None` when it is not JSON (as `from_slice::<Value>` says).
    pub fn read(line: &'a [u8]) -> Option<Envelope<'a>> {
        serde_json::from_slice::<Envelope>(line).ok()
    }

    /// The whole message of a line whose envelope was read: the one place a routed line
    /// is built into a tree.
    pub fn message(line: &[u8]) -> Value {
        serde_json::from_slice(line).unwrap_or(Value::Null)
    }
}

impl<'de> serde::Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TopLevel)
    }
}

/// The line's top level: an object's members are routed, anything else only checked.
struct TopLevel;

impl<'de> Visitor<'de> for TopLevel {
    type Value = Envelope<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
        let mut envelope = Envelope { object: true, ..Envelope::default() };
        // Keys as `String`, as a `Value`'s map reads them (the same string checks).
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Id => envelope.id = Some(map.next_value::<Value>()?),
                Key::Method => envelope.method = map.next_value_seed(Method)?,
                Key::Other => map.next_value_seed(Checked)?,
            }
        }
        Ok(envelope)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Envelope<'de>, A::Error> {
        Checked.visit_seq(seq)?;
        Ok(Envelope::default())
    }

    fn visit_bool<E>(self, _: bool) -> Result<Envelope<'de>, E> {
        Ok(Envelope::default())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Envelope<'de>, E> {
        Ok(Envelope::default())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Envelope<'de>, E> {
        Ok(Envelope::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Envelope<'de>, E> {
        Ok(Envelope::default())
    }
    fn visit_str<E>(self, _: &str) -> Result<Envelope<'de>, E> {
        Ok(Envelope::default())
    }
    fn visit_unit<E>(self) -> Result<Envelope<'de>, E> {
        Ok(Envelope::default())
    }
}

/// The `method` member's value: the string, or `None` for any other (checked) value.
struct Method;

impl<'de> DeserializeSeed<'de> for Method {
    type Value = Option<Cow<'de, str>>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Method {
    type Value = Option<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_borrowed_str<E>(self, method: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(method)))
    }
    fn visit_str<E>(self, method: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(method.to_string())))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Checked.visit_map(map).map(|()| None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Checked.visit_seq(seq).map(|()| None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// A top-level member's name: the two the mock routes by, or another (serde's derived
/// identifier visitor matches the borrowed name without allocating it).
#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Id,
    Method,
    #[serde(other)]
    Other,
}

/// Any JSON value, checked as a [`Value`] would read it and kept nowhere: strings go
/// through the string parser (escapes, surrogates, UTF-8) and keys as strings, unlike
/// `serde::de::IgnoredAny`, which skips string contents.
#[derive(Clone, Copy)]
struct Checked;

impl<'de> DeserializeSeed<'de> for Checked {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// A map key, read as a string (as a [`Value`]'s map reads it) and dropped.
struct CheckedKey;

impl<'de> DeserializeSeed<'de> for CheckedKey {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(Checked)
    }
}

impl<'de> Visitor<'de> for Checked {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(CheckedKey)?.is_some() {
            map.next_value_seed(Checked)?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Checked)?.is_some() {}
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What routing read from a [`Value`] parse, the way the mock did before.
    fn by_value(line: &[u8]) -> Option<Envelope<'static>> {
        let value = serde_json::from_slice::<Value>(line).ok()?;
        Some(match value {
            Value::Object(obj) => Envelope {
                object: true,
                id: obj.get("id").cloned(),
                method: obj.get("method").and_then(Value::as_str).map(|m| Cow::Owned(m.to_string())),
            },
            _ => Envelope::default(),
        })
    }

    #[test]
    fn a_line_is_json_exactly_when_a_value_parse_accepts_it_and_routes_the_same() {
        let deep_ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
        let deep_bad = format!("{}{}", "[".repeat(129), "]".repeat(129));
        let lines: Vec<&[u8]> = vec![
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
            br#"{"jsonrpc":"2.0","id":"a\"b","method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            br#"{"method":"a","method":5}"#,
            br#"{"method":5,"method":"b","id":1,"id":2}"#,
            br#"{"method":"t\u00e9st","id":1.5e3}"#,
            br#"{"id":-0,"method":"x"}"#,
            br#"{"\u0069d":4,"m\u0065thod":"ping","Method":"no","ID":0}"#,
            br#"{"id":18446744073709551616}"#,
            br#"{"id":1e400}"#,
            br#"{"method":"\ud800"}"#,
            br#"{"params":{"x":"\ud800"}}"#,
            br#"{"params":{"\ud800":1}}"#,
            br#"{"params":["\udc00\ud800"]}"#,
            br#"{"params":"\ud83d\ude00"}"#,
            b"{\"params\":\"\xff\"}",
            b"{\"\xff\":1}",
            br#"{"params":"a	b"}"#,
            br#"{"a":1,}"#,
            br#"{"a":1} x"#,
            br#"{"a":1}   "#,
            br#"  {"a":tru}"#,
            br#"[1,2,{"id":3}]"#,
            br#""text""#,
            br#"12"#,
            br#"null"#,
            br#"true"#,
            b"",
            b"not json",
            br#"{"a":01}"#,
            br#"{"a":.5}"#,
            br#"{"a":"\x"}"#,
            deep_ok.as_bytes(),
            deep_bad.as_bytes(),
        ];
        for line in lines {
            assert_eq!(Envelope::read(line), by_value(line), "{}", String::from_utf8_lossy(line));
        }
    }
}
