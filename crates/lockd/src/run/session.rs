//! `lockd run` (and `lockd elect`) under one session: open it and keep it alive from then on (a
//! wait may last longer than its TTL), take every lock as one set, all or none, then the permits
//! (or the leadership), each within what is left of `--wait`. When any part is not had, the
//! session is ended, so nothing is held and nothing runs. The locks come first, then the
//! permits, in every `lockd run`, so two of them never wait for each other in a circle.

use std::time::{Duration, Instant};

use lock_client::{LockClient, LockSpec, LocksAcquired};

use super::kept::Kept;
use super::target::{Acquisition, Target};
use super::timing::LeaseTiming;
use super::{exit, not_acquired, refused, release, renewer, start_renewer, waited, Holding};
use crate::cli::RunArgs;

/// Opens a session labelled `owner` and acquires every one of `targets` under it, or none.
pub(super) fn hold(
    client: &LockClient,
    args: &RunArgs,
    targets: &[Target],
    owner: &str,
    timing: LeaseTiming,
) -> Result<Holding, u8> {
    let deadline = Instant::now() + Duration::from_secs(args.wait);
    let opened_at = Instant::now();
    let session = client
        .open_session(args.ttl, Some(owner), None)
        .map_err(|error| refused(&error))?;
    let kept = Kept::Session {
        id: session.id.clone(),
        holds: holds_of(targets),
    };
    let (renewer, mut reports) = start_renewer(client, &kept, args.ttl, timing)?;
    let granted = match acquire_all(client, args, &session.id, targets, deadline) {
        Ok(granted) => granted,
        Err(code) => {
            drop(renewer);
            release(client, &kept);
            return Err(code);
        }
    };
    // The keepalives made while acquiring: the session counts from the last that succeeded.
    let mut renewed_at = opened_at;
    while let Ok(report) = reports.try_recv() {
        match report {
            renewer::Renewal::Renewed { sent_at } => renewed_at = renewed_at.max(sent_at),
            renewer::Renewal::Lost { why } => {
                eprintln!("lockd run: {why} while it was acquiring; nothing ran");
                return Err(exit::UNAVAILABLE);
            }
            renewer::Renewal::Failed(_) => {}
        }
    }
    Ok(Holding {
        env: env(&session.id, owner, &granted),
        kept,
        renewed_at,
        renewer,
        reports,
    })
}

/// Acquires `targets` under session `id` until `deadline`: the locks as one set (one lock
/// alone as itself), then each other target. Returns each with its fencing token, in the
/// order of `targets`' kinds: the locks, then the rest.
fn acquire_all(
    client: &LockClient,
    args: &RunArgs,
    id: &str,
    targets: &[Target],
    deadline: Instant,
) -> Result<Vec<(Target, i64)>, u8> {
    let (locks, others): (Vec<&Target>, Vec<&Target>) = targets
        .iter()
        .partition(|target| matches!(target, Target::Lock { .. }));
    let mut granted = Vec::with_capacity(targets.len());
    let one_by_one = if locks.len() > 1 {
        let specs: Vec<LockSpec> = locks
            .iter()
            .filter_map(|target| match target {
                Target::Lock { resource } => Some(LockSpec::exclusive(resource.clone())),
                _ => None,
            })
            .collect();
        let acquired = super::waiting::acquire_until(deadline, |wait_seconds| {
            Ok(set_acquired(client.acquire_all_in_session(
                id,
                &specs,
                wait_seconds,
                None,
            )?))
        });
        match acquired {
            Ok(Ok((tokens, _))) => {
                granted.extend(locks.iter().map(|&target| target.clone()).zip(tokens));
            }
            Ok(Err(unavailable)) => {
                eprintln!(
                    "lockd run: {}{}",
                    held_by_others(&unavailable),
                    waited(args.wait)
                );
                return Err(exit::NOT_ACQUIRED);
            }
            Err(error) => return Err(refused(&error)),
        }
        others
    } else {
        targets.iter().collect()
    };
    for target in one_by_one {
        let acquired = super::waiting::acquire_until(deadline, |wait_seconds| {
            target.acquire_in_session(client, id, wait_seconds)
        });
        match acquired {
            Ok(Ok((token, _))) => granted.push((target.clone(), token)),
            Ok(Err(_)) => {
                not_acquired(target, args.wait);
                return Err(exit::NOT_ACQUIRED);
            }
            Err(error) => return Err(refused(&error)),
        }
    }
    Ok(granted)
}

