//! The repository contract suite: every [`crate::LeaseStore`] must pass these, whatever its
//! storage.
//!
//! Each case is a public async function over a [`Harness`];
//! [`repository_contract_suite!`](crate::repository_contract_suite) (crate root) turns all of them
//! into `#[tokio::test]`s for one adapter. Durations are chosen so that a harness whose clock is
//! real (a database server's) can advance by sleeping. The cases live in one file per topic
//! (acquire, status, release, renew, listing, ...) under `contract/`.

mod acquire;
mod admin;
mod concurrency;
mod fencing;
mod fixtures;
mod health;
mod history;
mod listing;
mod lock_delay;
mod multi;
mod observed_expiry;
mod refusals;
mod release;
mod renew;
mod semaphore_namespaces;
mod semaphores;
mod sessions;
mod shared;
mod shared_concurrency;
mod status;
mod takeover;
mod tenants;
mod undo;
mod usage;
mod values;

pub use acquire::{
    acquire_free_resource_is_granted, acquire_held_by_another_owner_is_refused_and_changes_nothing,
    owners_and_names_are_case_sensitive_literal_data,
    same_owner_reacquire_regrants_from_now_and_keeps_the_token,
};
pub use admin::a_force_release_ends_every_live_lease_of_one_name_and_frees_it;
pub use concurrency::{
    concurrent_acquires_of_a_free_resource_have_exactly_one_winner,
    concurrent_acquires_of_an_expired_resource_have_exactly_one_winner,
    contended_acquire_release_cycles_never_overlap,
};
pub use fencing::fencing_tokens_increase_across_release_expiry_and_reopening;
pub use health::ping_answers;
pub use history::{
    an_expiry_an_observer_saw_is_recorded_once, every_change_to_a_lock_is_recorded_in_order,
    history_pages_and_the_stream_see_each_record_once_and_pruning_drops_the_oldest,
    semaphores_readers_and_elections_are_recorded_by_kind_and_tenant,
};
pub use listing::{
    list_is_per_tenant, list_limit_bounds_the_page, list_orders_names_bytewise,
    list_pages_have_no_duplicates_or_gaps_while_locks_are_added, list_prefix_is_literal,
    list_shows_only_live_locks_with_their_remaining_ttl,
};
pub use lock_delay::{
    a_lease_that_ran_out_keeps_its_place_for_its_lock_delay,
    a_semaphore_grant_that_ran_out_keeps_its_permits_for_its_lock_delay,
};
pub use multi::{
    a_set_is_granted_whole_in_request_order, a_set_with_one_lock_held_changes_nothing,
    racing_overlapping_sets_are_each_all_or_nothing,
};
pub use observed_expiry::{
    a_writer_taking_over_from_run_out_readers_records_their_expiry_first,
    an_expired_permit_an_observer_saw_is_recorded_once,
    an_expired_reader_an_observer_saw_is_recorded_once,
};
pub use refusals::{
    a_place_kept_by_a_lock_delay_is_refused_until_the_delay_ends,
    a_refused_acquire_says_who_holds_until_when_or_which_mode,
    a_refused_permit_says_the_room_the_limit_or_the_permits,
};
pub use release::{
    a_release_then_an_acquire_answer_as_one_after_the_other,
    release_by_another_owner_is_forbidden_and_changes_nothing,
    release_by_the_owner_deletes_the_lock, release_of_unknown_or_expired_lock_is_not_found,
};
pub use renew::{
    renew_by_another_owner_is_forbidden_and_changes_nothing,
    renew_by_the_owner_moves_only_the_expiry,
    renew_keeps_a_short_lease_alive_past_its_first_expiry,
    renew_of_unknown_or_expired_lock_is_not_found,
};
pub use semaphore_namespaces::{
    list_semaphores_pages_live_ones_in_name_order, semaphores_are_apart_from_locks_and_tenants,
};
pub use semaphores::{
    a_limit_is_kept_while_a_holder_is_live,
    a_permit_renew_moves_only_the_expiry_and_the_value_it_carries,
    a_regrant_replaces_the_value_only_when_given, concurrent_acquires_never_exceed_the_limit,
    contended_permit_cycles_never_exceed_the_limit, expired_holders_free_their_permits,
    permits_are_granted_up_to_the_limit_and_no_further,
    releasing_frees_the_permits_of_that_owner_only,
    the_same_owner_is_regranted_its_permits_or_refused_others,
    undo_permit_grant_ends_only_that_exact_grant,
};
pub use sessions::{
    a_force_release_after_a_session_ran_out_ends_nothing_live,
    a_forced_end_is_recorded_with_its_reason, a_grant_under_a_session_nobody_heard_of_is_undone,
    a_place_taken_again_under_its_session_still_ends_with_it,
    a_reader_whose_session_ran_out_is_recorded_expired,
    a_release_then_an_acquire_under_sessions_answer_as_one_after_the_other,
    a_session_opens_is_kept_alive_and_ends_once,
    a_session_that_runs_out_ends_every_hold_and_keeps_their_places,
    acquires_under_a_session_see_what_another_store_did_to_it,
    an_end_racing_acquires_under_its_session_leaves_no_hold,
    an_end_racing_releases_under_its_session_ends_each_hold_once,
    an_unknown_session_grants_nothing, closing_a_session_ends_every_hold_at_once_and_frees_them,
    holds_taken_over_after_their_session_ran_out_were_held_to_its_end,
    holds_under_a_session_are_its_own_and_move_with_each_keepalive,
    live_sessions_are_listed_by_id_with_their_holds,
    releases_under_a_session_see_what_another_store_did_to_it,
};
pub use shared::{
    a_reader_is_regranted_and_renewed_on_its_own_lease,
    a_writer_excludes_readers_and_a_mode_is_never_changed_in_place,
    a_writer_takes_over_once_every_reader_has_expired, readers_and_sets_are_per_tenant,
    readers_share_a_lock_and_a_writer_is_refused, the_last_reader_leaving_lets_a_writer_in,
    undo_shared_grant_ends_only_that_exact_grant,
};
pub use shared_concurrency::racing_readers_and_writers_never_hold_in_two_modes_at_once;
pub use status::{
    status_of_unknown_or_expired_lock_is_none, statuses_answer_like_status_for_each_lock_in_order,
    statuses_of_many_locks_keep_their_order,
};
pub use takeover::{
    expired_lock_is_taken_over_with_a_larger_token,
    expired_takeovers_count_only_leases_that_ran_out,
    leases_that_ran_out_are_taken_once_with_how_long_they_were_held,
};
pub use tenants::tenants_are_independent_namespaces;
pub use undo::undo_grant_ends_only_that_exact_grant;
pub use usage::live_leases_are_counted_per_tenant_one_per_holder;
pub use values::{
    a_lock_s_value_is_kept_replaced_and_never_inherited,
    setting_a_value_changes_nothing_else_and_only_for_a_live_holder,
};

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::{HistoryRepository, LeaseStore, LeaseUsage, SessionStore, StoreHealth};

