//! runner's side of the operating system: the machine as recorded and
//! checked (`environment`), CPU placement (`placement`), a fork's memory
//! layout (`memory_layout`), the private temporary folder (`temp`), signals
//! counted and polled (`interrupt`), and the subreaper that kills what a run
//! left (`reaper`).
//!
//! It builds on `runner-core` only (seeds, console lines); no database,
//! no statistics, no report.

pub mod environment;
pub mod interrupt;
pub mod memory_layout;
pub mod placement;
pub mod reaper;
pub mod temp;
