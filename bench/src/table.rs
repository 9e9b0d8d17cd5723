//! The summary table: one row per figure, with its target and whether the
//! run met it.

use serde::Serialize;

/// One figure of the summary table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The item (1 to 5).
    pub item: u32,
    /// What is measured.
    pub figure: String,
    /// The measured value, with its unit.
    pub value: String,
    /// The target, or `-` for figures reported without one.
    pub target: String,
    /// `Some(true)` when the target is met, `None` without a target.
    pub met: Option<bool>,
}

impl Row {
    /// A row with a target.
    pub fn target(
        item: u32,
        figure: impl Into<String>,
        value: String,
        target: &str,
        met: bool,
    ) -> Row {
        Row {
            item,
            figure: figure.into(),
            value,
            target: target.into(),
            met: Some(met),
        }
    }

    /// A row reported without a target.
    pub fn info(item: u32, figure: impl Into<String>, value: String) -> Row {
        Row {
            item,
            figure: figure.into(),
            value,
            target: "-".into(),
            met: None,
        }
    }
}

/// Renders rows as a Markdown table (also readable as plain text).
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from("| # | figure | value | target | met |\n|---|---|---|---|---|\n");
    for r in rows {
        let met = match r.met {
            Some(true) => "yes",
            Some(false) => "**MISSED**",
            None => "-",
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            r.item, r.figure, r.value, r.target, met
        ));
    }
    out
}

/// Renders a detail table: a header row and cells.
pub fn detail(header: &[&str], cells: &[Vec<String>]) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for c in cells {
        out.push_str(&format!("| {} |\n", c.join(" | ")));
    }
    out
}
