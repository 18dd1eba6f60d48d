//! The text of an SVG as boxes on the canvas, to check that no label of a
//! plot is drawn over another.
//!
//! No font is read: a label's width is estimated from its characters at
//! 0.6 em each, which is at least what a sans-serif font draws (DejaVu
//! Sans, the widest common one, averages about 0.58 em over text with
//! spaces; Arial and Helvetica less), and its height spans the font's
//! ascent and descent around the baseline (0.8 em above, 0.22 below).

/// Em per character, for the width of a label.
const EM_PER_CHAR: f64 = 0.6;
const ASCENT: f64 = 0.8;
const DESCENT: f64 = 0.22;

/// One `<text>` element as the box it covers.
#[derive(Debug, Clone)]
pub struct TextBox {
    pub text: String,
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
}

impl TextBox {
    /// Whether the two boxes share any area (touching is not overlapping).
    pub fn overlaps(&self, other: &TextBox) -> bool {
        self.x0 < other.x1 && other.x0 < self.x1 && self.y0 < other.y1 && other.y0 < self.y1
    }
}

/// The value of attribute `name` in a start tag.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    tag[at..].split('"').next()
}

fn number(tag: &str, name: &str) -> f64 {
    attr(tag, name)
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("<text> without a numeric {name}: {tag}"))
}

/// A length in em (`0.76em`, `0.5ex` as half an em, `3` px as `3 / size`).
fn em(value: &str, size: f64) -> f64 {
    let v = value.trim();
    if let Some(n) = v.strip_suffix("em") {
        n.parse().unwrap()
    } else if let Some(n) = v.strip_suffix("ex") {
        n.parse::<f64>().unwrap() * 0.5
    } else {
        v.trim_end_matches("px").parse::<f64>().unwrap() / size
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&apos;", "'")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// `rotate(a, cx, cy)` of a transform, if any.
fn rotation(tag: &str) -> Option<(f64, f64, f64)> {
    let t = attr(tag, "transform")?;
    let inner = t.trim().strip_prefix("rotate(")?.strip_suffix(')')?;
    let v: Vec<f64> = inner
        .split([',', ' '])
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    match v.as_slice() {
        [a] => Some((*a, 0.0, 0.0)),
        [a, cx, cy] => Some((*a, *cx, *cy)),
        _ => panic!("unexpected transform {t}"),
    }
}

/// Every non-empty `<text>` of `svg` as a box.
pub fn text_boxes(svg: &str) -> Vec<TextBox> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find("<text") {
        let after = &rest[start..];
        let close = after.find('>').expect("a closed <text> tag");
        let tag = &after[..close];
        let end = after.find("</text>").expect("a </text>");
        let text = unescape(after[close + 1..end].trim());
        rest = &after[end..];
        if text.is_empty() {
            continue;
        }
        let (x, y, size) = (number(tag, "x"), number(tag, "y"), number(tag, "font-size"));
        let width = text.chars().count() as f64 * EM_PER_CHAR * size;
        let x0 = match attr(tag, "text-anchor").unwrap_or("start") {
            "middle" => x - width / 2.0,
            "end" => x - width,
            _ => x,
        };
        // Where the baseline is, in em below y.
        let mut baseline = match attr(tag, "dominant-baseline").unwrap_or("auto") {
            "middle" | "central" => 0.3,
            "hanging" | "text-before-edge" => ASCENT,
            "text-after-edge" | "ideographic" => -DESCENT,
            _ => 0.0,
        };
        if let Some(dy) = attr(tag, "dy") {
            baseline += em(dy, size);
        }
        let yb = y + baseline * size;
        let (y0, y1) = (yb - ASCENT * size, yb + DESCENT * size);
        let mut b = TextBox {
            text,
            x0,
            x1: x0 + width,
            y0,
            y1,
        };
        if let Some((deg, cx, cy)) = rotation(tag) {
            let (s, c) = deg.to_radians().sin_cos();
            let corners =
                [(b.x0, b.y0), (b.x1, b.y0), (b.x0, b.y1), (b.x1, b.y1)].map(|(px, py)| {
                    let (dx, dy) = (px - cx, py - cy);
                    (cx + dx * c - dy * s, cy + dx * s + dy * c)
                });
            b.x0 = corners.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
            b.x1 = corners
                .iter()
                .map(|p| p.0)
                .fold(f64::NEG_INFINITY, f64::max);
            b.y0 = corners.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
            b.y1 = corners
                .iter()
                .map(|p| p.1)
                .fold(f64::NEG_INFINITY, f64::max);
        }
        out.push(b);
    }
    out
}

/// The canvas size of an SVG: its `width` and `height`.
pub fn canvas(svg: &str) -> (f64, f64) {
    let tag = &svg[svg.find("<svg").expect("an <svg> tag")..];
    let tag = &tag[..tag.find('>').unwrap()];
    (number(tag, "width"), number(tag, "height"))
}

/// Every pair of labels drawn over each other, and every label that runs
/// off the canvas, as sentences; empty when the text is clean.
pub fn text_problems(svg: &str) -> Vec<String> {
    let boxes = text_boxes(svg);
    let (w, h) = canvas(svg);
    let mut out = Vec::new();
    for (i, a) in boxes.iter().enumerate() {
        if a.x0 < -0.5 || a.y0 < -0.5 || a.x1 > w + 0.5 || a.y1 > h + 0.5 {
            out.push(format!(
                "{:?} runs off the {w} x {h} canvas ({:.0}..{:.0}, {:.0}..{:.0})",
                a.text, a.x0, a.x1, a.y0, a.y1
            ));
        }
        for b in &boxes[i + 1..] {
            if a.overlaps(b) {
                out.push(format!(
                    "{:?} ({:.0}..{:.0}, {:.0}..{:.0}) overlaps {:?} ({:.0}..{:.0}, {:.0}..{:.0})",
                    a.text, a.x0, a.x1, a.y0, a.y1, b.text, b.x0, b.x1, b.y0, b.y1
                ));
            }
        }
    }
    out
}
