//! The owner `lockd run` holds its lock as when `--owner` is not given.
//!
//! An owner string is an identity: the server treats two requests with the same owner as the
//! same holder (a same-owner acquire is a re-grant with the same token). The default must
//! therefore differ between any two invocations, wherever they run. Host name and pid alone do
//! not: two containers with the same host name (host networking, compose scaling) each run
//! `lockd run` as pid 1. 64 random bits from the kernel make it unique; host and pid stay in
//! it for the humans reading `GET /locks`.

use std::io::Read;

/// The longest host name kept, so that the owner stays within the server's 255 bytes.
const MAX_HOST_BYTES: usize = 200;

/// `<host name>:<pid>:<16 hex digits of randomness>`, different for every call.
///
/// # Errors
/// When the kernel gives no random bytes (no `getrandom`, no `/dev/urandom`).
pub fn default_owner() -> std::io::Result<String> {
    Ok(format_owner(
        &host_name(),
        std::process::id(),
        random_u64()?,
    ))
}

fn format_owner(host: &str, pid: u32, random: u64) -> String {
    format!("{host}:{pid}:{random:016x}")
}

/// This machine's host name, `localhost` when it has none, cut to [`MAX_HOST_BYTES`].
fn host_name() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it when the
    // name fits (the last byte stays 0 otherwise).
    let result = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len() - 1) };
    let mut host = if result == 0 {
        let end = buffer.iter().position(|&b| b == 0).unwrap_or(0);
        String::from_utf8_lossy(&buffer[..end]).into_owned()
    } else {
        String::new()
    };
    host.retain(|c| !c.is_control());
    if host.is_empty() {
        return "localhost".to_owned();
    }
    let mut end = host.len().min(MAX_HOST_BYTES);
    while !host.is_char_boundary(end) {
        end -= 1;
    }
    host.truncate(end);
    host
}

/// 64 bits from the kernel's random source (`getrandom(2)`, else `/dev/urandom`).
fn random_u64() -> std::io::Result<u64> {
    let mut bytes = [0u8; 8];
    if !fill_with_getrandom(&mut bytes) {
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    }
    Ok(u64::from_ne_bytes(bytes))
}

/// Whether `getrandom(2)` filled `bytes` (it may be missing from an old kernel).
#[cfg(target_os = "linux")]
fn fill_with_getrandom(bytes: &mut [u8]) -> bool {
    let mut filled = 0;
    while filled < bytes.len() {
        let rest = &mut bytes[filled..];
        // SAFETY: the pointer and length describe the writable rest of `bytes`.
        let got = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        match usize::try_from(got) {
            Ok(got) => filled += got,
            Err(_) if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {
            }
            Err(_) => return false,
        }
    }
    true
}

#[cfg(not(target_os = "linux"))]
fn fill_with_getrandom(_bytes: &mut [u8]) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Same host, same pid (two containers' pid 1, or the same process twice): the owners must
    /// still differ, or both invocations would hold the lock at once.
    #[test]
    fn two_invocations_with_the_same_host_and_pid_get_different_owners() {
        let owners: std::collections::HashSet<String> = (0..1_000)
            .map(|_| default_owner().expect("random bytes"))
            .collect();
        assert_eq!(owners.len(), 1_000, "every default owner is new");
    }

    #[test]
    fn the_owner_keeps_host_and_pid_for_humans() {
        let owner = default_owner().expect("random bytes");
        let mut parts = owner.rsplitn(3, ':');
        let (random, pid, host) = (parts.next(), parts.next(), parts.next());
        assert_eq!(random.map(str::len), Some(16), "{owner}");
        assert!(
            random.unwrap().bytes().all(|b| b.is_ascii_hexdigit()),
            "{owner}"
        );
        assert_eq!(
            pid,
            Some(std::process::id().to_string().as_str()),
            "{owner}"
        );
        assert!(!host.unwrap_or_default().is_empty(), "{owner}");
        assert_eq!(format_owner("h", 1, 0xab), "h:1:00000000000000ab");
    }

    #[test]
    fn a_long_host_name_is_cut_so_the_owner_fits_the_server_limit() {
        let owner = format_owner(&"h".repeat(MAX_HOST_BYTES), u32::MAX, u64::MAX);
        assert!(owner.len() <= 255, "{}", owner.len());
    }
}
