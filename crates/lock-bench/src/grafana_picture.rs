//! `lock-bench --grafana-picture PATH` (`make grafana-picture`): a picture of the Grafana
//! dashboard's panels (`docs/grafana/lockd.json`) from a real run, where no Grafana is at hand.
//!
//! It starts lockd (the release build) on a SQLite file, runs a short mixed load over HTTP (locks
//! that clients wait for, shared locks beside a writer, semaphore permits, an election whose
//! leaders resign, sessions holding a lock, acquires refused at once), samples `/metrics` every
//! second, and draws each panel from the same queries as the dashboard: a `rate` is a counter's
//! increase over the last [`WINDOW`] samples, a `histogram_quantile` is interpolated in the
//! buckets' increases over that window, as Prometheus does.

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use plotters::prelude::*;

use crate::http::{Answer, HttpConnection};
use crate::lockd::{session, Lockd};

/// How many one-second samples a `rate` or a quantile spans (Grafana's `$__rate_interval` at a
/// 1 s scrape interval is a few samples).
const WINDOW: usize = 5;

/// One scrape: every sample's value, by its name and labels as exposed.
type Sample = HashMap<String, f64>;

/// Runs the load for `seconds` against lockd `binary` (its database under `work`) and draws the
/// panels to `path`.
///
/// # Errors
/// When lockd does not start, the load's connections fail, or the picture cannot be written.
pub fn run(
    runtime: &tokio::runtime::Runtime,
    binary: &Path,
    work: &Path,
    path: &Path,
    seconds: u64,
) -> io::Result<()> {
    let database = work.join("grafana-picture.db");
    let url = format!("sqlite://{}", database.display());
    let lockd = Lockd::start(binary, &url, &[])?;
    let samples = runtime.block_on(load_and_sample(&lockd.addr, seconds))?;
    drop(lockd);
    draw(&samples, path)?;
    println!(
        "drew {} from {} samples of /metrics",
        path.display(),
        samples.len()
    );
    Ok(())
}

/// Starts the load, samples `/metrics` every second for `seconds`, then stops the load.
async fn load_and_sample(addr: &str, seconds: u64) -> io::Result<Vec<(f64, Sample)>> {
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for worker in 0..12 {
        tasks.push(tokio::spawn(locks(
            addr.to_owned(),
            worker,
            start,
            Arc::clone(&stop),
        )));
    }
    for worker in 0..4 {
        tasks.push(tokio::spawn(shared(
            addr.to_owned(),
            worker,
            Arc::clone(&stop),
        )));
    }
    for worker in 0..5 {
        tasks.push(tokio::spawn(permits(
            addr.to_owned(),
            worker,
            Arc::clone(&stop),
        )));
    }
    for worker in 0..3 {
        tasks.push(tokio::spawn(campaigns(
            addr.to_owned(),
            worker,
            Arc::clone(&stop),
        )));
    }
    for worker in 0..3 {
        tasks.push(tokio::spawn(sessions(
            addr.to_owned(),
            worker,
            Arc::clone(&stop),
        )));
    }
    for worker in 0..2 {
        tasks.push(tokio::spawn(lapses(
            addr.to_owned(),
            worker,
            Arc::clone(&stop),
        )));
    }
    let mut metrics = HttpConnection::connect(addr).await?;
    let mut samples = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    for _ in 0..=seconds {
        tick.tick().await;
        let answer = metrics.request("GET", "/metrics", None).await?;
        let text = String::from_utf8_lossy(&answer.body).into_owned();
        samples.push((start.elapsed().as_secs_f64(), parse(&text)));
    }
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        match task.await {
            Ok(result) => result?,
            Err(error) => return Err(io::Error::other(error)),
        }
    }
    Ok(samples)
}

/// The samples of an exposition text.
fn parse(text: &str) -> Sample {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            Some((series.to_owned(), value.parse().ok()?))
        })
        .collect()
}

/// A small, fixed pseudo-random sequence per worker, so that runs look alike.
struct Dice(u64);

impl Dice {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % bound.max(1)
    }
}

async fn pause(millis: u64) {
    tokio::time::sleep(Duration::from_millis(millis)).await;
}

