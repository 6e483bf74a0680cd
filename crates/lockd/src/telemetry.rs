//! Structured logs to standard error, as text or JSON lines, written by one thread of their own
//! through a bounded queue ([`log_writer`]): a reader of standard error that stalls costs log
//! lines (counted in `lockd_log_lines_dropped_total`), never a request.
//!
//! In the text format every field is `key=value`. A string field is quoted, as
//! tracing-subscriber writes it (`event="granted"`); a `%value` (Display) or `?value` field,
//! which tracing-subscriber writes bare whatever it holds, stays bare only when it is plain
//! (`owner=worker-7`) and is quoted and escaped whenever it could be misread (spaces, `=`,
//! quotes, anything but printable ASCII). So a value a client chose, such as a resource named
//! `x owner=victim event=released`, can never read as another field: a logfmt parser sees
//! exactly the fields lockd wrote. In JSON every value is already a string of its own.

mod log_writer;

use std::cell::RefCell;
use std::fmt;
use std::io::IsTerminal;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, LazyLock};

use tracing::field::{Field, Visit};
use tracing::Subscriber;
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FormatFields, MakeWriter};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

use crate::cli::LogFormat;
pub use log_writer::{LogQueue, LogWriterGuard, QueuedLine};

/// The most bytes of log lines that wait for standard error: about 1,800 audit lines, four
/// times a pipe's buffer. A reader further behind than that loses lines instead of stopping
/// lockd.
pub const LOG_QUEUE_BYTES: usize = 256 * 1024;

/// The log lines this process dropped rather than wait for standard error: hand it to
/// `Metrics::with_log_lines_dropped`, which reports it as `lockd_log_lines_dropped_total`.
pub fn log_lines_dropped() -> Arc<AtomicU64> {
    static DROPPED: LazyLock<Arc<AtomicU64>> = LazyLock::new(Arc::default);
    Arc::clone(&DROPPED)
}

/// Installs the global subscriber, writing to standard error through the bounded queue and its
/// writer thread (directly, should that thread fail to start). `RUST_LOG`, when set, wins over
/// `filter`. Keep the guard until the process ends: dropping it writes out what is still
/// queued (waiting at most 2 s for a stalled reader).
pub fn init(filter: &str, format: LogFormat) -> Option<LogWriterGuard> {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(filter))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let ansi = std::io::stderr().is_terminal();
    // The writer holds standard error's lock for each batch, as `eprintln!` does for its line
    // (`listening on ...`, which the tests wait for), so lines never interleave. Only start-up,
    // exit and panics print directly, and those would wait for a stalled reader anyway.
    let queued = LogQueue::start(std::io::stderr(), LOG_QUEUE_BYTES, log_lines_dropped());
    // A second initialisation (tests) keeps the first subscriber. `try_init` also forwards the
    // `log` crate's records, as tracing-subscriber's own initialisation does.
    match queued {
        Ok((queue, guard)) => {
            drop(subscriber(filter, format, queue, ansi).try_init());
            Some(guard)
        }
        Err(error) => {
            eprintln!("lockd: logging directly to stderr, the log writer did not start: {error}");
            drop(subscriber(filter, format, std::io::stderr, ansi).try_init());
            None
        }
    }
}

/// The subscriber lockd logs through, writing to `writer` (standard error in `lockd`; a buffer
/// in tests).
pub fn subscriber<W>(
    filter: EnvFilter,
    format: LogFormat,
    writer: W,
    ansi: bool,
) -> Box<dyn Subscriber + Send + Sync>
where
    W: for<'writer> MakeWriter<'writer> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(ansi);
    match format {
        LogFormat::Text => Box::new(builder.fmt_fields(QuotedFields).finish()),
        LogFormat::Json => Box::new(builder.json().finish()),
    }
}

/// The text format's fields: `message` first and bare, as tracing-subscriber writes it, then
/// `key=value` pairs whose values are quoted when they are strings or need to be (see
/// [`write_value`]).
struct QuotedFields;

impl<'writer> FormatFields<'writer> for QuotedFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'writer>, fields: R) -> fmt::Result {
        let mut visitor = QuotingVisitor {
            writer,
            first: true,
            result: Ok(()),
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

struct QuotingVisitor<'writer> {
    writer: Writer<'writer>,
    first: bool,
    result: fmt::Result,
}