fn set_acquired(acquired: LocksAcquired) -> Acquisition<Vec<i64>> {
    match acquired {
        LocksAcquired::Granted(leases) => {
            Acquisition::Granted(leases.iter().map(|lease| lease.fencing_token).collect())
        }
        LocksAcquired::Unavailable {
            resources,
            retry_after_seconds,
        } => Acquisition::NotGranted {
            retry_after_seconds,
            unavailable: resources,
        },
    }
}

/// `"b" is held by another owner`, or `"b", "c" are held by other owners`.
fn held_by_others(unavailable: &[String]) -> String {
    let names: Vec<String> = unavailable.iter().map(|name| format!("{name:?}")).collect();
    match &names[..] {
        [one] => format!("{one} is held by another owner"),
        several => format!("{} are held by other owners", several.join(", ")),
    }
}

/// `"a", "b" and semaphore "s"`: what the session holds, for messages.
fn holds_of(targets: &[Target]) -> String {
    let names: Vec<String> = targets.iter().map(Target::describe).collect();
    match &names[..] {
        [] => String::new(),
        [one] => one.clone(),
        [first @ .., last] => format!("{} and {last}", first.join(", ")),
    }
}

/// The command's environment: `LOCKD_SESSION`, and for one thing held the variables it has
/// without a session; for several, `LOCKD_OWNER`, each lock's `LOCKD_RESOURCE_<i>` and
/// `LOCKD_FENCING_TOKEN_<i>` (from 1, in the order given), and the semaphore's `LOCKD_SEMAPHORE`,
/// `LOCKD_LIMIT`, `LOCKD_PERMITS` and `LOCKD_SEMAPHORE_FENCING_TOKEN`.
fn env(id: &str, owner: &str, granted: &[(Target, i64)]) -> Vec<(String, String)> {
    let mut env = match granted {
        [(target, token)] => target.env(owner, *token),
        several => {
            let mut env = vec![("LOCKD_OWNER".to_owned(), owner.to_owned())];
            let mut locks = 0;
            for (target, token) in several {
                if let Target::Lock { resource } = target {
                    locks += 1;
                    env.push((format!("LOCKD_RESOURCE_{locks}"), resource.clone()));
                    env.push((format!("LOCKD_FENCING_TOKEN_{locks}"), token.to_string()));
                    continue;
                }
                let described = target.described(owner, *token).into_iter();
                env.extend(described.map(|(name, value)| (name.to_owned(), value)));
                if let Target::Semaphore { .. } = target {
                    let name = "LOCKD_SEMAPHORE_FENCING_TOKEN".to_owned();
                    env.push((name, token.to_string()));
                }
            }
            env
        }
    };
    env.push(("LOCKD_SESSION".to_owned(), id.to_owned()));
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(name: &str) -> Target {
        Target::Lock {
            resource: name.into(),
        }
    }

    fn semaphore() -> Target {
        Target::Semaphore {
            name: "exports".into(),
            limit: 3,
            permits: 2,
        }
    }

    fn names(env: &[(String, String)]) -> Vec<String> {
        env.iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect()
    }

    #[test]
    fn one_thing_keeps_its_variables_and_several_are_numbered() {
        assert_eq!(
            names(&env("S", "job", &[(lock("a"), 7)])),
            [
                "LOCKD_RESOURCE=a",
                "LOCKD_OWNER=job",
                "LOCKD_FENCING_TOKEN=7",
                "LOCKD_SESSION=S"
            ]
        );
        assert_eq!(
            names(&env(
                "S",
                "job",
                &[(lock("b"), 8), (lock("a"), 9), (semaphore(), 10)]
            )),
            [
                "LOCKD_OWNER=job",
                "LOCKD_RESOURCE_1=b",
                "LOCKD_FENCING_TOKEN_1=8",
                "LOCKD_RESOURCE_2=a",
                "LOCKD_FENCING_TOKEN_2=9",
                "LOCKD_SEMAPHORE=exports",
                "LOCKD_LIMIT=3",
                "LOCKD_PERMITS=2",
                "LOCKD_SEMAPHORE_FENCING_TOKEN=10",
                "LOCKD_SESSION=S"
            ]
        );
    }

    #[test]
    fn messages_name_what_is_held_and_what_was_not_had() {
        assert_eq!(
            holds_of(&[lock("a"), lock("b"), semaphore()]),
            r#""a", "b" and semaphore "exports""#
        );
        assert_eq!(holds_of(&[lock("a")]), r#""a""#);
        assert_eq!(
            held_by_others(&["b".into()]),
            r#""b" is held by another owner"#
        );
        assert_eq!(
            held_by_others(&["b".into(), "c".into()]),
            r#""b", "c" are held by other owners"#
        );
    }
}
