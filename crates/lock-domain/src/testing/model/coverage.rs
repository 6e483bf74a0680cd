//! What a checked run covered, counted per kind of answer, so that a property test can prove its
//! generator reaches the expiry boundary, takeovers and refusals.

/// How much of the interesting ground a run covered: lets a test prove its generator reaches the
/// expiry boundary, takeovers and refusals rather than trusting it does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    pub ops: usize,
    pub new_grants: usize,
    pub same_token_grants: usize,
    /// New grants over a lock that had expired (not released).
    pub takeovers_after_expiry: usize,
    pub held: usize,
    pub released: usize,
    pub renewed: usize,
    pub forbidden: usize,
    pub not_found: usize,
    pub status_live: usize,
    pub status_none: usize,
    /// Operations on a resource whose lease ended exactly at that instant.
    pub at_expiry_boundary: usize,
}

impl std::ops::AddAssign for Coverage {
    fn add_assign(&mut self, other: Self) {
        self.ops += other.ops;
        self.new_grants += other.new_grants;
        self.same_token_grants += other.same_token_grants;
        self.takeovers_after_expiry += other.takeovers_after_expiry;
        self.held += other.held;
        self.released += other.released;
        self.renewed += other.renewed;
        self.forbidden += other.forbidden;
        self.not_found += other.not_found;
        self.status_live += other.status_live;
        self.status_none += other.status_none;
        self.at_expiry_boundary += other.at_expiry_boundary;
    }
}
