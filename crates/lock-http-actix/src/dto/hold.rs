//! The answer of `GET /locks/{resource}`: an exclusive hold (the v1 lock object, with its
//! `mode`) or a shared one (its holders), told apart by `mode`.

use lock_domain::Hold;
use serde::Serialize;
use utoipa::ToSchema;

use super::{LockView, Mode};

/// A lock held in shared mode: every live holder, in fencing-token order.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "resource": "report:2026-11",
    "mode": "shared",
    "holders": [
        {"resource": "report:2026-11", "owner": "reader-1", "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 17, "mode": "shared"},
        {"resource": "report:2026-11", "owner": "reader-2", "acquired_at": "2026-11-29T21:32:28.001Z", "expires_at": "2026-11-29T21:33:28.001Z", "fencing_token": 18, "mode": "shared"}
    ]
}))]
pub(crate) struct SharedHold {
    /// The locked resource name.
    #[schema(example = "report:2026-11")]
    pub resource: String,
    /// Always `shared` here.
    pub mode: Mode,
    /// The live shared holders, each with its own lease and fencing token.
    pub holders: Vec<LockView>,
}

/// How a lock is held: by one exclusive holder (`mode: exclusive`, the lock object of v1) or by
/// shared holders (`mode: shared`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
#[schema(discriminator(property_name = "mode", mapping(
    ("exclusive" = "#/components/schemas/LockView"),
    ("shared" = "#/components/schemas/SharedHold")
)))]
pub(crate) enum LockStatus {
    Exclusive(LockView),
    Shared(SharedHold),
}

impl From<Hold> for LockStatus {
    fn from(hold: Hold) -> Self {
        match hold {
            Hold::Exclusive(lock) => LockStatus::Exclusive(lock.into()),
            Hold::Shared(holders) => {
                let resource = holders
                    .first()
                    .map(|lock| lock.resource.as_str().to_owned())
                    .unwrap_or_default();
                LockStatus::Shared(SharedHold {
                    resource,
                    mode: Mode::Shared,
                    holders: holders.into_iter().map(LockView::from).collect(),
                })
            }
        }
    }
}
