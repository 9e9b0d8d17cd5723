//! Pictures of the ranges (`clpart analyze --at ... --svg`, `clpart run
//! --svg`): each array as a strip (1-D) or, for an array the analysis
//! delinearized into two dimensions (boxes), as a grid of rows; each
//! device's (slice's) read and written ranges in its colour, the waste
//! (range minus footprint) hatched. Ranges are drawn as rectangles, never
//! per element, so a 4096 x 4096 array is as small a picture as a 16 x 16 one.
//!
//! SVG structure (what `cli/tests/svg.rs` checks): one
//! `<g class="array" data-name="NAME">` per array, inside it the layers
//! `<g class="layer" data-layer="waste|fill|edge">`, drawn in that order
//! over every slice so that no slice's rectangle hides another's (the
//! edges of every slice over every fill, the fills over every hatching),
//! each with one `<g class="device" data-device="IDX">` per device:
//! - `fill`: rectangles of class `read` and `write`; `edge`: the same
//!   rectangles' outlines, `read-edge` (dashed) and `write-edge`;
//!   `waste`: the hatched `waste` rectangles;
//! - strip: one `read` and one `write` rectangle for the ranges the device
//!   reads and writes; one `waste` rectangle over its range when the
//!   Ehrhart count at these values is smaller than the range's length;
//! - grid: per kind (read, write), the box as one rectangle, and the range
//!   (the box's linear hull: a partial first row, the full rows between, a
//!   partial last row) less the box hatched as `waste`, adjacent rows of
//!   the same columns joined.
//!
//! Then a layer `halo` (when there is one): the elements that more than one
//! slice reads, as `halo` rectangles with a black dotted edge (a stencil's
//! rows beside each slice's own).
//!
//! An array's drawn size is its buffer's (`run`), else up to its last
//! element used (`analyze`, which says so beside the size).
//!
//! An array transferred whole is one `read`/`write` rectangle over the whole
//! array for every device that uses it.

use ranges_format::{ArrayStatus, BoundArray, KernelRanges, Mode, ParamSource};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One device's slice: work-groups `[lo, hi)` along the split dimension.
#[derive(Debug, Clone, Copy)]
pub struct Slice {
    /// The device (colour and legend), or the slice's number where `run`
    /// is false.
    pub device: usize,
    pub lo: i64,
    pub hi: i64,
    /// A launch's slice, run on `device`; else one of the equal slices of
    /// `analyze --at`, which no device ran.
    pub run: bool,
}

const COLOURS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];
const WIDTH: f64 = 800.0;
const MARGIN: f64 = 20.0;
const LANE: f64 = 18.0;
const MAX_GRID_HEIGHT: f64 = 480.0;

fn colour(device: usize) -> &'static str {
    COLOURS[device % COLOURS.len()]
}

/// `n` equal slices of the work-groups along the split dimension, device `i`
/// for slice `i` (the slices of `--at` without a launch).
pub fn equal_slices(
    k: &KernelRanges,
    given: &BTreeMap<String, i64>,
    n: u32,
) -> Result<Vec<Slice>, String> {
    let d = k.split_dim.unwrap_or(0);
    let ls = *given.get(&format!("ls{d}")).ok_or_else(|| {
        format!("--svg needs ls{d} in --at (the work-group size of the split dimension)")
    })?;
    let gs = *given
        .get(&format!("gs{d}"))
        .ok_or_else(|| format!("--svg needs gs{d} in --at"))?;
    let n_groups = gs / ls.max(1);
    let n = i64::from(n.max(1));
    Ok((0..n)
        .map(|i| Slice {
            device: i as usize,
            run: false,
            lo: (i128::from(n_groups) * i128::from(i) / i128::from(n)) as i64,
            hi: (i128::from(n_groups) * i128::from(i + 1) / i128::from(n)) as i64,
        })
        .collect())
}

/// The parameter values of `k` for the slice `[lo, hi)` of work-groups.
fn values(
    k: &KernelRanges,
    given: &BTreeMap<String, i64>,
    lo: i64,
    hi: i64,
) -> Result<Vec<i64>, String> {
    let get = |n: &str| given.get(n).copied();
    let d = k.split_dim.unwrap_or(0);
    let ls = get(&format!("ls{d}")).unwrap_or(1);
    k.params
        .iter()
        .map(|p| match p.source {
            ParamSource::SliceLo => Ok(lo),
            ParamSource::SliceHi => Ok(hi),
            ParamSource::SliceLoItem => Ok(lo.saturating_mul(ls)),
            ParamSource::SliceHiItem => Ok(hi.saturating_mul(ls)),
            ParamSource::GlobalOffset(_) => Ok(get(&p.name).unwrap_or(0)),
            ParamSource::NumGroups(dd) => Ok(get(&p.name).unwrap_or_else(|| {
                get(&format!("gs{dd}")).unwrap_or(1) / get(&format!("ls{dd}")).unwrap_or(1).max(1)
            })),
            _ => {
                get(&p.name).ok_or_else(|| format!("--svg needs a value for '{}' in --at", p.name))
            }
        })
        .collect()
}

