//! `lockd watch`: the tenant's event stream (`GET /events`), one line an event as it happens,
//! until SIGINT or SIGTERM (exit 0) or until the server ends the stream or goes away (exit 69).

use std::process::ExitCode;

use clap::Args;
use lock_client::{ClientError, Event};
use serde_json::Value;
use tokio::signal::unix::{signal, SignalKind};

use super::operator::{self, OperatorArgs, DONE, UNAVAILABLE};
use super::table::cell;

#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub common: OperatorArgs,

    /// Only events of names starting with this.
    #[arg(long, default_value = "")]
    pub prefix: String,
}

/// What the reading thread passes on: an event, or the end of the stream and why.
enum Item {
    Event(Event),
    Ended(String),
}

pub fn run(args: &WatchArgs) -> ExitCode {
    operator::exit(watch(args))
}

fn watch(args: &WatchArgs) -> Result<u8, u8> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| {
            eprintln!("lockd watch: cannot start: {error}");
            crate::run::exit::OS_ERROR
        })?;
    runtime.block_on(follow(args))
}

async fn follow(args: &WatchArgs) -> Result<u8, u8> {
    // Signals are caught from before the stream is opened: a SIGTERM at any moment ends the
    // command with its status, never with the signal's default death.
    let (Ok(mut terminate), Ok(mut interrupt)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        eprintln!("lockd watch: cannot catch SIGTERM and SIGINT");
        return Err(crate::run::exit::OS_ERROR);
    };
    let client = args.common.client();
    let server = client.base_url().to_owned();
    let mut stream = client
        .events(&[("prefix", args.prefix.as_str())])
        .map_err(|error| operator::failed("watch", &server, &error))?;
    eprintln!(
        "lockd watch: following the events of {server}{}",
        super::table::under(&args.prefix)
    );
    let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
    let reader = std::thread::Builder::new()
        .name("events".into())
        .spawn(move || {
            for item in stream.by_ref() {
                let item = match item {
                    Ok(event) => Item::Event(event),
                    Err(error) => Item::Ended(ended(&error)),
                };
                if events.send(item).is_err() {
                    return;
                }
            }
            let why = stream
                .last_comment()
                .map_or_else(|| "the server ended the stream".to_owned(), str::to_owned);
            let _ = events.send(Item::Ended(why));
        });
    if let Err(error) = reader {
        eprintln!("lockd watch: cannot start reading: {error}");
        return Err(crate::run::exit::OS_ERROR);
    }
    loop {
        tokio::select! {
            _ = terminate.recv() => return Ok(DONE),
            _ = interrupt.recv() => return Ok(DONE),
            item = received.recv() => match item {
                Some(Item::Event(event)) => {
                    let shown = if args.common.json {
                        operator::print_json(&event.data)
                    } else {
                        operator::print(&line(&event.data))
                    };
                    if !shown {
                        // Whoever read the lines has gone.
                        return Ok(DONE);
                    }
                }
                Some(Item::Ended(why)) => {
                    eprintln!("lockd watch: {}", operator::one_line(&why));
                    return Err(UNAVAILABLE);
                }
                None => return Err(UNAVAILABLE),
            },
        }
    }
}

/// Why the stream broke.
fn ended(error: &ClientError) -> String {
    match error {
        ClientError::Transport(why) => why.clone(),
        other => other.to_string(),
    }
}

/// One event for people: when, what kind, what happened, to which name, by whom.
fn line(record: &Value) -> String {
    let mut text = format!(
        "{}  {:<9}  {:<14}  {}  {}  token={}",
        cell(record, "at"),
        cell(record, "kind"),
        cell(record, "event"),
        cell(record, "name"),
        cell(record, "owner"),
        cell(record, "fencing_token"),
    );
    if record.get("shared") == Some(&Value::Bool(true)) {
        text.push_str("  shared");
    }
    if record.get("session").is_some() {
        text.push_str(&format!("  session={}", cell(record, "session")));
    }
    if record.get("reason").is_some() {
        text.push_str(&format!("  reason={:?}", cell(record, "reason")));
    }
    text.push('\n');
    text
}
