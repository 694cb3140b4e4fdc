//! Plain-text tables with columns sized to their content.

use std::io::{self, Write};

/// Rows of cells under a header.
#[derive(Debug)]
pub struct Table<const N: usize> {
    header: [String; N],
    rows: Vec<[String; N]>,
    right: [bool; N],
}

impl<const N: usize> Table<N> {
    /// A table with these column names and no rows, every column left-aligned.
    pub fn new(header: [&str; N]) -> Self {
        Self {
            header: header.map(str::to_owned),
            rows: Vec::new(),
            right: [false; N],
        }
    }

    /// Right-aligns these columns (numbers).
    pub fn align_right<const M: usize>(&mut self, columns: [usize; M]) {
        for column in columns {
            if let Some(right) = self.right.get_mut(column) {
                *right = true;
            }
        }
    }

    /// Adds a row.
    pub fn row(&mut self, cells: [String; N]) {
        self.rows.push(cells);
    }

    /// Writes the header and the rows, each line starting with `indent`; the last column is
    /// not padded on the right.
    pub fn write(&self, out: &mut dyn Write, indent: &str) -> io::Result<()> {
        let mut widths = [0usize; N];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::from(indent);
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = widths[i] - cell.chars().count();
                if self.right[i] {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    if i + 1 < N {
                        line.extend(std::iter::repeat_n(' ', pad));
                    }
                }
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_their_content() {
        let mut table = Table::new(["id", "topic", "count"]);
        table.align_right([0, 2]);
        table.row(["1".into(), "/chatter".into(), "50".into()]);
        table.row(["12".into(), "/a".into(), "1000".into()]);
        let mut out = Vec::new();
        table.write(&mut out, "  ").unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "  id  topic     count\n   1  /chatter     50\n  12  /a         1000\n"
        );
    }
}
