//! After the run, once the faults have stopped and every instance runs again: lockd's durable
//! history of every lock and election the clients used, read page by page (newest first, through
//! `next_cursor`), for the recorded-history checks.

use std::thread;
use std::time::{Duration, Instant};

use lock_safety::recorded_history::{Event, NameHistory, Record, RecordedHistory};
use serde_json::Value;

use crate::cluster::Fleet;
use crate::workload::{agent, answer, encode, Answer};

/// How long one name's history may take to read, retries included: an instance the last fault
/// restarted may still be starting.
const PATIENCE: Duration = Duration::from_secs(60);

/// Records a page: small, so that every run reads a name's history over several pages (a run's
/// name has some tens of records to a few hundred) and the paging is checked too.
const PAGE: &str = "20";

/// Reads the history of each of `locks` and `elections`; a name that could not be read within
/// [`PATIENCE`] is listed in `unread` with why.
pub fn read(fleet: &Fleet, locks: &[String], elections: &[String]) -> RecordedHistory {
    let mut recorded = RecordedHistory::default();
    let names = locks
        .iter()
        .map(|name| (name, "lock"))
        .chain(elections.iter().map(|name| (name, "election")));
    for (name, kind) in names {
        let path = match kind {
            "lock" => format!("/locks/{}/history", encode(name)),
            _ => format!("/elections/{}/history", encode(name)),
        };
        match read_name(fleet, &path) {
            Ok(records) => {
                let kind = kind.to_owned();
                recorded
                    .names
                    .insert(name.clone(), NameHistory { kind, records });
            }
            Err(why) => {
                recorded.unread.insert(name.clone(), why);
            }
        }
    }
    recorded
}

/// Every page of one name's history, as answered: newest first.
fn read_name(fleet: &Fleet, path: &str) -> Result<Vec<Record>, String> {
    let deadline = Instant::now() + PATIENCE;
    let mut records = Vec::new();
    let mut cursor: Option<String> = None;
    let mut attempt = 0;
    loop {
        let n = fleet.len();
        let base = (0..n).find_map(|k| fleet.base((attempt + k) % n));
        let page = match base {
            Some(base) => page(&format!("{base}{path}"), cursor.as_deref()),
            None => Err(Failure::Passing("no instance runs".to_owned())),
        };
        match page {
            Ok((page, next)) => {
                records.extend(page);
                match next {
                    Some(next) => cursor = Some(next),
                    None => return Ok(records),
                }
            }
            // A page is read again from the same cursor, on the next instance.
            Err(Failure::Passing(_)) if Instant::now() < deadline => {
                attempt += 1;
                thread::sleep(Duration::from_millis(250));
            }
            Err(Failure::Passing(why) | Failure::Final(why)) => return Err(why),
        }
    }
}

/// Why a page could not be read.
enum Failure {
    /// No answer, or a 5xx: another try may do.
    Passing(String),
    /// An answer that another try would not change.
    Final(String),
}

/// One page and the cursor of the next, if more follow.
fn page(url: &str, cursor: Option<&str>) -> Result<(Vec<Record>, Option<String>), Failure> {
    let mut request = agent(Duration::from_secs(10)).get(url).query("limit", PAGE);
    if let Some(cursor) = cursor {
        request = request.query("cursor", cursor);
    }
    let body = match answer(request.call()) {
        Answer::Status(200, body) => body,
        Answer::Status(status @ 500..=599, body) => {
            return Err(Failure::Passing(format!("{status}: {body}")))
        }
        Answer::Status(status, body) => return Err(Failure::Final(format!("{status}: {body}"))),
        Answer::Refused => return Err(Failure::Passing("connection refused".to_owned())),
        Answer::Lost(why) => return Err(Failure::Passing(why)),
    };
    let unreadable = || Failure::Final(format!("unreadable page: {body}"));
    let json: Value = serde_json::from_str(&body).map_err(|_| unreadable())?;
    let records = json["records"]
        .as_array()
        .and_then(|records| records.iter().map(parse).collect::<Option<Vec<_>>>())
        .ok_or_else(unreadable)?;
    let next = match &json["next_cursor"] {
        Value::Null => None,
        Value::String(next) => Some(next.clone()),
        _ => return Err(unreadable()),
    };
    Ok((records, next))
}

fn parse(v: &Value) -> Option<Record> {
    let at = chrono::DateTime::parse_from_rfc3339(v["at"].as_str()?)
        .ok()?
        .timestamp_micros();
    let reason = match &v["reason"] {
        Value::Null => None,
        reason => Some(reason.as_str()?.to_owned()),
    };
    Some(Record {
        id: v["id"].as_i64()?,
        kind: v["kind"].as_str()?.to_owned(),
        name: v["name"].as_str()?.to_owned(),
        owner: crate::workload::holder(v)?,
        token: v["fencing_token"].as_i64()?,
        event: Event::parse(v["event"].as_str()?)?,
        at,
        reason,
        shared: v["shared"].as_bool()?,
    })
}
