//! Every request field's rules, written once. For each field (`owner`, `resource`, `ttl_seconds`,
//! `wait_seconds`, `mode`, `prefix`, `limit`, `cursor`, a fence check's `token`, and a semaphore's `limit`, `permits`, `value`) one module holds both the parser, which turns the
//! raw input into a domain value or a [`FieldError`] naming the field, and the JSON Schema that
//! the OpenAPI document shows for it, built from the same constants: the document says exactly
//! what the server accepts.
//!
//! Two conventions hold for every field. A JSON `null` is never a value: the document has no
//! `null` types (generators turn them into clients that send `null` for "not given"), so a field
//! given as `null` is refused like any value of the wrong type, except that a required field is
//! reported `required`. Numbers are integers as JSON Schema counts them (`237.0` is 237; see
//! [`integer`]).

pub(crate) mod history;
pub(crate) mod integer;
pub(crate) mod listing;
pub(crate) mod lock_delay;
pub(crate) mod lock_list;
pub(crate) mod mode;
pub(crate) mod owner;
pub(crate) mod pattern;
pub(crate) mod resource;
pub(crate) mod seconds;
pub(crate) mod semaphore;
pub(crate) mod session;
pub(crate) mod token;

use serde_json::value::RawValue;

pub(crate) use owner::owner_field;
pub(crate) use seconds::{ttl_field, wait_field};

/// The raw value of a body field, `None` when it is absent or `null`.
fn given(raw: Option<&RawValue>) -> Option<&RawValue> {
    raw.filter(|raw| raw.get() != "null")
}
