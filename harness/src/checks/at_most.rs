//! The upper bound `sent` and `http` share (`at_most: N`): past it, the failure says when
//! the matching messages came, relative to the first, so that a retry loop shows its period.

/// When the messages came (`times_us`, µs on the mock's clock, in any order), e.g.
/// `+0 ms, +1004 ms, +2010 ms`, when there are more than `limit`; `None` within it.
pub(super) fn exceeded(limit: usize, mut times_us: Vec<u64>) -> Option<String> {
    if times_us.len() <= limit {
        return None;
    }
    times_us.sort_unstable();
    let first = times_us[0];
    Some(times_us.iter().map(|t| format!("+{} ms", (t - first) / 1000)).collect::<Vec<_>>().join(", "))
}

#[cfg(test)]
mod tests {
    use super::exceeded;

    #[test]
    fn within_the_limit_is_nothing_and_past_it_the_times_from_the_first_in_order() {
        assert_eq!(exceeded(1, vec![]), None, "none is within any limit");
        assert_eq!(exceeded(1, vec![5_000]), None);
        assert_eq!(exceeded(1, vec![2_015_000, 5_000, 1_009_000]).as_deref(), Some("+0 ms, +1004 ms, +2010 ms"));
        assert_eq!(exceeded(0, vec![7_000]).as_deref(), Some("+0 ms"));
    }
}
