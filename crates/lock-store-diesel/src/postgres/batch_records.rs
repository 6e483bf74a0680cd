//! The history records of [`super::writes::WRITE_BATCH`], written by the statement itself (see
//! [`batch_records`]).

/// The `recorded` part of [`super::writes::WRITE_BATCH`]: its history records as one batch
/// (migration 15), from the rows `k` locked (each lease as it was) and those `acquired`,
/// `released` and `renewed` wrote, by the rule of the schema's `lockd_history_of_lock_inserts`
/// and `lockd_history_of_lock_updates` (the SQL copy of the domain's `name_change`): a lease an
/// acquire replaced ran out, unless it had ended in place (released, or its expiry recorded); a
/// new lease is `granted`; an acquire by the live holder `re-granted`; a moved end `renewed`; a
/// release ends the lease (`released`). Endings come first, then the rest, each by name.
///
/// Once written, the statement says so (`lockd.recorded`, see `lockd_recorded_by_statement`),
/// and the triggers record nothing more for it: one statement's records are written once,
/// whichever writes them. It writes nothing, and leaves them to the triggers, when an acquire
/// updated a row `k` did not see (committed by another transaction after `k` read): how that
/// lease had been is known only to the triggers. Nothing either when this process records no
/// history (`lockd.history`). The condition is a `CASE`, so that the mark is set only when the
/// records are written (PostgreSQL may evaluate the parts of an `AND` in any order).
///
/// `$renews` (`yes` or `no`, as `writes::write_batch!` takes it) says whether the statement has
/// a `renewed` part to record.
macro_rules! batch_records {
    ($renews:tt) => {
        concat!(
            "recorded AS (
    INSERT INTO history_batches (first_id, last_id, at_ms, tenants, kinds, names, owners, tokens,
                                 events, reasons, shared)
    SELECT b.first_id, b.first_id + b.total - 1, n.ms, b.tenants, b.kinds, b.names, b.owners,
           b.tokens, b.events, b.reasons, b.shared
    FROM n, (
        SELECT nextval('history_batch_numbers') * 65536 AS first_id, a.*
        FROM (
            SELECT count(*) AS total, array_agg(lockd_history_tenant(c.tenant)) AS tenants,
                   array_agg(lockd_history_kind(c.tenant)) AS kinds, array_agg(c.resource) AS names,
                   array_agg(c.owner) AS owners, array_agg(c.token) AS tokens,
                   array_agg(c.event) AS events, array_agg(NULL::TEXT) AS reasons,
                   array_agg(FALSE) AS shared
            FROM (
                SELECT o.tenant, o.resource, o.owner, o.fencing_token AS token,
                       'expired'::TEXT AS event, 0 AS side
                FROM acquired AS a JOIN k AS o USING (tenant, resource)
                WHERE ascii(o.owner) <> 1 AND o.acquired_at_ms <> o.expires_at_ms
                  AND (o.owner <> a.owner OR o.fencing_token <> a.fencing_token)
                UNION ALL
                SELECT a.tenant, a.resource, a.owner, a.fencing_token,
                       CASE WHEN o.tenant IS NULL OR o.owner <> a.owner
                                 OR o.fencing_token <> a.fencing_token THEN 'granted'
                            WHEN a.acquired_at_ms <> o.acquired_at_ms THEN 're-granted'
                            ELSE 'renewed' END,
                       1
                FROM acquired AS a LEFT JOIN k AS o USING (tenant, resource)
                WHERE ascii(a.owner) <> 1
                  AND (((o.tenant IS NULL OR o.owner <> a.owner
                         OR o.fencing_token <> a.fencing_token)
                        AND a.acquired_at_ms <> a.expires_at_ms)
                    OR (o.owner = a.owner AND o.fencing_token = a.fencing_token
                        AND o.acquired_at_ms <> o.expires_at_ms
                        AND (a.acquired_at_ms <> o.acquired_at_ms
                             OR a.expires_at_ms <> o.expires_at_ms)))
                UNION ALL
                SELECT r.tenant, r.resource, r.owner, r.fencing_token,
                       CASE WHEN o.expires_at_ms <= lockd_write_now() THEN 'expired'
                            ELSE lockd_ending() END,
                       1
                FROM released AS r JOIN k AS o USING (tenant, resource)
                WHERE ascii(r.owner) <> 1 AND o.acquired_at_ms <> o.expires_at_ms",
            part!(
                $renews,
                "
                UNION ALL
                SELECT w.tenant, w.resource, w.owner, w.fencing_token, 'renewed', 1
                FROM renewed AS w JOIN k AS o USING (tenant, resource)
                WHERE ascii(w.owner) <> 1 AND o.acquired_at_ms <> o.expires_at_ms
                  AND w.expires_at_ms <> o.expires_at_ms"
            ),
            "
                ORDER BY side, tenant, resource
            ) AS c
        ) AS a
        WHERE a.total > 0
          AND (CASE WHEN current_setting('lockd.history', true) = 'off'
                      OR EXISTS (SELECT FROM acquired AS u
                                 WHERE u.updated AND NOT EXISTS (
                                     SELECT FROM k WHERE k.tenant = u.tenant
                                                     AND k.resource = u.resource))
                    THEN NULL
                    ELSE set_config('lockd.recorded', lockd_statement_mark(), true) END)
              IS NOT NULL
        OFFSET 0
    ) AS b)"
        )
    };
}
