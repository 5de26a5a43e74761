//! [`RequestIds`]: a set of JSON-RPC request ids with JSON value equality, looked up in
//! constant time. The rules that track ids across a whole connection (in flight, answered)
//! ask it once per message; a list scanned each time made judging a client that re-sent one
//! request thousands of times quadratic in its messages (issue 41: 5,561 re-sends, 23 s).

use serde_json::Value;
use std::collections::HashSet;

/// See the module docs.
#[derive(Debug, Default)]
pub(crate) struct RequestIds {
    /// Ids whose JSON text is equal exactly when the values are: strings, integers, `true`,
    /// `false`, `null` (what a wire's ids are).
    exact: HashSet<String>,
    /// Any other value (a float, whose `-0.0` equals `0.0`; an object, whose members' order
    /// does not count): compared one by one, as they never are valid ids.
    other: Vec<Value>,
}

/// The text that stands for `id` in [`RequestIds::exact`], when it has one.
fn exact_text(id: &Value) -> Option<String> {
    match id {
        Value::Number(n) if n.is_f64() => None,
        Value::Array(_) | Value::Object(_) => None,
        _ => Some(id.to_string()),
    }
}

impl RequestIds {
    /// Adds `id` (once: a set).
    pub(crate) fn insert(&mut self, id: &Value) {
        match exact_text(id) {
            Some(text) => {
                self.exact.insert(text);
            }
            None if !self.other.contains(id) => self.other.push(id.clone()),
            None => {}
        }
    }

    /// Whether `id` is in the set.
    pub(crate) fn contains(&self, id: &Value) -> bool {
        match exact_text(id) {
            Some(text) => self.exact.contains(&text),
            None => self.other.contains(id),
        }
    }

    /// Takes `id` out of the set.
    pub(crate) fn remove(&mut self, id: &Value) {
        match exact_text(id) {
            Some(text) => {
                self.exact.remove(&text);
            }
            None => self.other.retain(|x| x != id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_equal_as_json_values_are() {
        let mut ids = RequestIds::default();
        for id in [json!(1), json!("1"), json!(null), json!(-0.0), json!({"a": 1, "b": 2})] {
            ids.insert(&id);
        }
        assert!(ids.contains(&json!(1)) && ids.contains(&json!("1")) && ids.contains(&json!(null)));
        assert!(!ids.contains(&json!(2)) && !ids.contains(&json!("2")) && !ids.contains(&json!(1.0)));
        assert!(ids.contains(&json!(0.0)), "-0.0 equals 0.0 as JSON values do");
        let reordered: Value = serde_json::from_str(r#"{"b": 2, "a": 1}"#).expect("json");
        assert_eq!(reordered == json!({"a": 1, "b": 2}), ids.contains(&reordered), "as Value equality says");
        ids.remove(&json!(1));
        ids.remove(&json!(0.0));
        assert!(!ids.contains(&json!(1)) && !ids.contains(&json!(-0.0)) && ids.contains(&json!("1")));
    }
}
