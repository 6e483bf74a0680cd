//! `GET /locks`: the caller's tenant's live locks, a page at a time, in bytewise name order.
//!
//! Query parameters are `prefix`, `limit` and `cursor`, form-encoded. Any other parameter, and
//! any parameter given twice, is refused with 422 rather than ignored: a misspelt `prefx=` that
//! silently listed every lock would be a worse answer than an error.

use actix_web::web::{self, ServiceConfig};
use actix_web::{HttpRequest, HttpResponse};
use lock_domain::ListQuery;

use crate::api_doc::requests::ListParams;
use crate::authentication::tenant_of;
use crate::dto::{ListedLockView, LockList};
use crate::fields::listing;
use crate::problem::{method_not_allowed, ProblemKind};
use crate::query_string::parameters;
use crate::{cursor, ApiState};

pub(crate) fn routes(cfg: &mut ServiceConfig) {
    cfg.service(
        web::resource("/locks")
            .route(web::get().to(list))
            .route(web::post().to(crate::multi_locks::acquire_all))
            .route(web::delete().to(crate::multi_locks::release_all))
            .default_service(web::to(method_not_allowed("GET, POST, DELETE"))),
    );
}

/// The query of a listing, parsed: a [`ListQuery`], or a 422 listing every invalid parameter.
pub(crate) fn list_query(query: &str) -> Result<ListQuery, ProblemKind> {
    let mut errors = Vec::new();
    let mut list = ListQuery::default();
    for parameter in parameters(query, &["prefix", "limit", "cursor"]) {
        let (key, value) = match parameter {
            Ok(found) => found,
            Err(error) => {
                errors.push(error);
                continue;
            }
        };
        let parsed = match key.as_str() {
            "prefix" => listing::prefix_text(value).map(|prefix| list.prefix = prefix),
            "limit" => listing::limit_text(&value).map(|limit| list.limit = limit),
            _ => listing::cursor_text(&value).map(|after| list.after = Some(after)),
        };
        if let Err(error) = parsed {
            errors.push(error);
        }
    }
    if errors.is_empty() {
        Ok(list)
    } else {
        Err(ProblemKind::Validation(errors))
    }
}

/// List live locks.
///
/// The live locks of the caller's tenant whose names start with `prefix`, ordered by name
/// bytewise (UTF-8 bytes: `B` before `a`, `z` before `é`), at most `limit` per page. When more
/// follow, `next_cursor` is set: pass it as `cursor` to get the next page (with the same
/// `prefix`); it is absent on the last page. Pages are read live, not from a snapshot: a lock
/// granted while you page shows up if its name sorts after the cursor. Unknown or repeated query
/// parameters are refused with 422.
#[utoipa::path(
    get,
    path = "/locks",
    operation_id = "listLocks",
    tag = "locks",
    security((), ("bearer" = [])),
    params(ListParams),
    responses(
        (status = 200, description = "One page of live locks; `next_cursor` only when more follow.", body = LockList, example = json!({"locks": [{"resource": "payment:42", "owner": "worker-7", "acquired_at": "2026-11-29T21:32:27.123Z", "expires_at": "2026-11-29T21:32:57.123Z", "fencing_token": 17, "mode": "exclusive", "ttl_remaining_ms": 29873, "waiting": 0}], "next_cursor": "AXBheW1lbnQ6NDI"})),
        (status = 422, description = "An invalid `prefix`, `limit` or `cursor`, or an unknown or repeated parameter; `errors` lists each.", body = crate::problem::Problem, content_type = "application/problem+json"),
    )
)]
pub(crate) async fn list(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ProblemKind> {
    let tenant = tenant_of(&req, &state)?;
    let query = list_query(req.query_string())?;
    let page = state.service.locks().list(tenant.clone(), query).await?;
    let next_cursor = page.next_after().map(cursor::encode);
    let locks = page
        .locks
        .into_iter()
        .map(|listed| {
            let waiting = state
                .service
                .locks()
                .waiters(&tenant, &listed.lock.resource);
            ListedLockView::of(listed, waiting)
        })
        .collect();
    let body = LockList { locks, next_cursor };
    Ok(HttpResponse::Ok().json(body))
}

#[cfg(test)]
mod tests {
    use lock_domain::ResourceName;

    use super::*;

    fn codes(query: &str) -> Vec<(String, String)> {
        match list_query(query) {
            Ok(_) => Vec::new(),
            Err(ProblemKind::Validation(errors)) => {
                errors.into_iter().map(|e| (e.field, e.code)).collect()
            }
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn valid_queries() {
        let q = list_query("").unwrap();
        assert_eq!(q, ListQuery::default());
        let q = list_query("prefix=a%25_%5C+b&limit=1000").unwrap();
        assert_eq!(q.prefix.as_str(), "a%_\\ b");
        assert_eq!(q.limit.get(), 1000);
        let name = ResourceName::parse("job:7").unwrap();
        let q = list_query(&format!("cursor={}&limit=1", cursor::encode(&name))).unwrap();
        assert_eq!(q.after, Some(name));
        assert_eq!(list_query("prefix=").unwrap().prefix.as_str(), "");
        // An integer as JSON Schema counts it.
        assert_eq!(list_query("limit=100.0").unwrap().limit.get(), 100);
        assert_eq!(list_query("limit=1e2").unwrap().limit.get(), 100);
        let long = format!("prefix={}", "日".repeat(255));
        assert_eq!(
            list_query(&long).unwrap().prefix.as_str().chars().count(),
            255
        );
    }

    #[test]
    fn invalid_queries_name_every_bad_parameter() {
        let pair = |f: &str, c: &str| (f.to_owned(), c.to_owned());
        let long = format!("prefix={}", "r".repeat(256));
        let cases: Vec<(&str, Vec<(String, String)>)> = vec![
            ("limit=0", vec![pair("limit", "out_of_range")]),
            ("limit=1001", vec![pair("limit", "out_of_range")]),
            ("limit=-1", vec![pair("limit", "out_of_range")]),
            ("limit=ten", vec![pair("limit", "invalid_type")]),
            ("limit=", vec![pair("limit", "invalid_type")]),
            (
                "limit=99999999999999999999",
                vec![pair("limit", "out_of_range")],
            ),
            ("limit=1.5", vec![pair("limit", "invalid_type")]),
            ("limit=%2B5", vec![pair("limit", "invalid_type")]),
            ("cursor=", vec![pair("cursor", "invalid_cursor")]),
            ("cursor=%%%", vec![pair("cursor", "invalid_cursor")]),
            ("cursor=YQ", vec![pair("cursor", "invalid_cursor")]),
            ("prefix=%0A", vec![pair("prefix", "control_character")]),
            ("prefix=%FF", vec![pair("prefix", "invalid_utf8")]),
            (&long, vec![pair("prefix", "too_long")]),
            ("perfix=a", vec![pair("perfix", "unknown_parameter")]),
            ("limit=1&limit=1", vec![pair("limit", "conflict")]),
            (
                "limit=0&cursor=x&owner=y",
                vec![
                    pair("limit", "out_of_range"),
                    pair("cursor", "invalid_cursor"),
                    pair("owner", "unknown_parameter"),
                ],
            ),
        ];
        for (query, expected) in cases {
            assert_eq!(codes(query), expected, "{query}");
        }
    }
}
