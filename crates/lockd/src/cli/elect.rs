//! `lockd elect`: lead an election while a command runs. The machinery is `lockd run`'s (the
//! renewal thread, the keeper, the kill-before-expiry timing); only what is held differs.

use clap::Args;

use super::{RunArgs, ServerArgs};

/// How long `lockd elect` campaigns without `--wait`: for as good as ever (a hundred years).
const FOREVER_SECONDS: u64 = 100 * 365 * 86_400;

#[derive(Debug, Clone, Args)]
pub struct ElectArgs {
    #[command(flatten)]
    pub connection: ServerArgs,

    /// The election to campaign in.
    #[arg(long)]
    pub election: String,

    /// Who campaigns: an identity, never shared by two candidates [default: <host name>:<pid of
    /// lockd elect>:<16 random hex digits>, new for every invocation].
    #[arg(long)]
    pub candidate: Option<String>,

    /// The value to proclaim once elected: JSON (`'{"address": "10.0.0.7:8080"}'`), or any
    /// other text, sent as a JSON string.
    #[arg(long)]
    pub value: Option<String>,

    /// Lease length in seconds; the leader renews it every ttl/3.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(1..=86_400))]
    pub ttl: u32,

    /// Seconds to campaign while another candidate leads before exiting 75 [default: campaign
    /// until elected].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub wait: Option<u64>,

    /// Seconds between SIGTERM and SIGKILL when leadership is at risk; at most ttl/4, so that
    /// both fit inside the lease.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(0..=3_600))]
    pub kill_grace: u64,

    /// Seconds a request to the server may take (campaign, resign; a renewal gets less).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=300))]
    pub request_timeout: u64,

    /// Campaign and lead under a session of --ttl (kept alive every ttl/3 while campaigning and
    /// leading, ended at the end) instead of on a lease of its own; the command gets
    /// LOCKD_SESSION too.
    #[arg(long)]
    pub session: bool,

    /// The command and its arguments, after `--`.
    #[arg(required = true, last = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
}

impl ElectArgs {
    /// The value as JSON: the text itself when it is JSON, else the text as a JSON string.
    pub fn value_json(&self) -> Option<serde_json::Value> {
        self.value.as_ref().map(|text| {
            serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.clone()))
        })
    }

    /// `lockd run`'s options for this election.
    pub fn into_run(self) -> RunArgs {
        let election = crate::run::Target::Election {
            name: self.election.clone(),
            value: self.value_json(),
        };
        RunArgs {
            connection: self.connection,
            resource: Vec::new(),
            semaphore: None,
            limit: None,
            permits: 1,
            owner: self.candidate,
            ttl: self.ttl,
            wait: self.wait.unwrap_or(FOREVER_SECONDS),
            kill_grace: self.kill_grace,
            request_timeout: self.request_timeout,
            session: self.session,
            command: self.command,
            election: Some(election),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::{Cli, Command};
    use crate::run::Target;

    fn elect(args: &[&str]) -> crate::cli::RunArgs {
        let mut argv = vec!["lockd", "elect"];
        argv.extend_from_slice(args);
        match Cli::try_parse_from(argv).expect("parses").command {
            Some(Command::Elect(args)) => args.into_run(),
            other => panic!("not elect: {other:?}"),
        }
    }

    #[test]
    fn elect_is_run_with_an_election() {
        let run = elect(&["--election", "scheduler", "--", "sleep", "5"]);
        assert_eq!(
            run.targets(),
            [Target::Election {
                name: "scheduler".into(),
                value: None
            }]
        );
        assert!(!run.uses_session());
        assert!(elect(&["--election", "s", "--session", "--", "true"]).uses_session());
        assert_eq!((run.ttl, run.kill_grace), (15, 2));
        assert!(run.wait > 86_400 * 365, "campaigns until elected");
        let run = elect(&[
            "--election",
            "s",
            "--candidate",
            "node-a",
            "--value",
            "10.0.0.7:8080",
            "--ttl",
            "6",
            "--wait",
            "3",
            "--",
            "true",
        ]);
        assert_eq!(run.owner.as_deref(), Some("node-a"));
        assert_eq!((run.ttl, run.wait), (6, 3));
        let [Target::Election { value, .. }] = &run.targets()[..] else {
            panic!("an election");
        };
        assert_eq!(value, &Some(serde_json::json!("10.0.0.7:8080")));
        let run = elect(&["--election", "s", "--value", r#"{"a": 1}"#, "--", "true"]);
        let [Target::Election { value, .. }] = &run.targets()[..] else {
            panic!("an election");
        };
        assert_eq!(value, &Some(serde_json::json!({"a": 1})));
        assert!(Cli::try_parse_from(["lockd", "elect", "--", "true"]).is_err());
        assert!(Cli::try_parse_from(["lockd", "elect", "--election", "s"]).is_err());
    }
}
