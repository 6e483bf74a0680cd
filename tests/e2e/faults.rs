//! Faults under a running lockd: its database cut off, an unwritable SQLite file, a full disk,
//! PostgreSQL restarted or failed over to a standby, kill -9 and SIGTERM in the middle of a load, a reader of its standard
//! error that stalls. Each test states what must hold through the fault and after.

mod crash_under_load;
mod database_outage;
mod full_disk;
mod load_cycles;
mod postgres_failover;
mod postgres_full_disk;
mod postgres_restart;
mod sigterm_under_load;
mod small_disk;
mod stalled_log_reader;
mod unwritable_sqlite;
