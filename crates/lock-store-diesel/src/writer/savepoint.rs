//! The savepoint around each job of the SQLite writer's batch transaction, run as prepared
//! statements. diesel's nested `transaction()` sends `SAVEPOINT` and `RELEASE` as text through
//! `sqlite3_exec`, which parses them again for every job (3.5 % of lockd's CPU in a W1 profile
//! at the defaults); these are parsed once per connection.
//!
//! A job whose savepoint cannot be taken, released or rolled back, or that leaves diesel's own
//! transaction depth other than it found it, leaves the transaction in a state nobody can vouch
//! for (SQLite may even have rolled the whole transaction back by itself, after a full disk or
//! an I/O error). The batch is then spoiled: no later job of it runs, and the writer rolls the
//! whole transaction back and fails every job of it with the savepoint's error
//! ([`take_spoiled`]), as diesel's transaction manager refuses to go on after a savepoint's
//! rollback failed.

use std::cell::RefCell;

use diesel::connection::{AnsiTransactionManager, TransactionManager};
use diesel::result::Error;
use diesel::sqlite::SqliteConnection;
use diesel::RunQueryDsl;

use crate::prepared::statement;

const SAVEPOINT: &str = "SAVEPOINT lockd_job";
const RELEASE: &str = "RELEASE lockd_job";
const ROLLBACK_TO: &str = "ROLLBACK TO lockd_job";

thread_local! {
    /// The first error of a savepoint of the transaction under way, if one failed: see the
    /// module documentation.
    static SPOILED: RefCell<Option<Error>> = const { RefCell::new(None) };
}

/// A transaction begins on this thread: nothing of it is spoiled yet.
pub(crate) fn begin() {
    SPOILED.set(None);
}

/// The error of the savepoint that spoiled the transaction under way on this thread, if one
/// did: the transaction must then be rolled back and every job of it failed.
pub(crate) fn take_spoiled() -> Option<Error> {
    SPOILED.take()
}

fn spoiled() -> bool {
    SPOILED.with_borrow(Option::is_some)
}

/// Runs `job` in a savepoint of the transaction under way on `conn`: released when `job`
/// succeeds, rolled back when it fails.
///
/// # Errors
/// `job`'s error; or [`Error::BrokenTransactionManager`] when the transaction is spoiled, before
/// `job` ran or by its savepoint.
pub(crate) fn in_savepoint<T, E>(
    conn: &mut SqliteConnection,
    job: impl FnOnce(&mut SqliteConnection) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<Error>,
{
    if spoiled() {
        return Err(Error::BrokenTransactionManager.into());
    }
    // diesel's own depth, which a job's nested `transaction()` moves and must leave as it found
    // it: else diesel's COMMIT of the batch would only release a savepoint.
    let depth = diesel_depth(conn);
    run(conn, SavepointStep::Take)?;
    let outcome = job(conn);
    if diesel_depth(conn) != depth {
        spoil(Error::BrokenTransactionManager);
    }
    match outcome {
        Ok(value) => {
            run(conn, SavepointStep::Release)?;
            Ok(value)
        }
        Err(error) => {
            // The error the caller hears is the job's; a failed rollback spoils the batch.
            let _ =
                run(conn, SavepointStep::RollBack).and_then(|()| run(conn, SavepointStep::Release));
            Err(error)
        }
    }
}

fn diesel_depth(conn: &mut SqliteConnection) -> Option<u32> {
    AnsiTransactionManager::transaction_manager_status_mut(conn)
        .transaction_depth()
        .ok()
        .flatten()
        .map(u32::from)
}

/// Spoils the transaction under way, keeping the first error for the batch.
fn spoil(error: Error) {
    SPOILED.with_borrow_mut(|spoiled| {
        spoiled.get_or_insert(error);
    });
}

#[derive(Clone, Copy)]
enum SavepointStep {
    Take,
    Release,
    RollBack,
}

/// Runs one step of the job's savepoint; a step that fails spoils the transaction, keeping the
/// first error for the batch.
fn run(conn: &mut SqliteConnection, step: SavepointStep) -> Result<(), Error> {
    let ran = match step {
        SavepointStep::Take => statement!(SAVEPOINT, vec![]).execute(conn),
        SavepointStep::Release => statement!(RELEASE, vec![]).execute(conn),
        SavepointStep::RollBack => statement!(ROLLBACK_TO, vec![]).execute(conn),
    };
    match ran {
        Ok(_) => Ok(()),
        Err(error) => {
            spoil(error);
            Err(Error::BrokenTransactionManager)
        }
    }
}

#[cfg(test)]
mod tests;
