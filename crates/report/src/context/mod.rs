//! The template's context (templates/README.md), built from `Serialize`
//! view-model structs with every number already computed, so templates only
//! choose words and call the filters of [`super::filters`]; every key is
//! documented in `templates/README.md`.
//!
//! The object of `analysis.json` sits at the top level unchanged
//! (`confidence`, `resamples`, `cells`, `headline`); each cell and headline
//! group carries one extra key, `view`, with what the report derives from it
//! (labels, sentences, thresholds). Beside them: `spec`, `environment`,
//! `database`, `run`, `reproduce`, `text` (sentences about the whole run),
//! `shard`, `merge`, `machines` (where the forks ran; none for an
//! ordinary run), and `machine_checks`.

mod cells;
pub mod comparison;
mod finding;
mod gate;
mod instructions;
mod layout;
mod machine_checks;
mod machines;
pub mod overhead;
mod placement;
mod plans;
mod reproduce;
mod sql;
mod sql_runs;
mod stop;

pub use cells::{CellText, CellView};
pub use finding::{GroupText, GroupView};
pub use gate::{advice_flags, advice_sets, GateRow, GateText, GateView};
pub use instructions::{count as count_text, CacheRow, InstructionsRow, InstructionsView};
pub use layout::{FactorRow, LayoutRow, LayoutView};
pub use machine_checks::{CheckRow, FlaggedFork, MachineChecksView};
pub use machines::{HostRow, MachinesText, MachinesView, MergeView, ShardView};
pub use placement::{PlacementRow, PlacementView};
pub use reproduce::{reproduce_command, Reproduce};
pub use stop::{StopRow, StopView};

use runner_analysis::{Analysis, GroupHeadline};
use runner_db::DbInfo;
use runner_folder::RunInfo;
use runner_os::environment::Environment;
use runner_spec::Experiment;
use serde::Serialize;

/// The whole context.
#[derive(Debug, Serialize)]
pub struct Context<'a> {
    /// analysis.json's format (`output::format`).
    pub format_version: u32,
    pub confidence: f64,
    pub resamples: u32,
    pub cells: Vec<CellView<'a>>,
    pub headline: HeadlineView<'a>,
    /// The regression gate's verdict and self-check; none without `[gate]`.
    pub gate: Option<GateView<'a>>,
    /// The A/B comparison in the user's words (effects, ranked variants);
    /// none when every cell is an A/A.
    pub comparison: Option<comparison::ComparisonView>,
    pub spec: SpecView<'a>,
    pub environment: &'a Environment,
    pub database: Option<DatabaseView>,
    pub run: RunView,
    pub reproduce: Reproduce,
    pub text: RunText,
    /// This folder is one shard of a run (`exec --shard I/N`).
    pub shard: Option<ShardView>,
    /// This folder was joined from shards by `runner merge`.
    pub merge: Option<MergeView>,
    /// The forks ran on more than one host: `analysis.json`'s `machines`
    /// with its `view`.
    pub machines: Option<MachinesView<'a>>,
    /// The machine checks at the start and each fork's sentinel.
    pub machine_checks: MachineChecksView,
    /// What the forks pinned and the CPUs they used; none for runs recorded
    /// before runner had placement.
    pub placement: Option<PlacementView>,
    /// The spread of fork medians under each memory layout; none unless
    /// some fork recorded a layout.
    pub layout: Option<LayoutView>,
    /// A sequential design's rule and where each cell stopped; none for a
    /// fixed design.
    pub stop: Option<StopView>,
    /// `sql` arms: their setup and search_path, private copies, plans;
    /// none when no arm runs SQL.
    pub sql: Option<sql::SqlView>,
    /// A run that counts instructions (`design.measure`): the Finding's
    /// lines, the tables and what counted; none for a run that times alone.
    pub instructions: Option<InstructionsView>,
}

