//! The lockd server: command line, composition root and logging. `main.rs` only parses the
//! command line and calls in here.

pub mod application;
pub mod cli;
pub mod telemetry;

pub use application::{Application, StartupError};
