//! Fencing tokens, whatever the primitive that draws them. lockd draws every new token from one
//! counter after the request was invoked, so a new grant's token is larger than every token an
//! answer completed before that invoke showed ([`Floor`]); and a token belongs to one lease, so a
//! token shown for two holders was reused ([`reused`]). Each primitive's checks say which answers
//! are surely new grants, what one holder is, and how a finding reads; these find the evidence.

use std::collections::HashMap;

use crate::history::Micros;

/// Every token shown, by the completion of the answer that showed it, with the running maximum:
/// which token an answer completed before a given instant had already shown, at the most.
#[derive(Debug, Clone)]
pub(crate) struct Floor<T> {
    /// `(complete, token, who)`, sorted: `who` (an op id, an index) breaks ties, so that the
    /// first showing of the largest token is the one named.
    shown: Vec<(Micros, i64, T)>,
    /// `best[i]`: the largest token among `shown[..=i]`, and its first `who`.
    best: Vec<(i64, T)>,
}

impl<T: Copy + Ord> Floor<T> {
    /// The floor of the showings `(complete, token, who)`.
    pub(crate) fn new(mut shown: Vec<(Micros, i64, T)>) -> Self {
        shown.sort_unstable();
        let mut best: Vec<(i64, T)> = Vec::with_capacity(shown.len());
        for &(_, token, who) in &shown {
            let running = best.last().copied().filter(|&(t, _)| t >= token);
            best.push(running.unwrap_or((token, who)));
        }
        Self { shown, best }
    }

    /// The largest token shown by an answer completed before `instant`, and who showed it first
    /// (`None`: no answer had completed).
    pub(crate) fn before(&self, instant: Micros) -> Option<(i64, T)> {
        let completed = self
            .shown
            .partition_point(|&(complete, _, _)| complete < instant);
        completed.checked_sub(1).map(|i| self.best[i])
    }
}

/// One token shown for two holders: the first holder it was shown for and the op that showed it,
/// then the other holder and its op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reuse<H> {
    pub(crate) token: i64,
    pub(crate) first: (H, usize),
    pub(crate) then: (H, usize),
}

/// The tokens of `shown` (`(token, holder, op id)`, in the order the answers are judged) that
/// were shown for another holder than the first one they were shown for, each token once, at
/// most `most` of them (one is enough to fail, a few show whether it is a pattern).
pub(crate) fn reused<H: Copy + PartialEq>(
    shown: impl IntoIterator<Item = (i64, H, usize)>,
    most: usize,
) -> Vec<Reuse<H>> {
    let mut first: HashMap<i64, (H, usize)> = HashMap::new();
    let mut found: Vec<Reuse<H>> = Vec::new();
    if most == 0 {
        return found;
    }
    for (token, holder, op) in shown {
        let (was, by) = *first.entry(token).or_insert((holder, op));
        if was == holder || found.iter().any(|reuse| reuse.token == token) {
            continue;
        }
        found.push(Reuse {
            token,
            first: (was, by),
            then: (holder, op),
        });
        if found.len() == most {
            break;
        }
    }
    found
}

#[cfg(test)]
mod tests;
