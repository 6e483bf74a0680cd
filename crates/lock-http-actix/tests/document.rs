//! The OpenAPI document stays something clients can be generated from and people can read:
//! every request and answer has an example, no schema uses what generators get wrong, and
//! every operation has an id, a summary and a description.

use serde_json::Value;

fn document() -> Value {
    serde_json::from_str(&lock_http_actix::openapi_json()).expect("the document is JSON")
}

/// (method, path, operation) for every operation of the document.
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut found = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            found.push((method.clone(), path.clone(), operation.clone()));
        }
    }
    found
}

/// Every value anywhere in the document, with its JSON pointer.
fn walk<'a>(value: &'a Value, pointer: String, out: &mut Vec<(String, &'a Value)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                walk(child, format!("{pointer}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                walk(child, format!("{pointer}/{index}"), out);
            }
        }
        _ => {}
    }
    out.push((pointer, value));
}

#[test]
fn every_operation_has_an_id_a_summary_and_a_description() {
    let doc = document();
    for (method, path, operation) in operations(&doc) {
        for field in ["operationId", "summary", "description"] {
            assert!(
                operation[field].as_str().is_some_and(|s| !s.is_empty()),
                "{method} {path} has no {field}"
            );
        }
        for (status, response) in operation["responses"].as_object().expect("responses") {
            assert!(
                response["description"]
                    .as_str()
                    .is_some_and(|s| !s.is_empty()),
                "{method} {path} {status} has no description"
            );
        }
    }
}

#[test]
fn every_request_and_answer_body_has_an_example() {
    let doc = document();
    for (method, path, operation) in operations(&doc) {
        if let Some(content) = operation["requestBody"]["content"].as_object() {
            for (media, body) in content {
                assert!(
                    !body["example"].is_null() || body["examples"].is_object(),
                    "{method} {path} request {media} has no example"
                );
            }
        }
        // The document itself is the one answer too large for an example.
        if path == "/openapi.json" {
            continue;
        }
        for (status, response) in operation["responses"].as_object().expect("responses") {
            for (media, body) in response["content"].as_object().into_iter().flatten() {
                assert!(
                    !body["example"].is_null() || body["examples"].is_object(),
                    "{method} {path} {status} {media} has no example"
                );
            }
        }
    }
}

#[test]
fn every_error_answer_is_a_problem() {
    let doc = document();
    for (method, path, operation) in operations(&doc) {
        for (status, response) in operation["responses"].as_object().expect("responses") {
            if status.starts_with('2') {
                continue;
            }
            let content = response["content"]
                .as_object()
                .expect("an error has a body");
            assert_eq!(
                content.keys().collect::<Vec<_>>(),
                ["application/problem+json"],
                "{method} {path} {status}"
            );
            assert_eq!(
                content["application/problem+json"]["schema"]["$ref"],
                "#/components/schemas/Problem",
                "{method} {path} {status}"
            );
        }
    }
}

/// The members whose `null` is a value of its own rather than a member left out: a fence check's
/// `current` is `null` when no lease is live, and a campaign's `leader` when the office is vacant.
const NULL_IS_A_VALUE: [&str; 2] = [
    "/components/schemas/FenceStale/properties/current/oneOf/1/type",
    "/components/schemas/CampaignResponse/properties/leader/oneOf/1/type",
];

/// What openapi-python-client and other generators get wrong: a boolean `const` (invalid Python
/// from openapi-python-client 0.29), `null` alternatives for values that are simply absent, and
/// 3.1 type arrays.
#[test]
fn no_schema_uses_what_generators_get_wrong() {
    let doc = document();
    let mut values = Vec::new();
    walk(&doc, String::new(), &mut values);
    for (pointer, value) in values {
        if pointer.ends_with("/example") || pointer.contains("/example/") {
            continue;
        }
        if pointer.ends_with("/const") {
            assert!(!value.is_boolean(), "boolean const at {pointer}");
        }
        if pointer.ends_with("/type") {
            assert!(!value.is_array(), "{value} type at {pointer}");
            assert!(
                value != "null" || NULL_IS_A_VALUE.contains(&pointer.as_str()),
                "{value} type at {pointer}"
            );
        }
    }
}
