//! The JSON bodies of the fence checks.

use serde::Serialize;
use utoipa::openapi::schema::{KnownFormat, OneOfBuilder, Schema, SchemaFormat};
use utoipa::openapi::{ObjectBuilder, Type};
use utoipa::ToSchema;

use super::{LockView, PermitView};

/// The answer to a lock's fence check: the token is a live holder's (with that holder's lock),
/// or it is not.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum LockFenceResponse {
    Valid(LockFenceValid),
    Stale(FenceStale),
}

/// The token is the fencing token of a lease that is live right now.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct LockFenceValid {
    /// Always `true` here.
    #[schema(example = true)]
    pub valid: bool,
    /// The live lock that has the token (for a shared lock, the holder whose token it is).
    pub lock: LockView,
}

/// The answer to a semaphore's fence check: the token is a live holder's (with that holder's
/// grant), or it is not.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum PermitFenceResponse {
    Valid(PermitFenceValid),
    Stale(FenceStale),
}

/// The token is the fencing token of a grant that is live right now.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct PermitFenceValid {
    /// Always `true` here.
    #[schema(example = true)]
    pub valid: bool,
    /// The live grant that has the token.
    pub permit: PermitView,
}

/// No lease that is live right now has the token: its holder's lease ended (expired, released,
/// or taken over), or it was never issued here. Refuse the write it came with.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct FenceStale {
    /// Always `false` here.
    #[schema(example = false)]
    pub valid: bool,
    /// The newest live holder's token (the largest), or `null` when no lease is live.
    #[schema(schema_with = token_or_null, required = true)]
    pub current: Option<i64>,
}

/// `current`: always present, an integer or `null`. Here `null` is a value (no one holds a
/// lease), not a member left out, so the document says so as `oneOf` (a 3.1 type array is what
/// generators get wrong).
fn token_or_null() -> Schema {
    let one_of = OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                .minimum(Some(1)),
        )
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .description(Some(
            "The newest live holder's token (the largest), or `null` when no lease is live.",
        ))
        .examples([serde_json::json!(18)])
        .build();
    Schema::OneOf(one_of)
}
