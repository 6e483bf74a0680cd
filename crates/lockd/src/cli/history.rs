//! `lockd history NAME`: the history of a lock (semaphore, election), newest first, every page
//! of `GET /locks/{name}/history`, from `--since` on.

use std::process::ExitCode;

use chrono::{DateTime, SecondsFormat, Utc};
use clap::Args;
use serde_json::{json, Value};

use super::operator::{self, OperatorArgs, PrimitiveArgs, DONE, NOT_FOUND};
use super::table::{cell, from_now, Table};

#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub common: OperatorArgs,

    #[command(flatten)]
    pub primitive: PrimitiveArgs,

    /// Only records from this time on: RFC 3339 (`2026-11-29T21:32:27Z`), or a span back from
    /// now (`90s`, `15m`, `2h`, `7d`, `1h30m`).
    #[arg(long, value_parser = parse_since)]
    pub since: Option<Since>,

    /// At most this many records, the newest [default: all of them, page after page].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub limit: Option<u64>,

    /// The lock's (semaphore's, election's) name.
    pub name: String,
}

/// Where `--since` starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Since {
    /// An RFC 3339 time, sent as given.
    At(String),
    /// So many seconds before now.
    Ago(u64),
}

impl Since {
    /// The time to send: RFC 3339, UTC, milliseconds.
    fn rfc3339(&self) -> String {
        match self {
            Since::At(text) => text.clone(),
            Since::Ago(seconds) => {
                let back = chrono::Duration::seconds(i64::try_from(*seconds).unwrap_or(i64::MAX));
                let at = Utc::now()
                    .checked_sub_signed(back)
                    .unwrap_or(DateTime::<Utc>::MIN_UTC);
                at.to_rfc3339_opts(SecondsFormat::Millis, true)
            }
        }
    }
}

/// Parses `--since`: an RFC 3339 time, or a span of `<n>d`, `<n>h`, `<n>m`, `<n>s` parts.
fn parse_since(text: &str) -> Result<Since, String> {
    if DateTime::parse_from_rfc3339(text).is_ok() {
        return Ok(Since::At(text.to_owned()));
    }
    let refused = || {
        format!("{text:?} is neither an RFC 3339 time (2026-11-29T21:32:27Z) nor a span (15m, 2h, 1h30m)")
    };
    let (mut seconds, mut digits) = (0u64, String::new());
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3_600,
            'd' => 86_400,
            _ => return Err(refused()),
        };
        let count: u64 = digits.parse().map_err(|_| refused())?;
        seconds = count
            .checked_mul(unit)
            .and_then(|part| seconds.checked_add(part))
            .ok_or_else(refused)?;
        digits.clear();
    }
    if !digits.is_empty() || text.is_empty() {
        return Err(refused());
    }
    Ok(Since::Ago(seconds))
}

pub fn run(args: &HistoryArgs) -> ExitCode {
    operator::exit(history(args))
}

fn history(args: &HistoryArgs) -> Result<u8, u8> {
    let client = args.common.client();
    let primitive = args.primitive.primitive();
    let since = args.since.as_ref().map(Since::rfc3339);
    let mut query = Vec::new();
    if let Some(since) = &since {
        query.push(("since", since.as_str()));
    }
    let path = format!("{}/history", primitive.path(&args.name));
    let records = operator::follow_pages(&client, &path, "records", &query, args.limit)
        .map_err(|error| operator::failed("history", client.base_url(), &error))?;
    if args.common.json {
        operator::print_json(&json!({ "records": records }));
    } else if !records.is_empty() {
        operator::print(&table(&records).render());
    }
    if records.is_empty() {
        let from = since
            .map(|since| format!(" since {since}"))
            .unwrap_or_default();
        eprintln!(
            "lockd history: {}",
            operator::one_line(&format!(
                "no history of {} {:?}{from}",
                primitive.kind(),
                args.name
            ))
        );
        return Ok(NOT_FOUND);
    }
    Ok(DONE)
}

fn table(records: &[Value]) -> Table {
    let mut table = Table::new(&[
        "ID", "AT", "WHEN", "EVENT", "OWNER", "TOKEN", "SESSION", "REASON",
    ]);
    for record in records {
        let at = cell(record, "at");
        let shared = record.get("shared") == Some(&Value::Bool(true));
        let event = cell(record, "event");
        table.row(vec![
            cell(record, "id"),
            at.clone(),
            from_now(&at),
            if shared {
                format!("{event} (shared)")
            } else {
                event
            },
            cell(record, "owner"),
            cell(record, "fencing_token"),
            cell(record, "session"),
            cell(record, "reason"),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_is_a_time_or_a_span_back_from_now() {
        assert_eq!(
            parse_since("2026-11-29T21:32:27Z"),
            Ok(Since::At("2026-11-29T21:32:27Z".into()))
        );
        assert_eq!(parse_since("90s"), Ok(Since::Ago(90)));
        assert_eq!(parse_since("1h30m"), Ok(Since::Ago(5_400)));
        assert_eq!(parse_since("7d"), Ok(Since::Ago(604_800)));
        for bad in ["", "15", "m", "15x", "yesterday", "99999999999999999999d"] {
            assert!(parse_since(bad).is_err(), "{bad}");
        }
        let ago = Since::Ago(60).rfc3339();
        assert!(DateTime::parse_from_rfc3339(&ago).is_ok(), "{ago}");
        assert!(ago.ends_with('Z'), "{ago}");
    }
}
