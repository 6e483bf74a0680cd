//! A `semaphore_holders` row, and its conversions into the domain's values.

use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use lock_domain::{
    Capacity, FencingToken, Lease, LeaseValue, ListQuery, Owner, Permit, RepositoryError,
    ResourceName, SemaphorePage, SemaphoreState, Weight,
};

use super::PermitError;

/// A `semaphore_holders` row.
#[derive(Debug, Clone, QueryableByName)]
pub(crate) struct HolderRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub name: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub owner: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub permits: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub semaphore_limit: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub acquired_at_ms: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub expires_at_ms: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub fencing_token: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub regranted: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    pub value: Option<String>,
    /// How long the grant keeps its permits for other owners after it runs out.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub lock_delay_ms: i64,
}

/// The page of a listing from its rows (at most `limit + 1` names).
pub(super) fn page(
    rows: Vec<HolderRow>,
    query: &ListQuery,
    now: DateTime<Utc>,
) -> Result<SemaphorePage, PermitError> {
    let mut semaphores: Vec<SemaphoreState> = Vec::new();
    let mut current: Option<(String, Vec<Lease>)> = None;
    let mut flush = |name: String, leases: Vec<Lease>| -> Result<(), PermitError> {
        let name = ResourceName::parse(name)
            .map_err(|e| RepositoryError::internal(format!("corrupt semaphore name: {e}")))?;
        semaphores.extend(SemaphoreState::of_leases(name, &leases, now));
        Ok(())
    };
    for row in rows {
        let name = row.name.clone();
        let lease = lease(row)?;
        match &mut current {
            Some((current_name, leases)) if *current_name == name => leases.push(lease),
            _ => {
                if let Some((done, leases)) = current.replace((name, vec![lease])) {
                    flush(done, leases)?;
                }
            }
        }
    }
    if let Some((done, leases)) = current {
        flush(done, leases)?;
    }
    let has_more = semaphores.len() > query.limit.get();
    semaphores.truncate(query.limit.get());
    Ok(SemaphorePage {
        semaphores,
        has_more,
    })
}

pub(super) fn at(ms: i64) -> Result<DateTime<Utc>, RepositoryError> {
    DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| RepositoryError::internal(format!("a clock reading out of range: {ms}")))
}

pub(super) fn leases(rows: Vec<HolderRow>) -> Result<Vec<Lease>, RepositoryError> {
    rows.into_iter().map(lease).collect()
}

pub(super) fn permit(row: HolderRow) -> Result<Permit, RepositoryError> {
    let name = ResourceName::parse(row.name.clone())
        .map_err(|e| RepositoryError::internal(format!("corrupt semaphore name: {e}")))?;
    Ok(Permit {
        name,
        lease: lease(row)?,
    })
}

/// A row as the domain's lease; a value the domain would not accept is corrupt data.
pub(super) fn lease(row: HolderRow) -> Result<Lease, RepositoryError> {
    let corrupt = |what: String| {
        RepositoryError::internal(format!("corrupt semaphore row of {}: {what}", row.name))
    };
    let capacity = Capacity::semaphore_limit(row.semaphore_limit)
        .map_err(|e| corrupt(format!("limit {e}")))?;
    Ok(Lease {
        owner: Owner::from_stored(&row.owner).map_err(|e| corrupt(format!("owner {e}")))?,
        weight: Weight::permits(row.permits, capacity)
            .map_err(|e| corrupt(format!("permits {e}")))?,
        capacity,
        acquired_at: at(row.acquired_at_ms)?,
        expires_at: at(row.expires_at_ms)?,
        fencing_token: FencingToken::new(row.fencing_token)
            .map_err(|token| corrupt(format!("fencing token {token}")))?,
        value: row
            .value
            .clone()
            .map(LeaseValue::parse)
            .transpose()
            .map_err(|e| corrupt(format!("value {e}")))?,
    })
}
