//! What a game shows of a position (`view/3`) and the clicks that make a
//! move (`move_clicks/3`), read from the rules into plain data for the web
//! board, and the checks `tabula check` runs on them. Every id (a site, a
//! hand item) is kept as `writeq/1` writes it, so a page, a test and the
//! rules name one thing alike.

use crate::engine::{Engine, Tmpl, Value};
use serde::Serialize;
use std::collections::HashSet;
use std::fmt;

/// How a site is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    Square,
    Circle,
    Hex,
    /// An intersection of the board's lines (Go): nothing is drawn but
    /// the lines through it and what stands on it.
    Point,
}

/// A place on the board, at (x, y) in board units (x to the right, y
/// downward; one unit is one square).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Site {
    pub id: String,
    pub x: f64,
    pub y: f64,
    pub shape: Shape,
}

/// A piece on a site, or in a hand (then `at` is its hand id).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Piece {
    pub at: String,
    pub colour: String,
    pub label: String,
    /// How it is drawn: `disc`, `tile` (a rounded square with the label
    /// on it) or `glyph` (the label alone, large, in the colour: chess
    /// symbols); by default a disc without a label, a tile with one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub style: Option<String>,
}

/// A tinted area: the sites it covers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Region {
    pub sites: Vec<String>,
    pub colour: String,
}

/// A piece off the board: one the viewer may see, or how many it may not.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum HandItem {
    Piece(Piece),
    Hidden { count: i64 },
}

/// A player's pieces off the board.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hand {
    pub player: String,
    pub items: Vec<HandItem>,
}

/// Text on the board: on a site, or at a point (coordinates along the
/// edges).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Label {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<(f64, f64)>,
    pub text: String,
}

/// Everything `view/3` gave, by kind, each kind in the order given.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct View {
    pub sites: Vec<Site>,
    pub lines: Vec<(String, String)>,
    pub regions: Vec<Region>,
    pub pieces: Vec<Piece>,
    pub stacks: Vec<(String, i64)>,
    pub tiles: Vec<(String, String)>,
    pub hands: Vec<Hand>,
    pub labels: Vec<Label>,
    pub texts: Vec<String>,
}

/// The items `view/3` may give, for messages.
const ITEMS: &str =
    "site/3, site/4, line/2, region/2, piece/3, piece/4, stack/2, tile/2, hand/2, label/2, label/3 or text/1";

impl View {
    /// Reads the list `view/3` gave; the error says which item is wrong
    /// and why.
    pub fn read(engine: &mut Engine, items: &Tmpl) -> Result<View, String> {
        let Some(list) = engine.list_terms(items) else {
            return Err(format!("view/3 must give a list, not {}", engine.term_text(items)));
        };
        let mut v = View::default();
        for item in &list {
            v.read_item(engine, item).map_err(|why| format!("view/3 item {}: {why}", engine.term_text(item)))?;
        }
        Ok(v)
    }