/// Exclusive locks on four names: most acquires wait (up to 2 s), some are refused at once; the
/// workers join one by one over the first part of the run, so contention grows.
async fn locks(addr: String, worker: u64, start: Instant, stop: Arc<AtomicBool>) -> io::Result<()> {
    let mut dice = Dice(worker + 1);
    let joins = Duration::from_secs(2 * worker);
    while start.elapsed() < joins && !stop.load(Ordering::Relaxed) {
        pause(100).await;
    }
    // Connected once it joins: lockd closes a keep-alive connection left idle for long.
    let mut conn = HttpConnection::connect(&addr).await?;
    let owner = format!("job-{worker}");
    while !stop.load(Ordering::Relaxed) {
        let name = format!("report-{}", dice.below(4));
        let wait = if dice.below(5) == 0 { 0 } else { 2 };
        let body = format!(r#"{{"owner":"{owner}","ttl_seconds":30,"wait_seconds":{wait}}}"#);
        let round = Round {
            acquire: &format!("/locks/{name}"),
            body: &body,
            won: granted,
            hold: (20, 280),
            release: &format!("/locks/{name}?owner={owner}"),
            rest: (50, 200),
        };
        round.play(&mut conn, &mut dice).await?;
    }
    Ok(())
}

/// Readers of one name, and now and then a writer among them.
async fn shared(addr: String, worker: u64, stop: Arc<AtomicBool>) -> io::Result<()> {
    let mut conn = HttpConnection::connect(&addr).await?;
    let mut dice = Dice(100 + worker);
    let owner = format!("reader-{worker}");
    while !stop.load(Ordering::Relaxed) {
        let mode = if worker == 0 && dice.below(3) == 0 {
            "exclusive"
        } else {
            "shared"
        };
        let body =
            format!(r#"{{"owner":"{owner}","ttl_seconds":30,"wait_seconds":2,"mode":"{mode}"}}"#);
        let round = Round {
            acquire: "/locks/catalogue",
            body: &body,
            won: granted,
            hold: (100, 400),
            release: &format!("/locks/catalogue?owner={owner}"),
            rest: (100, 300),
        };
        round.play(&mut conn, &mut dice).await?;
    }
    Ok(())
}

/// Five workers for two permits.
async fn permits(addr: String, worker: u64, stop: Arc<AtomicBool>) -> io::Result<()> {
    let mut conn = HttpConnection::connect(&addr).await?;
    let mut dice = Dice(200 + worker);
    let owner = format!("encoder-{worker}");
    while !stop.load(Ordering::Relaxed) {
        let body = format!(
            r#"{{"owner":"{owner}","ttl_seconds":30,"wait_seconds":2,"limit":2,"permits":1}}"#
        );
        let round = Round {
            acquire: "/semaphores/encoders",
            body: &body,
            won: granted,
            hold: (200, 600),
            release: &format!("/semaphores/encoders?owner={owner}"),
            rest: (100, 300),
        };
        round.play(&mut conn, &mut dice).await?;
    }
    Ok(())
}

/// Three candidates for one office: the leader serves 1 to 3 s and resigns.
async fn campaigns(addr: String, worker: u64, stop: Arc<AtomicBool>) -> io::Result<()> {
    let mut conn = HttpConnection::connect(&addr).await?;
    let mut dice = Dice(300 + worker);
    let candidate = format!("node-{worker}");
    while !stop.load(Ordering::Relaxed) {
        let body = format!(r#"{{"candidate":"{candidate}","ttl_seconds":30,"wait_seconds":3}}"#);
        let round = Round {
            acquire: "/elections/scheduler/campaign",
            body: &body,
            won: elected,
            hold: (1_000, 2_000),
            release: &format!("/elections/scheduler/leader?candidate={candidate}"),
            rest: (200, 500),
        };
        round.play(&mut conn, &mut dice).await?;
    }
    Ok(())
}

/// Sessions that hold a lock of their own for a few seconds, kept alive, then closed.
async fn sessions(addr: String, worker: u64, stop: Arc<AtomicBool>) -> io::Result<()> {
    let mut conn = HttpConnection::connect(&addr).await?;
    let mut dice = Dice(400 + worker);
    while !stop.load(Ordering::Relaxed) {
        let id = session::open(&mut conn, &format!("worker-{worker}"), 10).await?;
        let body = format!(r#"{{"session":"{id}"}}"#);
        let path = format!("/locks/partition-{worker}");
        conn.request("POST", &path, Some(body.as_bytes())).await?;
        for _ in 0..(2 + dice.below(4)) {
            pause(1_000).await;
            session::keep_alive(&mut conn, &id).await?;
        }
        session::close(&mut conn, &id).await?;
        pause(500 + dice.below(1_500)).await;
    }
    Ok(())
}

/// Batch jobs that die holding their lock: each takes `nightly-export` for 1 to 3 s, waiting for
/// it, and never releases it, so each grant after the first takes over a lease that ran out (the
/// hold panel's `expired`, counted within about 5 s).
async fn lapses(addr: String, worker: u64, stop: Arc<AtomicBool>) -> io::Result<()> {
    let mut conn = HttpConnection::connect(&addr).await?;
    let mut dice = Dice(500 + worker);
    let owner = format!("export-{worker}");
    while !stop.load(Ordering::Relaxed) {
        let ttl = 1 + dice.below(3);
        let body = format!(r#"{{"owner":"{owner}","ttl_seconds":{ttl},"wait_seconds":4}}"#);
        conn.request("POST", "/locks/nightly-export", Some(body.as_bytes()))
            .await?;
        pause(200 + dice.below(500)).await;
    }
    Ok(())
}

/// One round of a load worker: ask at `acquire` with `body`; when `won` says the answer gave
/// it, hold it for `hold` and let it go at `release`; then rest for `rest`. Each time is in
/// milliseconds, a base and a spread the worker's dice picks within.
struct Round<'a> {
    acquire: &'a str,
    body: &'a str,
    won: fn(&Answer) -> bool,
    hold: (u64, u64),
    release: &'a str,
    rest: (u64, u64),
}

impl Round<'_> {
    async fn play(&self, conn: &mut HttpConnection, dice: &mut Dice) -> io::Result<()> {
        let answer = conn
            .request("POST", self.acquire, Some(self.body.as_bytes()))
            .await?;
        if (self.won)(&answer) {
            pause(self.hold.0 + dice.below(self.hold.1)).await;
            conn.request("DELETE", self.release, None).await?;
        }
        pause(self.rest.0 + dice.below(self.rest.1)).await;
        Ok(())
    }
}

/// Whether an acquire's answer says it was granted.
fn granted(answer: &Answer) -> bool {
    answer.status == 200 && says(&answer.body, "acquired")
}

/// Whether a campaign's answer says it was elected.
fn elected(answer: &Answer) -> bool {
    says(&answer.body, "elected")
}

/// Whether `body` is a JSON object whose `key` is true.
fn says(body: &[u8], key: &str) -> bool {
    serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|body| body[key] == true)
}

/// A series of one panel: its legend, its points, and its colour and width when they say
/// something (a quantile's primitive and rank).
struct Line {
    legend: String,
    points: Vec<(f64, f64)>,
    style: Option<(RGBColor, u32)>,
}

/// Whether `series` (name and labels as exposed) is of `name` and has every `label="value"` of
/// `labels` (a value may be several, `|`-separated, as a `=~` matcher).
fn matches(series: &str, name: &str, labels: &[(&str, &str)]) -> bool {
    let (series_name, rest) = series.split_once('{').unwrap_or((series, ""));
    series_name == name
        && labels.iter().all(|(label, values)| {
            values
                .split('|')
                .any(|value| rest.contains(&format!("{label}=\"{value}\"")))
        })
}

/// The value of `label` in `series`.
fn label<'a>(series: &'a str, label: &str) -> Option<&'a str> {
    let start = series.find(&format!("{label}=\""))? + label.len() + 2;
    let end = series[start..].find('"')? + start;
    Some(&series[start..end])
}

