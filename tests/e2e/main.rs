//! End-to-end tests: the real `lockd` binary, started on port 0 with its own temporary database,
//! driven over HTTP. Most tests run twice, as `name::sqlite` and `name::postgres`.

#[macro_use]
mod backends;

mod attacks;
mod audit;
mod client;
mod clock_steps;
mod connection_limit;
mod contract;
mod documents;
mod elect;
mod election_release;
mod elections;
mod faults;
mod fence;
mod fenced_storage;
mod force_release;
mod history;
mod history_events;
mod history_leases;
mod history_paging;
mod history_sweep;
mod history_tenants;
mod history_undo;
mod holds;
mod hostile;
mod lifecycle;
mod listing;
mod load;
mod lock_delay;
mod multi_instance;
mod multi_locks;
mod observe;
mod observed_expiries;
mod observers_at_scale;
mod pg_cluster;
mod pg_replication;
mod pipelining;
mod proxy;
mod quota_campaign;
mod quota_grants;
mod quotas;
mod quotas_reload;
mod run;
mod secrets;
mod semaphores;
mod server;
mod sessions;
mod shared_locks;
mod slow_clients;
mod tenants;
mod values;
mod waiter_limits;
mod waiting;
