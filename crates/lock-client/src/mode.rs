//! The two modes a lock is held in.

use serde::{Deserialize, Serialize};

/// How a lock is held: `Exclusive` (one holder excludes every other; the default, and the only
/// mode of servers before shared locks) or `Shared` (one of several readers, each with its own
/// lease and fencing token; an exclusive holder excludes them all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Exclusive,
    Shared,
}

impl Mode {
    /// The mode as the API spells it: `exclusive` or `shared`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exclusive => "exclusive",
            Self::Shared => "shared",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Mode;

    #[test]
    fn modes_read_and_write_as_the_api_spells_them() {
        for (mode, text) in [(Mode::Exclusive, "exclusive"), (Mode::Shared, "shared")] {
            assert_eq!(serde_json::to_string(&mode).unwrap(), format!("\"{text}\""));
            assert_eq!(
                serde_json::from_str::<Mode>(&format!("\"{text}\"")).unwrap(),
                mode
            );
            assert_eq!(mode.to_string(), text);
        }
        assert!(serde_json::from_str::<Mode>("\"read\"").is_err());
        assert_eq!(Mode::default(), Mode::Exclusive);
    }
}
