//! Memory layout as a design factor (docs/guide/layout.md).
//!
//! The size of a process's environment, where its stack and heap start and
//! address-space randomization shift timings by more than many published
//! effects (Mytkowicz et al., ASPLOS 2009), and re-randomizing them turns
//! that bias into variance (Curtsinger & Berger, ASPLOS 2013). runner
//! starts a fresh worker per fork anyway, so each fork can be one seeded
//! layout sample, recorded, and the analysis can say what layout explained.
//!
//! - `system` (the default): what runner did before layout existed: no
//!   padding, no offsets, ASLR as the system has it, nothing recorded.
//! - `fixed`: one layout for every fork of the run (drawn from the master
//!   seed) and ASLR off for the worker, so forks differ by everything but
//!   layout.
//! - `random`: each fork draws its own from its job seed, ASLR on.
//!
//! The parent applies what must exist before the worker's first
//! instruction (environment padding, the personality); the worker applies
//! the heap offset before setup and the stack offset before timing, and
//! records what it saw ([`ForkLayout`]).

use rand::SeedableRng;
use runner_core::seed::{self, Domain};
use serde::{Deserialize, Serialize};
use std::fmt;

/// `design.layout` and each value of `grid.layout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    System,
    Fixed,
    Random,
}

/// Today's behaviour stays the default until data says otherwise (the
/// committed layout reports do not: see docs/guide/layout.md).
pub const DEFAULT: Layout = Layout::System;

/// The spellings `design.layout` accepts, for error messages.
pub const VALID: &str = "\"system\" (no padding, ASLR as the system has it; default), \"fixed\" (one layout for every fork, ASLR off) or \"random\" (a seeded layout per fork, ASLR on)";

/// The environment variable whose value pads the worker's environment
/// (and so that of every command it starts).
pub const PAD_VAR: &str = "RUNNER_LAYOUT_PAD";
/// Upper bound of the environment padding, in bytes (inclusive).
pub const MAX_PAD_BYTES: u32 = 4096;
/// Stack and heap offsets are multiples of this (the ABI's stack alignment
/// and malloc's granularity: a finer offset would be rounded away).
pub const OFFSET_STEP: u32 = 16;
/// Stack and heap offsets are below 4 KiB: `OFFSET_STEPS` steps.
const OFFSET_STEPS: u64 = 256;

impl Layout {
    pub fn parse(s: &str) -> Option<Layout> {
        match s {
            "system" => Some(Layout::System),
            "fixed" => Some(Layout::Fixed),
            "random" => Some(Layout::Random),
            _ => None,
        }
    }

    pub fn is_system(&self) -> bool {
        *self == Layout::System
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layout::System => "system",
            Layout::Fixed => "fixed",
            Layout::Random => "random",
        })
    }
}

/// What the parent decides for one fork before starting it: a pure
/// function of the master seed and the job's seed, so `check` shows it and
/// run.json can be checked against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutPlan {
    pub layout: Layout,
    /// The seed the three sizes were drawn from: the run's layout seed for
    /// `fixed`, the fork's for `random`.
    pub seed: u64,
    /// Length of the value of `RUNNER_LAYOUT_PAD`.
    pub env_pad_bytes: u32,
    /// Extra stack the worker's frames take before the timed runs.
    pub stack_offset_bytes: u32,
    /// Size of an allocation held from before the strategies' setup.
    pub heap_offset_bytes: u32,
}

impl LayoutPlan {
    /// ASLR is asked off under `fixed`, on under `random`.
    pub fn aslr_asked(&self) -> bool {
        self.layout != Layout::Fixed
    }

    /// The value of [`PAD_VAR`].
    pub fn padding(&self) -> String {
        "x".repeat(self.env_pad_bytes as usize)
    }
}

/// The seed `fixed` draws from: one per run, so every fork of every cell
/// gets the same layout.
pub fn fixed_seed(master: u64) -> u64 {
    seed::derive(master, Domain::Layout, &[])
}

/// The seed `random` draws from for one fork: under its own tag, so the
/// job's input and coin streams are not disturbed.
pub fn fork_seed(job_seed: u64) -> u64 {
    seed::derive(job_seed, Domain::Layout, &[])
}

/// The sizes `seed` gives: padding 0..=4096 bytes, offsets 0..4096 in steps
/// of 16, in that order, with runner's own sampler (`seed::below`).
pub fn draw(layout: Layout, seed: u64) -> LayoutPlan {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let env_pad_bytes = seed::below(&mut rng, u64::from(MAX_PAD_BYTES) + 1) as u32;
    let stack_offset_bytes = seed::below(&mut rng, OFFSET_STEPS) as u32 * OFFSET_STEP;
    let heap_offset_bytes = seed::below(&mut rng, OFFSET_STEPS) as u32 * OFFSET_STEP;
    LayoutPlan {
        layout,
        seed,
        env_pad_bytes,
        stack_offset_bytes,
        heap_offset_bytes,
    }
}

