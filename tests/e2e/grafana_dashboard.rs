//! The Grafana dashboard (`docs/grafana/lockd.json`) names only metrics lockd exports: every
//! metric its PromQL queries use appears in a real scrape of a live lockd, after locks, shared
//! locks, semaphores, elections, sets, sessions and a contended wait have been exercised, and
//! promtool accepts that scrape.

use std::collections::BTreeSet;
use std::path::Path;

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::scrape::{promtool_accepts, scrape};
use crate::server::TestServer;

on_both_backends!(every_metric_the_dashboard_queries_is_exported);

/// PromQL's words that are not metric names: aggregations, functions, keywords.
const PROMQL_WORDS: &[&str] = &[
    "sum",
    "min",
    "max",
    "avg",
    "count",
    "rate",
    "irate",
    "increase",
    "histogram_quantile",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "bool",
    "and",
    "or",
    "unless",
    "offset",
    "clamp_min",
    "abs",
    "vector",
    "label_replace",
];

/// The dashboard, as committed.
fn dashboard() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/grafana/lockd.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("read {}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Every PromQL expression of `dashboard`: its panels' targets (rows' nested panels too) and its
/// query variables.
fn expressions(dashboard: &Value) -> Vec<String> {
    fn panels(list: &Value, out: &mut Vec<String>) {
        for panel in list.as_array().into_iter().flatten() {
            for target in panel["targets"].as_array().into_iter().flatten() {
                if let Some(expr) = target["expr"].as_str() {
                    out.push(expr.to_owned());
                }
            }
            panels(&panel["panels"], out);
        }
    }
    let mut out = Vec::new();
    panels(&dashboard["panels"], &mut out);
    for variable in dashboard["templating"]["list"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if variable["type"] == "query" {
            if let Some(query) = variable["query"].as_str() {
                out.push(query.to_owned());
            }
        }
    }
    out
}

/// The metric names `expr` selects: what is left once string literals, label matchers
/// (`{…}`), ranges (`[…]`), numbers, grouping labels (`by (…)`) and PromQL's own words are
/// taken out. A word PromQL does not know is taken for a metric name, so a misspelt function
/// fails the check too.
fn metric_names(expr: &str) -> BTreeSet<String> {
    let mut bare = String::with_capacity(expr.len());
    let mut depth_brace = 0;
    let mut depth_bracket = 0;
    let mut quote = None;
    for c in expr.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, '{') => depth_brace += 1,
            (None, '}') => depth_brace -= 1,
            (None, '[') => depth_bracket += 1,
            (None, ']') => depth_bracket -= 1,
            (None, c) if depth_brace == 0 && depth_bracket == 0 => bare.push(c),
            (None, _) => {}
        }
        // A separator where something was taken out, so words do not join.
        if (depth_brace > 0 || depth_bracket > 0 || quote.is_some()) && !bare.ends_with(' ') {
            bare.push(' ');
        }
    }
    // The labels of `by (…)`, `without (…)`, `on (…)` and `ignoring (…)`.
    let mut in_group = BTreeSet::new();
    for keyword in ["by", "without", "on", "ignoring"] {
        let mut rest = bare.as_str();
        while let Some(at) = find_word(rest, keyword) {
            let after = rest[at + keyword.len()..].trim_start();
            if let Some(inner) = after.strip_prefix('(') {
                let end = inner.find(')').unwrap_or(inner.len());
                for label in inner[..end].split(',') {
                    in_group.insert(label.trim().to_owned());
                }
            }
            rest = &rest[at + keyword.len()..];
        }
    }
    let mut names: BTreeSet<String> = bare
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|word| !word.is_empty())
        .filter(|word| !word.starts_with(|c: char| c.is_ascii_digit()))
        .filter(|word| !PROMQL_WORDS.contains(word))
        .map(str::to_owned)
        .collect();
    names.retain(|name| !in_group.contains(name));
    names
}

/// Where `word` stands alone in `text`.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(at) = text[from..].find(word).map(|at| at + from) {
        let before = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let end = at + word.len();
        let after =
            end >= bytes.len() || !(bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_');
        if before && after {
            return Some(at);
        }
        from = end;
    }
    None
}

/// The names of the samples of `scrape`, and the families declared histograms.
fn exported(scrape: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut samples = BTreeSet::new();
    let mut histograms = BTreeSet::new();
    for line in scrape.lines() {
        if let Some(declared) = line.strip_prefix("# TYPE ") {
            if let Some(family) = declared.strip_suffix(" histogram") {
                histograms.insert(family.to_owned());
            }
        } else if !line.starts_with('#') && !line.is_empty() {
            let end = line.find(['{', ' ']).unwrap_or(line.len());
            samples.insert(line[..end].to_owned());
        }
    }
    (samples, histograms)
}