/// `analysis.json`'s `headline`: the first group's fields at top level, and
/// every group, each with its `view`.
#[derive(Debug, Serialize)]
pub struct HeadlineView<'a> {
    #[serde(flatten)]
    pub first: GroupView<'a>,
    pub groups: Vec<GroupView<'a>>,
    /// With several groups, the A/B ones (whose delays say nothing about
    /// the harness) named in one sentence instead of one paragraph each.
    pub arms_differ: Option<String>,
}

/// The experiment as run, plus what the report says about its arms.
#[derive(Debug, Serialize)]
pub struct SpecView<'a> {
    /// The experiment as recorded, its title's placeholders filled
    /// ([`title_of`]).
    #[serde(flatten)]
    pub experiment: std::borrow::Cow<'a, Experiment>,
    /// The experiment file as given.
    pub path: &'a str,
    pub sha256: &'a str,
    pub baseline_kind: &'static str,
    pub treatment_kind: &'static str,
    pub is_aa: bool,
    /// An arm computes the preview, so `workload` means something.
    pub reads_workload: bool,
    /// The strategies the arms run: the baseline, then each treatment.
    pub arms: Vec<&'a str>,
    /// Every treatment, in the file's order (one, or several variants).
    pub variants: Vec<&'a str>,
    /// Strategy name -> its kind's label (`command`, `sql`, ...).
    pub kinds: std::collections::BTreeMap<&'a str, &'static str>,
    /// Strategy name -> what a `command` or `sql` strategy runs, as the
    /// file wrote it, Markdown-quoted; none for the preview kinds.
    pub runs: std::collections::BTreeMap<&'a str, Option<String>>,
}

/// The database the strategies used, as recorded, plus a URL without the
/// password and a one-line description.
#[derive(Debug, Serialize)]
pub struct DatabaseView {
    /// `sqlite` or `postgres`.
    pub backend: String,
    /// `sqlite_version()` or the server's `SELECT version()`.
    pub version: String,
    /// Server facts for PostgreSQL; none for SQLite (always present).
    pub postgres: Option<runner_db::PgInfo>,
    /// `postgres://USER@HOST:PORT/DB` (no password); none for SQLite.
    pub url: Option<String>,
    /// `PostgreSQL 15.18 (...) at 127.0.0.1:54329, database bench` or
    /// `embedded SQLite 3.46.0`.
    pub label: String,
    /// What runner promised about the user's database and whether the
    /// fingerprint check held, in sentences (PostgreSQL runs with the
    /// database guard; none for older runs).
    pub promise: Option<String>,
    /// The role could act past any rollback (superuser, server roles).
    pub warning: Option<String>,
}

/// This run: ids, seeds, counts and times.
#[derive(Debug, Serialize)]
pub struct RunView {
    pub run_id: String,
    pub master_seed: u64,
    pub seed_drawn: bool,
    /// The recorded invocation as an argv (`runner exec ...`), quoted for
    /// a POSIX shell.
    pub command_line: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// Finished forks over all cells.
    pub forks_run: usize,
    /// Jobs planned (cells x forks) and cells.
    pub jobs: usize,
    pub cells: usize,
    pub arms_compared: bool,
    pub arms_agree: bool,
    pub matches_in_memory: bool,
    pub has_delays: bool,
    /// A comparison whose grid sweeps two or more levels of concurrent
    /// clients: the report has `clients.svg`.
    pub clients_swept: bool,
    /// Sum of the forks' wall times, seconds.
    pub wall_s: f64,
    /// Wall time against time measured; none for runs recorded before
    /// runner kept the parent's time per fork. Set by `report::render_run`,
    /// which has the pairs.
    pub overhead: Option<overhead::OverheadView>,
    /// `release` or `debug`: the build of runner that measured.
    pub build_profile: String,
    /// `RUNNER_FAULT` as the workers saw it (debug builds only), else none.
    pub fault: Option<String>,
    /// Pairs imported by `runner analyze`: the file and how it was read
    /// (run.json's `imported`); none for runs runner measured.
    pub imported: Option<runner_folder::Imported>,
    /// Processes the user's commands left running after their runs, which
    /// runner's sweep killed, over all forks (0: none, or not recorded).
    pub left_processes: u64,
    /// Forks with any such process.
    pub forks_leaving_processes: usize,
    /// The run's commands ran under runner's process containment (recorded
    /// per fork since runner has it): the report states the promise.
    pub commands_contained: bool,
}

