//! The JSON-lines layout every recorded file of a run shares (`history.jsonl`, `permits.jsonl`,
//! `shared.jsonl`, `multi.jsonl`, `records.jsonl`): one header object, then one JSON value a
//! line, so that `lock-safety --check` judges a stored run again. Each history's own `json`
//! module says what its header holds and how one of its lines is spelled; the framing, the run's
//! clocks in the header ([`Run`]) and the readers of the small values are here once, so that
//! every file is read, and rejected, the same way.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::history::{Micros, DEFAULT_HORIZON_US, DEFAULT_MARGIN_US};

/// What every operation history's header says of its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) start: Micros,
    pub(crate) seed: u64,
    pub(crate) horizon_us: Micros,
    pub(crate) margin_us: Micros,
}

impl Run {
    /// The header: the history's names under `names.0` if it keeps them, the run, and the
    /// lock-delays if it keeps them. The keys go in in the order the histories have always
    /// spelled them, so that the bytes stay the same whether serde_json prints an object's keys
    /// sorted (its default) or in insertion order (its `preserve_order` feature).
    pub(crate) fn header(
        &self,
        names: Option<(&str, &[String])>,
        lock_delays: Option<&BTreeMap<String, Micros>>,
    ) -> Value {
        let mut header = Map::new();
        if let Some((key, names)) = names {
            header.insert(key.to_owned(), json!(names));
        }
        header.insert("start".to_owned(), json!(self.start));
        header.insert("horizon_us".to_owned(), json!(self.horizon_us));
        header.insert("margin_us".to_owned(), json!(self.margin_us));
        header.insert("seed".to_owned(), json!(self.seed));
        if let Some(lock_delays) = lock_delays {
            header.insert("lock_delays_us".to_owned(), json!(lock_delays));
        }
        Value::Object(header)
    }

    /// The run a header describes: its start must be there; a header without the others (from
    /// an older run) gets seed 0 and the default horizon and margin.
    pub(crate) fn read(header: &Value) -> Option<Self> {
        Some(Self {
            start: header["start"].as_i64()?,
            seed: header["seed"].as_u64().unwrap_or(0),
            horizon_us: header["horizon_us"].as_i64().unwrap_or(DEFAULT_HORIZON_US),
            margin_us: header["margin_us"].as_i64().unwrap_or(DEFAULT_MARGIN_US),
        })
    }
}

/// The file: the header and then each line, every one ended by a newline.
pub(crate) fn write(header: &Value, lines: impl IntoIterator<Item = Value>) -> String {
    let mut out = header.to_string();
    out.push('\n');
    for line in lines {
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

/// Reads a file written by [`write`]: `header` makes what is read from the first line, and
/// `line` adds each other line to it.
///
/// # Errors
/// `missing` for an empty text, else the number and text of the first line that is not JSON or
/// that `header` or `line` refuses (`None`).
pub(crate) fn read<T>(
    text: &str,
    missing: &str,
    header: impl FnOnce(&Value) -> Option<T>,
    mut line: impl FnMut(&mut T, &Value) -> Option<()>,
) -> Result<T, String> {
    let bad = |n: usize, text: &str| format!("line {}: {text}", n + 1);
    let mut lines = text.lines().enumerate();
    let (n, first) = lines.next().ok_or(missing)?;
    let value: Value = serde_json::from_str(first).map_err(|_| bad(n, first))?;
    let mut read = header(&value).ok_or_else(|| bad(n, first))?;
    for (n, text) in lines {
        serde_json::from_str(text)
            .ok()
            .and_then(|value: Value| line(&mut read, &value))
            .ok_or_else(|| bad(n, text))?;
    }
    Ok(read)
}

/// A string.
pub(crate) fn text(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

/// A whole number that fits a `u32` (a client, a TTL, a count of permits): a larger one is
/// refused, not cut.
pub(crate) fn number(value: &Value) -> Option<u32> {
    value.as_u64().and_then(|n| u32::try_from(n).ok())
}

/// An HTTP status (0 for a refused connection); a larger number is refused.
pub(crate) fn status(value: &Value) -> Option<u16> {
    value.as_u64().and_then(|s| u16::try_from(s).ok())
}

/// An array whose every element `item` reads.
pub(crate) fn list<T>(value: &Value, item: impl FnMut(&Value) -> Option<T>) -> Option<Vec<T>> {
    value.as_array()?.iter().map(item).collect()
}

/// A header's list of names: the strings among them, none if it has no such list (the header
/// of an older run).
pub(crate) fn names_of(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|names| names.iter().filter_map(text).collect())
        .unwrap_or_default()
}

/// A header's lock-delays by name: those that are whole numbers, none if it has no such object.
pub(crate) fn lock_delays(value: &Value) -> BTreeMap<String, Micros> {
    value
        .as_object()
        .map(|delays| {
            delays
                .iter()
                .filter_map(|(name, us)| Some((name.clone(), us.as_i64()?)))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
