//! The agreement check before any timing (docs/guide/how-a-run-works.md,
//! docs/guide/own-code.md), the one the worker runs: each arm gives the
//! same output twice on one input (no state carried from run to run), the
//! arms give the same output as each other where their outputs can be
//! compared (previews, commands' stdout and exit status, rows), and every
//! preview equals the plain in-memory calculation bit for bit.

use super::{build, Observation, Setting, Strategy};
use crate::strategy::error::Result;
use runner_core::record::Arm;
use runner_spec::{StrategyKind, WorkloadParams};

/// The two arms as the check sees them: in an A/A fork both are one
/// instance, so the check asks for an arm rather than holding two.
pub trait ArmPair {
    fn observe(&mut self, arm: Arm, input: u64) -> Result<Observation>;
    /// One instance serves both arms (an A/A fork).
    fn shared(&self) -> bool {
        false
    }
}

/// Two separate instances: an A/B fork's arms, or a test's.
pub struct Two<'a>(pub &'a mut dyn Strategy, pub &'a mut dyn Strategy);

impl ArmPair for Two<'_> {
    fn observe(&mut self, arm: Arm, input: u64) -> Result<Observation> {
        match arm {
            Arm::Baseline => self.0.observe(input),
            Arm::Treatment => self.1.observe(input),
        }
    }
}

/// How an arm is named in a message: `` `name` (label) ``, and whether
/// the check runs it.
pub struct Side<'a> {
    pub name: &'a str,
    pub label: String,
    /// The arm's output can be compared: a command with `compare_output =
    /// false` has only its exit status, which every timed run checks
    /// itself, so the check would run it for nothing (a pair of a long
    /// command's runs per fork) and does not.
    pub observed: bool,
}

impl Side<'_> {
    fn who(&self) -> String {
        format!("`{}` ({})", self.name, self.label)
    }
}

/// The arms' outputs differ where the check compares them: a fact about
/// the experiment file (the arms do not compute the same thing, or it
/// compares what it should not), so no re-run can pass it. Carried as an
/// error type so that `check` and `exec` can tell it from a failure that
/// running again might cure.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Disagreement(pub String);

/// What to change when command outputs differ: both arms' tables, or the
/// one strategy's.
fn output_hint(names: &[&str], first: &Observation) -> String {
    if !matches!(
        first,
        Observation::Command {
            stdout: Some(_),
            ..
        }
    ) {
        return String::new();
    }
    let mut names: Vec<&str> = names.to_vec();
    names.dedup();
    let tables: Vec<String> = names
        .iter()
        .map(|n| format!("[strategies.{}]", runner_spec::toml_key(n)))
        .collect();
    format!(
        "; if the output is meant to differ, set `compare_output = false` in {} (runner then checks only the exit status)",
        tables.join(" and ")
    )
}

/// `Some(true)` when the arms' outputs are comparable and equal, `None`
/// when they cannot be compared; a [`Disagreement`] when they differ.
fn compare_arms(
    b: &Observation,
    t: &Observation,
    baseline: &Side<'_>,
    treatment: &Side<'_>,
    shown: &str,
) -> Result<Option<bool>> {
    if !b.comparable(t) {
        return Ok(None);
    }
    if let Some(d) = b.difference(t) {
        return Err(Disagreement(format!(
            "baseline {} and treatment {} disagree on the same input ({shown}): {d}{}",
            baseline.who(),
            treatment.who(),
            output_hint(&[baseline.name, treatment.name], b)
        ))
        .into());
    }
    Ok(Some(true))
}

/// One more input for the arms' outputs to agree on, after
/// [`check_agreement`]: each arm once (an A/A fork's one instance twice),
/// so a rewrite that returns other rows only on some inputs is found
/// before timing rather than by the luck of the seed.
pub fn check_arms_agree(
    arms: &mut dyn ArmPair,
    baseline: &Side<'_>,
    treatment: &Side<'_>,
    input: u64,
    shown: &str,
) -> Result<()> {
    let b = arms.observe(Arm::Baseline, input)?;
    let t = arms.observe(Arm::Treatment, input)?;
    compare_arms(&b, &t, baseline, treatment, shown).map(|_| ())
}

/// What the check found, for run.json's `checks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agreement {
    /// The arms' outputs were comparable and equal (`None`: not comparable,
    /// e.g. spin against noop).
    pub arms_agree: Option<bool>,
    /// Every arm computing the preview equals the in-memory calculation.
    pub matches_in_memory: Option<bool>,
}

