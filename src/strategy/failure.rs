//! A run that failed and was allowed to (`allow_failure = true` on an
//! `sql` arm): its code, carried in the run's [`super::Outcome`] out of the
//! timed region (the record of it a fork keeps in run.json is
//! `runner_folder::FailedRun`).

/// The failure's code (a SQLSTATE, or SQLite's `SQLITE_<code>`) stored
/// inline: an outcome is copied per run and must not allocate.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FailCode {
    bytes: [u8; 23],
    len: u8,
}

impl FailCode {
    /// `code` cut to 23 bytes at a character boundary (SQLSTATEs have 5).
    pub fn new(code: &str) -> FailCode {
        let mut end = code.len().min(23);
        while !code.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0; 23];
        bytes[..end].copy_from_slice(&code.as_bytes()[..end]);
        FailCode {
            bytes,
            len: end as u8,
        }
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl std::fmt::Debug for FailCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FailCode({})", self.as_str())
    }
}

/// The fingerprint of a failed run: its code, so the checksum still
/// follows what each run returned.
pub(crate) fn fingerprint(code: &FailCode) -> u64 {
    use std::hash::{DefaultHasher, Hasher};
    let mut h = DefaultHasher::new();
    h.write(b"failed ");
    h.write(code.as_str().as_bytes());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_round_trips_and_a_long_one_is_cut_at_a_character() {
        assert_eq!(FailCode::new("40P01").as_str(), "40P01");
        assert_eq!(FailCode::new("").as_str(), "");
        let long = "é".repeat(20);
        let cut = FailCode::new(&long);
        assert_eq!(cut.as_str(), "é".repeat(11));
        assert_ne!(
            fingerprint(&FailCode::new("40P01")),
            fingerprint(&FailCode::new("40001"))
        );
    }
}
