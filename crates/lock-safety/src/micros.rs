//! [`Micros`]: the time of every recorded operation, in every history and report.

/// Microseconds since the Unix epoch.
pub type Micros = i64;