/// Observes baseline, treatment, baseline, treatment on `input` (an arm
/// whose output cannot be compared, [`Side::observed`], not at all) and errors,
/// naming the strategy and `shown` (the input as the user reads it), unless
/// they agree as the module says. With one instance for both arms, its two
/// runs already are the same strategy twice, so it runs twice, not four
/// times (this check is on the path to every fork's first timed run).
pub fn check_agreement(
    arms: &mut dyn ArmPair,
    baseline: &Side<'_>,
    treatment: &Side<'_>,
    workload: WorkloadParams,
    input: u64,
    shown: &str,
) -> Result<Agreement> {
    let shared = arms.shared();
    let mut observe = |arm: Arm, side: &Side<'_>| {
        if side.observed {
            arms.observe(arm, input)
        } else {
            Ok(Observation::Nothing)
        }
    };
    let b1 = observe(Arm::Baseline, baseline)?;
    let t1 = observe(Arm::Treatment, treatment)?;
    let (b2, t2) = if shared {
        (t1.clone(), b1.clone())
    } else {
        (
            observe(Arm::Baseline, baseline)?,
            observe(Arm::Treatment, treatment)?,
        )
    };
    for (side, first, again) in [(baseline, &b1, &b2), (treatment, &t1, &t2)] {
        if let Some(d) = first.difference(again) {
            return Err(Disagreement(format!(
                "strategy {} returned different results for the same input ({shown}): {d}; it carries state from one run to the next{}",
                side.who(),
                output_hint(&[side.name], first)
            ))
            .into());
        }
    }
    let arms_agree = compare_arms(&b1, &t1, baseline, treatment, shown)?;
    // Every strategy that computes the preview must agree with the plain
    // in-memory calculation: a database round trip that loses a bit shows here.
    let mut matches_in_memory = None;
    if matches!(b1, Observation::Preview(_)) || matches!(t1, Observation::Preview(_)) {
        let at = Setting::new(workload, None);
        let expected = build(&StrategyKind::InMemory, &at)?.observe(input)?;
        for (side, got) in [(baseline, &b1), (treatment, &t1)] {
            if let Observation::Preview(_) = got {
                if let Some(d) = got.difference(&expected) {
                    return Err(Disagreement(format!(
                        "strategy {} disagrees with the in-memory calculation on the same input ({shown}): {d}",
                        side.who()
                    ))
                    .into());
                }
                matches_in_memory = Some(true);
            }
        }
    }
    Ok(Agreement {
        arms_agree,
        matches_in_memory,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::Stdout;

    /// Arms that answer from a list and count what they were asked.
    struct Scripted {
        answers: Vec<Observation>,
        asked: Vec<Arm>,
    }

    impl ArmPair for Scripted {
        fn observe(&mut self, arm: Arm, _input: u64) -> Result<Observation> {
            self.asked.push(arm);
            Ok(self.answers.remove(0))
        }
    }

    fn command(out: &str) -> Observation {
        Observation::Command {
            status: "exit 0".into(),
            stdout: Some(Stdout::of(out.as_bytes())),
        }
    }

    fn side(name: &str, observed: bool) -> Side<'_> {
        Side {
            name,
            label: "command".into(),
            observed,
        }
    }

    fn check(arms: &mut Scripted, b: &Side<'_>, t: &Side<'_>) -> Result<Agreement> {
        let w = WorkloadParams::default();
        check_agreement(arms, b, t, w, 7, "input 7")
    }

    #[test]
    fn the_hint_names_each_table_as_toml_writes_it() {
        let mut arms = Scripted {
            answers: vec![
                command("1\n"),
                command("2\n"),
                command("1\n"),
                command("2\n"),
            ],
            asked: Vec::new(),
        };
        let e = check(&mut arms, &side("sort -n", true), &side("fast", true))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(
                "set `compare_output = false` in [strategies.\"sort -n\"] and [strategies.fast]"
            ),
            "{e}"
        );
        // What the hint names pastes into a file as it is.
        let table = e
            .split(" in ")
            .nth(1)
            .unwrap()
            .split(" and ")
            .next()
            .unwrap();
        let file = format!("{table}\ncompare_output = false\n");
        let parsed: toml::Table = toml::from_str(&file).unwrap();
        assert_eq!(
            parsed["strategies"]["sort -n"]["compare_output"].as_bool(),
            Some(false)
        );
    }

    #[test]
    fn an_arm_with_nothing_to_compare_is_not_run_by_the_check() {
        let mut arms = Scripted {
            answers: vec![command("1\n"), command("1\n")],
            asked: Vec::new(),
        };
        let found = check(&mut arms, &side("a", true), &side("b", false)).unwrap();
        assert_eq!(arms.asked, [Arm::Baseline, Arm::Baseline]);
        assert_eq!(found.arms_agree, None);
        let mut none = Scripted {
            answers: Vec::new(),
            asked: Vec::new(),
        };
        check(&mut none, &side("a", false), &side("b", false)).unwrap();
        assert!(none.asked.is_empty());
    }

    #[test]
    fn a_run_allowed_to_fail_is_compared_with_nothing() {
        let failed = Observation::Failed {
            code: "exit 1".into(),
        };
        let mut arms = Scripted {
            answers: vec![command("1\n"), command("1\n"), failed, command("1\n")],
            asked: Vec::new(),
        };
        check(&mut arms, &side("flaky", true), &side("b", true)).unwrap();
    }
}
