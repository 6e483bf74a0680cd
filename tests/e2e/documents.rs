//! The served OpenAPI document and Swagger UI.

use lock_store_diesel::testing::TestDatabase;

use crate::server::TestServer;

on_both_backends!(
    the_served_openapi_document_is_the_committed_one,
    swagger_ui_is_served_from_the_binary,
);

fn the_served_openapi_document_is_the_committed_one(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let response = ureq::get(&server.url("/openapi.json"))
        .call()
        .expect("GET /openapi.json");
    assert_eq!(response.header("content-type"), Some("application/json"));
    let served = response.into_string().expect("body");
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../openapi/openapi.json"
    ))
    .expect("openapi/openapi.json");
    assert!(
        served == committed,
        "the served document differs from openapi/openapi.json: run `make openapi`"
    );
    let doc: serde_json::Value = serde_json::from_str(&served).expect("JSON");
    assert!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1")),
        "OpenAPI 3.1"
    );
}

fn swagger_ui_is_served_from_the_binary(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let page = ureq::get(&server.url("/swagger-ui/"))
        .call()
        .expect("GET /swagger-ui/");
    assert_eq!(page.status(), 200);
    assert!(page
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/html")));
    let html = page.into_string().expect("html");
    assert!(html.contains("swagger-ui"), "{html}");
    // The page's scripts come from the binary too, and point at our document.
    let init = ureq::get(&server.url("/swagger-ui/swagger-initializer.js"))
        .call()
        .expect("initializer")
        .into_string()
        .expect("js");
    assert!(init.contains("/openapi.json"), "{init}");
    let bundle = ureq::get(&server.url("/swagger-ui/swagger-ui-bundle.js"))
        .call()
        .expect("bundle");
    assert_eq!(bundle.status(), 200);
    for asset in [&html, &init] {
        assert!(
            !asset.contains("https://"),
            "no asset is loaded from the internet"
        );
    }
}