/// The names in `expressions` that `scrape` does not export: a name must be a sample's name,
/// and one ending in `_bucket`, `_sum` or `_count` of a histogram family must be that family's
/// (a counter's `_count`-named sample would not do for a `histogram_quantile`).
fn missing(expressions: &[String], scrape: &str) -> Vec<String> {
    let (samples, histograms) = exported(scrape);
    let mut missing = Vec::new();
    for expr in expressions {
        for name in metric_names(expr) {
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|suffix| name.strip_suffix(suffix));
            let known = match family {
                Some(family) if name.ends_with("_bucket") => {
                    histograms.contains(family) && samples.contains(&name)
                }
                _ => samples.contains(&name),
            };
            if !known {
                missing.push(format!("{name} (in {expr})"));
            }
        }
    }
    missing
}

fn ok(reply: &crate::server::Reply) {
    assert!(
        reply.status < 300 && reply.body["acquired"] != false,
        "{reply:?}"
    );
}

/// Exercises every primitive lockd serves, so that every family has its series.
fn exercise(server: &TestServer) {
    ok(&server.acquire("dash-lock", "a", 30));
    // Refused at once (contended), then a wait that gives up (a measured wait).
    server.acquire("dash-lock", "b", 30);
    server.send(
        "POST",
        "/locks/dash-lock",
        Some(&json!({"owner": "c", "ttl_seconds": 30, "wait_seconds": 1})),
    );
    assert_eq!(server.release("dash-lock", "a").status, 204);
    ok(&server.send(
        "POST",
        "/locks/dash-read",
        Some(&json!({"owner": "r", "ttl_seconds": 30, "mode": "shared"})),
    ));
    ok(&server.send(
        "POST",
        "/locks",
        Some(&json!({"owner": "s", "ttl_seconds": 30,
                     "locks": [{"resource": "dash-x"}, {"resource": "dash-y"}]})),
    ));
    ok(&server.send(
        "POST",
        "/semaphores/dash-sem",
        Some(&json!({"owner": "p", "ttl_seconds": 30, "limit": 2, "permits": 1})),
    ));
    let campaign = server.send(
        "POST",
        "/elections/dash-office/campaign",
        Some(&json!({"candidate": "e", "ttl_seconds": 30, "value": "10.0.0.1"})),
    );
    assert_eq!(campaign.body["elected"], true, "{campaign:?}");
    let session = server.send(
        "POST",
        "/sessions",
        Some(&json!({"ttl_seconds": 30, "owner": "w"})),
    );
    assert_eq!(session.status, 201, "{session:?}");
    let id = session.body["session"]["id"].as_str().expect("an id");
    let kept = server.send("POST", &format!("/sessions/{id}/keepalive"), None);
    assert_eq!(kept.status, 200, "{kept:?}");
}

fn every_metric_the_dashboard_queries_is_exported(db: TestDatabase) {
    let dashboard = dashboard();
    let expressions = expressions(&dashboard);
    assert!(expressions.len() >= 10, "{expressions:?}");
    let templating = dashboard["templating"]["list"]
        .as_array()
        .expect("variables");
    assert!(
        templating
            .iter()
            .any(|variable| variable["type"] == "datasource" && variable["query"] == "prometheus"),
        "a Prometheus datasource variable: {templating:?}"
    );

    let server = TestServer::start(&db, &[]);
    exercise(&server);
    let text = scrape(&server);
    let missing_now = missing(&expressions, &text);
    assert!(
        missing_now.is_empty(),
        "the dashboard queries metrics lockd does not export: {missing_now:#?}\nThe scrape:\n{text}"
    );
    promtool_accepts(&text);

    // The check catches a name lockd does not export, and a histogram's suffix on a counter.
    let wrong = [
        "sum(rate(lockd_acquires_granted_total[5m]))".to_owned(),
        "histogram_quantile(0.9, sum by (le) (rate(lockd_acquire_total_bucket[5m])))".to_owned(),
    ];
    assert_eq!(
        missing(&wrong, &text).len(),
        2,
        "{:?}",
        missing(&wrong, &text)
    );
}

#[test]
fn metric_names_are_read_out_of_promql() {
    let names = metric_names(
        r#"histogram_quantile(0.99, sum by (le, primitive) (rate(lockd_wait_seconds_bucket{outcome=~"granted|x"}[$__rate_interval])))"#,
    );
    assert_eq!(
        names,
        BTreeSet::from(["lockd_wait_seconds_bucket".to_owned()])
    );
    let names = metric_names(
        r#"sum(lockd_live_waiters) / max(lockd_live_locks{state="a b"}) or vector(0)"#,
    );
    assert_eq!(
        names,
        BTreeSet::from([
            "lockd_live_locks".to_owned(),
            "lockd_live_waiters".to_owned()
        ])
    );
}
