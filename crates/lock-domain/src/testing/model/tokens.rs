//! How the repository's fencing tokens relate to the model's: their values differ, but a grant
//! keeps the token or takes a larger one in both.

use std::collections::HashMap;

use crate::FencingToken;

/// The repository's tokens may be numbered differently from the model's: what must agree is
/// whether a grant kept the token or took a new one larger than any before on the resource.
#[derive(Debug, Default)]
pub(super) struct TokenRelations {
    repository_token_of: HashMap<u64, FencingToken>,
    highest_for: HashMap<&'static str, FencingToken>,
}

impl TokenRelations {
    pub(super) fn new_grant(
        &mut self,
        resource: &'static str,
        model_token: u64,
        got: FencingToken,
    ) -> Result<(), String> {
        if let Some(highest) = self.highest_for.get(resource) {
            if got <= *highest {
                return Err(format!(
                    "a new grant must carry a token larger than every earlier one on {resource:?} \
                     (highest {highest}), got {got}"
                ));
            }
        }
        self.highest_for.insert(resource, got);
        self.repository_token_of.insert(model_token, got);
        Ok(())
    }

    pub(super) fn same(&self, model_token: u64, got: FencingToken) -> Result<(), String> {
        match self.repository_token_of.get(&model_token) {
            Some(&want) if want == got => Ok(()),
            Some(want) => Err(format!("expected the kept token {want}, got {got}")),
            None => Err(format!("the model's token {model_token} was never granted")),
        }
    }
}
