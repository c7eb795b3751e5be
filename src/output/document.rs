//! A neutral model of a report: headings, paragraphs, warnings, key-value lists
//! and tables of plain text. Commands build a [`Document`]; each output format
//! renders it, escaping the text as its medium requires. JSON is not rendered from
//! here: it serializes each command's own result types (the stable contract).

/// How a column's cells are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

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

    /// The table marked for CSV, if any.
    pub fn csv_table(&self) -> Option<&Table> {
        self.blocks.iter().find_map(|b| match b {
            Block::Table(t) if t.is_csv => Some(t),
            _ => None,
        })
    }
}
