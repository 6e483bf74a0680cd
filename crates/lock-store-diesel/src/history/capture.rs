//! SQLite: the history records of the writer's transaction, collected by its connection and
//! written as one row of `history_batches` before the COMMIT.
//!
//! A record per change is still decided by triggers (the TEMP triggers of `sqlite_capture.sql`,
//! the SQL copy of the domain's `name_change`), in the statement that makes the change. They hand
//! each record to `lockd_history`, a function of the writer's connection that keeps it here.
//! Before committing, the writer draws the records' ids from `history_context.last_id` and writes them
//! all in one row (a JSON array): one insert per transaction instead of a row and two index
//! entries per record. `history_names` and `history_tenants` say which segments of 4096 ids hold
//! a name's or a tenant's records; an entry is written once, so this process remembers the
//! newest segment it wrote for each name and tenant and writes only new entries.
//!
//! The records of a write that failed are dropped with it: the writer marks where a job's
//! records start and cuts them off when the job's savepoint rolls back
//! ([`Capture::rewind`]), and a transaction that does not commit drops all of its records
//! ([`Capture::begin`]) and makes this process forget every entry ([`Capture::failed`]): it
//! remembers only entries it knows committed.

use std::fmt::Write as _;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, PoisonError};

use diesel::connection::SimpleConnection;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, RunQueryDsl};

use crate::prepared::{Param, Prepared};
use crate::row::CountRow;

/// How many ids a segment of `history_names` and `history_tenants` spans (migration 12).
pub(crate) const SEGMENT: i64 = 4096;

/// The TEMP triggers that call `lockd_history`.
const TRIGGERS: &str = include_str!("sqlite_capture.sql");

/// Draws `$1` ids: the last one drawn after them.
const DRAW: &str =
    "UPDATE history_context SET last_id = last_id + $1 WHERE id = 1 RETURNING last_id AS count";
const WRITE_BATCH: &str =
    "INSERT INTO history_batches (first_id, last_id, at_ms, records) VALUES ($1, $2, $3, $4)";
const NAME_SEGMENT: &str =
    "INSERT OR IGNORE INTO history_names (tenant, kind, name, segment) VALUES ($1, $2, $3, $4)";
const TENANT_SEGMENT: &str =
    "INSERT OR IGNORE INTO history_tenants (tenant, segment) VALUES ($1, $2)";

/// How many names and tenants this process remembers before it starts over (it then writes
/// some entries again, which `INSERT OR IGNORE` makes harmless).
const REMEMBERED: usize = 65_536;

diesel::define_sql_function! {
    #[allow(clippy::too_many_arguments)]
    /// Hands one history record to the writer (see the module documentation).
    #[sql_name = "lockd_history"]
    fn lockd_history(
        tenant: Text,
        kind: Text,
        name: Text,
        owner: Text,
        fencing_token: BigInt,
        event: Text,
        reason: Nullable<Text>,
        shared: Integer,
    ) -> Integer;
}

/// One record of the transaction in progress: where it belongs, and its JSON element.
#[derive(Debug)]
struct Pending {
    tenant: String,
    kind: String,
    name: String,
    element: String,
}

/// The newest segment of a name (`kind` and `name` empty: of a tenant) this process wrote an
/// entry for.
struct Written {
    tenant: String,
    kind: String,
    name: String,
    segment: i64,
}

/// The records of the writer's transaction in progress, and the segment entries it knows of.
pub(crate) struct Capture {
    pending: Arc<Mutex<Vec<Pending>>>,
    written: hashbrown::HashTable<Written>,
    hasher: foldhash::fast::RandomState,
    /// The tenant entry written last: most records of a transaction are of the same tenant.
    last_tenant: Option<(String, i64)>,
}

