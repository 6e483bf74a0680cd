//! [`StartupError`]: why lockd could not start, whichever step of the start-up (the configuration
//! files, the store, the listener) failed.

use std::net::SocketAddr;

use lock_store_diesel::StoreError;

/// Why lockd could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the database was still unreachable after {seconds} s: {last}")]
    StoreTimeout { seconds: u64, last: StoreError },
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("the store could not be opened: {0}")]
    Join(#[from] tokio::task::JoinError),
    #[error("cannot use the API keys file {path}: {reason}")]
    ApiKeys { path: String, reason: String },
    #[error("cannot use the tenant limits file {path}: {reason}")]
    TenantLimits { path: String, reason: String },
    #[error("the server failed: {0}")]
    Serve(#[source] std::io::Error),
}