    fn read_item(&mut self, e: &mut Engine, item: &Tmpl) -> Result<(), String> {
        let (name, args) = e.compound_terms(item).ok_or_else(|| format!("expected one of {ITEMS}"))?;
        match (name.as_str(), args.len()) {
            ("site", 3 | 4) => {
                let shape = match args.get(3).map(|s| e.value(s)) {
                    None => Shape::Square,
                    Some(Value::Atom(a)) if a == "square" => Shape::Square,
                    Some(Value::Atom(a)) if a == "circle" => Shape::Circle,
                    Some(Value::Atom(a)) if a == "hex" => Shape::Hex,
                    Some(Value::Atom(a)) if a == "point" => Shape::Point,
                    Some(_) => return Err("the shape must be square, circle, hex or point".into()),
                };
                let id = ground_id(e, &args[0])?;
                let (x, y) = (number(e, &args[1], "X")?, number(e, &args[2], "Y")?);
                self.sites.push(Site { id, x, y, shape });
            }
            ("line", 2) => self.lines.push((ground_id(e, &args[0])?, ground_id(e, &args[1])?)),
            ("tile", 2) => self.tiles.push((ground_id(e, &args[0])?, ground_id(e, &args[1])?)),
            ("region", 2) => {
                let ids = e.list_terms(&args[0]).ok_or("the sites must be a list")?;
                let sites = ids.iter().map(|i| ground_id(e, i)).collect::<Result<_, _>>()?;
                self.regions.push(Region { sites, colour: text(e, &args[1], "the colour")? });
            }
            ("piece", 3 | 4) => self.pieces.push(piece(e, &args)?),
            ("stack", 2) => {
                let h = e.value(&args[1]).as_int().ok_or("the height must be an integer")?;
                self.stacks.push((ground_id(e, &args[0])?, h));
            }
            ("hand", 2) => {
                let player = text(e, &args[0], "the player")?;
                let list = e.list_terms(&args[1]).ok_or("the hand must be a list")?;
                let mut items = Vec::new();
                for i in &list {
                    match e.compound_terms(i) {
                        Some((n, a)) if n == "piece" && (a.len() == 3 || a.len() == 4) => {
                            items.push(HandItem::Piece(piece(e, &a)?))
                        }
                        Some((n, a)) if n == "hidden" && a.len() == 1 => match e.value(&a[0]).as_int() {
                            Some(count) if count >= 0 => items.push(HandItem::Hidden { count }),
                            _ => return Err("hidden/1 needs a count, an integer of 0 or more".into()),
                        },
                        _ => return Err("a hand holds piece(Id, Colour, Label) and hidden(Count) items".into()),
                    }
                }
                self.hands.push(Hand { player, items });
            }
            ("label", 2) => {
                let site = Some(ground_id(e, &args[0])?);
                self.labels.push(Label { site, point: None, text: text(e, &args[1], "the text")? });
            }
            ("label", 3) => {
                let point = Some((number(e, &args[0], "X")?, number(e, &args[1], "Y")?));
                self.labels.push(Label { site: None, point, text: text(e, &args[2], "the text")? });
            }
            ("text", 1) => self.texts.push(text(e, &args[0], "the text")?),
            _ => return Err(format!("expected one of {ITEMS}")),
        }
        Ok(())
    }

    /// The ids of the sites.
    pub fn site_ids(&self) -> HashSet<&str> {
        self.sites.iter().map(|s| s.id.as_str()).collect()
    }

    /// The ids of the pieces in `player`'s hand that this view shows.
    pub fn hand_ids(&self, player: &str) -> impl Iterator<Item = &str> {
        self.hands.iter().filter(move |h| h.player == player).flat_map(|h| {
            h.items.iter().filter_map(|i| match i {
                HandItem::Piece(p) => Some(p.at.as_str()),
                HandItem::Hidden { .. } => None,
            })
        })
    }

    /// What is wrong with the view in itself, each with its kind: a site
    /// declared twice, something placed on a site that is not declared, a
    /// hand item id used twice.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for s in &self.sites {
            if !seen.insert(s.id.as_str()) {
                out.push(("site twice", format!("view/3 declares site {} twice", s.id)));
            }
        }
        let mut on_site = |what: &str, id: &str| {
            if !seen.contains(id) {
                out.push(("off the board", format!("view/3: {what} on {id}, which is not a declared site")));
            }
        };
        for p in &self.pieces {
            on_site("a piece", &p.at);
        }
        for (id, _) in &self.stacks {
            on_site("a stack", id);
        }
        for (a, b) in self.lines.iter().chain(&self.tiles) {
            on_site("a line or tile end", a);
            on_site("a line or tile end", b);
        }
        for r in &self.regions {
            for id in &r.sites {
                on_site("a region", id);
            }
        }
        for l in &self.labels {
            if let Some(id) = &l.site {
                on_site("a label", id);
            }
        }
        let mut hand_ids = HashSet::new();
        for h in &self.hands {
            for i in &h.items {
                if let HandItem::Piece(p) = i
                    && (seen.contains(p.at.as_str()) || !hand_ids.insert(p.at.as_str()))
                {
                    out.push((
                        "hand id twice",
                        format!("view/3: hand item id {} is used twice (or is a site's)", p.at),
                    ));
                }
            }
        }
        out
    }

    /// Hidden information shown to the wrong viewer: a hand's pieces shown
    /// to anyone but its player.
    pub fn leaks(&self, viewer: &str) -> Vec<String> {
        self.hands
            .iter()
            .filter(|h| h.player != viewer && h.items.iter().any(|i| matches!(i, HandItem::Piece(_))))
            .map(|h| format!("view/3 shows {viewer} the pieces in {}'s hand", h.player))
            .collect()
    }
}