/// Sentences about the whole run, in plain text (no Markdown), shared by
/// the report and the terminal summary.
#[derive(Debug, Serialize)]
pub struct RunText {
    /// `95 %`: the confidence level as a label.
    pub confidence: String,
    /// `5 %`: the share of forks that may report a difference at d = 0 by
    /// chance (1 - confidence).
    pub nominal_false_positives: String,
    /// Which figures come from one run on one machine, and what a repeat
    /// with the same seed does and does not reproduce.
    pub one_run: String,
    /// The widest spread of baseline fork medians within a cell, against
    /// the injected delays; none with one fork per cell.
    pub spread: Option<String>,
    /// The variance section's note on the search and the design that ran;
    /// none with one fork per cell.
    pub design_search: Option<String>,
    /// Whether any headline group's forks ran at two speeds.
    pub two_speeds: bool,
    /// `20 ns`: the clock's step that every D was dithered within
    /// (`analysis::dither`); none when the run was not dithered.
    pub dither_step: Option<String>,
    /// The machine's memory: `23.5 GiB`.
    pub memory: String,
    /// The header of a table's first column: `true delay` for a study of
    /// one group, `variant` for several treatments, else `cell`.
    pub key: &'static str,
    /// How the order intervals were resampled ([`resampling`]); none
    /// without an order interval (blocked order, or no fork with the
    /// treatment in both positions).
    pub order_resampling: Option<&'static str>,
    /// The same for the carry-over intervals.
    pub carry_over_resampling: Option<&'static str>,
    /// How the counts of a fork's pairs were chosen when the file left
    /// them out (`report::format::runs_chosen`); none when it set them.
    pub runs_chosen: Option<String>,
}

/// `forks` when every cell's contrast resampled whole forks, each keeping
/// its runs (`stats::resamples_whole_forks` of the forks it used), `forks
/// and runs` when none did (the runs inside each chosen fork resampled
/// too), `mixed` otherwise; none when no cell
/// has an interval. `used` is each cell's forks used, for cells with one.
fn resampling(used: impl Iterator<Item = u32>) -> Option<&'static str> {
    let (mut whole, mut nested) = (false, false);
    for n in used {
        if runner_stats::resamples_whole_forks(n as usize) {
            whole = true;
        } else {
            nested = true;
        }
    }
    match (whole, nested) {
        (true, false) => Some("forks"),
        (false, true) => Some("forks and runs"),
        (true, true) => Some("mixed"),
        (false, false) => None,
    }
}

/// Builds the context of one run.
pub fn build<'a>(info: &'a RunInfo, analysis: &'a Analysis) -> Context<'a> {
    let exp = &info.spec().experiment;
    let cells = cell_views(info, analysis);
    let machines = machines::machines(info, analysis, &cells);
    let machine_checks = machine_checks::view(info, &cells);
    let comparison = comparison_view(info, analysis, &cells);
    let headline = headline_view(info, analysis);
    Context {
        format_version: analysis.format_version,
        confidence: analysis.confidence,
        resamples: analysis.resamples,
        text: run_text(info, analysis, &headline),
        cells,
        headline,
        comparison,
        gate: analysis.gate.as_ref().map(|g| {
            let overrides = gate::overrides(info);
            gate::view(g, exp, analysis.confidence, &overrides)
        }),
        spec: spec_view(info),
        environment: info.environment(),
        database: database_view(info),
        sql: sql::build(info),
        run: run_view(info),
        reproduce: reproduce::build(info),
        shard: machines::shard(info),
        merge: machines::merge(info),
        machines,
        machine_checks,
        placement: placement::view(info, analysis),
        layout: layout::view(analysis, exp, &super::numbers::percent(analysis.confidence)),
        stop: stop::view(analysis, exp, info),
        instructions: instructions::view(info, analysis, |c| cells::label(c, analysis, exp)),
    }
}

