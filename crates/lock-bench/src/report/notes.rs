//! The report's fixed text: what the tables mean and where lockd's time goes.

/// What the tables mean and how lockd spends its time; no figures here (they all come from the
/// run above).
pub(super) const NOTES: &str = "
## How to read this

- Every system is driven by the same client code (`crates/lock-bench/src/workload.rs`): 64
  concurrent clients on one connection each, HTTP/1.1 keep-alive for lockd and etcd's JSON
  gateway, RESP for Redis, the PostgreSQL wire protocol with prepared statements for the raw
  PostgreSQL ceiling. Client and servers share the same 2 cores, so every system pays for its
  client too; the CPU table shows how much.
- The `HTTP ceiling` row is an actix-web server (same framework, same worker count as lockd)
  that answers lockd's acquire and release requests with fixed bodies and stores nothing,
  driven by lockd's own client: the most any lockd cycle (two HTTP requests) could reach on this
  machine, whatever the storage.
- The `raw SQLite` and `raw PostgreSQL` rows are storage ceilings, without HTTP and without
  lockd: a load generator in lock-bench (`raw_sqlite.rs`, `raw_postgres.rs`) sends its own
  minimal compare-and-set statements, shaped like lockd's (one statement per acquire and per
  release, on lockd's table with the indexes and triggers lockd's migrations create, the fencing
  token drawn inside the acquire), each committed on its own: what a careful program without
  group commit gets from the database. They are not lockd's statements (those stay private to
  its store, and on PostgreSQL lockd sends many requests as one batched statement), so these rows
  show what one lock operation costs the storage, not what lockd's SQL costs. The raw SQLite
  ceiling uses one connection in process (an fsync per statement with `synchronous = FULL`; with
  `NORMAL`, only at checkpoints); the raw PostgreSQL one, a connection per client with prepared
  statements. lockd commits the writes of all concurrent requests together (group commit on
  SQLite, one batch statement on PostgreSQL) and answers each request only after the commit that
  holds it, so every acknowledged grant is durable (`synchronous = FULL`).
- Which system runs which workload is one table, `crates/lock-bench/src/table.rs`.
- W5 starts two lockd processes on one database. For each handoff a holder takes a lock, a
  waiter asks for it with `wait_seconds` (on the holder's instance, or on the other one) and
  stands in line, and the holder releases; the latency runs from sending the release to the
  waiter's grant arriving, so it includes the release's own durable commit and the waiter's.
- W7 (a read/write lock) has anchors of its own. Redis runs a read/write lock in the manner of
  Redisson's `RReadWriteLock` (`redis/read_write.rs`): a hash with a mode field and a field per
  holder carrying its lease's end, one Lua script per operation, a published message when the
  lock is freed that waiting clients retry on; as in Redisson, a waiting writer does not hold
  back readers, and there are no fencing tokens. Raw PostgreSQL runs the statements of lockd's
  shared locks (`raw_postgres/read_write.rs`: a transaction per operation holding the lock's
  `distributed_locks` row `FOR UPDATE`, the readers' leases in `shared_holders`), plus the least
  of what one lockd process keeps in memory (a count of waiting writers that holds back later
  readers, a wake-up on each release that frees the lock), so that lockd's ratio to it is what
  lockd itself costs. lockd serves every acquire that waits through the lock's FIFO queue, one
  attempt at a time.
- W3 preloads the live locks straight into the database before lockd starts, then runs W1; the
  RSS column is lockd's resident memory after the run.
- W8 and W1S compare sessions with plain leases on one lockd of their own (a fresh database),
  the two sides alternating run by run (`kept_alive.rs`, `measure/sessions.rs`). W8's holders
  and its cycles share one client process with lockd on the same cores, so the one-by-one
  renewals also cost the load generator. Writes are PostgreSQL's row counters
  (`pg_stat_user_tables`, read every 250 ms, the rate their least-squares slope, 11 s after the
  holds were taken so that every backend's statistics have been flushed) and, on SQLite, the
  bytes lockd dirtied in the page cache (`/proc/PID/io` `write_bytes`: WAL appends and
  checkpoints). CPU per round is all of lockd's CPU in the window (and that of the PostgreSQL
  backends serving its database) over the rounds made in it: background work included.
- lockd runs with its default settings (durable SQLite commits, `synchronous = FULL`) but logs
  warnings only, except in the row `lockd (SQLite, audit log on)`, which runs at the default log
  level, where the audit log writes one line per grant and per release to stderr.

## Where the time goes

Per lockd cycle (acquire + release = two HTTP requests, two storage operations):
- **HTTP**: the `HTTP ceiling` row is actix-web answering the same two requests with fixed
  bodies and no storage: its `server` column is what the framework alone costs per cycle, and
  its throughput the most any lockd cycle could reach on this machine. The difference between
  that column and lockd's is lockd's own work per cycle: parsing and validating the JSON body
  and the path, the metrics middleware and problem+json error handlers, serialising the answer,
  the hand-off to the writer and the storage engine.
- **Thread hand-off**: a write is a job queued to a writer (the SQLite group-commit thread, or
  one of the PostgreSQL batch executors) and answered through a oneshot channel after the
  commit that holds it; reads run on tokio's blocking pool with a pooled connection.
- **SQL**: statements are prepared once per connection (diesel does not cache raw SQL by
  itself). On SQLite a batch is one transaction with a savepoint per operation; on PostgreSQL
  a batch is one statement over arrays (`unnest`) with at most one operation per lock, so the
  `database` column is shared by every operation of the batch.
- **fsync**: one per batch on both backends, shared by every request in it; each request is
  answered only after the commit that holds it, so every acknowledged grant is durable.
- **Redis** keeps its data in memory and answers from one thread; with `appendfsync always`
  it still batches the fsync of everything one event-loop turn wrote. Its whole cycle costs
  less CPU than the HTTP ceiling's, so on two shared cores lockd can approach it only by
  spending less per request of its own (see the CPU table), not by faster storage.
- **W2 on PostgreSQL**: when a batch shows who holds a hot lock, the acquires of other owners
  queued behind it are answered `held` without a statement each.
";
