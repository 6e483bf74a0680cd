//! `cargo run --example fenced_storage -- --lockd http://127.0.0.1:8080 [--bind 127.0.0.1:8090]`:
//! a toy object store that asks lockd whether a writer's fencing token is still live before it
//! writes (see `storage.rs` and docs/fencing.md).
//!
//! ```sh
//! curl -X POST localhost:8080/locks/report -H 'content-type: application/json' \
//!   -d '{"owner": "job-1", "ttl_seconds": 30}'          # fencing_token: 1
//! curl -X PUT localhost:8090/objects/report -H 'lock-resource: report' \
//!   -H 'fencing-token: 1' -d 'totals'                    # 204, or 409 once the lease has ended
//! ```

mod storage;

use std::net::TcpListener;

use lock_client::{ClientConfig, LockClient};

fn main() -> std::io::Result<()> {
    let mut lockd = String::from("http://127.0.0.1:8080");
    let mut bind = String::from("127.0.0.1:8090");
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match (flag.as_str(), args.next()) {
            ("--lockd", Some(url)) => lockd = url,
            ("--bind", Some(addr)) => bind = addr,
            _ => {
                eprintln!("usage: fenced_storage [--lockd URL] [--bind ADDR]");
                std::process::exit(2);
            }
        }
    }
    let listener = TcpListener::bind(&bind)?;
    println!("listening on {}", listener.local_addr()?);
    let client = LockClient::new(&ClientConfig::new(lockd));
    actix_web::rt::System::new().block_on(storage::serve(listener, client)?)
}
