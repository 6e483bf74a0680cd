//! The failovers of a run (`--backend postgres-ha`), for people: when the primary was killed,
//! when its port refused connections, when the standby was promoted, when the first acquire and
//! the first grant were answered after that (from the history), and when the old primary was back
//! in sync. An acquire answered "held" went through the new primary as a grant does, so the first
//! one shows when lockd wrote there again; the first grant also waits for a free lock.

use lock_safety::history::Micros;
use lock_safety::{History, Outcome};

use crate::ha_cluster::Failover;

/// One line a failover and a line of totals; nothing when there were none.
pub(crate) fn report(history: &History, failovers: &[Failover]) -> String {
    if failovers.is_empty() {
        return String::new();
    }
    let ms = |from: Micros, to: Micros| (to - from) / 1000;
    let at = |t: Micros| (t - history.start) as f64 / 1e6;
    let mut text = format!("{} failovers:\n", failovers.len());
    let mut promotions = Vec::new();
    let mut first_grants = Vec::new();
    let mut first_answers = Vec::new();
    for f in failovers {
        promotions.push(ms(f.killed, f.promoted));
        // The first grant answered once the standby took writes; and any answered between the
        // kill and the promotion (a commit the standby had confirmed before the kill).
        let first = grants(history)
            .filter(|&complete| complete >= f.promoted)
            .min();
        let while_down = grants(history)
            .filter(|&complete| complete >= f.killed && complete < f.promoted)
            .count();
        let answered = acquires_answered(history)
            .filter(|&complete| complete >= f.promoted)
            .min();
        let answered = match answered {
            Some(complete) => {
                first_answers.push(ms(f.promoted, complete));
                format!(
                    "first acquire answered {} ms after the promotion",
                    ms(f.promoted, complete)
                )
            }
            None => "no acquire answered after the promotion".to_owned(),
        };
        let first = match first {
            Some(complete) => {
                first_grants.push(ms(f.promoted, complete));
                format!(
                    "first grant answered {} ms after the promotion ({} ms after the kill)",
                    ms(f.promoted, complete),
                    ms(f.killed, complete)
                )
            }
            None => "no grant answered after the promotion".to_owned(),
        };
        let in_sync = match f.in_sync {
            Some(t) => format!(
                "old primary back as synchronous standby after {} ms",
                ms(f.promoted, t)
            ),
            None => "old primary not back in sync".to_owned(),
        };
        text.push_str(&format!(
            "  [{:.3}s] node {} -> node {}: kill -9 of {} processes, port refused after {} ms, \
             promoted {} ms after the kill; {answered}, {first}; {while_down} grants answered in \
             between; {in_sync}\n",
            at(f.killed),
            f.from,
            f.to,
            f.processes,
            ms(f.killed, f.down),
            ms(f.killed, f.promoted),
        ));
    }
    text.push_str(&format!(
        "  kill -> promoted: {}; promoted -> first acquire answered: {}; promoted -> first grant: \
         {}\n",
        spread(&promotions),
        spread(&first_answers),
        spread(&first_grants)
    ));
    text
}

/// When each acknowledged grant was answered.
fn grants(history: &History) -> impl Iterator<Item = Micros> + '_ {
    history
        .ops
        .iter()
        .filter(|op| matches!(op.outcome, Outcome::Granted(_)))
        .map(|op| op.complete)
}

/// When each acquire answered granted or held was answered.
fn acquires_answered(history: &History) -> impl Iterator<Item = Micros> + '_ {
    history
        .ops
        .iter()
        .filter(|op| matches!(op.outcome, Outcome::Granted(_) | Outcome::Held))
        .map(|op| op.complete)
}

/// "min .. max ms (median m)", or "none".
fn spread(values: &[Micros]) -> String {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    match (sorted.first(), sorted.last()) {
        (Some(min), Some(max)) => {
            format!("{min} .. {max} ms (median {})", sorted[sorted.len() / 2])
        }
        _ => "none".to_owned(),
    }
}
