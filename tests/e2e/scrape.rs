//! Reading `/metrics` in the end-to-end tests: one scrape, one series' value, and Prometheus's
//! own parser and linter (`promtool check metrics`, from Debian's `prometheus` package, which
//! `.ci/run` installs) accepting it.

use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::server::TestServer;

/// The text of one scrape of `/metrics`.
pub fn scrape(server: &TestServer) -> String {
    let reply = server.send("GET", "/metrics", None);
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.body.as_str().expect("the exposition text").to_owned()
}

/// The value of `series` (its name and labels exactly as exposed), `None` when absent.
pub fn value(scrape: &str, series: &str) -> Option<f64> {
    scrape.lines().find_map(|line| {
        let (name, value) = line.rsplit_once(' ')?;
        (name == series).then(|| value.parse().ok())?
    })
}

/// Asserts that `promtool check metrics` accepts `scrape`. Fails, never skips, when promtool
/// cannot run: the check is the point.
pub fn promtool_accepts(scrape: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| {
            panic!("promtool cannot run ({error}): install Debian's `prometheus` package, as .ci/run does")
        });
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(scrape.as_bytes())
        .expect("write to promtool");
    let output = child.wait_with_output().expect("promtool's answer");
    assert!(
        output.status.success(),
        "promtool check metrics failed ({}):\n{}{}\nThe exposition:\n{scrape}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
}