/// What the suite needs of a store: every port of the use cases (the lease port, the sessions,
/// the history, the count of live leases) and its statistics. The cases call the lease port through
/// [`crate::testing::calls::LeaseCalls`], one [`crate::LeaseOp`] a call.
pub trait ContractStore:
    LeaseStore + SessionStore + HistoryRepository + LeaseUsage + StoreHealth
{
}

impl<S> ContractStore for S where
    S: LeaseStore + SessionStore + HistoryRepository + LeaseUsage + StoreHealth
{
}

/// One adapter's storage, as the suite sees it.
#[async_trait]
pub trait Harness: Send + Sync {
    /// Opens a repository over this harness's storage. A second call opens another one over the
    /// same storage, as a restarted (or second) server process would.
    async fn open(&self) -> Arc<dyn ContractStore>;

    /// Lets `by` pass on the clock the repository decides expiry with (a manual clock moves, a
    /// real one is slept on).
    async fn advance(&self, by: Duration);
}

/// Expands to one `#[tokio::test]` per contract case for the harness that `$harness` evaluates to
/// (the expression may `.await`). The calling crate needs `tokio` with `macros` and
/// `rt-multi-thread`.
#[macro_export]
macro_rules! repository_contract_suite {
    ($harness:expr) => {
        $crate::repository_contract_suite!(@cases $harness;
            acquire_free_resource_is_granted,
            acquire_held_by_another_owner_is_refused_and_changes_nothing,
            same_owner_reacquire_regrants_from_now_and_keeps_the_token,
            owners_and_names_are_case_sensitive_literal_data,
            status_of_unknown_or_expired_lock_is_none,
            statuses_answer_like_status_for_each_lock_in_order,
            statuses_of_many_locks_keep_their_order,
            expired_lock_is_taken_over_with_a_larger_token,
            expired_takeovers_count_only_leases_that_ran_out,
            leases_that_ran_out_are_taken_once_with_how_long_they_were_held,
            release_by_the_owner_deletes_the_lock,
            release_by_another_owner_is_forbidden_and_changes_nothing,
            release_of_unknown_or_expired_lock_is_not_found,
            a_release_then_an_acquire_answer_as_one_after_the_other,
            undo_grant_ends_only_that_exact_grant,
            renew_by_the_owner_moves_only_the_expiry,
            renew_keeps_a_short_lease_alive_past_its_first_expiry,
            renew_by_another_owner_is_forbidden_and_changes_nothing,
            renew_of_unknown_or_expired_lock_is_not_found,
            fencing_tokens_increase_across_release_expiry_and_reopening,
            concurrent_acquires_of_a_free_resource_have_exactly_one_winner,
            concurrent_acquires_of_an_expired_resource_have_exactly_one_winner,
            contended_acquire_release_cycles_never_overlap,
            tenants_are_independent_namespaces,
            ping_answers,
            list_orders_names_bytewise,
            list_prefix_is_literal,
            list_pages_have_no_duplicates_or_gaps_while_locks_are_added,
            list_limit_bounds_the_page,
            list_shows_only_live_locks_with_their_remaining_ttl,
            list_is_per_tenant,
            permits_are_granted_up_to_the_limit_and_no_further,
            the_same_owner_is_regranted_its_permits_or_refused_others,
            a_limit_is_kept_while_a_holder_is_live,
            releasing_frees_the_permits_of_that_owner_only,
            expired_holders_free_their_permits,
            a_permit_renew_moves_only_the_expiry_and_the_value_it_carries,
            a_regrant_replaces_the_value_only_when_given,
            concurrent_acquires_never_exceed_the_limit,
            contended_permit_cycles_never_exceed_the_limit,
            undo_permit_grant_ends_only_that_exact_grant,
            semaphores_are_apart_from_locks_and_tenants,
            list_semaphores_pages_live_ones_in_name_order,
            readers_share_a_lock_and_a_writer_is_refused,
            a_writer_excludes_readers_and_a_mode_is_never_changed_in_place,
            the_last_reader_leaving_lets_a_writer_in,
            a_writer_takes_over_once_every_reader_has_expired,
            a_reader_is_regranted_and_renewed_on_its_own_lease,
            undo_shared_grant_ends_only_that_exact_grant,
            racing_readers_and_writers_never_hold_in_two_modes_at_once,
            a_lock_s_value_is_kept_replaced_and_never_inherited,
            setting_a_value_changes_nothing_else_and_only_for_a_live_holder,
            a_lease_that_ran_out_keeps_its_place_for_its_lock_delay,
            a_semaphore_grant_that_ran_out_keeps_its_permits_for_its_lock_delay,
            a_set_is_granted_whole_in_request_order,
            a_set_with_one_lock_held_changes_nothing,
            racing_overlapping_sets_are_each_all_or_nothing,
            readers_and_sets_are_per_tenant,
            every_change_to_a_lock_is_recorded_in_order,
            an_expiry_an_observer_saw_is_recorded_once,
            an_expired_reader_an_observer_saw_is_recorded_once,
            an_expired_permit_an_observer_saw_is_recorded_once,
            a_writer_taking_over_from_run_out_readers_records_their_expiry_first,
            semaphores_readers_and_elections_are_recorded_by_kind_and_tenant,
            history_pages_and_the_stream_see_each_record_once_and_pruning_drops_the_oldest,
            a_force_release_ends_every_live_lease_of_one_name_and_frees_it,
            live_leases_are_counted_per_tenant_one_per_holder,
            a_refused_acquire_says_who_holds_until_when_or_which_mode,
            a_place_kept_by_a_lock_delay_is_refused_until_the_delay_ends,
            a_refused_permit_says_the_room_the_limit_or_the_permits,
            a_session_opens_is_kept_alive_and_ends_once,
            holds_taken_over_after_their_session_ran_out_were_held_to_its_end,
            acquires_under_a_session_see_what_another_store_did_to_it,
            releases_under_a_session_see_what_another_store_did_to_it,
            holds_under_a_session_are_its_own_and_move_with_each_keepalive,
            closing_a_session_ends_every_hold_at_once_and_frees_them,
            a_forced_end_is_recorded_with_its_reason,
            a_session_that_runs_out_ends_every_hold_and_keeps_their_places,
            an_unknown_session_grants_nothing,
            live_sessions_are_listed_by_id_with_their_holds,
            a_grant_under_a_session_nobody_heard_of_is_undone,
            a_force_release_after_a_session_ran_out_ends_nothing_live,
            a_reader_whose_session_ran_out_is_recorded_expired,
            an_end_racing_acquires_under_its_session_leaves_no_hold,
            a_place_taken_again_under_its_session_still_ends_with_it,
            an_end_racing_releases_under_its_session_ends_each_hold_once,
            a_release_then_an_acquire_under_sessions_answer_as_one_after_the_other
        );
    };
    (@cases $harness:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                let harness = $harness;
                $crate::testing::contract::$case(&harness).await;
            }
        )*
    };
}
