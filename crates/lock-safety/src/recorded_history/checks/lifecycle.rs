//! The records alone, as the life of one lease after another: read newest first and once each;
//! each of this name and kind; a `granted` only once the lease before has its end record (a
//! takeover records the old lease's `expired` just before the new `granted`), with a larger
//! token than every earlier grant; every other record of the live lease; and no expiry recorded
//! before the end an answer showed for a lease that nothing changed after its grant.

use std::collections::BTreeSet;

use super::{Found, Kind, Subject};
use crate::recorded_history::{Event, Record};

/// The pages came newest first, each record once: ids strictly decrease.
pub(super) fn page_order(subject: &Subject<'_>, found: &mut Found<'_>) {
    for pair in subject.answered.windows(2) {
        if pair[1].id >= pair[0].id {
            found.report(
                Kind::OutOfOrder,
                format!(
                    "record {} was answered after record {}: the pages should go from the newest to the oldest, each record once",
                    pair[1].id, pair[0].id
                ),
                Vec::new(),
                vec![pair[0].id, pair[1].id],
            );
        }
    }
}

/// Every record is of this name and kind, no reader's (the lock is only ever held exclusively),
/// with a reason exactly when it is a force-release's.
pub(super) fn foreign_records(subject: &Subject<'_>, found: &mut Found<'_>) {
    for r in &subject.records {
        let wrong = if r.name != subject.resource || r.kind != subject.kind {
            format!("it is of the {} {:?}", r.kind, r.name)
        } else if r.shared {
            "it is a reader's, and this lock is only ever asked exclusively".to_owned()
        } else if r.event == Event::ForceReleased && r.reason.is_none() {
            "a force-release's record carries no reason".to_owned()
        } else if r.event != Event::ForceReleased && r.reason.is_some() {
            format!("a {} record carries a reason", r.event.as_str())
        } else {
            continue;
        };
        found.report(
            Kind::Foreign,
            format!(
                "record {} ({} {} token {}): {wrong}",
                r.id,
                r.event.as_str(),
                r.owner,
                r.token
            ),
            Vec::new(),
            vec![r.id],
        );
    }
}

/// One lease at a time, tokens that grow, every record of the live lease.
pub(super) fn lease_lives(subject: &Subject<'_>, found: &mut Found<'_>) {
    // The live lease in the records: its grant, and its latest record.
    let mut live: Option<(&Record, &Record)> = None;
    let mut last_grant: Option<&Record> = None;
    let mut orphans = BTreeSet::new();
    for &r in &subject.records {
        let of_live = live.filter(|(grant, _)| grant.owner == r.owner && grant.token == r.token);
        match r.event {
            Event::Granted => {
                if let Some((grant, latest)) = live {
                    found.report(
                        Kind::Overlap,
                        format!(
                            "record {} granted {} token {} while the lease of {} token {} (granted by record {}, last recorded by record {}) had no end record",
                            r.id, r.owner, r.token, grant.owner, grant.token, grant.id, latest.id
                        ),
                        Vec::new(),
                        vec![grant.id, latest.id, r.id],
                    );
                }
                if let Some(before) = last_grant.filter(|before| r.token <= before.token) {
                    found.report(
                        Kind::TokenOrder,
                        format!(
                            "record {} granted token {} ({}) after record {} had granted token {} ({})",
                            r.id, r.token, r.owner, before.id, before.token, before.owner
                        ),
                        Vec::new(),
                        vec![before.id, r.id],
                    );
                }
                live = Some((r, r));
                last_grant = Some(r);
            }
            _ if of_live.is_some() => {
                live = if r.event.ends() {
                    None
                } else {
                    of_live.map(|(grant, _)| (grant, r))
                };
            }
            // A lease reported once is not reported again for each of its later records.
            _ if !orphans.insert((r.owner.as_str(), r.token)) => {}
            _ => {
                let (what, records) = match live {
                    Some((grant, latest)) => (
                        format!(
                            "the live lease was {} token {} (granted by record {}, last recorded by record {})",
                            grant.owner, grant.token, grant.id, latest.id
                        ),
                        vec![grant.id, latest.id, r.id],
                    ),
                    None => match last_grant {
                        Some(grant) => (
                            format!(
                                "no lease was live (the last one granted, {} token {} by record {}, had ended)",
                                grant.owner, grant.token, grant.id
                            ),
                            vec![grant.id, r.id],
                        ),
                        None => ("nothing had been granted yet".to_owned(), vec![r.id]),
                    },
                };
                found.report(
                    Kind::NotLive,
                    format!(
                        "record {} says {} token {} was {}, but {what}",
                        r.id,
                        r.owner,
                        r.token,
                        r.event.as_str()
                    ),
                    Vec::new(),
                    records,
                );
            }
        }
    }
}

/// An `expired` record is written only once the lease has run out on the server's clock, which
/// the record's time reads then or later. The end is known when nothing changed the lease between
/// its `granted` and its `expired` record: the grant's end then is the end every answer showed (a
/// re-grant or a renewal may move the end either way, and an answer cannot be placed among the
/// records).
pub(super) fn early_expiries(subject: &Subject<'_>, found: &mut Found<'_>) {
    for pair in subject.records.windows(2) {
        let (grant, expiry) = (pair[0], pair[1]);
        let same = grant.owner == expiry.owner && grant.token == expiry.token;
        if !(same && grant.event == Event::Granted && expiry.event == Event::Expired) {
            continue;
        }
        let latest = subject
            .shown
            .iter()
            .filter(|(_, l)| l.owner == expiry.owner && l.token == expiry.token)
            .max_by_key(|(_, l)| l.expires_at);
        if let Some((op, lease)) = latest {
            if expiry.at < lease.expires_at - subject.margin {
                found.report(
                    Kind::EarlyExpiry,
                    format!(
                        "record {} says {} token {} expired at {:.3}s, but op #{} showed it live until {:.3}s, and no record changed it after its grant (record {})",
                        expiry.id,
                        expiry.owner,
                        expiry.token,
                        (expiry.at - subject.start) as f64 / 1e6,
                        op.id,
                        (lease.expires_at - subject.start) as f64 / 1e6,
                        grant.id
                    ),
                    vec![op.id],
                    vec![grant.id, expiry.id],
                );
            }
        }
    }
}
