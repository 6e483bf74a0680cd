//! The records as JSON lines (a header with each name's kind and the names that could not be
//! read, then one record a line), written beside the run's histories so that `lock-safety
//! --check` judges them again.

use serde_json::{json, Value};

use super::{Event, NameHistory, Record, RecordedHistory};
use crate::jsonl;

/// Writes the records.
pub fn write(recorded: &RecordedHistory) -> String {
    let kinds: serde_json::Map<String, Value> = recorded
        .names
        .iter()
        .map(|(resource, name)| (resource.clone(), json!(name.kind)))
        .collect();
    let header = json!({"kinds": kinds, "unread": recorded.unread});
    let lines = recorded.names.iter().flat_map(|(resource, name)| {
        name.records.iter().map(move |r| {
            json!([
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
            ])
        })
    });
    jsonl::write(&header, lines)
}

/// Reads records written by [`write`].
///
/// # Errors
/// The number and text of the first line that is not what [`write`] writes.
pub fn read(text: &str) -> Result<RecordedHistory, String> {
    let header = |h: &Value| {
        let mut recorded = RecordedHistory::default();
        for (resource, kind) in h["kinds"].as_object()? {
            let name = NameHistory {
                kind: jsonl::text(kind)?,
                records: Vec::new(),
            };
            recorded.names.insert(resource.clone(), name);
        }
        if let Some(unread) = h["unread"].as_object() {
            for (resource, why) in unread {
                recorded.unread.insert(resource.clone(), jsonl::text(why)?);
            }
        }
        Some(recorded)
    };
    jsonl::read(text, "no records header", header, |recorded, v| {
        let (resource, record) = parse(v)?;
        recorded.names.get_mut(&resource)?.records.push(record);
        Some(())
    })
}

fn parse(v: &Value) -> Option<(String, Record)> {
    let text = |i: usize| jsonl::text(&v[i]);
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