/// A site or hand id: any ground term, as `writeq/1` writes it.
fn ground_id(e: &mut Engine, t: &Tmpl) -> Result<String, String> {
    if t.nvars > 0 {
        return Err(format!("the id {} is not ground", e.term_text(t)));
    }
    Ok(e.term_text(t))
}

fn number(e: &mut Engine, t: &Tmpl, what: &str) -> Result<f64, String> {
    match e.value(t) {
        Value::Int(i) => Ok(i as f64),
        Value::Float(f) if f.is_finite() => Ok(f),
        _ => Err(format!("{what} must be a number, not {}", e.term_text(t))),
    }
}

/// An atom, string or number as text (colours, labels, players).
fn text(e: &mut Engine, t: &Tmpl, what: &str) -> Result<String, String> {
    match e.value(t) {
        Value::Atom(a) | Value::Str(a) => Ok(a),
        Value::Int(i) => Ok(i.to_string()),
        Value::Float(f) => Ok(f.to_string()),
        _ => Err(format!("{what} must be an atom, a string or a number, not {}", e.term_text(t))),
    }
}

fn piece(e: &mut Engine, args: &[Tmpl]) -> Result<Piece, String> {
    let style = match args.get(3).map(|s| e.value(s)) {
        None => None,
        Some(Value::Atom(a)) if ["disc", "tile", "glyph"].contains(&a.as_str()) => Some(a),
        Some(_) => return Err("the style must be disc, tile or glyph".into()),
    };
    Ok(Piece {
        at: ground_id(e, &args[0])?,
        colour: text(e, &args[1], "the colour")?,
        label: text(e, &args[2], "the label")?,
        style,
    })
}

impl fmt::Display for Piece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.style {
            Some(style) => write!(f, "piece({}, {}, {:?}, {style})", self.at, self.colour, self.label),
            None => write!(f, "piece({}, {}, {:?})", self.at, self.colour, self.label),
        }
    }
}

/// The view as the items it came from, one a line (for snapshots and
/// `tabula view`-style listings).
impl fmt::Display for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = |x: f64| if x.fract() == 0.0 { format!("{x:.0}") } else { format!("{x}") };
        for s in &self.sites {
            let shape = match s.shape {
                Shape::Square => "square",
                Shape::Circle => "circle",
                Shape::Hex => "hex",
                Shape::Point => "point",
            };
            writeln!(f, "site({}, {}, {}, {shape})", s.id, n(s.x), n(s.y))?;
        }
        for r in &self.regions {
            writeln!(f, "region([{}], {})", r.sites.join(", "), r.colour)?;
        }
        for (a, b) in &self.lines {
            writeln!(f, "line({a}, {b})")?;
        }
        for p in &self.pieces {
            writeln!(f, "{p}")?;
        }
        for (id, h) in &self.stacks {
            writeln!(f, "stack({id}, {h})")?;
        }
        for (a, b) in &self.tiles {
            writeln!(f, "tile({a}, {b})")?;
        }
        for h in &self.hands {
            let items: Vec<String> = h
                .items
                .iter()
                .map(|i| match i {
                    HandItem::Piece(p) => p.to_string(),
                    HandItem::Hidden { count } => format!("hidden({count})"),
                })
                .collect();
            writeln!(f, "hand({}, [{}])", h.player, items.join(", "))?;
        }
        for l in &self.labels {
            match (&l.site, l.point) {
                (Some(id), _) => writeln!(f, "label({id}, {:?})", l.text)?,
                (None, Some((x, y))) => writeln!(f, "label({}, {}, {:?})", n(x), n(y), l.text)?,
                (None, None) => {}
            }
        }
        for t in &self.texts {
            writeln!(f, "text({t:?})")?;
        }
        Ok(())
    }
}
