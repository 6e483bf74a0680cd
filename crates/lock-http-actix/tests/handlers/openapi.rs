//! The OpenAPI document: committed copy current, limits that follow the settings, every
//! documented operation routed.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use lock_http_actix::{openapi_document, openapi_json, openapi_json_for, ApiSettings};
use serde_json::json;

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
        let uri = path
            .replace("{resource}", "payment:42")
            .replace("{name}", "export")
            .replace("{id}", SESSION_ID);
        let body = if path.starts_with("/semaphores") {
            r#"{"owner": "worker-7", "ttl_seconds": 30, "limit": 8}"#
        } else {
            VALID_BODY
        };
        let item = item.as_object().expect("a path item is an object");
        for (method, operation) in item {
            let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else {
                continue; // not an operation (e.g. `parameters`)
            };
            operations += 1;
            // Required query parameters (a fence check's `token`) take their documented example.
            let query: Vec<String> = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "query" && p["required"] == true)
                .map(|p| format!("{}={}", p["name"].as_str().unwrap(), p["example"]))
                .collect();
            let uri = if query.is_empty() {
                uri.clone()
            } else {
                format!("{uri}?{}", query.join("&"))
            };
            // The documented example when there is one (the multi-lock bodies differ).
            let example = operation["requestBody"]["content"]["application/json"]["example"]
                .as_object()
                .map(|example| serde_json::Value::Object(example.clone()).to_string());
            if operation["responses"]["200"]["content"]
                .get("text/event-stream")
                .is_some()
            {
                let (status, content_type, first) =
                    call_stream(permissive_repo(), TestRequest::get().uri(&uri)).await;
                assert_eq!(status, 200, "{method} {path}");
                assert_eq!(content_type, "text/event-stream", "{method} {path}");
                let first = String::from_utf8_lossy(&first);
                assert!(first.starts_with("id: "), "{method} {path}: {first}");
                continue;
            }
            let req = if operation.get("requestBody").is_some() {
                json_request(
                    method.clone(),
                    &uri,
                    example.unwrap_or_else(|| body.to_owned()),
                )
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
        operations, 40,
        "for locks, semaphores and elections: list, acquire (campaign), status (leader), \
         release (resign), renew, fence check, observe, history; acquire and release many locks; \
         an election's proclaim and its resign at its own path; the tenant's history and event \
         stream; a session's open, list, look, keepalive, end and observe; and four operations \
         routes"
    );
}

/// The served document's `maximum`s are the server's settings; with the default settings it is
/// the committed document.
#[actix_web::test]
async fn the_served_document_follows_the_configured_limits() {
    let settings = ApiSettings {
        max_ttl_seconds: 120,
        max_wait_seconds: 5,
        ..ApiSettings::default()
    };
    let answer = call_with(
        untouched_repo(),
        settings.clone(),
        TestRequest::get().uri("/openapi.json"),
    )
    .await;
    let served = assert_json_ok(&answer);
    assert_eq!(
        String::from_utf8_lossy(&answer.body),
        openapi_json_for(&settings)
    );
    let schemas = &served["components"]["schemas"];
    for (request, field, maximum) in [
        ("AcquireRequest", "ttl_seconds", 120),
        ("AcquireRequest", "wait_seconds", 5),
        ("RenewRequest", "ttl_seconds", 120),
    ] {
        let schema = &schemas[request]["properties"][field];
        assert_eq!(schema["maximum"], json!(maximum), "{request}.{field}");
        let description = schema["description"].as_str().unwrap_or_default();
        assert!(
            description.contains(&format!("{maximum} on this server")),
            "{request}.{field}: {description}"
        );
    }
    assert_eq!(
        openapi_json_for(&ApiSettings::default()),
        openapi_json(),
        "the default settings serve the committed document"
    );
}
