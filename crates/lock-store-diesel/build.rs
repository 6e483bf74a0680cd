//! Rebuilds the crate when a migration changes: `embed_migrations!` does not track its files.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