/// A cell's sentences name its arms and depend on whether they run alike.
fn cell_views<'a>(info: &RunInfo, analysis: &'a Analysis) -> Vec<CellView<'a>> {
    let exp = &info.spec().experiment;
    analysis
        .cells
        .iter()
        .map(|c| {
            let names = cells::Names {
                baseline: comparison::baseline_of(info, c.cell),
                treatment: comparison::treatment_of(info, c.cell),
            };
            cells::view(c, analysis, exp, names, same_arms(info, c.cell))
        })
        .collect()
}

/// A group's cells share their arms, so its first cell speaks for it.
fn group_same_arms(info: &RunInfo, g: &GroupHeadline) -> bool {
    g.cells.first().is_some_and(|&c| same_arms(info, c))
}

/// A ratio timed to an arm's errors must carry that warning beside it.
fn comparison_view(
    info: &RunInfo,
    analysis: &Analysis,
    cells: &[CellView<'_>],
) -> Option<comparison::ComparisonView> {
    let all_groups: Vec<&GroupHeadline> = analysis.headline.groups.iter().collect();
    let same_group: Vec<bool> = all_groups
        .iter()
        .map(|g| group_same_arms(info, g))
        .collect();
    let mut comparison = comparison::view(cells, &all_groups, &same_group, analysis.confidence);
    if let Some(c) = comparison.as_mut() {
        // An arm that failed runs is timed to its errors: the Finding says
        // so beside the ratio it qualifies.
        c.warnings.extend(sql_runs::failure_warnings(info));
    }
    comparison
}

/// Templates read the first group at the top level, as analysis.json has it.
fn headline_view<'a>(info: &RunInfo, analysis: &'a Analysis) -> HeadlineView<'a> {
    let exp = &info.spec().experiment;
    let group = |g: &'a GroupHeadline| finding::view(g, analysis, exp, group_same_arms(info, g));
    let groups: Vec<GroupView<'a>> = analysis.headline.groups.iter().map(group).collect();
    let arms_differ = finding::arms_differ(&groups);
    HeadlineView {
        first: group(&analysis.headline.first),
        groups,
        arms_differ,
    }
}

/// The report and the terminal summary share these sentences, so both agree.
fn run_text(info: &RunInfo, analysis: &Analysis, headline: &HeadlineView<'_>) -> RunText {
    let exp = &info.spec().experiment;
    RunText {
        confidence: super::numbers::percent(analysis.confidence),
        nominal_false_positives: super::numbers::percent(1.0 - analysis.confidence),
        one_run: finding::one_run(info),
        spread: cells::spread_sentence(analysis, exp),
        design_search: cells::design_search_sentence(analysis, exp),
        two_speeds: headline.groups.iter().any(|g| g.view.two_speeds.is_some()),
        dither_step: Some(runner_analysis::run::clock_resolution_ns(info))
            .filter(|&r| r > 0.0)
            .map(super::numbers::delay),
        key: table_key(info, analysis),
        memory: format!(
            "{:.1} GiB",
            info.environment().memory_bytes as f64 / f64::from(1u32 << 30)
        ),
        order_resampling: order_resampling(analysis),
        carry_over_resampling: carry_over_resampling(analysis),
        runs_chosen: super::numbers::runs_chosen(&exp.design),
    }
}

/// A table's first column is named for what its rows differ in.
fn table_key(info: &RunInfo, analysis: &Analysis) -> &'static str {
    let exp = &info.spec().experiment;
    if exp.design.treatments.len() > 1
        && analysis.headline.groups.len() == exp.design.treatments.len()
    {
        "variant"
    } else if analysis.headline.groups.len() == 1 && (exp.design.is_aa() || run_has_delays(info)) {
        "true delay"
    } else {
        "cell"
    }
}

/// An order interval resamples only the forks it kept, not those left out.
fn order_resampling(analysis: &Analysis) -> Option<&'static str> {
    resampling(analysis.cells.iter().filter_map(|c| match &c.order {
        runner_analysis::Order::PairedRandom {
            ci_ns: Some(_),
            forks_left_out,
            ..
        } => Some(c.forks_total - forks_left_out),
        _ => None,
    }))
}

