//! lockd's durable history of the locks and elections a run used, as the checker reads it after
//! the run (`GET /locks/{resource}/history`, `GET /elections/{name}/history`, page by page):
//! every change to a lease, recorded by lockd in the transaction that made it. The checks
//! ([`checks`]) hold those records to the lease's life (one lease at a time, tokens that grow)
//! and to what the clients saw (every acknowledged change recorded, every record explained by a
//! request).

pub mod checks;
pub mod json;
pub mod report;

use std::collections::BTreeMap;

use crate::history::Micros;

/// What a record says happened to a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    /// A new lease, with a new token.
    Granted,
    /// The live holder acquired again: same token, the lease restarted.
    Regranted,
    /// Its end moved.
    Renewed,
    /// Ended by its holder.
    Released,
    /// It had run out (recorded late: at a takeover, another write of the name, or a sweep).
    Expired,
    /// Ended by an admin, with a reason.
    ForceReleased,
    /// lockd's undo of a grant nobody heard of.
    Undone,
}

impl Event {
    /// The event as lockd writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Granted => "granted",
            Event::Regranted => "re-granted",
            Event::Renewed => "renewed",
            Event::Released => "released",
            Event::Expired => "expired",
            Event::ForceReleased => "force-released",
            Event::Undone => "undone",
        }
    }

    /// Reads an event as lockd writes it; `None` for any other word.
    pub fn parse(word: &str) -> Option<Self> {
        [
            Event::Granted,
            Event::Regranted,
            Event::Renewed,
            Event::Released,
            Event::Expired,
            Event::ForceReleased,
            Event::Undone,
        ]
        .into_iter()
        .find(|event| event.as_str() == word)
    }

    /// Whether the event ends the lease.
    pub fn ends(self) -> bool {
        matches!(
            self,
            Event::Released | Event::Expired | Event::ForceReleased | Event::Undone
        )
    }
}

/// One record, as lockd answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub id: i64,
    /// `lock` or `election`.
    pub kind: String,
    pub name: String,
    pub owner: String,
    pub token: i64,
    pub event: Event,
    /// The server's time of the change (microseconds since the Unix epoch, whole milliseconds).
    pub at: Micros,
    /// A force-release's reason.
    pub reason: Option<String>,
    /// A reader of a shared lock.
    pub shared: bool,
}

/// One name's records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameHistory {
    /// What lockd should call the name's records: `lock` or `election`.
    pub kind: String,
    /// As lockd answered them: newest first, page after page.
    pub records: Vec<Record>,
}

/// The records of every resource of a lock history (its locks and elections).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedHistory {
    pub names: BTreeMap<String, NameHistory>,
    /// The resources whose history could not be read, and why: they are not checked, and the
    /// run does not pass.
    pub unread: BTreeMap<String, String>,
}

impl RecordedHistory {
    /// How many records were read.
    pub fn records(&self) -> usize {
        self.names.values().map(|name| name.records.len()).sum()
    }
}

/// Renders one record on one line, its time relative to `start`.
pub fn describe(record: &Record, start: Micros) -> String {
    let mut line = format!(
        "record {:<7} [{:.3}s] {:<14} {} token={}",
        record.id,
        (record.at - start) as f64 / 1e6,
        record.event.as_str(),
        record.owner,
        record.token
    );
    if let Some(reason) = &record.reason {
        line.push_str(&format!(" reason={reason:?}"));
    }
    if record.shared {
        line.push_str(" shared");
    }
    if record.kind != "lock" {
        line.push_str(&format!(" ({} {})", record.kind, record.name));
    }
    line
}
