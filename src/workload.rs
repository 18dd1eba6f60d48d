//! The preview model and its calculator (design section 4).

/// The calculator's result. Compared bit for bit between strategies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection {
    pub ending_mrr: f64,
    pub ending_cash: f64,
    pub lifetime_revenue: f64,
    /// First month (1-based) with cash < 0, else -1.
    pub runway_month: i32,
}

/// A slider position: the overrides one preview applies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overrides {
    pub delta: f64,
}
