//! [`Budget`]: how many more client messages of each key (a JSON-RPC method, or the HTTP
//! mock's GET / DELETE keys) a connection's script will consume. A message beyond its
//! budget is unscripted and answered at once, so no client waits on the mock by accident.

use std::collections::HashMap;

/// Messages still to be consumed, by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Budget(HashMap<String, usize>);

impl Budget {
    /// One more message with `key`.
    pub fn add(&mut self, key: &str) {
        *self.0.entry(key.to_string()).or_default() += 1;
    }

    /// How many messages with `key` are still to come.
    pub fn get(&self, key: &str) -> usize {
        self.0.get(key).copied().unwrap_or(0)
    }

    /// Whether the script will still consume a message with `key`.
    pub fn wants(&self, key: &str) -> bool {
        self.get(key) > 0
    }

    /// Takes one message with `key`; false when it is unscripted.
    pub fn take(&mut self, key: &str) -> bool {
        match self.0.get_mut(key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }

    /// How many keys have a budget.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no key has a budget.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taking_spends_the_budget() {
        let mut b = Budget::default();
        b.add("a");
        b.add("a");
        assert!(b.take("a") && b.wants("a") && b.take("a"));
        assert!(!b.take("a") && !b.wants("a") && !b.take("b"));
    }
}
