//! The usage port over the store's pool: a tenant's live leases (its election namespace's too),
//! counted in one read of the three tables that hold leases. The marker row of a lock held in
//! shared mode is not a lease: its readers are, in `shared_holders`.

use async_trait::async_trait;
use diesel::RunQueryDsl;
use lock_domain::{LeaseUsage, Owner, RepositoryError, Tenant};

use super::DieselLockRepository;
use crate::db_connection::DbConnection;
use crate::error::from_query;
use crate::prepared::{statement, Param};
use crate::row::CountRow;

/// SQLite: `?4` is the writer's clock, in milliseconds.
const SQLITE_COUNT: &str = "\
SELECT (SELECT COUNT(*) FROM distributed_locks
        WHERE tenant IN (?1, ?2) AND expires_at_ms > ?4 AND owner <> ?3)
     + (SELECT COUNT(*) FROM shared_holders WHERE tenant IN (?1, ?2) AND expires_at_ms > ?4)
     + (SELECT COUNT(*) FROM semaphore_holders WHERE tenant IN (?1, ?2) AND expires_at_ms > ?4)
       AS count";

/// PostgreSQL: the database's clock decides, as it does for every grant.
const POSTGRES_COUNT: &str = "\
WITH now AS (SELECT FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT AS ms)
SELECT (SELECT COUNT(*) FROM distributed_locks, now
        WHERE tenant IN ($1, $2) AND expires_at_ms > now.ms AND owner <> $3)
     + (SELECT COUNT(*) FROM shared_holders, now
        WHERE tenant IN ($1, $2) AND expires_at_ms > now.ms)
     + (SELECT COUNT(*) FROM semaphore_holders, now
        WHERE tenant IN ($1, $2) AND expires_at_ms > now.ms)
       AS count";

#[async_trait]
impl LeaseUsage for DieselLockRepository {
    async fn count_live_leases(&self, tenant: Tenant) -> Result<u64, RepositoryError> {
        let count = self
            .inner
            .pooled
            .run(move |conn, now_ms| {
                let elections = tenant.elections();
                let marker = Owner::shared_holders();
                let mut params = vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(elections.as_str()),
                    Param::Text(marker.as_str()),
                ];
                let row = match conn {
                    DbConnection::Sqlite(c) => {
                        params.push(Param::BigInt(now_ms));
                        statement!(SQLITE_COUNT, params).get_result::<CountRow>(c)
                    }
                    DbConnection::Postgres(c) => {
                        statement!(POSTGRES_COUNT, params).get_result::<CountRow>(c)
                    }
                };
                row.map(|row| row.count).map_err(from_query)
            })
            .await?;
        Ok(u64::try_from(count).unwrap_or_default())
    }
}
