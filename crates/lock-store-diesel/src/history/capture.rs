//! SQLite: the history records of the writer's transaction, collected by its connection and
//! written as one row of `history_batches` before the COMMIT.
//!
//! A record per change is still decided by triggers (the TEMP triggers of `sqlite_capture.sql`, the
//! SQL copy of the domain's `name_change`), in the statement that makes the change. They hand each
//! record to `lockd_history`, a function of the writer's connection that keeps it here. Before
//! committing, the writer draws the records' ids after the newest batch's and writes them all
//! in one row (a JSON array, packed: see `packed.rs`): one insert per transaction instead of a row
//! and two index entries per record. `history_names` and `history_tenants` say which segments of
//! 16,384 ids hold a name's or a tenant's records; an entry is written once, so this process
//! remembers the newest segment it wrote for each name and tenant and writes only new entries.
//!
//! The records of a write that failed are dropped with it: the writer marks where a job's
//! records start and cuts them off when the job's savepoint rolls back
//! ([`Capture::rewind`]), and a transaction that does not commit drops all of its records
//! ([`Capture::begin`]) and makes this process forget every entry ([`Capture::failed`]): it
//! remembers only entries it knows committed.

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, PoisonError};

use diesel::connection::SimpleConnection;
use diesel::sql_types::Text;
use diesel::sqlite::SqliteConnection;
use diesel::{QueryResult, RunQueryDsl};

use crate::prepared::{portable_statement, Param};
use crate::row::CountRow;

/// How many ids a segment of `history_names` and `history_tenants` spans (migration 14; 4096 in
/// migration 12).
pub(crate) const SEGMENT: i64 = 16384;

/// The TEMP triggers that call `lockd_history`.
const TRIGGERS: &str = include_str!("sqlite_capture.sql");

/// Writes a batch of `$1` records, `$3` packed, at `$2`, and answers its first id.
///
/// - Its ids follow the last one drawn: the newest batch's last id, or `history_context.last_id`
///   when that is larger (all batches pruned, see `batches/upkeep.rs`; or a process of an older
///   version, which drew there). So a batch writes no other row: one page a commit.
/// - Its time is `$2`, or the last batch's if that is later (the clock stepped back): `at_ms`
///   never decreases with the ids (see `batches/times.rs`).
const WRITE_BATCH: &str = "\
INSERT INTO history_batches (first_id, last_id, at_ms, records)
SELECT drawn.last + 1, drawn.last + $1,
       MAX($2, COALESCE((SELECT at_ms FROM history_batches ORDER BY first_id DESC LIMIT 1), $2)), $3
FROM (SELECT MAX(COALESCE((SELECT last_id FROM history_batches ORDER BY first_id DESC LIMIT 1), 0),
                 (SELECT last_id FROM history_context WHERE id = 1)) AS last) AS drawn
RETURNING first_id AS count";
const NAME_SEGMENT: &str =
    "INSERT OR IGNORE INTO history_names (tenant, kind, name, segment) VALUES ($1, $2, $3, $4)";
const TENANT_SEGMENT: &str =
    "INSERT OR IGNORE INTO history_tenants (tenant, segment) VALUES ($1, $2)";

/// How many names and tenants this process remembers before it starts over (it then writes
/// some entries again, which `INSERT OR IGNORE` makes harmless).
const REMEMBERED: usize = 65_536;

diesel::define_sql_function! {
    /// Hands one history record, its JSON element, to the writer (see the module documentation).
    #[sql_name = "lockd_history"]
    fn lockd_history(element: Text) -> Integer;
}

/// The newest segment of a name (a key of an element; a tenant: its raw tenant alone) this
/// process wrote an entry for.
struct Written {
    /// The element's raw `"tenant","kind","name"` (a name) or `"tenant"` (a tenant).
    key: String,
    segment: i64,
}

/// The records of the writer's transaction in progress, and the segment entries it knows of.
pub(crate) struct Capture {
    pending: Arc<Mutex<Vec<String>>>,
    written: hashbrown::HashTable<Written>,
    hasher: foldhash::fast::RandomState,
    /// The raw tenant whose entry was written last, and its segment: most records of a
    /// transaction are of the same tenant.
    last_tenant: Option<(String, i64)>,
}

