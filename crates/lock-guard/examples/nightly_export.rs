//! A nightly batch job that must never run twice at once, holding its lock with [`LockGuard`]
//! straight on the database lockd uses (no HTTP), and writing through a downstream store that
//! refuses stale fencing tokens.
//!
//! ```text
//! cargo run -p lock-guard --example nightly_export -- [DATABASE_URL] [OUTPUT_DIR]
//! ```
//! DATABASE_URL defaults to `$DATABASE_URL`, then `sqlite://lockd.db` (lockd's default file);
//! OUTPUT_DIR to `./nightly-export`.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use lock_domain::{FencingToken, Owner, ResourceName, SystemClock, Ttl};
use lock_guard::LockGuard;
use lock_service::LockService;
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

/// What the job is told to do.
pub struct ExportJob {
    pub database_url: DatabaseUrl,
    pub output_dir: PathBuf,
    pub parts: u32,
    /// Time each part takes (the "work").
    pub part_time: Duration,
}

/// A downstream store guarded by fencing tokens: it remembers the largest token it has seen and
/// refuses writes carrying a smaller one, so a job that lost its lock (paused, partitioned)
/// cannot overwrite the work of the job that took the lock after it.
///
/// A real store does the check and the write atomically (e.g. `UPDATE ... WHERE
/// last_token <= $token` in one transaction); this one is for one machine.
pub struct FencedDirectory {
    dir: PathBuf,
}

/// A write carrying a token older than one already seen.
#[derive(Debug)]
pub struct StaleToken {
    pub offered: i64,
    pub seen: i64,
}

impl std::fmt::Display for StaleToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "refused a write with fencing token {} (already saw {})",
            self.offered, self.seen
        )
    }
}

impl Error for StaleToken {}

impl FencedDirectory {
    pub fn open(dir: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }

    /// The largest token written with so far (0 before the first write).
    pub fn highest_token(&self) -> i64 {
        std::fs::read_to_string(self.dir.join(".fencing-token"))
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Writes `name` unless `token` is older than the largest seen.
    ///
    /// # Errors
    /// [`StaleToken`] (as the boxed error) for an old token; I/O errors.
    pub fn write(
        &self,
        token: FencingToken,
        name: &str,
        contents: &str,
    ) -> Result<(), Box<dyn Error>> {
        let seen = self.highest_token();
        if token.value() < seen {
            return Err(Box::new(StaleToken {
                offered: token.value(),
                seen,
            }));
        }
        std::fs::write(self.dir.join(".fencing-token"), token.value().to_string())?;
        std::fs::write(self.dir.join(name), contents)?;
        Ok(())
    }
}

/// Runs the export under the lock `report:nightly`; returns the fencing token it wrote with.
///
/// # Errors
/// The database cannot be opened, the lock is held by another run, the lease became unsafe
/// mid-run (the job stops before writing more), or the downstream store refused the token.
pub fn run(job: &ExportJob) -> Result<FencingToken, Box<dyn Error>> {
    let store = DieselLockRepository::open(
        &StoreConfig::new(job.database_url.clone()),
        Arc::new(SystemClock),
    )?;
    let repo = Arc::new(store);
    let owner = Owner::parse(&format!("nightly-export:{}", std::process::id()))?;
    let guard = LockGuard::acquire(
        LockService::over(repo),
        ResourceName::parse("report:nightly")?,
        owner,
        Ttl::parse(30, 86_400)?,
    )?;
    let output = FencedDirectory::open(&job.output_dir)?;
    for part in 1..=job.parts {
        std::thread::sleep(job.part_time);
        // Stop before a write the lease no longer covers; the fencing token catches the case
        // where the lease ran out between this check and the write.
        if !guard.is_safe() {
            return Err(format!("the lease is at risk before part {part}; stopping").into());
        }
        output.write(
            guard.fencing_token(),
            &format!("part-{part}.csv"),
            &format!("part,{part}\ntoken,{}\n", guard.fencing_token().value()),
        )?;
    }
    let token = guard.fencing_token();
    guard.release()?;
    Ok(token)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .or_else(|| std::env::var("DATABASE_URL").ok())
        .unwrap_or_else(|| "sqlite://lockd.db".to_owned());
    let database_url = match url.parse() {
        Ok(url) => url,
        Err(error) => {
            eprintln!("nightly_export: {error}");
            return ExitCode::from(64);
        }
    };
    let job = ExportJob {
        database_url,
        output_dir: PathBuf::from(args.next().unwrap_or_else(|| "nightly-export".to_owned())),
        parts: 3,
        part_time: Duration::from_millis(200),
    };
    match run(&job) {
        Ok(token) => {
            println!(
                "exported {} parts to {} with fencing token {}",
                job.parts,
                job.output_dir.display(),
                token.value()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("nightly_export: {error}");
            ExitCode::FAILURE
        }
    }
}
