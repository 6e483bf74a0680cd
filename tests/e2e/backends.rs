//! Running one end-to-end test on both backends: `on_both_backends!(name)` turns the shared
//! `fn name(db: TestDatabase)` into the tests `name::sqlite` and `name::postgres`.
//!
//! The PostgreSQL variant returns early, after `TestDatabase::postgres` has printed a loud skip
//! message, only when the server is unreachable and `LOCKD_REQUIRE_POSTGRES` is not set.

/// For each test function named, a module of the same name holding its `sqlite` and `postgres`
/// tests. The database is an argument of the shared function, so it outlives the servers the
/// function starts (arguments are dropped after the function's locals).
macro_rules! on_both_backends {
    ($($test:ident),+ $(,)?) => {
        $(
            mod $test {
                use lock_store_diesel::testing::TestDatabase;

                #[test]
                fn sqlite() {
                    super::$test(TestDatabase::sqlite());
                }

                #[test]
                fn postgres() {
                    if let Some(db) = TestDatabase::postgres() {
                        super::$test(db);
                    }
                }
            }
        )+
    };
}
