//! SQLite: a batch's records as stored, an LZ4 block of their JSON array (its length first, as
//! four little-endian bytes), and `lockd_records`, the function of every connection of the store
//! that reads one back (migration 16).
//!
//! A W1 commit's records are about 1.7 kB of JSON that repeats itself (tenant, kind, event,
//! names alike): LZ4 makes them about a quarter of that (1,691 to 437 bytes), so a page holds
//! nine commits' batches instead of two, and the batches allocate a new page (and rewrite the
//! database's header, which counts its pages) every ninth commit instead of every other one.
//! Batches written before migration 16 are JSON text, and are read as they are: the reads take
//! [`sqlite_records_json`]'s expression, which unpacks blobs only.

use diesel::sqlite::SqliteConnection;
use diesel::QueryResult;

/// The most a batch's records may say they take unpacked: far more than any transaction of the
/// writer records (a sweep or an undo records at most a few thousand), and a bound on what a
/// corrupt length could make a read allocate.
const MAX_UNPACKED: usize = 64 << 20;

/// What `lockd_records` answers for a blob that is not a batch it can unpack: not JSON, so the
/// read that meets it fails (`json_each`: malformed JSON) instead of skipping its records.
const CORRUPT: &str = "lockd: a history batch that cannot be unpacked";

/// The JSON array of a batch's records, packed for storage.
pub(crate) fn pack(json: &str) -> Vec<u8> {
    lz4_flex::block::compress_prepend_size(json.as_bytes())
}

/// The JSON array [`pack`] packed, or `None` when `packed` is not one.
pub(crate) fn unpack(packed: &[u8]) -> Option<String> {
    let (length, block) = packed.split_first_chunk::<4>()?;
    let length = u32::from_le_bytes(*length) as usize;
    if length > MAX_UNPACKED {
        return None;
    }
    let bytes = lz4_flex::block::decompress(block, length).ok()?;
    String::from_utf8(bytes).ok()
}

diesel::define_sql_function! {
    /// A batch's records, packed, as their JSON array (see the module documentation).
    #[sql_name = "lockd_records"]
    fn lockd_records(packed: diesel::sql_types::Binary) -> diesel::sql_types::Text;
}

/// Registers `lockd_records` on `conn`.
///
/// # Errors
/// When SQLite refuses the function.
pub(crate) fn register(conn: &mut SqliteConnection) -> QueryResult<()> {
    lockd_records_utils::register_impl(conn, |packed: Vec<u8>| {
        unpack(&packed).unwrap_or_else(|| CORRUPT.to_owned())
    })
}

/// The JSON array of the records of the batch `b`, packed or (written before migration 16) not.
macro_rules! sqlite_records_json {
    () => {
        "CASE WHEN typeof(b.records) = 'blob' THEN lockd_records(b.records) ELSE b.records END"
    };
}

#[cfg(test)]
mod tests {
    use super::{pack, unpack, MAX_UNPACKED};

    #[test]
    fn what_is_packed_unpacks_and_what_is_not_does_not() {
        for json in [
            "[]",
            r#"[["t","lock","n","o",1,"granted",null,0]]"#,
            "é 漢 🔒",
        ] {
            assert_eq!(unpack(&pack(json)).as_deref(), Some(json));
        }
        let long = format!(
            "[{}]",
            vec![r#"["t","lock","n","o",1,"granted",null,0]"#; 500].join(",")
        );
        let packed = pack(&long);
        assert!(
            packed.len() * 10 < long.len(),
            "{} of {}",
            packed.len(),
            long.len()
        );
        assert_eq!(unpack(&packed), Some(long));
        let too_long = u32::try_from(MAX_UNPACKED + 1).unwrap().to_le_bytes();
        for broken in [
            &b""[..],
            b"\x05\x00",
            b"\x05\x00\x00\x00\xff\xff",
            &too_long,
        ] {
            assert_eq!(unpack(broken), None, "{broken:?}");
        }
    }
}
