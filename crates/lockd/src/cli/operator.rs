//! What the operator commands (`lockd locks`, `status`, `release`, `sessions`, `history`,
//! `watch`, `fence`) share: their common options, their exit statuses, how a failure is told on
//! one line, a listing followed across its pages, and the flow of a listing command. Each is a pure client of the REST API,
//! through `lock-client`.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use lock_client::{ClientError, LockClient, Primitive};
use serde_json::{json, Value};

use super::table::{under, Table};
use super::ServerArgs;
pub use crate::run::exit::{INVALID_INPUT, UNAUTHORIZED, UNAVAILABLE};

/// Found, or done.
pub const DONE: u8 = 0;
/// Not found: no live lock (semaphore, leader, session), no history, a stale fencing token.
pub const NOT_FOUND: u8 = 1;

/// The subcommands that talk to a running server as an operator's tools; a bad flag of one of
/// them exits [`INVALID_INPUT`] (64) rather than clap's 2.
pub const COMMANDS: [&str; 7] = [
    "locks", "status", "release", "sessions", "history", "watch", "fence",
];

/// The options every operator command has.
#[derive(Debug, Clone, Args)]
pub struct OperatorArgs {
    #[command(flatten)]
    pub connection: ServerArgs,

    /// Print JSON for scripts: the server's document (`watch`: one event object a line)
    /// instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Seconds a request to the server may take.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=300))]
    pub request_timeout: u64,
}

impl OperatorArgs {
    pub fn client(&self) -> LockClient {
        self.connection
            .client(Duration::from_secs(self.request_timeout))
    }
}

/// Which primitive a name is of: a lock unless `--semaphore` or `--election` says otherwise.
#[derive(Debug, Clone, Copy, Args)]
#[group(multiple = false)]
pub struct PrimitiveArgs {
    /// NAME is a semaphore.
    #[arg(long)]
    pub semaphore: bool,

    /// NAME is an election.
    #[arg(long)]
    pub election: bool,
}

impl PrimitiveArgs {
    pub fn primitive(self) -> Primitive {
        match (self.semaphore, self.election) {
            (true, _) => Primitive::Semaphore,
            (_, true) => Primitive::Election,
            _ => Primitive::Lock,
        }
    }
}

/// Whether the command line `args` (the program first) names an operator command, so that a
/// usage error is answered with 64. A command comes first: `serve`'s options, the only ones
/// given without a command, conflict with every command.
pub fn is_operator_command(args: &[std::ffi::OsString]) -> bool {
    args.get(1)
        .is_some_and(|command| COMMANDS.iter().any(|name| command == name))
}

/// The exit status of a command's outcome: its status either way.
pub fn exit(outcome: Result<u8, u8>) -> ExitCode {
    ExitCode::from(match outcome {
        Ok(code) | Err(code) => code,
    })
}

/// Says on one line of stderr why the server gave no usable answer, and returns the exit
/// status for it: 69 unreachable or unavailable (5xx, 429, an answer not understood), 77 the
/// API key refused (401, or 403 for a right it lacks), 64 the input refused (400, 422), 1 not
/// found (404).
pub fn failed(program: &str, server: &str, error: &ClientError) -> u8 {
    let (code, line) = match error {
        ClientError::Problem(problem) => {
            let code = match problem.status {
                401 | 403 => UNAUTHORIZED,
                400 | 422 => INVALID_INPUT,
                404 => NOT_FOUND,
                _ => UNAVAILABLE,
            };
            let mut line = problem.detail.clone();
            let messages: Vec<&str> = problem
                .errors
                .iter()
                .map(|field| field.message.as_str())
                .filter(|message| !message.is_empty())
                .collect();
            if !messages.is_empty() {
                line = format!("{line} ({})", messages.join("; "));
            }
            if line.is_empty() {
                line = format!("{} {}", problem.status, problem.title);
            }
            (code, line)
        }
        ClientError::Transport(why) => (UNAVAILABLE, format!("no answer from {server}: {why}")),
        ClientError::Unexpected { status, .. } => (
            UNAVAILABLE,
            format!("an answer from {server} this client does not understand (status {status})"),
        ),
    };
    eprintln!("lockd {program}: {}", one_line(&line));
    code
}

/// `text` on one line: line breaks and other control characters become spaces.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Writes `text` to stdout; false when stdout is gone (a closed pipe), which ends the command
/// quietly rather than in a panic.
pub fn print(text: &str) -> bool {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .is_ok()
}

/// Prints `document` as one line of JSON.
pub fn print_json(document: &Value) -> bool {
    print(&format!("{document}\n"))
}

/// A listing command (`lockd locks`, `lockd sessions`): every item under `key` of the listing at
/// `path` whose names start with `prefix` (all, or the first `limit`), printed as JSON
/// (`{key: [...]}`), as `no live {key}` when there is none, or as `table`'s rows. A failure is
/// told as `lockd {key}: ...`.
///
/// # Errors
/// The exit status of the first request that got no usable answer (see [`failed`]); otherwise
/// 0 when some were listed, 1 when none.
pub fn list(
    common: &OperatorArgs,
    path: &str,
    key: &str,
    prefix: &str,
    limit: Option<u64>,
    table: fn(&[Value]) -> Table,
) -> Result<u8, u8> {
    let client = common.client();
    let query = [("prefix", prefix)];
    let items = follow_pages(&client, path, key, &query, limit)
        .map_err(|error| failed(key, client.base_url(), &error))?;
    if common.json {
        print_json(&json!({ key: items }));
    } else if items.is_empty() {
        print(&format!("no live {key}{}\n", under(prefix)));
    } else {
        print(&table(&items).render());
    }
    Ok(if items.is_empty() { NOT_FOUND } else { DONE })
}

/// Every item under `key` of the listing at `path` (`/locks`, `/sessions`, a history), with
/// `query`, following `next_cursor` from page to page: all of them, or the first `limit`.
///
/// # Errors
/// The first request that got no usable answer.
pub fn follow_pages(
    client: &LockClient,
    path: &str,
    key: &str,
    query: &[(&str, &str)],
    limit: Option<u64>,
) -> Result<Vec<Value>, ClientError> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let left = limit.map(|limit| limit.saturating_sub(items.len() as u64));
        let page_size = left.map_or(1_000, |left| left.min(1_000)).to_string();
        let mut page_query = query.to_vec();
        page_query.push(("limit", &page_size));
        if let Some(cursor) = &cursor {
            page_query.push(("cursor", cursor));
        }
        let page = client.document(path, &page_query)?;
        if let Some(Value::Array(page_items)) = page.get(key) {
            items.extend(page_items.iter().cloned());
        }
        if let Some(limit) = limit {
            items.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
            if items.len() as u64 >= limit {
                return Ok(items);
            }
        }
        match page.get("next_cursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok(items),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<std::ffi::OsString> {
        std::iter::once("lockd")
            .chain(args.iter().copied())
            .map(Into::into)
            .collect()
    }

    #[test]
    fn the_command_is_the_first_argument() {
        assert!(is_operator_command(&argv(&["locks", "--bogus"])));
        assert!(is_operator_command(&argv(&["fence", "x"])));
        assert!(!is_operator_command(&argv(&["run", "--bogus"])));
        assert!(!is_operator_command(&argv(&["--bind", "locks"])));
        assert!(!is_operator_command(&argv(&[])));
    }

    #[test]
    fn a_failure_is_one_line_with_the_problems_detail() {
        assert_eq!(one_line("a\nb\tc"), "a b c");
    }
}
