//! PostgreSQL: the sessions of many operations at once, for the batch statement of the
//! exclusive writes (`writer::postgres_batch`): one statement shares them all, one notes every
//! hold the batch granted.

use diesel::pg::PgConnection;
use diesel::{QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::{SessionHold, SessionId, Tenant};

use super::SessionRow;
use crate::prepared::{Param, Prepared};

/// The sessions `($1[i], $2[i])` (tenant, id), kept from keepalives and ends until the
/// transaction ends (they take the row `FOR UPDATE`), locked in bytewise (tenant, id) order:
/// the order in which every other writer that shares several sessions takes them
/// (`writer::postgres_permits`), so two of them never wait for each other in a circle.
const SHARE_ALL: &str = "\
SELECT s.tenant, s.id, s.owner, s.ttl_ms, s.lock_delay_ms, s.created_at_ms, s.expires_at_ms
FROM sessions AS s
JOIN unnest($1::text[], $2::text[]) AS k(tenant, id) ON s.tenant = k.tenant AND s.id = k.id
ORDER BY s.tenant COLLATE \"C\", s.id COLLATE \"C\"
FOR SHARE OF s";

/// Notes the holds `($1[i], $2[i], $3[i], $4[i])` (tenant, session id, kind, name) that a
/// batch granted, as `NOTE_HOLD` does one.
const NOTE_ALL: &str = "\
INSERT INTO session_holds (tenant, session_id, kind, name)
SELECT h.tenant, h.session_id, h.kind, h.name
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS h(tenant, session_id, kind, name)
ORDER BY h.tenant COLLATE \"C\", h.session_id COLLATE \"C\", h.kind, h.name COLLATE \"C\"
ON CONFLICT (tenant, session_id, kind, name) DO NOTHING";

#[derive(QueryableByName)]
pub(crate) struct SharedRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub tenant: String,
    #[diesel(embed)]
    pub row: SessionRow,
}

/// Reads sessions `keys` (a session's tenant, its id) and keeps them from keepalives and ends
/// until the transaction ends: the rows of those that exist, whether live or not.
///
/// # Errors
/// When the statement fails.
pub(crate) fn share_all(
    conn: &mut PgConnection,
    keys: &[(Tenant, SessionId)],
) -> QueryResult<Vec<SharedRow>> {
    let tenants: Vec<&str> = keys.iter().map(|(tenant, _)| tenant.as_str()).collect();
    let ids: Vec<&str> = keys.iter().map(|(_, id)| id.as_str()).collect();
    Prepared::new(
        SHARE_ALL,
        vec![Param::TextArray(&tenants), Param::TextArray(&ids)],
    )
    .load::<SharedRow>(conn)
}

/// Notes `holds` (each with its session's tenant), which a batch granted, as
/// [`super::SessionRows::note_hold`] does one.
///
/// # Errors
/// When the statement fails.
pub(crate) fn note_all(
    conn: &mut PgConnection,
    holds: &[(Tenant, SessionHold)],
) -> QueryResult<()> {
    if holds.is_empty() {
        return Ok(());
    }
    let mut tenants = Vec::with_capacity(holds.len());
    let mut ids = Vec::with_capacity(holds.len());
    let mut kinds = Vec::with_capacity(holds.len());
    let mut names = Vec::with_capacity(holds.len());
    for (tenant, hold) in holds {
        let Some(id) = hold.grant.lease.owner.session() else {
            continue;
        };
        tenants.push(tenant.as_str().to_owned());
        ids.push(id.as_str().to_owned());
        kinds.push(hold.kind.as_str());
        names.push(hold.grant.place.name().as_str().to_owned());
    }
    let tenants: Vec<&str> = tenants.iter().map(String::as_str).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    Prepared::new(
        NOTE_ALL,
        vec![
            Param::TextArray(&tenants),
            Param::TextArray(&ids),
            Param::TextArray(&kinds),
            Param::TextArray(&names),
        ],
    )
    .execute(conn)
    .map(drop)
}
