//! The records as JSON lines (a header with each name's kind and the names that could not be
//! read, then one record a line), written beside the run's histories so that `lock-safety
//! --check` judges them again.

use serde_json::{json, Value};

use super::{Event, NameHistory, Record, RecordedHistory};

/// Writes the records.
pub fn write(recorded: &RecordedHistory) -> String {
    let kinds: serde_json::Map<String, Value> = recorded
        .names
        .iter()
        .map(|(resource, name)| (resource.clone(), json!(name.kind)))
        .collect();
    let mut out = json!({"kinds": kinds, "unread": recorded.unread}).to_string();
    out.push('\n');
    for (resource, name) in &recorded.names {
        for r in &name.records {
            let line = json!([
                resource,
                r.id,
                r.kind,
                r.name,
                r.owner,
                r.token,
                r.event.as_str(),
                r.at,
                r.reason,
                r.shared
            ]);
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
    out
}

/// Reads records written by [`write`].
///
/// # Errors
/// The number and text of the first line that is not what [`write`] writes.
pub fn read(text: &str) -> Result<RecordedHistory, String> {
    let mut lines = text.lines().enumerate();
    let bad = |n: usize, line: &str| format!("line {}: {line}", n + 1);
    let (n, header) = lines.next().ok_or("no records header")?;
    let h: Value = serde_json::from_str(header).map_err(|_| bad(n, header))?;
    let mut recorded = RecordedHistory::default();
    for (resource, kind) in h["kinds"].as_object().ok_or_else(|| bad(n, header))? {
        let kind = kind.as_str().ok_or_else(|| bad(n, header))?.to_owned();
        recorded.names.insert(
            resource.clone(),
            NameHistory {
                kind,
                records: Vec::new(),
            },
        );
    }
    if let Some(unread) = h["unread"].as_object() {
        for (resource, why) in unread {
            let why = why.as_str().ok_or_else(|| bad(n, header))?.to_owned();
            recorded.unread.insert(resource.clone(), why);
        }
    }
    for (n, line) in lines {
        let (resource, record) = parse(line).ok_or_else(|| bad(n, line))?;
        recorded
            .names
            .get_mut(&resource)
            .ok_or_else(|| bad(n, line))?
            .records
            .push(record);
    }
    Ok(recorded)
}

fn parse(line: &str) -> Option<(String, Record)> {
    let v: Value = serde_json::from_str(line).ok()?;
    let text = |i: usize| v[i].as_str().map(str::to_owned);
    let record = Record {
        id: v[1].as_i64()?,
        kind: text(2)?,
        name: text(3)?,
        owner: text(4)?,
        token: v[5].as_i64()?,
        event: Event::parse(v[6].as_str()?)?,
        at: v[7].as_i64()?,
        reason: if v[8].is_null() { None } else { Some(text(8)?) },
        shared: v[9].as_bool()?,
    };
    Some((text(0)?, record))
}