impl Capture {
    /// Registers `lockd_history` on the writer's connection and creates the TEMP triggers that
    /// call it.
    ///
    /// # Errors
    /// When the function or a trigger cannot be created.
    pub(crate) fn install(conn: &mut SqliteConnection) -> QueryResult<Self> {
        let pending: Arc<Mutex<Vec<Pending>>> = Arc::default();
        let sink = Arc::clone(&pending);
        lockd_history_utils::register_nondeterministic_impl(
            conn,
            move |tenant: String,
                  kind: String,
                  name: String,
                  owner: String,
                  fencing_token: i64,
                  event: String,
                  reason: Option<String>,
                  shared: i32| {
                let element = element(
                    &tenant,
                    &kind,
                    &name,
                    &owner,
                    fencing_token,
                    &event,
                    reason.as_deref(),
                    shared != 0,
                );
                sink.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(Pending {
                        tenant,
                        kind,
                        name,
                        element,
                    });
                0
            },
        )?;
        conn.batch_execute(TRIGGERS)?;
        Ok(Self {
            pending,
            written: hashbrown::HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
            last_tenant: None,
        })
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Vec<Pending>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A transaction begins: nothing of an earlier one that did not commit is kept.
    pub(crate) fn begin(&mut self) {
        self.pending().clear();
    }

    /// The transaction did not commit: the entries it wrote are not there, and which those were
    /// is not kept, so every entry is written again from now on (`INSERT OR IGNORE`).
    pub(crate) fn failed(&mut self) {
        self.written.clear();
        self.last_tenant = None;
    }

    /// Where the records of the next job start.
    pub(crate) fn mark(&self) -> usize {
        self.pending().len()
    }

    /// The job that started at `mark` was rolled back: so are its records.
    pub(crate) fn rewind(&self, mark: usize) {
        self.pending().truncate(mark);
    }

    /// Writes the transaction's records (if any) in one row, with the segment entries not yet
    /// written, at `now_ms`, the transaction's clock.
    ///
    /// # Errors
    /// When a statement fails: the transaction must then not commit.
    pub(crate) fn write(&mut self, conn: &mut SqliteConnection, now_ms: i64) -> QueryResult<()> {
        let records = std::mem::take(&mut *self.pending());
        if records.is_empty() {
            return Ok(());
        }
        let count = records.len() as i64;
        let last = crate::lease_statements::one(
            Prepared::portable(DRAW, vec![Param::BigInt(count)]).load::<CountRow>(conn)?,
        )?;
        let first = last - count + 1;
        let mut json =
            String::with_capacity(records.iter().map(|r| r.element.len() + 1).sum::<usize>() + 2);
        json.push('[');
        for (index, record) in records.iter().enumerate() {
            if index > 0 {
                json.push(',');
            }
            json.push_str(&record.element);
        }
        json.push(']');
        Prepared::portable(
            WRITE_BATCH,
            vec![
                Param::BigInt(first),
                Param::BigInt(last),
                Param::BigInt(now_ms),
                Param::Text(&json),
            ],
        )
        .execute(conn)?;
        if self.written.len() > REMEMBERED {
            self.written.clear();
        }
        for (offset, record) in records.into_iter().enumerate() {
            let segment = (first + offset as i64) / SEGMENT;
            let same_tenant = self
                .last_tenant
                .as_ref()
                .is_some_and(|(tenant, at)| *at >= segment && *tenant == record.tenant);
            if !same_tenant && self.is_new(&record.tenant, "", "", segment) {
                Prepared::portable(
                    TENANT_SEGMENT,
                    vec![Param::Text(&record.tenant), Param::BigInt(segment)],
                )
                .execute(conn)?;
                self.wrote(&record.tenant, "", "", segment);
            }
            if !same_tenant {
                self.last_tenant = Some((record.tenant.clone(), segment));
            }
            if self.is_new(&record.tenant, &record.kind, &record.name, segment) {
                Prepared::portable(
                    NAME_SEGMENT,
                    vec![
                        Param::Text(&record.tenant),
                        Param::Text(&record.kind),
                        Param::Text(&record.name),
                        Param::BigInt(segment),
                    ],
                )
                .execute(conn)?;
                self.wrote(&record.tenant, &record.kind, &record.name, segment);
            }
        }
        Ok(())
    }

    fn find(&self, tenant: &str, kind: &str, name: &str) -> Option<&Written> {
        let hash = self.hasher.hash_one((tenant, kind, name));
        self.written.find(hash, |w| {
            w.tenant == tenant && w.kind == kind && w.name == name
        })
    }

    fn is_new(&self, tenant: &str, kind: &str, name: &str, segment: i64) -> bool {
        self.find(tenant, kind, name)
            .is_none_or(|written| written.segment < segment)
    }

    fn wrote(&mut self, tenant: &str, kind: &str, name: &str, segment: i64) {
        let hash = self.hasher.hash_one((tenant, kind, name));
        let hasher = &self.hasher;
        match self.written.entry(
            hash,
            |w| w.tenant == tenant && w.kind == kind && w.name == name,
            |w| hasher.hash_one((w.tenant.as_str(), w.kind.as_str(), w.name.as_str())),
        ) {
            hashbrown::hash_table::Entry::Occupied(mut entry) => entry.get_mut().segment = segment,
            hashbrown::hash_table::Entry::Vacant(entry) => {
                entry.insert(Written {
                    tenant: tenant.to_owned(),
                    kind: kind.to_owned(),
                    name: name.to_owned(),
                    segment,
                });
            }
        }
    }
}

/// The JSON element of one record: `[tenant, kind, name, owner, fencing_token, event, reason,
/// shared]`.
#[allow(clippy::too_many_arguments)]
fn element(
    tenant: &str,
    kind: &str,
    name: &str,
    owner: &str,
    fencing_token: i64,
    event: &str,
    reason: Option<&str>,
    shared: bool,
) -> String {
    let mut out = String::with_capacity(
        tenant.len() + kind.len() + name.len() + owner.len() + event.len() + 48,
    );
    out.push('[');
    for text in [tenant, kind, name, owner] {
        push_string(&mut out, text);
        out.push(',');
    }
    let _ = write!(out, "{fencing_token}");
    out.push(',');
    push_string(&mut out, event);
    out.push(',');
    match reason {
        Some(reason) => push_string(&mut out, reason),
        None => out.push_str("null"),
    }
    out.push_str(if shared { ",1]" } else { ",0]" });
    out
}

/// `text` as a JSON string.
fn push_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests;
