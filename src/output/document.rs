//! A neutral model of a report: headings, paragraphs, warnings, key-value lists,
//! tables of plain text and charts of numbers. Commands build a [`Document`]; each output format
//! renders it, escaping the text as its medium requires. JSON is not rendered from
//! here: it serializes each command's own result types (the stable contract).

/// How a column's cells are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// What the page formats (terminal, Markdown, HTML) show for a table without
/// rows, in place of its column titles; CSV writes the titles alone.
pub const NO_ROWS: &str = "none";

/// A table of text cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Align)>,
    pub rows: Vec<Vec<String>>,
    /// The table that `--format csv` writes (one per document).
    pub is_csv: bool,
    /// False for a table that only `--format csv` writes.
    pub shown: bool,
}

impl Table {
    /// A table with the given column titles; titles ending in `>` are right-aligned
    /// (the `>` is dropped).
    pub fn new(columns: &[&str]) -> Self {
        let columns = columns
            .iter()
            .map(|c| match c.strip_suffix('>') {
                Some(title) => (title.to_string(), Align::Right),
                None => (c.to_string(), Align::Left),
            })
            .collect();
        Table {
            columns,
            rows: Vec::new(),
            is_csv: false,
            shown: true,
        }
    }

    /// Marks this table as the document's CSV table, written only by `--format csv`.
    pub fn csv_only(mut self) -> Self {
        self.is_csv = true;
        self.shown = false;
        self
    }

    /// Adds a row (padded or cut to the number of columns).
    pub fn row(&mut self, cells: Vec<String>) {
        let mut cells = cells;
        cells.resize(self.columns.len(), String::new());
        self.rows.push(cells);
    }
}

/// One block of a document.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Heading(String),
    Paragraph(String),
    /// Something the reader should act on.
    Warning(String),
    /// Label/value pairs.
    Facts(Vec<(String, String)>),
    Table(Table),
    /// A picture of numbers: drawn as SVG in HTML, summarised in text formats.
    Chart(Chart),
}

/// A report as a sequence of blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Document {
    pub title: String,
    pub blocks: Vec<Block>,
}

impl Document {
    /// An empty document with a title.
    pub fn new(title: impl Into<String>) -> Self {
        Document {
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    /// Appends a heading.
    pub fn heading(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Heading(text.into()));
    }

    /// Appends a paragraph.
    pub fn paragraph(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Paragraph(text.into()));
    }

    /// Appends a warning.
    pub fn warning(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Warning(text.into()));
    }

    /// Appends label/value pairs.
    pub fn facts(&mut self, facts: Vec<(&str, String)>) {
        self.blocks.push(Block::Facts(
            facts.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        ));
    }

    /// Appends a table.
    pub fn table(&mut self, table: Table) {
        self.blocks.push(Block::Table(table));
    }

    /// Appends a chart.
    pub fn chart(&mut self, chart: Chart) {
        self.blocks.push(Block::Chart(chart));
    }

    /// The blocks the page formats show (every block but CSV-only tables).
    pub fn shown_blocks(&self) -> impl Iterator<Item = &Block> {
        self.blocks
            .iter()
            .filter(|b| !matches!(b, Block::Table(t) if !t.shown))
    }

    /// The table marked for CSV, if any.
    pub fn csv_table(&self) -> Option<&Table> {
        self.blocks.iter().find_map(|b| match b {
            Block::Table(t) if t.is_csv => Some(t),
            _ => None,
        })
    }
}

/// How an axis maps values to positions and labels its ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    /// Evenly spaced values.
    #[default]
    Linear,
    /// Powers of ten evenly spaced; values at or below zero cannot be placed and
    /// are left out (the chart says how many).
    Log,
    /// Seconds since the Unix epoch, labelled `HH:MM` in UTC (`MM-DD HH:MM` when
    /// the axis spans more than a day). Only meaningful on the x axis: a y axis
    /// given this scale is drawn linear.
    Time,
}

/// One axis of a chart: its title and its scale.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Axis {
    /// The axis title, with its unit: "requests/s".
    pub label: String,
    pub scale: Scale,
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: impl Into<String>) -> Self {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
        }
    }

    /// A logarithmic axis.
    pub fn log(label: impl Into<String>) -> Self {
        Axis {
            label: label.into(),
            scale: Scale::Log,
        }
    }

    /// A time axis of epoch seconds, titled "time (UTC)".
    pub fn time() -> Self {
        Axis {
            label: "time (UTC)".to_string(),
            scale: Scale::Time,
        }
    }
}

/// One named line: `(x, y)` points in x order (non-finite points are skipped).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend entry.
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One histogram bin: the count of values in `start..end`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bin {
    /// Lower edge, on the x axis's scale (not positive: left out on a log axis).
    pub start: f64,
    /// Upper edge, above `start`.
    pub end: f64,
    pub count: u64,
}

/// One labelled bar of a bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The category, shown left of the bar (long labels are cut in the picture).
    pub label: String,
    /// The bar's length on the x axis.
    pub value: f64,
}

/// A labelled reference value drawn across the plot as a dashed line: a rule's
/// limit, a percentile. The label is shown as given (put the value in it).
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub label: String,
    /// Where the line is drawn, on its axis's scale.
    pub value: f64,
}

/// What a chart draws.
#[derive(Debug, Clone, PartialEq)]
pub enum ChartKind {
    /// Lines over `x` (time series, or a CDF on a log `x`), one colour per series,
    /// with a legend.
    Lines(Vec<Series>),
    /// Bars standing on `x` bins, heights on `y`: a distribution.
    Histogram(Vec<Bin>),
    /// Horizontal bars, one per label, top to bottom in the given order; their
    /// lengths are measured on the `x` axis, and `y` only titles the labels.
    Bars(Vec<Bar>),
}

/// A chart: what to draw, how its axes are scaled and which reference values to
/// mark. `hlines` are horizontal lines at y values (a limit over time); `vlines`
/// are vertical lines at x values (a percentile on a distribution, a limit on
/// bars). Axis ranges always include the markers, so a limit far above the
/// traffic is still visible.
///
/// The report's charts in these terms: requests per second over time is
/// `Lines` on [`Axis::time`] with one `hline` per rule's limit; the
/// distribution of per-client rates is a `Histogram` on [`Axis::log`] (or a
/// CDF as `Lines` on a log x) with `vlines` at p99, p99.9 and the limit;
/// rejected requests over time is `Lines` with one series per algorithm;
/// per-endpoint counts are `Bars`, largest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    /// The horizontal axis (the value axis of [`ChartKind::Bars`]).
    pub x: Axis,
    /// The vertical axis (only its title is used by [`ChartKind::Bars`]).
    pub y: Axis,
    pub kind: ChartKind,
    /// Horizontal reference lines, at y values.
    pub hlines: Vec<Marker>,
    /// Vertical reference lines, at x values.
    pub vlines: Vec<Marker>,
}

impl Chart {
    /// A chart without markers.
    pub fn new(title: impl Into<String>, x: Axis, y: Axis, kind: ChartKind) -> Self {
        Chart {
            title: title.into(),
            x,
            y,
            kind,
            hlines: Vec::new(),
            vlines: Vec::new(),
        }
    }

    /// Adds a horizontal marker at `y = value`.
    pub fn hline(mut self, label: impl Into<String>, value: f64) -> Self {
        self.hlines.push(Marker {
            label: label.into(),
            value,
        });
        self
    }

    /// Adds a vertical marker at `x = value`.
    pub fn vline(mut self, label: impl Into<String>, value: f64) -> Self {
        self.vlines.push(Marker {
            label: label.into(),
            value,
        });
        self
    }
}