/// Each arm's carry-over interval leaves out its own forks, so each counts.
fn carry_over_resampling(analysis: &Analysis) -> Option<&'static str> {
    resampling(
        analysis
            .cells
            .iter()
            .flat_map(|c| [&c.carry_over.baseline, &c.carry_over.treatment].map(|a| (c, a)))
            .filter(|(_, a)| a.ci_ns.is_some())
            .map(|(c, a)| c.forks_total - a.forks_left_out),
    )
}

/// The setup section names each arm's kind and what it runs, not just keys.
fn spec_view(info: &RunInfo) -> SpecView<'_> {
    let exp = &info.spec().experiment;
    SpecView {
        experiment: match title_of(info) {
            Some(title) => std::borrow::Cow::Owned(Experiment {
                title,
                ..exp.clone()
            }),
            None => std::borrow::Cow::Borrowed(exp),
        },
        path: &info.spec().path,
        sha256: &info.spec().sha256,
        baseline_kind: exp.strategies[&exp.design.baseline].label(),
        treatment_kind: exp.strategies[&exp.design.treatment].label(),
        is_aa: exp.design.is_aa(),
        reads_workload: exp
            .design
            .arms()
            .iter()
            .any(|n| exp.strategies[*n].reads_workload()),
        arms: exp.design.arms(),
        variants: exp.design.variants(),
        kinds: exp
            .strategies
            .iter()
            .map(|(name, kind)| (name.as_str(), kind.label()))
            .collect(),
        runs: exp
            .strategies
            .iter()
            .map(|(name, kind)| (name.as_str(), runs(kind)))
            .collect(),
    }
}

/// The title with each placeholder of a swept key filled, when it has
/// one: the value of the run's one cell, or every value in cell order in
/// braces, as a shell's brace expansion lists them (`gzip -1 -c vs gzip
/// -{2,6} -c`); none when the title has no such placeholder.
fn title_of(info: &RunInfo) -> Option<String> {
    use runner_spec::placeholder::{substitute, Fill};
    let title = &info.spec().experiment.title;
    let mut filled = false;
    let text = substitute(title, false, |name| {
        let mut values: Vec<String> = Vec::new();
        for c in info.cells().iter().filter(|c| c.role.is_experiment()) {
            if let Some(v) = c.params.get(name).map(runner_plan::param_text) {
                if !values.contains(&v) {
                    values.push(v);
                }
            }
        }
        match values.as_slice() {
            [] => Fill::Keep,
            [one] => {
                filled = true;
                Fill::With(one.clone())
            }
            many => {
                filled = true;
                Fill::With(format!("{{{}}}", many.join(",")))
            }
        }
    })
    .text;
    filled.then_some(text)
}

/// Whether both arms of a cell run the same thing: an A/A experiment, or
/// a cell that binds both arms' strategies (sweeps and placeholders
/// applied) to the same settings, like the `gzip -1` cells of a sweep that
/// also tries `gzip -6`.
fn same_arms(info: &RunInfo, cell: u32) -> bool {
    let exp = &info.spec().experiment;
    if exp.design.is_aa() {
        return true;
    }
    let Some(cell) = info.cells().iter().find(|c| c.cell == cell) else {
        return false;
    };
    let runs = |name: &str| {
        let mut kind = runner_plan::bind(exp, cell, name);
        // Keys that only steer the checks, not what runs.
        if let runner_spec::StrategyKind::Command(c) = &mut kind {
            c.compare_output = true;
            c.allow_failure = false;
            c.timeout_ns = None;
        }
        kind
    };
    let (baseline, treatment) = cell.arms(&exp.design);
    // Pairs another harness measured say nothing of what ran but the
    // arms' names.
    if runs(baseline) == runner_spec::StrategyKind::Imported {
        return baseline == treatment;
    }
    runs(baseline) == runs(treatment)
}

