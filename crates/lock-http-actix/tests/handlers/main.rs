//! Handler tests of the HTTP layer: every route runs against a mocked repository port, and each
//! answer (status, headers, body) is held to the API contract.
//!
//! A test that must not reach the repository builds its app with [`support::untouched_repo`]: a mock
//! without expectations, so any call panics and fails the test. That is how "bad input changes
//! nothing" is proven.

#[path = "../wired/mod.rs"]
mod wired;

mod acquire;
mod bodies;
mod failures;
mod fields;
mod openapi;
mod operations;
mod precedence;
mod release;
mod renew;
mod routing;
mod status;
mod support;
