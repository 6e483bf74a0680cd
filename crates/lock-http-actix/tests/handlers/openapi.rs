//! The OpenAPI document: committed copy current, every documented operation routed.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use lock_http_actix::{openapi_document, openapi_json};

use crate::support::*;

#[test]
fn the_committed_openapi_document_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openapi/openapi.json");
    let committed = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {path} ({e}): run `make openapi`"));
    assert!(
        committed == openapi_json(),
        "openapi/openapi.json differs from the API's document: run `make openapi` and commit it"
    );
}

#[actix_web::test]
async fn every_documented_operation_is_routed() {
    let document = serde_json::to_value(openapi_document()).expect("the document serializes");
    let paths = document["paths"]
        .as_object()
        .expect("the document has paths");
    let mut operations = 0;
    for (path, item) in paths {
        let uri = path.replace("{resource}", "payment:42");
        let item = item.as_object().expect("a path item is an object");
        for (method, operation) in item {
            let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else {
                continue; // not an operation (e.g. `parameters`)
            };
            operations += 1;
            let req = if operation.get("requestBody").is_some() {
                json_request(method.clone(), &uri, VALID_BODY)
            } else {
                TestRequest::default().method(method.clone()).uri(&uri)
            };
            let answer = call(permissive_repo(), req).await;
            assert!(
                answer.status.is_success(),
                "{method} {path} answered {}: {}",
                answer.status,
                String::from_utf8_lossy(&answer.body)
            );
            let documented = operation["responses"]
                .as_object()
                .is_some_and(|r| r.contains_key(answer.status.as_str()));
            assert!(
                documented,
                "{method} {path} answered {}, which it does not document",
                answer.status
            );
        }
    }
    assert_eq!(
        operations, 9,
        "list, acquire, status, release, renew and four operations routes"
    );
}