/// The layout of the fork with `job_seed` under `layout`; none for `system`.
pub fn plan(layout: Layout, master: u64, job_seed: u64) -> Option<LayoutPlan> {
    match layout {
        Layout::System => None,
        Layout::Fixed => Some(draw(layout, fixed_seed(master))),
        Layout::Random => Some(draw(layout, fork_seed(job_seed))),
    }
}

/// One fork's layout as run.json keeps it (`forks[].layout`): the plan,
/// and what the worker saw of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkLayout {
    #[serde(flatten)]
    pub plan: LayoutPlan,
    /// Address-space randomization was in effect for the worker (its
    /// personality allowed it and the kernel's `randomize_va_space` was
    /// not 0).
    pub aslr: bool,
    /// `/proc/sys/kernel/randomize_va_space`, when readable.
    pub randomize_va_space: Option<u8>,
    /// Why ASLR is not what the layout asked (e.g. the personality call
    /// was refused); none when it is.
    pub aslr_note: Option<String>,
    /// Bytes of the worker's whole environment (`NAME=value\0` each), so
    /// the padding can be seen in proportion.
    pub env_bytes: u64,
    /// Where the timed runs' stack frame, and the first heap block after
    /// the offset, fell inside their 4 KiB page: the offsets and ASLR
    /// together, as the code saw them.
    pub stack_page_offset: u32,
    pub heap_page_offset: u32,
}

/// `personality(2)`, which rustix does not wrap: 0xffffffff only reads
/// the persona; any other value sets it, which changes only how the next
/// exec maps the process. -1 on failure (then see `errno`).
#[allow(unsafe_code)]
fn personality(persona: libc::c_ulong) -> libc::c_int {
    // SAFETY: personality takes a plain integer and touches no memory of ours.
    unsafe { libc::personality(persona) }
}

const QUERY: libc::c_ulong = 0xffff_ffff;

/// Whether the personality of this process turns ASLR off.
fn no_randomize() -> Option<bool> {
    let p = personality(QUERY);
    (p != -1).then_some(p & libc::ADDR_NO_RANDOMIZE != 0)
}

/// Sets or clears ADDR_NO_RANDOMIZE on the calling thread for the next
/// exec (of it or of a child it starts); the persona it replaced, to put
/// back with [`restore_persona`], or none when nothing changed. Errors are
/// left to the worker to find and record.
pub fn set_aslr_for_exec(on: bool) -> Option<libc::c_int> {
    let cur = personality(QUERY);
    if cur == -1 {
        return None;
    }
    let want = if on {
        cur & !libc::ADDR_NO_RANDOMIZE
    } else {
        cur | libc::ADDR_NO_RANDOMIZE
    };
    if want == cur {
        return None;
    }
    (personality(want as libc::c_ulong) != -1).then_some(cur)
}

/// Puts back the persona [`set_aslr_for_exec`] replaced.
pub fn restore_persona(persona: libc::c_int) {
    personality(persona as libc::c_ulong);
}

