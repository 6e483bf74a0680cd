//! How the operator commands print for people: aligned columns, and times as spans from now
//! ("expires in 12.3s", "4m05s ago").

use chrono::{DateTime, Utc};
use serde_json::Value;

/// Rows under a header, each column as wide as its widest cell, two spaces between columns.
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Self {
            rows: vec![header.iter().map(|title| (*title).to_owned()).collect()],
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, one line a row (the last column is not padded).
    pub fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|column| {
                self.rows
                    .iter()
                    .filter_map(|row| row.get(column))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut text = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (column, cell) in row.iter().enumerate() {
                if column + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    let pad = widths[column] - cell.chars().count();
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad + 2));
                }
            }
            text.push_str(line.trim_end());
            text.push('\n');
        }
        text
    }
}

/// A span of milliseconds for people: `12.3s`, `4m05s`, `2h07m`, `3d04h`.
pub fn span(ms: i64) -> String {
    let ms = ms.max(0);
    let seconds = ms / 1_000;
    match seconds {
        0..=59 => format!("{:.1}s", ms as f64 / 1_000.0),
        60..=3_599 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        3_600..=86_399 => format!("{}h{:02}m", seconds / 3_600, seconds % 3_600 / 60),
        _ => format!("{}d{:02}h", seconds / 86_400, seconds % 86_400 / 3_600),
    }
}

/// How long until a lease ends, from the milliseconds the server measured: `expires in 12.3s`.
pub fn expires_in(ms: i64) -> String {
    format!("expires in {}", span(ms))
}

/// An RFC 3339 time as a span from this machine's now: `in 12.3s` or `4m05s ago`; the text as
/// it is when it is no such time.
pub fn from_now(at: &str) -> String {
    match DateTime::parse_from_rfc3339(at) {
        Ok(at) => {
            let ms = (at.with_timezone(&Utc) - Utc::now()).num_milliseconds();
            if ms >= 0 {
                format!("in {}", span(ms))
            } else {
                format!("{} ago", span(-ms))
            }
        }
        Err(_) => at.to_owned(),
    }
}

/// ` starting with "P"`, or nothing without a prefix.
pub fn under(prefix: &str) -> String {
    if prefix.is_empty() {
        String::new()
    } else {
        format!(" starting with {prefix:?}")
    }
}

/// A field of a document as a cell: a string as it is, a number or other JSON value in JSON,
/// `-` when absent or null.
pub fn cell(document: &Value, field: &str) -> String {
    match document.get(field) {
        None | Some(Value::Null) => "-".to_owned(),
        Some(Value::String(text)) => super::operator::one_line(text),
        Some(other) => other.to_string(),
    }
}

/// A time field of a document as a span from now (see [`from_now`]), `-` when absent.
pub fn time_cell(document: &Value, field: &str) -> String {
    document
        .get(field)
        .and_then(Value::as_str)
        .map_or_else(|| "-".to_owned(), from_now)
}

/// The `ttl_remaining_ms` of a listed lease or session: `expires in 12.3s`.
pub fn remaining_cell(document: &Value) -> String {
    document
        .get("ttl_remaining_ms")
        .and_then(Value::as_i64)
        .map_or_else(|| "-".to_owned(), expires_in)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_aligned() {
        let mut table = Table::new(&["NAME", "OWNER", "TOKEN"]);
        table.row(vec!["payment:42".into(), "w".into(), "17".into()]);
        table.row(vec!["a".into(), "worker-7".into(), "3".into()]);
        assert_eq!(
            table.render(),
            "NAME        OWNER     TOKEN\npayment:42  w         17\na           worker-7  3\n"
        );
    }

    #[test]
    fn spans_read_like_people_write_them() {
        assert_eq!(span(12_345), "12.3s");
        assert_eq!(span(0), "0.0s");
        assert_eq!(span(245_000), "4m05s");
        assert_eq!(span(7_620_000), "2h07m");
        assert_eq!(span(273_600_000), "3d04h");
        assert_eq!(expires_in(29_873), "expires in 29.9s");
        assert!(from_now("2000-01-01T00:00:00.000Z").ends_with(" ago"));
        assert!(from_now("2999-01-01T00:00:00Z").starts_with("in "));
        assert_eq!(from_now("not a time"), "not a time");
    }
}