/// `sum(rate(name{labels}[window]))` at each sample.
fn rate(samples: &[(f64, Sample)], name: &str, labels: &[(&str, &str)]) -> Vec<(f64, f64)> {
    let total = |sample: &Sample| -> f64 {
        sample
            .iter()
            .filter(|(series, _)| matches(series, name, labels))
            .map(|(_, value)| value)
            .sum()
    };
    windows(samples)
        .map(|(before, now)| {
            let increase = (total(&now.1) - total(&before.1)).max(0.0);
            (now.0, increase / (now.0 - before.0))
        })
        .collect()
}

/// `sum(name{labels})` at each sample.
fn gauge(samples: &[(f64, Sample)], name: &str, labels: &[(&str, &str)]) -> Vec<(f64, f64)> {
    samples
        .iter()
        .map(|(at, sample)| {
            let total = sample
                .iter()
                .filter(|(series, _)| matches(series, name, labels))
                .map(|(_, value)| value)
                .sum();
            (*at, total)
        })
        .collect()
}

/// Each sample with the one [`WINDOW`] samples before it.
fn windows(samples: &[(f64, Sample)]) -> impl Iterator<Item = (&(f64, Sample), &(f64, Sample))> {
    samples
        .iter()
        .enumerate()
        .skip(WINDOW)
        .map(move |(i, now)| (&samples[i - WINDOW], now))
}

