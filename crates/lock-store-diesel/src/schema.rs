//! The diesel view of the tables (see `migrations/`).

diesel::table! {
    distributed_locks (tenant, resource) {
        tenant -> Text,
        resource -> Text,
        owner -> Text,
        acquired_at_ms -> BigInt,
        expires_at_ms -> BigInt,
        fencing_token -> BigInt,
        regranted -> Bool,
        value -> Nullable<Text>,
        lock_delay_ms -> BigInt,
    }
}