/// What a `command` or `sql` strategy runs, as the file wrote it, for the
/// setup section; `None` for the preview kinds.
fn runs(kind: &runner_spec::StrategyKind) -> Option<String> {
    use runner_spec::{Program, StrategyKind};
    match kind {
        StrategyKind::Command(c) => Some(match &c.program {
            Program::Argv(a) => format!("`{}`", runner_core::shell::join(a)),
            Program::Shell(s) => format!("`{s}` (through /bin/sh)"),
        }),
        StrategyKind::Sql(s) => Some(match &s.run.file {
            Some(f) => format!("the SQL in `{f}`"),
            None => {
                let text = s.run.text.split_whitespace().collect::<Vec<_>>().join(" ");
                let text = if text.chars().count() > 160 {
                    format!("{}...", text.chars().take(157).collect::<String>())
                } else {
                    text
                };
                format!("`{}`", text.replace('`', "'"))
            }
        }),
        _ => None,
    }
}

fn database_view(info: &RunInfo) -> Option<DatabaseView> {
    let db: DbInfo = serde_json::from_value(info.database().clone()?).ok()?;
    let (url, label) = match &db.postgres {
        Some(pg) => {
            let user = pg
                .user
                .as_deref()
                .map_or(String::new(), |u| format!("{u}@"));
            let url = format!("postgres://{user}{}:{}/{}", pg.host, pg.port, pg.database);
            let server = pg
                .server_version
                .split_whitespace()
                .next()
                .unwrap_or(&pg.server_version);
            let at = match pg.transport.as_str() {
                "unix" => format!("a Unix socket in {}", pg.host),
                _ => format!("{}:{}", pg.host, pg.port),
            };
            let label = format!("PostgreSQL {server} at {at}, database {}", pg.database);
            (Some(url), label)
        }
        None if db.backend == "sqlite" => (None, format!("embedded SQLite {}", db.version)),
        None => (None, format!("{} {}", db.backend, db.version)),
    };
    let warning = db.postgres.as_ref().and_then(|p| p.role_warning());
    Some(DatabaseView {
        backend: db.backend,
        version: db.version,
        postgres: db.postgres,
        url,
        label,
        promise: promise(info),
        warning,
    })
}

/// The README's promise about the user's database, as this run kept it:
/// the mechanism, then what the guard compared and found.
fn promise(info: &RunInfo) -> Option<String> {
    let guards: Vec<_> = info
        .forks()
        .iter()
        .filter_map(|f| f.database_guard.as_ref())
        .collect();
    let first = guards.first()?;
    let held = guards.iter().filter(|g| g.held).count();
    let verdict = if held == info.forks().len() {
        let n = info.forks().len();
        match residue(&guards) {
            None => format!("its content was unchanged after every one of the {n} forks (this run did not count the dead row versions that rolled-back writes leave in a table)"),
            Some(left) if left.is_empty() => format!("it was unchanged after every one of the {n} forks, and rolled-back writes left no dead row versions in its tables"),
            Some(left) => format!("its content was unchanged after every one of the {n} forks, but rolled-back writes left {}; they stay, taking space and slowing scans, until VACUUM reclaims them", left.join("; ")),
        }
    } else {
        format!(
            "**it changed during {} of {} forks**",
            info.forks().len() - held,
            info.forks().len()
        )
    };
    // Arms with concurrent clients share a schema their set-up committed.
    let clients = info
        .forks()
        .iter()
        .any(|f| f.summary.sql.as_ref().is_some_and(|s| s.clients.is_some()));
    let how = if clients {
        "each fork's runs live in transactions that are rolled back (measured runs under savepoints, each concurrent client in a transaction of its own), and a COMMIT of one fails by construction; the arms with concurrent clients commit their private copies and setup into their own schema, checked before the commit to reach nothing outside it, and drop it after the fork"
    } else {
        "each fork's setup and runs live in a transaction that is rolled back (measured runs under savepoints), and a COMMIT of it fails by construction"
    };
    Some(format!(
        "runner never commits what a fork writes: {how}; what PostgreSQL does not roll back (sequences, COPY to or from files and programs, large objects, advisory locks, LISTEN/NOTIFY, server administration, dblink) is refused before the run. A fingerprint of the database outside runner's schemas ({} relations, {} sequences, {} schemas, {} functions: catalog rows, committed row changes, live rows{}, sequence values) was taken before and after each fork: {verdict}.",
        first.relations,
        first.sequences,
        first.schemas,
        first.functions,
        if guards.iter().all(|g| g.residue.is_some()) {
            ", dead rows, table sizes"
        } else {
            ""
        }
    ))
}