fn eval_range(
    r: &Option<ranges_format::BoundRange>,
    v: &[i64],
) -> Result<Option<(i64, i64)>, String> {
    match r {
        Some(r) => r.eval(v).map_err(|e| e.to_string()),
        None => Ok(None),
    }
}

/// One drawn rectangle, in element coordinates: rows `[r0, r1]`, columns `[c0, c1]`.
#[derive(Clone, Copy)]
struct Cell {
    class: &'static str,
    r0: i64,
    r1: i64,
    c0: i64,
    c1: i64,
}

/// The rows of the inclusive linear range `[l, u]` in a grid `cols` wide.
fn hull_rects(class: &'static str, l: i64, u: i64, cols: i64) -> Vec<Cell> {
    let (r0, c0, r1, c1) = (
        l.div_euclid(cols),
        l.rem_euclid(cols),
        u.div_euclid(cols),
        u.rem_euclid(cols),
    );
    if r0 == r1 {
        return vec![Cell {
            class,
            r0,
            r1,
            c0,
            c1,
        }];
    }
    let mut v = vec![Cell {
        class,
        r0,
        r1: r0,
        c0,
        c1: cols - 1,
    }];
    if r1 > r0 + 1 {
        v.push(Cell {
            class,
            r0: r0 + 1,
            r1: r1 - 1,
            c0: 0,
            c1: cols - 1,
        });
    }
    v.push(Cell {
        class,
        r0: r1,
        r1,
        c0: 0,
        c1,
    });
    v
}

impl Cell {
    /// The rectangle both cover, if any (of class `class`).
    fn meet(&self, other: &Cell, class: &'static str) -> Option<Cell> {
        let c = Cell {
            class,
            r0: self.r0.max(other.r0),
            r1: self.r1.min(other.r1),
            c0: self.c0.max(other.c0),
            c1: self.c1.min(other.c1),
        };
        (c.r0 <= c.r1 && c.c0 <= c.c1).then_some(c)
    }

    /// What of this rectangle `hole` leaves: at most four rectangles
    /// (the rows above and below it, the columns left and right of it).
    fn minus(&self, hole: &Cell) -> Vec<Cell> {
        let Some(h) = self.meet(hole, self.class) else {
            return vec![*self];
        };
        let part = |r0, r1, c0, c1| Cell {
            class: self.class,
            r0,
            r1,
            c0,
            c1,
        };
        let mut v = Vec::new();
        if self.r0 < h.r0 {
            v.push(part(self.r0, h.r0 - 1, self.c0, self.c1));
        }
        if h.r1 < self.r1 {
            v.push(part(h.r1 + 1, self.r1, self.c0, self.c1));
        }
        if self.c0 < h.c0 {
            v.push(part(h.r0, h.r1, self.c0, h.c0 - 1));
        }
        if h.c1 < self.c1 {
            v.push(part(h.r0, h.r1, h.c1 + 1, self.c1));
        }
        v
    }
}

/// `cells` with vertically adjacent rectangles of the same columns joined
/// (a range's full rows and the part of its first row beside a box).
fn joined(mut cells: Vec<Cell>) -> Vec<Cell> {
    cells.sort_by_key(|c| (c.c0, c.c1, c.r0));
    let mut out: Vec<Cell> = Vec::new();
    for c in cells {
        match out.last_mut() {
            Some(l) if l.c0 == c.c0 && l.c1 == c.c1 && l.r1 + 1 >= c.r0 => l.r1 = l.r1.max(c.r1),
            _ => out.push(c),
        }
    }
    out
}

