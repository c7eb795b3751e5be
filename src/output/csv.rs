//! `--format csv`: the document's CSV table, quoted by the `csv` crate, with
//! cells that a spreadsheet would run as formulas neutralised.

use super::document::Document;
use crate::text::escape;

/// Renders the CSV table of `doc` (an empty string when it has none).
pub fn render(doc: &Document) -> Result<String, csv::Error> {
    let Some(table) = doc.csv_table() else {
        return Ok(String::new());
    };
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(table.columns.iter().map(|(c, _)| c.as_str()))?;
    for row in &table.rows {
        writer.write_record(row.iter().map(|c| escape::csv_cell(c).into_owned()))?;
    }
    let bytes = writer.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 cells is UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::document::Table;

    #[test]
    fn quotes_and_neutralises() {
        let mut doc = Document::new("x");
        let mut t = Table::new(&["client", "n"]).csv_only();
        t.row(vec!["=HYPERLINK(\"http://e\")".into(), "-3".into()]);
        t.row(vec!["a,b".into(), "2".into()]);
        doc.table(t);
        assert_eq!(
            render(&doc).unwrap(),
            "client,n\n\"'=HYPERLINK(\"\"http://e\"\")\",-3\n\"a,b\",2\n"
        );
    }
}
