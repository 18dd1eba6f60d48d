//! "Did you mean `warmup_pairs`?": the valid name nearest to a misspelt
//! one, for unknown keys, choices, strategy names and placeholders.
//!
//! Nearness is the optimal string alignment distance (Levenshtein with
//! adjacent transpositions, as rustc and cargo use for their own
//! suggestions): a name is offered only when it is at most a third of the
//! longer word's length away (at least one edit), so `comand` finds
//! `command` and `python` finds nothing.

/// The candidate nearest to `word`, if one is near enough; ties go to the
/// first in `candidates`' order.
pub(crate) fn nearest<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == word {
            continue;
        }
        let d = distance(word, c);
        let (a, b) = (word.chars().count(), c.chars().count());
        // Within a third of the longer word, and never the whole of the
        // shorter one (`b` is no misspelling of `a`).
        if d > (a.max(b) / 3).max(1) || d >= a.min(b) {
            continue;
        }
        if best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// " did you mean `NAME`?" (with its leading space, to append to a
/// sentence part), or nothing.
pub(crate) fn did_you_mean<'a, I>(word: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    nearest(word, candidates).map_or_else(String::new, |c| format!(" did you mean `{c}`?"))
}

/// Optimal string alignment distance between `a` and `b`, by characters.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    let at = |i: usize, j: usize| i * width + j;
    for i in 0..=a.len() {
        d[at(i, 0)] = i;
    }
    for j in 0..=b.len() {
        d[at(0, j)] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[at(i - 1, j)] + 1)
                .min(d[at(i, j - 1)] + 1)
                .min(d[at(i - 1, j - 1)] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[at(i - 2, j - 2)] + 1);
            }
            d[at(i, j)] = v;
        }
    }
    d[at(a.len(), b.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_count_edits_and_swaps() {
        assert_eq!(distance("comand", "command"), 1);
        assert_eq!(distance("warmup_pair", "warmup_pairs"), 1);
        assert_eq!(distance("slwo", "slow"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
    }

    #[test]
    fn only_a_near_name_is_offered() {
        let keys = ["baseline", "warmup_pairs", "pairs"];
        assert_eq!(nearest("warmup_pair", keys), Some("warmup_pairs"));
        assert_eq!(nearest("pair", keys), Some("pairs"));
        assert_eq!(nearest("python", ["command", "sql", "noop"]), None);
        assert_eq!(nearest("scrach", ["input", "scratch"]), Some("scratch"));
        assert_eq!(
            did_you_mean("comand", ["command", "sql"]),
            " did you mean `command`?"
        );
        assert_eq!(did_you_mean("zzz", ["command"]), "");
        assert_eq!(nearest("b", ["a"]), None);
    }
}
