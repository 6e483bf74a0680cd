//! The 503 `/problems/storage-full` of the operations that write: added to the description of
//! each one's 503 (whose example stays `/problems/service-unavailable`). A read writes nothing,
//! so a full disk does not stop it.

use utoipa::openapi::{OpenApi, RefOr};
use utoipa::Modify;

const STORAGE_FULL: &str = " Or `/problems/storage-full`: the database's disk is full. \
Nothing was changed (definitely, unlike `/problems/service-unavailable`), and reads still \
work; retry after `Retry-After` seconds, which succeeds once space is freed.";

pub(super) struct StorageFullResponses;

impl Modify for StorageFullResponses {
    fn modify(&self, openapi: &mut OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let writes = [
                &mut item.post,
                &mut item.put,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in writes.into_iter().flatten() {
                if let Some(RefOr::T(response)) = operation.responses.responses.get_mut("503") {
                    response.description.push_str(STORAGE_FULL);
                }
            }
        }
    }
}
