//! PostgreSQL: a `LISTEN` connection that dies silently (a black-holed TCP connection: no FIN,
//! no RST) is noticed and replaced, so the subscriber hears a hint within seconds of the next
//! release instead of never.
//!
//! The subscribing store reaches PostgreSQL through a small TCP proxy in this test, which can
//! turn every connection open at that moment into a black hole (it reads and discards bytes in
//! both directions and never closes) while new connections still pass. Writes go through a
//! second store that connects directly.

use lock_domain::testing::calls::LeaseCalls;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lock_domain::testing::ManualClock;
use lock_domain::FreedHints;
use lock_domain::{AcquireOutcome, Freed, FreedLocks, Owner, ResourceName, Tenant, Ttl};
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// A TCP proxy to PostgreSQL whose open connections can be black-holed. Dropping it closes
/// every connection it carries.
struct BlackHoleProxy {
    addr: SocketAddr,
    /// Connections accepted before this count went past their own number are black holes.
    holes: Arc<AtomicU64>,
    accept: JoinHandle<()>,
}

impl BlackHoleProxy {
    async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the proxy");
        let addr = listener.local_addr().expect("proxy address");
        let holes = Arc::new(AtomicU64::new(0));
        let accept = tokio::spawn({
            let holes = Arc::clone(&holes);
            async move {
                // Dropped with the accept task, which aborts (and so closes) every connection.
                let mut connections = JoinSet::new();
                while let Ok((client, _)) = listener.accept().await {
                    let Ok(server) = TcpStream::connect(upstream).await else {
                        continue;
                    };
                    let generation = holes.load(Ordering::SeqCst);
                    let (client_read, client_write) = client.into_split();
                    let (server_read, server_write) = server.into_split();
                    connections.spawn(pipe(
                        client_read,
                        server_write,
                        generation,
                        Arc::clone(&holes),
                    ));
                    connections.spawn(pipe(
                        server_read,
                        client_write,
                        generation,
                        Arc::clone(&holes),
                    ));
                }
            }
        });
        Self {
            addr,
            holes,
            accept,
        }
    }

    /// From now on, every connection open now swallows what either side sends and never closes.
    fn black_hole_open_connections(&self) {
        self.holes.fetch_add(1, Ordering::SeqCst);
    }
}

impl Drop for BlackHoleProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Copies one direction of a connection until it ends, or, once the connection is a black hole,
/// reads and discards everything and keeps both sockets open.
async fn pipe(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    generation: u64,
    holes: Arc<AtomicU64>,
) {
    let black_hole = || holes.load(Ordering::SeqCst) > generation;
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        if black_hole() {
            continue;
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            break;
        }
    }
    if black_hole() {
        // Never close: the other side must see neither FIN nor RST.
        std::future::pending::<()>().await;
    }
}

/// The database server of `url` (`scheme://user@host:port/db?…`), and `url` with its
/// `host:port` replaced by `proxy`.
async fn via_proxy(url: &str, proxy: SocketAddr) -> (SocketAddr, String) {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let (user, host_port) = match authority.rsplit_once('@') {
        Some((user, host_port)) => (format!("{user}@"), host_port),
        None => (String::new(), authority),
    };
    let host_port = if host_port.contains(':') {
        host_port.to_owned()
    } else {
        format!("{host_port}:5432")
    };
    let server = tokio::net::lookup_host(&host_port)
        .await
        .expect("resolve the test server")
        .next()
        .expect("an address of the test server");
    (server, format!("{scheme}://{user}{proxy}{path}"))
}

async fn open(config: StoreConfig) -> DieselLockRepository {
    tokio::task::spawn_blocking(move || {
        DieselLockRepository::open(&config, Arc::new(ManualClock::new()))
    })
    .await
    .expect("open task")
    .expect("open the PostgreSQL store")
}

/// Acquires and releases `orders:7`, which sends one hint.
async fn acquire_and_release(writer: &DieselLockRepository) {
    let tenant = Tenant::default_tenant();
    let resource = ResourceName::parse("orders:7").unwrap();
    let owner = Owner::parse("a").unwrap();
    let granted = writer
        .acquire(
            tenant.clone(),
            resource.clone(),
            owner.clone(),
            Ttl::parse(30, 86_400).unwrap(),
            None,
        )
        .await
        .unwrap();
    assert!(matches!(granted, AcquireOutcome::Granted(_)));
    writer.release(tenant, resource, owner).await.unwrap();
}

async fn next_within(hints: &mut Box<dyn FreedLocks>, within: Duration) -> Option<Freed> {
    tokio::time::timeout(within, hints.next())
        .await
        .ok()
        .flatten()
}

#[tokio::test]
async fn a_black_holed_listen_connection_is_replaced_and_hints_resume() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let DatabaseUrl::Postgres(direct_url) = db.url().clone() else {
        unreachable!("a PostgreSQL test database");
    };
    let (server, _) = via_proxy(&direct_url, "127.0.0.1:1".parse().unwrap()).await;
    let proxy = BlackHoleProxy::start(server).await;
    let (_, proxied_url) = via_proxy(&direct_url, proxy.addr).await;

    // The subscribing store is used for nothing but its subscription: its pooled connections
    // also go through the proxy and are black-holed with the listening one.
    let mut subscriber_config = StoreConfig::new(DatabaseUrl::Postgres(proxied_url));
    subscriber_config.pool_size = Some(2);
    subscriber_config.postgres_batch_connections = 0;
    let subscriber = open(subscriber_config).await;
    let writer = open(StoreConfig::new(db.url().clone())).await;
    let mut hints = subscriber
        .subscribe_freed()
        .await
        .expect("subscribe")
        .expect("PostgreSQL gives hints");

    let expected = Freed::Lock {
        tenant: Tenant::default_tenant(),
        resource: ResourceName::parse("orders:7").unwrap(),
    };

    // Through the proxy, hints arrive as usual.
    acquire_and_release(&writer).await;
    assert_eq!(
        next_within(&mut hints, Duration::from_secs(2)).await,
        Some(expected.clone())
    );

    proxy.black_hole_open_connections();
    let released_at = Instant::now();
    acquire_and_release(&writer).await;
    let hint = next_within(&mut hints, Duration::from_secs(8)).await;
    let heard_after = released_at.elapsed();
    eprintln!("after the black hole, heard {hint:?} after {heard_after:?}");
    assert!(
        matches!(&hint, Some(Freed::Unknown | Freed::Lock { .. })),
        "no hint within 8 s of a release after the listening connection was black-holed"
    );

    // The new listening connection hears releases again.
    acquire_and_release(&writer).await;
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match next_within(&mut hints, left).await {
            Some(Freed::Unknown) => continue,
            hint => {
                assert_eq!(hint, Some(expected), "a release after the reconnect");
                break;
            }
        }
    }
    drop(hints);
    // Close the black-holed connections before the stores and the database go.
    drop(proxy);
}