impl QuotingVisitor<'_> {
    fn separate(&mut self) -> fmt::Result {
        if self.first {
            self.first = false;
            Ok(())
        } else {
            self.writer.write_char(' ')
        }
    }

    /// A field whose value is text: quoted when `quote` says so or it must be.
    fn text(&mut self, field: &Field, value: &str, quote: Quote) {
        if self.result.is_err() {
            return;
        }
        self.result = self.separate().and_then(|()| {
            if field.name() == "message" {
                self.writer.write_str(value)
            } else {
                write!(self.writer, "{}=", field.name())?;
                write_value(&mut self.writer, value, quote)
            }
        });
    }

    /// A field whose value is a number or a boolean: never quoted.
    fn plain(&mut self, field: &Field, value: &dyn fmt::Display) {
        if self.result.is_err() {
            return;
        }
        self.result = self
            .separate()
            .and_then(|()| write!(self.writer, "{}={value}", field.name()));
    }
}

impl Visit for QuotingVisitor<'_> {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.plain(field, &value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.plain(field, &value);
    }

    fn record_i128(&mut self, field: &Field, value: i128) {
        self.plain(field, &value);
    }

    fn record_u128(&mut self, field: &Field, value: u128) {
        self.plain(field, &value);
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.plain(field, &value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.plain(field, &value);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.text(field, value, Quote::Always);
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.text(field, &value.to_string(), Quote::Always);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // `%value` fields arrive here too, their Debug being their Display. They are written
        // into a reused buffer first (whether to quote depends on the whole value), so a
        // resource or owner costs no allocation.
        thread_local! {
            static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
        }
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut scratch) => {
                scratch.clear();
                if fmt::write(&mut *scratch, format_args!("{value:?}")).is_err() {
                    self.result = Err(fmt::Error);
                    return;
                }
                self.text(field, &scratch, Quote::WhenNeeded);
            }
            // A value whose Debug logs an event of its own: rare, so it may allocate.
            Err(_) => self.text(field, &format!("{value:?}"), Quote::WhenNeeded),
        });
    }
}

/// Whether a value is quoted even when it is plain.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    Always,
    WhenNeeded,
}

/// Writes `value` bare when `quote` allows it and it is non-empty printable ASCII without `=`,
/// `"` or `\`; otherwise in double quotes, with `\` and `"` escaped as `\\` and `\"`, and
/// control characters as `\n`, `\r`, `\t` or `\u00XX` (other characters stay as they are).
fn write_value(writer: &mut impl fmt::Write, value: &str, quote: Quote) -> fmt::Result {
    let bare = quote == Quote::WhenNeeded
        && !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'=' && b != b'"' && b != b'\\');
    if bare {
        return writer.write_str(value);
    }
    writer.write_char('"')?;
    for c in value.chars() {
        match c {
            '"' => writer.write_str("\\\"")?,
            '\\' => writer.write_str("\\\\")?,
            '\n' => writer.write_str("\\n")?,
            '\r' => writer.write_str("\\r")?,
            '\t' => writer.write_str("\\t")?,
            c if c.is_control() => write!(writer, "\\u{:04x}", u32::from(c))?,
            c => writer.write_char(c)?,
        }
    }
    writer.write_char('"')
}

#[cfg(test)]
mod tests {
    use super::{write_value, Quote};

    fn written(value: &str) -> String {
        let mut out = String::new();
        write_value(&mut out, value, Quote::WhenNeeded).expect("write to a String");
        out
    }

    #[test]
    fn strings_are_always_quoted() {
        let mut out = String::new();
        write_value(&mut out, "granted", Quote::Always).expect("write to a String");
        assert_eq!(out, r#""granted""#);
    }

    #[test]
    fn plain_values_stay_bare_and_the_rest_is_quoted_and_escaped() {
        assert_eq!(written("worker-7"), "worker-7");
        assert_eq!(written("payment:42"), "payment:42");
        assert_eq!(written(""), r#""""#);
        assert_eq!(written("a b"), r#""a b""#);
        assert_eq!(written("k=v"), r#""k=v""#);
        assert_eq!(written(r#"say "hi" \o/"#), r#""say \"hi\" \\o/""#);
        assert_eq!(
            written("line\nnext\ttab\u{1b}"),
            r#""line\nnext\ttab\u001b""#
        );
        assert_eq!(written("zürich"), r#""zürich""#);
    }
}
