//! The tenant limits file: one line per tenant, `<tenant> key=value ...`, with `#` comments.
//!
//! ```text
//! # tenant  limits
//! acme      max_live_leases=1000 max_waiters=200 max_observers=50 max_ttl_seconds=3600
//! globex    max_ttl_seconds=60
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use lock_domain::Tenant;

use super::{Limit, TenantLimits};

/// The limits of every tenant the file names; a tenant it does not name has none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitsTable {
    by_tenant: Arc<HashMap<Tenant, TenantLimits>>,
}

/// A limits file that cannot be used: `line` is 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct LimitsFileError {
    pub line: usize,
    pub reason: String,
}

impl LimitsTable {
    /// Parses the contents of a limits file. Blank lines are ignored, and so is everything from
    /// a `#` to the end of its line. A tenant may be named on one line only, and a key once per
    /// line. Every value is a whole number: `max_ttl_seconds` at least 1, the others at least 0
    /// (0 allows none).
    ///
    /// # Errors
    /// [`LimitsFileError`] naming the first bad line: a bad tenant name, a line without limits,
    /// a field not of the form `key=value`, an unknown key, a bad value, or a repeated tenant or
    /// key.
    pub fn parse(text: &str) -> Result<Self, LimitsFileError> {
        let mut by_tenant = HashMap::new();
        for (index, line) in text.lines().enumerate() {
            let line_number = index + 1;
            let fail = |reason: String| LimitsFileError {
                line: line_number,
                reason,
            };
            let line = line.split('#').next().unwrap_or_default().trim();
            let mut fields = line.split_whitespace();
            let Some(tenant) = fields.next() else {
                continue;
            };
            let tenant =
                Tenant::parse(tenant).map_err(|e| fail(format!("tenant {tenant:?} {e}")))?;
            let mut limits = TenantLimits::default();
            let mut named = false;
            for field in fields {
                let (key, value) = field
                    .split_once('=')
                    .ok_or_else(|| fail(format!("{field:?} is not of the form key=value")))?;
                let limit = Limit::from_key(key).ok_or_else(|| {
                    fail(format!(
                        "unknown limit {key:?}: the limits are {}",
                        Limit::ALL.map(Limit::key).join(", ")
                    ))
                })?;
                if limits.get(limit).is_some() {
                    return Err(fail(format!("{key} is given twice")));
                }
                let value = parse_value(limit, value).map_err(fail)?;
                limits.set(limit, value);
                named = true;
            }
            if !named {
                return Err(fail(format!(
                    "tenant {} has no limits: give at least one key=value",
                    tenant.as_str()
                )));
            }
            if by_tenant.insert(tenant.clone(), limits).is_some() {
                return Err(fail(format!(
                    "tenant {} is named on an earlier line too",
                    tenant.as_str()
                )));
            }
        }
        Ok(Self {
            by_tenant: Arc::new(by_tenant),
        })
    }

    /// The limits of `tenant` (none set when the file does not name it).
    pub fn of(&self, tenant: &Tenant) -> TenantLimits {
        self.by_tenant.get(tenant).copied().unwrap_or_default()
    }

    /// Every tenant the file names, with its limits, in name order.
    pub fn tenants(&self) -> Vec<(Tenant, TenantLimits)> {
        let mut all: Vec<_> = self
            .by_tenant
            .iter()
            .map(|(tenant, limits)| (tenant.clone(), *limits))
            .collect();
        all.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        all
    }
}

fn parse_value(limit: Limit, raw: &str) -> Result<u64, String> {
    let least = u64::from(limit == Limit::MaxTtlSeconds);
    let value = raw
        .parse::<u64>()
        .ok()
        .filter(|v| raw.bytes().all(|b| b.is_ascii_digit()) && *v >= least && *v <= u32::MAX.into())
        .ok_or_else(|| {
            format!(
                "{}={raw:?}: the value must be a whole number from {least} to {}",
                limit.key(),
                u32::MAX
            )
        })?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(raw: &str) -> Tenant {
        Tenant::parse(raw).unwrap()
    }

    #[test]
    fn each_line_sets_one_tenants_limits() {
        let table = LimitsTable::parse(
            "# limits\n\nacme max_live_leases=10 max_waiters=0  # none may wait\n\
             \tglobex max_ttl_seconds=60 max_observers=5\n",
        )
        .unwrap();
        let acme = table.of(&tenant("acme"));
        assert_eq!(acme.get(Limit::MaxLiveLeases), Some(10));
        assert_eq!(acme.get(Limit::MaxWaiters), Some(0));
        assert_eq!(acme.get(Limit::MaxTtlSeconds), None);
        let globex = table.of(&tenant("globex"));
        assert_eq!(globex.get(Limit::MaxTtlSeconds), Some(60));
        assert_eq!(globex.get(Limit::MaxObservers), Some(5));
        assert_eq!(table.of(&tenant("initech")), TenantLimits::default());
        let names: Vec<_> = table
            .tenants()
            .into_iter()
            .map(|(t, _)| t.as_str().to_owned())
            .collect();
        assert_eq!(names, ["acme", "globex"]);
    }

    #[test]
    fn an_empty_file_limits_no_one() {
        assert_eq!(
            LimitsTable::parse("# nothing yet\n\n").unwrap(),
            LimitsTable::default()
        );
    }

    #[test]
    fn bad_lines_are_named() {
        let cases = [
            ("acme\n", 1, "has no limits"),
            (
                "# ok\nacme max_leases=3\n",
                2,
                "unknown limit \"max_leases\"",
            ),
            ("acme max_waiters\n", 1, "not of the form key=value"),
            ("acme max_waiters=-1\n", 1, "whole number"),
            ("acme max_waiters=+1\n", 1, "whole number"),
            ("acme max_waiters=1.5\n", 1, "whole number"),
            ("acme max_waiters=\n", 1, "whole number"),
            ("acme max_ttl_seconds=0\n", 1, "from 1"),
            ("acme max_waiters=99999999999\n", 1, "whole number"),
            ("acme max_waiters=1 max_waiters=2\n", 1, "given twice"),
            (
                "acme max_waiters=1\n\nacme max_observers=1\n",
                3,
                "earlier line",
            ),
            ("bad/tenant max_waiters=1\n", 1, "tenant"),
            ("acme max_waiters=1 =2\n", 1, "unknown limit"),
        ];
        for (text, line, says) in cases {
            let error = LimitsTable::parse(text).unwrap_err();
            assert_eq!(error.line, line, "{text:?}");
            assert!(error.to_string().contains(says), "{text:?}: {error}");
        }
    }
}