/// Per table, what rolled-back writes left over the forks
/// (`12000 dead row versions and 1.2 MiB in public.acc, in 2 of 2 forks`);
/// `None` when a fork's record predates the count.
fn residue(guards: &[&runner_db::fingerprint::GuardRecord]) -> Option<Vec<String>> {
    let mut tables: std::collections::BTreeMap<&str, (u64, u64, usize)> = Default::default();
    for g in guards {
        for r in g.residue.as_ref()? {
            let t = tables.entry(&r.table).or_default();
            t.0 += r.dead_rows;
            t.1 += r.bytes;
            t.2 += 1;
        }
    }
    let size = |b: u64| {
        let b = b as f64;
        match b {
            b if b >= 1024.0 * 1024.0 * 1024.0 => {
                format!("{:.1} GiB", b / (1024.0 * 1024.0 * 1024.0))
            }
            b if b >= 1024.0 * 1024.0 => format!("{:.1} MiB", b / (1024.0 * 1024.0)),
            b => format!("{:.0} KiB", b / 1024.0),
        }
    };
    Some(
        tables
            .iter()
            .map(|(table, (dead, bytes, forks))| {
                format!(
                    "{dead} dead row version{} and {} more on disk in {table}, in {forks} of {} forks",
                    if *dead == 1 { "" } else { "s" },
                    size(*bytes),
                    guards.len()
                )
            })
            .collect(),
    )
}

/// An experiment cell injects a delay: the run is (also) a study of the
/// harness. A gate's self-check cells do not count.
fn run_has_delays(info: &RunInfo) -> bool {
    info.cells()
        .iter()
        .any(|c| c.role.is_experiment() && c.delay_ns > 0)
}

fn run_view(info: &RunInfo) -> RunView {
    let checks = || info.forks().iter().map(|f| &f.checks);
    RunView {
        run_id: info.run_id().to_string(),
        master_seed: info.seeds().master,
        seed_drawn: info.seeds().drawn,
        command_line: runner_core::shell::join(&info.invocation().to_argv()),
        started_at: info.started_at().to_string(),
        finished_at: info.finished_at().clone(),
        forks_run: info.forks().len(),
        // The plan's, also in a shard or a partial merge (which say what
        // share of it they hold).
        jobs: runner_plan::self_check::job_count(&info.spec().experiment, info.cells()) as usize,
        cells: info.cells().len(),
        arms_compared: checks().any(|c| c.arms_agree == Some(true)),
        arms_agree: checks().all(|c| c.arms_agree != Some(false)),
        matches_in_memory: checks().any(|c| c.matches_in_memory == Some(true)),
        has_delays: run_has_delays(info),
        clients_swept: info.spec().experiment.grid.clients.len() >= 2
            && !(info.spec().experiment.design.is_aa() || run_has_delays(info)),
        wall_s: info.forks().iter().map(|f| f.wall_ns).sum::<u64>() as f64 / 1e9,
        overhead: None,
        build_profile: info.build().profile.clone(),
        fault: info.build().fault.clone(),
        imported: info.imported().clone(),
        left_processes: info.forks().iter().map(|f| f.summary.left_processes).sum(),
        forks_leaving_processes: info
            .forks()
            .iter()
            .filter(|f| f.summary.left_processes > 0)
            .count(),
        commands_contained: info.forks().iter().any(|f| f.summary.commands_contained),
    }
}

#[cfg(test)]
mod tests;
