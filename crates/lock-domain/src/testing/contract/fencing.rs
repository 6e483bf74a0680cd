//! The contract case for fencing tokens: they strictly increase across release, expiry and a
//! reopened repository.

use super::fixtures::{granted, name, owner, status, tenant, PAST_SHORT};
use super::Harness;
use crate::testing::calls::LeaseCalls;
use crate::{FencingToken, ReleaseResult};

pub async fn fencing_tokens_increase_across_release_expiry_and_reopening(h: &dyn Harness) {
    let repo = h.open().await;
    let mut tokens: Vec<FencingToken> = Vec::new();
    tokens.push(granted(&*repo, "r", "alice", 30).await.fencing_token);
    assert_eq!(
        repo.release(tenant(), name("r"), owner("alice"))
            .await
            .expect("answers"),
        ReleaseResult::Released(tokens[0]),
        "a release reports the token of the grant it ended"
    );
    tokens.push(granted(&*repo, "r", "alice", 1).await.fencing_token);
    h.advance(PAST_SHORT).await;
    tokens.push(granted(&*repo, "r", "bob", 30).await.fencing_token);
    assert_eq!(
        repo.release(tenant(), name("r"), owner("bob"))
            .await
            .expect("answers"),
        ReleaseResult::Released(tokens[2])
    );
    drop(repo);

    let reopened = h.open().await;
    tokens.push(granted(&*reopened, "r", "carol", 30).await.fencing_token);
    // A held lock survives reopening with its token.
    let held = status(&*reopened, "r")
        .await
        .expect("still held after reopening");
    assert_eq!(held.fencing_token, *tokens.last().expect("pushed"));
    assert!(
        tokens.windows(2).all(|w| w[0] < w[1]),
        "tokens {tokens:?} strictly increase"
    );
}
