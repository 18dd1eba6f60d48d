//! What the benches share: the analysis settings of a grid of delays.

use runner_analysis::{AnalysisInput, CellInfo};
use runner_spec::Ordering;

/// The analysis of a grid with one cell per delay (in µs, `delay_us`),
/// 2000 resamples at 95 %, paired-random and padded, as the experiments
/// under experiments/ analyse theirs.
pub fn delay_grid_input(delays_us: &[u64], clock_resolution_ns: f64) -> AnalysisInput {
    AnalysisInput {
        master_seed: 1,
        resamples: 2000,
        confidence: 0.95,
        ordering: Ordering::PairedRandom,
        pad_baseline: true,
        cells: delays_us
            .iter()
            .enumerate()
            .map(|(i, &d)| CellInfo {
                cell: i as u32,
                params: serde_json::Map::from_iter([(
                    "delay_us".to_string(),
                    serde_json::json!(d),
                )]),
                delay_ns: d * 1000,
            })
            .collect(),
        target_half_width_ns: None,
        clock_resolution_ns,
    }
}
