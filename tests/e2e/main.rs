//! End-to-end tests: the real `lockd` binary, started on port 0 with its own temporary database,
//! driven over HTTP.

mod attacks;
mod contract;
mod documents;
mod lifecycle;
mod load;
mod server;
