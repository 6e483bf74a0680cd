//! The 429 `/problems/quota-exceeded` of the operations a tenant's limits bound
//! (`--tenant-limits-file`): added to each one's 429 (which may already say
//! `/problems/too-many-requests`), with an example where it is the only 429. Runs after
//! `ProblemResponses`, which would give every 429 the too-many-requests example.

use lock_service::{Limit, QuotaExceeded};
use serde_json::json;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::{ObjectBuilder, OpenApi, Ref, RefOr, Type};
use utoipa::Modify;

const PROBLEM_JSON: &str = "application/problem+json";

const ACQUIRES: &[Limit] = &[
    Limit::MaxLiveLeases,
    Limit::MaxWaiters,
    Limit::MaxTtlSeconds,
];
const RENEWS: &[Limit] = &[Limit::MaxTtlSeconds];
const STREAMS: &[Limit] = &[Limit::MaxObservers];

/// Each bounded operation, and the limits that bound it.
const BOUNDED: [(&str, &[Limit]); 12] = [
    ("acquireLock", ACQUIRES),
    ("acquireLocks", ACQUIRES),
    ("acquirePermits", ACQUIRES),
    ("campaign", ACQUIRES),
    ("renewLock", RENEWS),
    ("renewPermits", RENEWS),
    ("renewLeader", RENEWS),
    ("observeLock", STREAMS),
    ("observeSemaphore", STREAMS),
    ("observeElection", STREAMS),
    ("observeSession", STREAMS),
    ("followEvents", STREAMS),
];

pub(super) struct QuotaResponses;

impl Modify for QuotaResponses {
    fn modify(&self, openapi: &mut OpenApi) {
        for (path, item) in openapi.paths.paths.iter_mut() {
            let instance = path
                .replace("{resource}", "payment:42")
                .replace("{name}", "export")
                .replace("{id}", "q7Hc0mB1TzK4n9XwVd2aLg");
            let operations = [&mut item.get, &mut item.post];
            for operation in operations.into_iter().flatten() {
                let id = operation.operation_id.clone().unwrap_or_default();
                let Some((_, limits)) = BOUNDED.iter().find(|(bounded, _)| *bounded == id) else {
                    continue;
                };
                let names: Vec<_> = limits.iter().map(|limit| limit.key()).collect();
                let quota = format!(
                    "`/problems/quota-exceeded`: the request would go over a limit of its tenant \
                     ({}; the problem's `quota` names it and `allowed` says what it allows). \
                     Nothing was attempted or changed. `Retry-After` comes with every limit but \
                     max_ttl_seconds, which no retry passes.",
                    names.join(", ")
                );
                let responses = &mut operation.responses.responses;
                match responses.get_mut("429") {
                    Some(RefOr::T(response)) => {
                        response.description = format!("{} Or {quota}", response.description);
                    }
                    _ => {
                        let mut content = ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("Problem")))
                            .build();
                        let exceeded = QuotaExceeded {
                            limit: limits[0],
                            allowed: 50,
                        };
                        content.example = Some(json!({
                            "type": "/problems/quota-exceeded",
                            "title": "Too Many Requests",
                            "status": 429,
                            "detail": crate::problem::quota_detail(exceeded),
                            "instance": instance,
                            "quota": exceeded.limit.key(),
                            "allowed": exceeded.allowed,
                        }));
                        let response = ResponseBuilder::new()
                            .description(quota)
                            .content(PROBLEM_JSON, content)
                            .header(
                                "Retry-After",
                                HeaderBuilder::new()
                                    .schema(ObjectBuilder::new().schema_type(Type::String))
                                    .description(Some(
                                        "Seconds to wait before retrying (`1`); none for \
                                         max_ttl_seconds.",
                                    ))
                                    .build(),
                            )
                            .build();
                        responses.insert("429".to_owned(), RefOr::T(response));
                    }
                }
            }
        }
    }
}