impl Capture {
    /// Registers `lockd_history` on the writer's connection and creates the TEMP triggers that
    /// call it.
    ///
    /// # Errors
    /// When the function or a trigger cannot be created.
    pub(crate) fn install(conn: &mut SqliteConnection) -> QueryResult<Self> {
        let pending: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = Arc::clone(&pending);
        lockd_history_utils::register_nondeterministic_impl(conn, move |element: String| {
            sink.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(element);
            0
        })?;
        conn.batch_execute(TRIGGERS)?;
        Ok(Self {
            pending,
            written: hashbrown::HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
            last_tenant: None,
        })
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
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
        let mut json =
            String::with_capacity(records.iter().map(|r| r.len() + 1).sum::<usize>() + 2);
        json.push('[');
        for (index, element) in records.iter().enumerate() {
            if index > 0 {
                json.push(',');
            }
            json.push_str(element);
        }
        json.push(']');
        let first = crate::lease_statements::one(
            portable_statement!(
                WRITE_BATCH,
                vec![
                    Param::BigInt(count),
                    Param::BigInt(now_ms),
                    Param::Blob(&super::packed::pack(&json)),
                ],
            )
            .load::<CountRow>(conn)?,
        )?;
        if self.written.len() > REMEMBERED {
            self.written.clear();
        }
        for (offset, element) in records.iter().enumerate() {
            let segment = (first + offset as i64) / SEGMENT;
            let key = element::key(element).ok_or_else(|| corrupt(element))?;
            let same_tenant = self
                .last_tenant
                .as_ref()
                .is_some_and(|(tenant, at)| *at >= segment && tenant == key.tenant);
            if !same_tenant {
                if self.is_new(key.tenant, segment) {
                    let tenant = element::unescape(key.tenant).ok_or_else(|| corrupt(element))?;
                    portable_statement!(
                        TENANT_SEGMENT,
                        vec![Param::Text(&tenant), Param::BigInt(segment)],
                    )
                    .execute(conn)?;
                    self.wrote(key.tenant, segment);
                }
                self.last_tenant = Some((key.tenant.to_owned(), segment));
            }
            let raw = raw_name(element, &key);
            if self.is_new(raw, segment) {
                let unescaped = [key.tenant, key.kind, key.name].map(element::unescape);
                let [Some(tenant), Some(kind), Some(name)] = unescaped else {
                    return Err(corrupt(element));
                };
                portable_statement!(
                    NAME_SEGMENT,
                    vec![
                        Param::Text(&tenant),
                        Param::Text(&kind),
                        Param::Text(&name),
                        Param::BigInt(segment),
                    ],
                )
                .execute(conn)?;
                self.wrote(raw, segment);
            }
        }
        Ok(())
    }

    fn is_new(&self, key: &str, segment: i64) -> bool {
        let hash = self.hasher.hash_one(key);
        self.written
            .find(hash, |w| w.key == key)
            .is_none_or(|written| written.segment < segment)
    }

    fn wrote(&mut self, key: &str, segment: i64) {
        let hash = self.hasher.hash_one(key);
        let hasher = &self.hasher;
        match self
            .written
            .entry(hash, |w| w.key == key, |w| hasher.hash_one(w.key.as_str()))
        {
            hashbrown::hash_table::Entry::Occupied(mut entry) => entry.get_mut().segment = segment,
            hashbrown::hash_table::Entry::Vacant(entry) => {
                entry.insert(Written {
                    key: key.to_owned(),
                    segment,
                });
            }
        }
    }
}

/// The part of `element` from its tenant to its name, quotes and commas included: a name's key,
/// which no tenant's key (a string alone) can equal.
fn raw_name<'a>(element: &'a str, key: &element::Key<'a>) -> &'a str {
    let start = key.tenant.as_ptr() as usize - element.as_ptr() as usize - 1;
    let end = key.name.as_ptr() as usize - element.as_ptr() as usize + key.name.len() + 1;
    &element[start..end]
}

/// A record `json_array` wrote that cannot be read back: never expected; the transaction fails.
fn corrupt(element: &str) -> diesel::result::Error {
    diesel::result::Error::QueryBuilderError(
        format!("a history record that is not a JSON array of strings first: {element}").into(),
    )
}

mod element;

#[cfg(test)]
mod tests;