/// The picture of kernel `k` at the values `given` (`gs<d>`, `ls<d>`,
/// scalar arguments; offsets default to 0), one device per slice.
/// `extents` gives arrays' element counts where known (a launch's
/// buffers); otherwise an array is drawn up to its last element used.
pub fn picture(
    k: &KernelRanges,
    given: &BTreeMap<String, i64>,
    slices: &[Slice],
    extents: &BTreeMap<String, u64>,
) -> Result<String, String> {
    let bound = k.validate_and_bind().map_err(|e| e.to_string())?;
    let d = k.split_dim.unwrap_or(0);
    let n_groups = {
        let gs = given.get(&format!("gs{d}")).copied().unwrap_or(1);
        gs / given.get(&format!("ls{d}")).copied().unwrap_or(1).max(1)
    };
    let total_values = values(k, given, 0, n_groups)?;
    let slice_values: Vec<Vec<i64>> = slices
        .iter()
        .map(|s| values(k, given, s.lo, s.hi))
        .collect::<Result<_, _>>()?;
    let mut body = String::new();
    let mut defs = String::new();
    let mut devices: Vec<usize> = slices.iter().map(|s| s.device).collect();
    devices.sort_unstable();
    devices.dedup();
    for dev in &devices {
        write!(
            defs,
            r#"<pattern id="hatch{dev}" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="{}" stroke-width="2"/></pattern>"#,
            colour(*dev)
        )
        .unwrap();
    }
    let mut y = MARGIN;
    writeln!(body, r#"<text x="{MARGIN}" y="{}" font-size="14" font-weight="bold">kernel {}: {} slice(s) along dimension {d}</text>"#, y + 12.0, xml(&k.name), slices.len()).unwrap();
    y += 22.0;
    // legend: one swatch per device
    let mut x = MARGIN;
    for s in slices {
        if x + 260.0 > WIDTH + MARGIN {
            x = MARGIN;
            y += 16.0;
        }
        writeln!(body, r#"<rect x="{x}" y="{y}" width="12" height="12" fill="{}"/><text x="{}" y="{}" font-size="12">{} {} (work-groups [{}, {}))</text>"#, colour(s.device), x + 16.0, y + 10.0, if s.run { "device" } else { "slice" }, s.device, s.lo, s.hi).unwrap();
        x += 260.0;
    }
    y += 18.0;
    for line in [
        "filled, dashed edge: read; outlined: written; hatched: range elements outside the footprint (waste)",
        "black dots: elements read by more than one slice (halo)",
    ] {
        writeln!(body, r#"<text x="{MARGIN}" y="{}" font-size="11">{line}</text>"#, y + 10.0).unwrap();
        y += 14.0;
    }
    y += 8.0;
    for (a, ba) in k.arrays.iter().zip(&bound.arrays) {
        let (panel, height) = array_panel(
            a,
            ba,
            slices,
            &slice_values,
            &total_values,
            extents.get(&a.name).copied(),
            y,
        )?;
        body.push_str(&panel);
        y += height + 16.0;
    }
    let mut s = String::new();
    writeln!(s, r#"<?xml version="1.0" encoding="UTF-8"?>"#).unwrap();
    writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif">"#,
        w = WIDTH + 2.0 * MARGIN,
        h = y + MARGIN
    )
    .unwrap();
    writeln!(s, "<defs>{defs}</defs>").unwrap();
    writeln!(
        s,
        r#"<rect x="0" y="0" width="100%" height="100%" fill="white"/>"#
    )
    .unwrap();
    s.push_str(&body);
    s.push_str("</svg>\n");
    Ok(s)
}

fn xml(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One array's panel at height `y`: the SVG text and its height.
#[allow(clippy::too_many_arguments)]
fn array_panel(
    a: &ranges_format::ArrayRanges,
    ba: &BoundArray,
    slices: &[Slice],
    slice_values: &[Vec<i64>],
    total_values: &[i64],
    extent: Option<u64>,
    y: f64,
) -> Result<(String, f64), String> {
    let reads = a.mode != Mode::W;
    let writes = a.mode != Mode::R;
    let total = eval_range(&ba.total, total_values)?;
    // the drawn length: the buffer, else up to the last element used
    let mut n = extent
        .map(|e| e.min(i64::MAX as u64) as i64)
        .unwrap_or(0)
        .max(total.map_or(0, |t| t.1.saturating_add(1)));
    for v in slice_values {
        if let Some((_, u)) = eval_range(&ba.slice, v)? {
            n = n.max(u.saturating_add(1));
        }
    }
    let n = n.max(1);
    // a grid for two delinearized dimensions
    let cols = match &ba.boxes {
        Some(b) if b.strides.len() == 2 && !matches!(a.status, ArrayStatus::Whole { .. }) => b
            .strides[0]
            .eval(total_values)
            .map_err(|e| e.to_string())?
            .filter(|c| *c >= 1 && *c <= n),
        _ => None,
    };
    let rows = cols.map_or(1, |c| n.saturating_add(c - 1) / c);
    let cols_n = cols.unwrap_or(n);
    let (grid_h, kind) = match cols {
        Some(c) => (
            (WIDTH * rows as f64 / c as f64).clamp(2.0 * LANE, MAX_GRID_HEIGHT),
            format!("grid {rows} x {c}"),
        ),
        None => (2.0 * LANE + 4.0, format!("strip of {n}")),
    };
    // without the buffer (analyze), the array's size is not known: it is
    // drawn to its last element used, and says so
    let kind = if extent.is_none() {
        format!("{kind} (to its last element used)")
    } else {
        kind
    };
    let mut s = String::new();
    writeln!(s, r#"<g class="array" data-name="{}">"#, xml(&a.name)).unwrap();
    let status = match &a.status {
        ArrayStatus::Bounded => String::new(),
        ArrayStatus::Whole { .. } => ", whole".into(),
    };
    writeln!(
        s,
        r#"<text x="{MARGIN}" y="{}" font-size="13">array {} ({}, mode {}{status}): {kind}</text>"#,
        y + 12.0,
        xml(&a.name),
        xml(&a.elem_type),
        a.mode.as_str()
    )
    .unwrap();
    let top = y + 18.0;
    writeln!(s, r##"<rect class="outline" x="{MARGIN}" y="{top}" width="{WIDTH}" height="{grid_h}" fill="#f4f4f4" stroke="#888" stroke-width="0.5"/>"##).unwrap();
    let sx = WIDTH / cols_n as f64;
    let sy = grid_h / rows as f64;
    // each slice's rectangles: read, write and waste
    let mut drawn: Vec<(usize, Vec<Cell>)> = Vec::new();
    for (s_idx, sl) in slices.iter().enumerate() {
        let v = &slice_values[s_idx];
        let mut cells: Vec<Cell> = Vec::new();
        if let ArrayStatus::Whole { .. } = a.status {
            for (on, class) in [(reads, "read"), (writes, "write")] {
                if on {
                    cells.push(Cell {
                        class,
                        r0: 0,
                        r1: 0,
                        c0: 0,
                        c1: n - 1,
                    });
                }
            }
        } else if let Some(c) = cols {
            let b = ba.boxes.as_ref().expect("grid has boxes");
            for (on, class, dims, linear) in [
                (reads, "read", &b.read, &ba.read_slice),
                (writes, "write", &b.write, &ba.write_slice),
            ] {
                if !on {
                    continue;
                }
                let bx = match dims {
                    Some(d) => match (
                        eval_range(&Some(d[0].clone()), v)?,
                        eval_range(&Some(d[1].clone()), v)?,
                    ) {
                        (Some(r), Some(q)) => Some((r, q)),
                        _ => None,
                    },
                    None => None,
                };
                let hull = eval_range(linear, v)?;
                if let Some(((r0, r1), (c0, c1))) = bx {
                    let the_box = Cell {
                        class,
                        r0,
                        r1,
                        c0,
                        c1,
                    };
                    // the waste: the range's rows less the box
                    if let Some((l, u)) = hull {
                        let waste = hull_rects("waste", l, u, c)
                            .iter()
                            .flat_map(|h| h.minus(&the_box))
                            .collect();
                        cells.extend(joined(waste));
                    }
                    cells.push(the_box);
                } else if let Some((l, u)) = hull {
                    cells.extend(hull_rects(class, l, u, c));
                }
            }
        } else {
            let range = eval_range(&ba.slice, v)?;
            if let (Some((l, u)), Some(cnt)) = (range, &ba.count_slice) {
                if let Ok(cnt) = cnt.eval(v) {
                    if cnt < u.saturating_sub(l).saturating_add(1) {
                        cells.push(Cell {
                            class: "waste",
                            r0: 0,
                            r1: 0,
                            c0: l,
                            c1: u,
                        });
                    }
                }
            }
            for (on, class, r) in [
                (reads, "read", &ba.read_slice),
                (writes, "write", &ba.write_slice),
            ] {
                let r = if r.is_some() { r } else { &ba.slice };
                if on {
                    if let Some((l, u)) = eval_range(r, v)? {
                        cells.push(Cell {
                            class,
                            r0: 0,
                            r1: 0,
                            c0: l,
                            c1: u,
                        });
                    }
                }
            }
        }
        drawn.push((sl.device, cells));
    }
    let halos = if matches!(a.status, ArrayStatus::Whole { .. }) {
        Vec::new()
    } else {
        halos(&drawn)
    };
    let frame = Frame {
        top,
        sx,
        sy,
        cols_n,
        rows,
        grid: cols.is_some(),
        height: grid_h,
    };
    layers(&mut s, &drawn, &halos, &frame);
    writeln!(s, "</g>").unwrap();
    Ok((s, grid_h + 20.0))
}

/// Where one array's panel puts its element coordinates on the page.
struct Frame {
    top: f64,
    /// Width of a column, height of a row.
    sx: f64,
    sy: f64,
    cols_n: i64,
    rows: i64,
    /// A grid of rows (else a strip: reads in the upper lane, writes in
    /// the lower).
    grid: bool,
    height: f64,
}

impl Frame {
    /// `x, y, width, height` of `cell`.
    fn place(&self, cell: &Cell) -> (f64, f64, f64, f64) {
        let x = MARGIN + cell.c0.max(0) as f64 * self.sx;
        let w =
            ((cell.c1.min(self.cols_n - 1) - cell.c0.max(0) + 1).max(0) as f64 * self.sx).max(0.5);
        let (y, h) = if self.grid {
            (
                self.top + cell.r0.max(0) as f64 * self.sy,
                ((cell.r1.min(self.rows - 1) - cell.r0.max(0) + 1).max(0) as f64 * self.sy)
                    .max(0.5),
            )
        } else {
            // strip: reads (and halos) in the upper lane, writes in the
            // lower, waste over both
            match cell.class {
                "read" | "halo" => (self.top + 1.0, LANE),
                "write" => (self.top + 3.0 + LANE, LANE),
                _ => (self.top, self.height),
            }
        };
        (x, y, w, h)
    }
}

/// The elements more than one slice reads (a stencil's halo rows): the
/// overlaps of every two slices' `read` rectangles.
fn halos(drawn: &[(usize, Vec<Cell>)]) -> Vec<Cell> {
    let mut out = Vec::new();
    for (i, (_, mine)) in drawn.iter().enumerate() {
        for (_, theirs) in &drawn[i + 1..] {
            for m in mine.iter().filter(|c| c.class == "read") {
                for t in theirs.iter().filter(|c| c.class == "read") {
                    out.extend(m.meet(t, "halo"));
                }
            }
        }
    }
    out
}

/// Draws each slice's rectangles (`drawn`: per device) in layers over all
/// slices, so that no slice's rectangle hides another's: the waste's
/// hatching, the fills, then the edges; the halos last.
fn layers(s: &mut String, drawn: &[(usize, Vec<Cell>)], halos: &[Cell], frame: &Frame) {
    for layer in ["waste", "fill", "edge"] {
        writeln!(s, r#"<g class="layer" data-layer="{layer}">"#).unwrap();
        for (device, cells) in drawn {
            writeln!(s, r#"<g class="device" data-device="{device}">"#).unwrap();
            let col = colour(*device);
            for cell in cells {
                let (class, style) = match (layer, cell.class) {
                    ("waste", "waste") => (
                        "waste",
                        format!(r#"fill="url(#hatch{device})" fill-opacity="0.8""#),
                    ),
                    ("fill", "read") => ("read", format!(r#"fill="{col}" fill-opacity="0.35""#)),
                    ("fill", "write") => ("write", format!(r#"fill="{col}" fill-opacity="0.15""#)),
                    ("edge", "read") => (
                        "read-edge",
                        format!(
                            r#"fill="none" stroke="{col}" stroke-width="1.5" stroke-dasharray="5,3""#
                        ),
                    ),
                    ("edge", "write") => (
                        "write-edge",
                        format!(r#"fill="none" stroke="{col}" stroke-width="2""#),
                    ),
                    _ => continue,
                };
                let (x, y, w, h) = frame.place(cell);
                writeln!(s, r#"<rect class="{class}" x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{h:.2}" {style}/>"#).unwrap();
            }
            writeln!(s, "</g>").unwrap();
        }
        writeln!(s, "</g>").unwrap();
    }
    if !halos.is_empty() {
        writeln!(s, r#"<g class="layer" data-layer="halo">"#).unwrap();
        for cell in halos {
            let (x, y, w, h) = frame.place(cell);
            writeln!(s, r#"<rect class="halo" x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{h:.2}" fill="none" stroke="black" stroke-width="1.5" stroke-dasharray="2,2"/>"#).unwrap();
        }
        writeln!(s, "</g>").unwrap();
    }
}
