//! lockd's schema for the raw ceilings' tests: the SQL of the migrations lockd embeds, read from
//! the repository's `migrations/` folder, so that a test can create the table the ceilings write to
//! without starting lockd.

use std::path::Path;

/// The `up.sql` scripts of `migrations/<backend>/`, in the order lockd applies them.
pub fn migrations(backend: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../migrations")
        .join(backend);
    let mut folders: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("read {}: {e}", root.display()))
        .map(|entry| entry.expect("a migration folder").path())
        .collect();
    folders.sort();
    folders
        .iter()
        .map(|folder| std::fs::read_to_string(folder.join("up.sql")).expect("read up.sql"))
        .collect()
}
