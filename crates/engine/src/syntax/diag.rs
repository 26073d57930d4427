//! Diagnostics: syntax errors and load-time warnings with spans, rendered
//! the way a person reads them (file:line:col, the source line, the span
//! underlined).

use super::ast::Span;
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, Severity};
use std::fmt;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
}

/// One message about a place in a source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub level: Level,
    pub message: String,
    pub span: Span,
    pub label: String,
    pub help: Option<String>,
    /// A second place that explains the first (e.g. the bracket left open).
    pub related: Option<(Span, String)>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>, label: impl Into<String>) -> Diagnostic {
        Diagnostic {
            level: Level::Error,
            message: message.into(),
            span,
            label: label.into(),
            help: None,
            related: None,
        }
    }
    pub fn warning(span: Span, message: impl Into<String>, label: impl Into<String>) -> Diagnostic {
        Diagnostic { level: Level::Warning, ..Diagnostic::error(span, message, label) }
    }
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }
    pub fn with_related(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.related = Some((span, label.into()));
        self
    }
    pub fn is_error(&self) -> bool {
        self.level == Level::Error
    }
}

/// Where the first error of `diags` is: the file, its line and column
/// (from 1).
pub fn first_error_at(file: &str, src: &str, diags: &[Diagnostic]) -> Option<(String, usize, usize)> {
    let d = diags.iter().find(|d| d.is_error())?;
    let (line, column) = line_col(src, d.span.start);
    Some((file.to_string(), line, column))
}

/// 1-based line and column of a byte offset.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let before = &src[..floor_char_boundary(src, offset)];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

struct Rendered<'a> {
    diag: &'a Diagnostic,
    src: NamedSource<String>,
    len: usize,
}

impl fmt::Debug for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.diag.message)
    }
}
impl fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.diag.message)
    }
}
impl std::error::Error for Rendered<'_> {}

fn clamp(span: Span, len: usize) -> miette::SourceSpan {
    let start = span.start.min(len);
    let end = span.end.clamp(start, len);
    (start, end - start).into()
}

impl miette::Diagnostic for Rendered<'_> {
    fn severity(&self) -> Option<Severity> {
        Some(match self.diag.level {
            Level::Error => Severity::Error,
            Level::Warning => Severity::Warning,
        })
    }
    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.diag.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.src)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let mut labels =
            vec![LabeledSpan::new_primary_with_span(Some(self.diag.label.clone()), clamp(self.diag.span, self.len))];
        if let Some((span, label)) = &self.diag.related {
            labels.push(LabeledSpan::new_with_span(Some(label.clone()), clamp(*span, self.len)));
        }
        Some(Box::new(labels.into_iter()))
    }
}

/// Renders diagnostics as plain text (no colour, fixed width), each headed
/// by `file:line:col`.
pub fn render(file: &str, src: &str, diags: &[Diagnostic]) -> String {
    let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).with_width(100);
    let mut out = String::new();
    for d in diags {
        let (line, col) = line_col(src, d.span.start);
        let kind = if d.is_error() { "error" } else { "warning" };
        out.push_str(&format!("{file}:{line}:{col}: {kind}: {}\n", d.message));
        let long_line = src.lines().nth(line - 1).is_some_and(|l| l.len() > 2000) || d.span.len() > 20_000;
        let mut body = String::new();
        if long_line {
            // Very long lines are shown as a window around the span.
            excerpt(src, d, line, col, &mut body);
        } else {
            let r = Rendered { diag: d, src: NamedSource::new(file, src.to_string()), len: src.len() };
            if handler.render_report(&mut body, &r).is_err() {
                excerpt(src, d, line, col, &mut body);
            }
        }
        out.push_str(&body);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// A plain rendering for lines too long to draw: up to 60 characters on
/// each side of the span, with a caret line.
fn excerpt(src: &str, d: &Diagnostic, line: usize, col: usize, out: &mut String) {
    let text = src.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let chars: Vec<char> = text.chars().collect();
    let from = col.saturating_sub(1).saturating_sub(60);
    let to = (col + 60).min(chars.len());
    let shown: String = chars[from.min(chars.len())..to].iter().collect();
    let width = d.span.len().clamp(1, 60);
    out.push_str(&format!(
        "  {line} | {}{shown}{}\n",
        if from > 0 { "…" } else { "" },
        if to < chars.len() { "…" } else { "" }
    ));
    let pad = " ".repeat(line.to_string().len() + 3 + (col - 1 - from) + usize::from(from > 0));
    out.push_str(&format!("  {pad}{} {}\n", "^".repeat(width), d.label));
    if let Some(h) = &d.help {
        out.push_str(&format!("  help: {h}\n"));
    }
}