/// `histogram_quantile(q, sum by (le, primitive) (rate(family_bucket{outcome=~outcomes}[window])))`
/// for q = 0.5, 0.9, 0.99, per primitive with observations in the run; no point where a window
/// saw none.
fn quantiles(samples: &[(f64, Sample)], family: &str, outcomes: &str) -> Vec<Line> {
    let bucket = format!("{family}_bucket");
    let primitives = ["lock", "shared_lock", "semaphore", "election", "set"];
    let mut lines = Vec::new();
    for (n, primitive) in primitives.into_iter().enumerate() {
        let labels = [("primitive", primitive), ("outcome", outcomes)];
        // Each window's increase of each bucket, summed over the outcomes, by bound.
        let increases: Vec<(f64, Vec<(f64, f64)>)> = windows(samples)
            .map(|(before, now)| {
                let mut by_bound: HashMap<String, f64> = HashMap::new();
                for (series, value) in &now.1 {
                    if matches(series, &bucket, &labels) {
                        let then = before.1.get(series).copied().unwrap_or(0.0);
                        let le = label(series, "le").unwrap_or("+Inf").to_owned();
                        *by_bound.entry(le).or_default() += (value - then).max(0.0);
                    }
                }
                let mut buckets: Vec<(f64, f64)> = by_bound
                    .into_iter()
                    .map(|(le, count)| (le.parse().unwrap_or(f64::INFINITY), count))
                    .collect();
                buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
                (now.0, buckets)
            })
            .collect();
        if increases
            .iter()
            .all(|(_, buckets)| buckets.last().is_none_or(|(_, count)| *count == 0.0))
        {
            continue;
        }
        // One colour a primitive; p50 thin, p99 thick.
        for (width, q) in [(1, 0.5), (2, 0.9), (4, 0.99)] {
            let points = increases
                .iter()
                .filter_map(|(at, buckets)| Some((*at, histogram_quantile(q, buckets)?)))
                .collect();
            lines.push(Line {
                legend: format!("p{} {primitive}", (q * 100.0) as u32),
                points,
                style: Some((PALETTE[n], width)),
            });
        }
    }
    lines
}

/// Prometheus's `histogram_quantile` over cumulative `buckets` (upper bound, count), sorted:
/// linear within the bucket the rank falls in; the highest finite bound when it falls in +Inf;
/// `None` without observations.
fn histogram_quantile(q: f64, buckets: &[(f64, f64)]) -> Option<f64> {
    let total = buckets.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let rank = q * total;
    let mut lower = (0.0, 0.0);
    for &(bound, count) in buckets {
        if count >= rank {
            if bound.is_infinite() {
                return Some(lower.0);
            }
            let within = count - lower.1;
            let fraction = if within > 0.0 {
                (rank - lower.1) / within
            } else {
                1.0
            };
            return Some(lower.0 + (bound - lower.0) * fraction);
        }
        lower = (bound, count);
    }
    Some(lower.0)
}

/// A panel: its title, its lines, and whether its axis is logarithmic (seconds).
struct Panel {
    title: &'static str,
    unit: &'static str,
    lines: Vec<Line>,
    log: bool,
}