/// Why asking for ADDR_NO_RANDOMIZE fails here: tried on this process and
/// undone (it would only matter at this process's next exec).
fn personality_refusal() -> Option<String> {
    // The persona is restored at once.
    let cur = personality(QUERY);
    if cur == -1 {
        return Some(format!(
            "personality() cannot be read: {}",
            std::io::Error::last_os_error()
        ));
    }
    if personality((cur | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) == -1 {
        return Some(format!(
            "personality(ADDR_NO_RANDOMIZE) was refused: {} (a seccomp filter, e.g. a container's, may forbid it)",
            std::io::Error::last_os_error()
        ));
    }
    personality(cur as libc::c_ulong);
    None
}

fn randomize_va_space() -> Option<u8> {
    std::fs::read_to_string("/proc/sys/kernel/randomize_va_space")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The state of ASLR for this process against what `plan` asked.
fn aslr_state(plan: &LayoutPlan) -> (bool, Option<u8>, Option<String>) {
    let system = randomize_va_space();
    let off_by_persona = no_randomize();
    let on = off_by_persona == Some(false) && system != Some(0);
    let note = match (plan.aslr_asked(), on) {
        (true, false) if system == Some(0) => {
            Some("the kernel has ASLR off for every process (kernel.randomize_va_space = 0)".into())
        }
        (true, false) => Some(
            "the worker started with ADDR_NO_RANDOMIZE set and runner could not clear it".into(),
        ),
        (false, true) => Some(personality_refusal().unwrap_or_else(|| {
            "the worker started with ASLR on although ADDR_NO_RANDOMIZE was asked for".into()
        })),
        _ => None,
    };
    (on, system, note)
}

/// Bytes of this process's environment as exec laid it out.
fn env_bytes() -> u64 {
    std::env::vars_os()
        .map(|(k, v)| (k.len() + v.len() + 2) as u64)
        .sum()
}

/// What the worker holds for the fork's lifetime: the heap offset, taken
/// before any strategy allocates.
pub struct Held {
    plan: LayoutPlan,
    _heap: Vec<u8>,
    /// Where the first block allocated after the offset fell in its page.
    heap_page_offset: u32,
}

impl Held {
    /// Takes the heap offset (a held, touched allocation).
    pub fn start(plan: LayoutPlan) -> Held {
        let heap = std::hint::black_box(vec![1u8; plan.heap_offset_bytes as usize]);
        let probe = std::hint::black_box(vec![0u8; 3000]);
        let heap_page_offset = (probe.as_ptr() as usize % 4096) as u32;
        Held {
            plan,
            _heap: heap,
            heap_page_offset,
        }
    }

    pub fn plan(&self) -> &LayoutPlan {
        &self.plan
    }

    /// The record, once the timed runs are over; `stack_page_offset` is
    /// what [`with_stack_offset`]'s body saw.
    pub fn record(&self, stack_page_offset: u32) -> ForkLayout {
        let (aslr, randomize_va_space, aslr_note) = aslr_state(&self.plan);
        ForkLayout {
            plan: self.plan,
            aslr,
            randomize_va_space,
            aslr_note,
            env_bytes: env_bytes(),
            stack_page_offset,
            heap_page_offset: self.heap_page_offset,
        }
    }
}

/// Where a local of the caller's frame falls in its page.
#[inline(always)]
pub fn stack_page_offset() -> u32 {
    let marker = 0u8;
    (std::hint::black_box(&marker) as *const u8 as usize % 4096) as u32
}

/// The address of a local in the innermost frame, for tests of the depth.
#[inline(never)]
fn here() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// One level of the stack offset: a frame holding `N` bytes, then the rest.
///
/// The bytes are left uninitialised: zeroing them compiled, in a release
/// build, to a call of `memset` from 512 bytes on, and a frame that calls
/// out is laid out 16 bytes larger, so the offset came out 16 bytes too
/// deep for each of those bits. Untouched, every level is the same code
/// but for the size of its frame.
#[inline(never)]
fn level<const N: usize>(k: u32, bytes: u32, body: &mut dyn FnMut()) {
    let pad = std::mem::MaybeUninit::<[u8; N]>::uninit();
    std::hint::black_box(pad.as_ptr());
    descend(k, bytes, body);
    std::hint::black_box(pad.as_ptr());
}

/// Bit `k` of the offset (2^k bytes) and the levels below it. Every level
/// is entered whatever the offset (with a frame of 0 or 2^k bytes), so the
/// frames' own overhead is the same for every offset and the body's frame
/// moves by exactly the offset.
#[inline(never)]
fn descend(k: u32, bytes: u32, body: &mut dyn FnMut()) {
    if k < OFFSET_STEP.trailing_zeros() {
        body();
        return;
    }
    let next = k - 1;
    let on = bytes & (1 << k) != 0;
    macro_rules! go {
        ($n:literal) => {
            if on {
                level::<$n>(next, bytes, body)
            } else {
                level::<0>(next, bytes, body)
            }
        };
    }
    match k {
        11 => go!(2048),
        10 => go!(1024),
        9 => go!(512),
        8 => go!(256),
        7 => go!(128),
        6 => go!(64),
        5 => go!(32),
        _ => go!(16),
    }
}

/// Runs `body` with its frame `bytes` (a multiple of 16, below 4096)
/// deeper on the stack than with 0.
pub fn with_stack_offset<R>(bytes: u32, body: impl FnOnce() -> R) -> R {
    let mut body = Some(body);
    let mut out = None;
    descend(11, bytes, &mut || {
        if let Some(b) = body.take() {
            out = Some(b());
        }
    });
    out.expect("the body runs once")
}

/// How far below the caller's frame [`with_stack_offset`] puts its body.
pub fn depth_of(bytes: u32) -> usize {
    let top = here();
    with_stack_offset(bytes, || top - here())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_layout_and_sizes_stay_in_range() {
        assert_eq!(draw(Layout::Random, 7), draw(Layout::Random, 7));
        assert_ne!(draw(Layout::Random, 7), draw(Layout::Random, 8));
        for s in 0..500 {
            let p = draw(Layout::Random, s);
            assert!(p.env_pad_bytes <= MAX_PAD_BYTES);
            assert!(
                p.stack_offset_bytes < 4096 && p.stack_offset_bytes.is_multiple_of(OFFSET_STEP)
            );
            assert!(p.heap_offset_bytes < 4096 && p.heap_offset_bytes.is_multiple_of(OFFSET_STEP));
        }
        assert_eq!(plan(Layout::System, 1, 2), None);
        assert_eq!(plan(Layout::Fixed, 1, 2), plan(Layout::Fixed, 1, 3));
        assert_ne!(plan(Layout::Random, 1, 2), plan(Layout::Random, 1, 3));
    }

    /// The stack offset moves the body's frame by exactly the offset.
    #[test]
    fn the_stack_offset_moves_the_body_by_the_offset() {
        let base = depth_of(0);
        for bytes in [16, 48, 1024, 2064, 4080] {
            assert_eq!(depth_of(bytes) - base, bytes as usize, "offset {bytes}");
        }
    }
}
