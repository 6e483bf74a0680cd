//! The contract case for the store's health: `ping` answers.

use super::Harness;

pub async fn ping_answers(h: &dyn Harness) {
    h.open().await.ping().await.expect("ping answers");
}
