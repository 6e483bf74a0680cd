//! The anchor for lockd on PostgreSQL: the same acquire and release statements lockd sends,
//! prepared once per connection and sent through tokio-postgres, one connection per client,
//! synchronous commit on (the server's default), no HTTP in between.

use std::io;

use lock_store_diesel::statements::{POSTGRES_ACQUIRE, POSTGRES_RELEASE};
use tokio_postgres::{Client, NoTls, Statement};

use crate::workload::{LockClient, LockSystem};

pub struct RawPostgresSystem {
    pub url: String,
}

pub struct RawPostgresClient {
    client: Client,
    acquire: Statement,
    release: Statement,
    owner: String,
}

impl LockSystem for RawPostgresSystem {
    type Client = RawPostgresClient;

    async fn connect(&self, client: usize) -> io::Result<RawPostgresClient> {
        let (connection_client, connection) = tokio_postgres::connect(&self.url, NoTls)
            .await
            .map_err(io::Error::other)?;
        tokio::spawn(connection);
        let acquire = connection_client
            .prepare(POSTGRES_ACQUIRE)
            .await
            .map_err(io::Error::other)?;
        let release = connection_client
            .prepare(POSTGRES_RELEASE)
            .await
            .map_err(io::Error::other)?;
        Ok(RawPostgresClient {
            client: connection_client,
            acquire,
            release,
            owner: format!("bench-{client}"),
        })
    }
}

impl LockClient for RawPostgresClient {
    async fn acquire(&mut self, resource: &str) -> io::Result<bool> {
        let rows = self
            .client
            .query(
                &self.acquire,
                &[&"default", &resource, &self.owner, &30_000i64],
            )
            .await
            .map_err(io::Error::other)?;
        Ok(rows.len() == 1)
    }

    async fn release(&mut self, resource: &str) -> io::Result<bool> {
        let rows = self
            .client
            .query(&self.release, &[&"default", &resource, &self.owner])
            .await
            .map_err(io::Error::other)?;
        Ok(rows.len() == 1)
    }
}
