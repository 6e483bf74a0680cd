//! The lockd server: command line, composition root and logging, and `lockd run`. `main.rs` only parses the
//! command line and calls in here.

pub mod application;
pub mod cli;
mod config_files;
pub mod limits;
pub mod run;
mod startup_error;
pub mod telemetry;

pub use application::{Application, StartupError};