/// The dashboard's panels, in its order, from `samples`.
fn panels(samples: &[(f64, Sample)]) -> Vec<Panel> {
    let line = |legend: &str, points: Vec<(f64, f64)>| Line {
        legend: legend.to_owned(),
        points,
        style: None,
    };
    let acquire = "lockd_acquire_total";
    let semaphore = "lockd_semaphore_operations_total";
    let election = "lockd_election_operations_total";
    let contended = "lockd_contended_acquires_total";
    let mut refusals = vec![
        line(
            "lock",
            rate(
                samples,
                acquire,
                &[("outcome", "held|timed_out|mode_mismatch|delayed")],
            ),
        ),
        line(
            "semaphore",
            rate(
                samples,
                semaphore,
                &[
                    ("operation", "acquire"),
                    (
                        "outcome",
                        "unavailable|timed_out|limit_mismatch|permits_mismatch",
                    ),
                ],
            ),
        ),
        line(
            "election",
            rate(
                samples,
                election,
                &[
                    ("operation", "campaign"),
                    ("outcome", "not_elected|timed_out"),
                ],
            ),
        ),
    ];
    for primitive in ["lock", "shared_lock", "semaphore", "election", "set"] {
        let points = rate(samples, contended, &[("primitive", primitive)]);
        if points.iter().any(|(_, value)| *value > 0.0) {
            refusals.push(line(&format!("contended {primitive}"), points));
        }
    }
    vec![
        Panel {
            title: "Grants per second by primitive",
            unit: "/s",
            log: false,
            lines: vec![
                line(
                    "lock",
                    rate(
                        samples,
                        acquire,
                        &[("outcome", "granted|waited_then_granted")],
                    ),
                ),
                line(
                    "semaphore",
                    rate(
                        samples,
                        semaphore,
                        &[
                            ("operation", "acquire"),
                            ("outcome", "granted|waited_then_granted"),
                        ],
                    ),
                ),
                line(
                    "election",
                    rate(
                        samples,
                        election,
                        &[
                            ("operation", "campaign"),
                            ("outcome", "elected|waited_then_elected"),
                        ],
                    ),
                ),
            ],
        },
        Panel {
            title: "Refusals per second by primitive",
            unit: "/s",
            log: false,
            lines: refusals,
        },
        Panel {
            title: "Wait time until granted (quantiles)",
            unit: "s",
            log: true,
            lines: quantiles(samples, "lockd_wait_seconds", "granted"),
        },
        Panel {
            title: "Hold time (quantiles)",
            unit: "s",
            log: true,
            lines: quantiles(
                samples,
                "lockd_hold_seconds",
                "released|force-released|expired",
            ),
        },
        Panel {
            title: "Live leases and sessions",
            unit: "",
            log: false,
            lines: vec![
                line("live locks", gauge(samples, "lockd_live_locks", &[])),
                line("live sessions", gauge(samples, "lockd_sessions", &[])),
            ],
        },
        Panel {
            title: "Waiters",
            unit: "",
            log: false,
            lines: vec![
                line("waiting now", gauge(samples, "lockd_live_waiters", &[])),
                line(
                    "rejected/s",
                    rate(samples, "lockd_waiters_rejected_total", &[]),
                ),
            ],
        },
        Panel {
            title: "Database pool and errors",
            unit: "",
            log: false,
            lines: vec![
                line(
                    "pool in_use",
                    gauge(samples, "lockd_db_pool_connections", &[("state", "in_use")]),
                ),
                line(
                    "pool idle",
                    gauge(samples, "lockd_db_pool_connections", &[("state", "idle")]),
                ),
                line(
                    "503/s",
                    rate(samples, "lockd_http_requests_total", &[("status", "503")]),
                ),
                line(
                    "failed counts/s",
                    rate(samples, "lockd_live_locks_count_failures_total", &[]),
                ),
            ],
        },
        Panel {
            title: "Dropped log lines",
            unit: "",
            log: false,
            lines: vec![line(
                "dropped",
                rate(samples, "lockd_log_lines_dropped_total", &[])
                    .into_iter()
                    .map(|(at, per_second)| (at, per_second * WINDOW as f64))
                    .collect(),
            )],
        },
    ]
}

/// Grafana's first colours, in its order.
const PALETTE: [RGBColor; 8] = [
    RGBColor(115, 191, 105),
    RGBColor(242, 204, 12),
    RGBColor(87, 148, 242),
    RGBColor(255, 120, 10),
    RGBColor(242, 73, 92),
    RGBColor(184, 119, 217),
    RGBColor(112, 219, 237),
    RGBColor(250, 100, 0),
];

/// Draws the panels two by two, as the dashboard lays them out.
fn draw(samples: &[(f64, Sample)], path: &Path) -> io::Result<()> {
    crate::chart::register_sans_serif()?;
    let fail = |error: &dyn std::fmt::Display| io::Error::other(error.to_string());
    let panels = panels(samples);
    let end = samples.last().map_or(1.0, |(at, _)| *at).ceil();
    let (width, height) = (1600u32, 420 * panels.len().div_ceil(2) as u32 + 60);
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    let background = RGBColor(24, 27, 31);
    let text = RGBColor(204, 204, 220);
    root.fill(&background).map_err(|e| fail(&e))?;
    let (title, body) = root.split_vertically(60);
    title
        .draw(&Text::new(
            format!("lockd (docs/grafana/lockd.json), from a {end:.0} s mixed load on one lockd (SQLite)"),
            (20, 18),
            ("sans-serif", 24).into_font().color(&text),
        ))
        .map_err(|e| fail(&e))?;
    let cells = body.split_evenly((panels.len().div_ceil(2), 2));
    for (panel, cell) in panels.iter().zip(cells.iter()) {
        let cell = cell.margin(8, 8, 8, 8);
        cell.fill(&RGBColor(17, 18, 23)).map_err(|e| fail(&e))?;
        let top = panel
            .lines
            .iter()
            .flat_map(|line| line.points.iter().map(|(_, value)| *value))
            .filter(|value| value.is_finite())
            .fold(0.0f64, f64::max);
        let mut builder = ChartBuilder::on(&cell);
        builder
            .caption(panel.title, ("sans-serif", 20).into_font().color(&text))
            .margin(12)
            .x_label_area_size(28)
            .y_label_area_size(64);
        let label_style = ("sans-serif", 13).into_font().color(&text);
        let grid = RGBColor(50, 52, 58);
        let legend = |chart_lines: &[Line]| -> Vec<(String, ShapeStyle)> {
            chart_lines
                .iter()
                .enumerate()
                .map(|(i, line)| {
                    let (color, width) = line.style.unwrap_or((PALETTE[i % PALETTE.len()], 2));
                    (line.legend.clone(), color.stroke_width(width))
                })
                .collect()
        };
        if panel.log {
            let low = panel
                .lines
                .iter()
                .flat_map(|line| line.points.iter().map(|(_, value)| *value))
                .filter(|value| *value > 0.0)
                .fold(f64::INFINITY, f64::min);
            let low = if low.is_finite() { low / 2.0 } else { 0.001 };
            let mut chart = builder
                .build_cartesian_2d(0.0..end, (low..(top * 2.0).max(low * 10.0)).log_scale())
                .map_err(|e| fail(&e))?;
            chart
                .configure_mesh()
                .bold_line_style(grid)
                .light_line_style(grid.mix(0.3))
                .axis_style(grid)
                .label_style(label_style.clone())
                .y_desc(panel.unit)
                .x_desc("seconds into the run")
                .draw()
                .map_err(|e| fail(&e))?;
            for (line, (name, style)) in panel.lines.iter().zip(legend(&panel.lines)) {
                let points = line.points.iter().copied().filter(|(_, v)| *v > 0.0);
                chart
                    .draw_series(LineSeries::new(points, style))
                    .map_err(|e| fail(&e))?
                    .label(name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(background.mix(0.8))
                .border_style(grid)
                .label_font(label_style.clone())
                .draw()
                .map_err(|e| fail(&e))?;
        } else {
            let mut chart = builder
                .build_cartesian_2d(0.0..end, 0.0..(top * 1.15).max(1.0))
                .map_err(|e| fail(&e))?;
            chart
                .configure_mesh()
                .bold_line_style(grid)
                .light_line_style(grid.mix(0.3))
                .axis_style(grid)
                .label_style(label_style.clone())
                .y_desc(panel.unit)
                .x_desc("seconds into the run")
                .draw()
                .map_err(|e| fail(&e))?;
            for (line, (name, style)) in panel.lines.iter().zip(legend(&panel.lines)) {
                chart
                    .draw_series(LineSeries::new(line.points.iter().copied(), style))
                    .map_err(|e| fail(&e))?
                    .label(name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(background.mix(0.8))
                .border_style(grid)
                .label_font(label_style.clone())
                .draw()
                .map_err(|e| fail(&e))?;
        }
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::histogram_quantile;

    #[test]
    fn quantiles_are_interpolated_as_prometheus_does() {
        // 10 observations: 4 up to 0.1 s, 6 more up to 1 s, none above.
        let buckets = [(0.1, 4.0), (1.0, 10.0), (f64::INFINITY, 10.0)];
        let median = histogram_quantile(0.5, &buckets).unwrap();
        assert!((median - 0.25).abs() < 1e-9, "{median}");
        let low = histogram_quantile(0.2, &buckets).unwrap();
        assert!((low - 0.05).abs() < 1e-9, "{low}");
        // In +Inf: the highest finite bound.
        let over = [(0.1, 0.0), (1.0, 1.0), (f64::INFINITY, 3.0)];
        assert_eq!(histogram_quantile(0.99, &over), Some(1.0));
        assert_eq!(
            histogram_quantile(0.5, &[(1.0, 0.0), (f64::INFINITY, 0.0)]),
            None
        );
    }
}
