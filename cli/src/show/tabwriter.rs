//! An exact re-implementation of Go's `text/tabwriter` as oc configures it:
//! `tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)` — minwidth 0, tabwidth 0, padding 3, pad char
//! space, no flags.
//!
//! Semantics (mirroring `tabwriter.go`):
//! * `\t` and `\v` terminate a cell, `\n` and `\f` terminate a cell and the line. A line's last
//!   cell (the text after its last tab) belongs to no column and is never padded.
//! * Column widths are computed per *column block*: a maximal run of consecutive lines that all
//!   have a tab-terminated cell in that column. Blocks of column k+1 are searched inside each
//!   block of column k (Go's `format` recursion), so a line with fewer cells — a raw continuation
//!   line of a multi-line message, an empty line — ends the blocks around it and the rows after
//!   it are aligned independently.
//! * Width = the largest cell width in the block + 3, where the width of a cell is its number of
//!   Unicode scalar values (Go's `utf8.RuneCount`), not bytes. Every tab-terminated cell, empty
//!   ones included, is left-aligned and right-padded with spaces to its column width, which is
//!   why rows whose last column is empty end with trailing spaces.
//! * Go flushes after a `\f` (so columns never align across it) and after any line with a single
//!   cell (which cannot change the output); every line end is written as `\n`.
//! * At the final flush an unterminated last line keeps its text but gets no newline; an empty
//!   trailing cell of that line is not a cell at all (Go only terminates a non-empty pending cell).
//!
//! The escape (`0xff`) and HTML-filter features are unreachable: `0xff` never occurs in a `&str`
//! and no flags are set.

/// Go's `padding` argument.
const PADDING: usize = 3;
/// Go's `minwidth` argument.
const MIN_WIDTH: usize = 0;

/// A cell: its text and its width in runes.
struct Cell<'a> {
    text: &'a str,
    width: usize,
}

impl<'a> Cell<'a> {
    fn new(text: &'a str) -> Self {
        Cell {
            text,
            width: text.chars().count(),
        }
    }
}

/// Formats `input` exactly as a Go `tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)` writes it at
/// `Flush` after receiving `input` (cells tab-terminated, lines newline-terminated).
pub fn format_table(input: &str) -> String {
    let mut out = String::with_capacity(input.len() + input.len() / 2);
    // Go's `lines`: the last element is always the line being collected.
    let mut lines: Vec<Vec<Cell<'_>>> = vec![Vec::new()];
    let mut cell_start = 0;
    for (i, b) in input.bytes().enumerate() {
        if !matches!(b, b'\t' | b'\x0b' | b'\n' | b'\x0c') {
            continue;
        }
        // All four terminators are ASCII, hence char boundaries.
        let text = &input[cell_start..i];
        cell_start = i + 1;
        let line = current_line(&mut lines);
        line.push(Cell::new(text));
        if matches!(b, b'\n' | b'\x0c') {
            let ncells = line.len();
            lines.push(Vec::new());
            if b == b'\x0c' || ncells == 1 {
                flush(&mut lines, &mut out);
            }
        }
    }
    // Go's Flush terminates the pending cell only if it holds text.
    if cell_start < input.len() {
        current_line(&mut lines).push(Cell::new(&input[cell_start..]));
    }
    flush(&mut lines, &mut out);
    out
}

fn current_line<'l, 'a>(lines: &'l mut Vec<Vec<Cell<'a>>>) -> &'l mut Vec<Cell<'a>> {
    if lines.is_empty() {
        lines.push(Vec::new());
    }
    let last = lines.len() - 1;
    &mut lines[last]
}

/// Go's `flushNoDefers` + `reset`: formats all collected lines and starts over.
fn flush(lines: &mut Vec<Vec<Cell<'_>>>, out: &mut String) {
    let mut formatter = Formatter {
        lines,
        widths: Vec::new(),
        out,
    };
    formatter.format(0, formatter.lines.len());
    lines.clear();
    lines.push(Vec::new());
}

struct Formatter<'f, 'a> {
    lines: &'f [Vec<Cell<'a>>],
    /// Widths of the columns of the enclosing blocks (Go's `widths` stack).
    widths: Vec<usize>,
    out: &'f mut String,
}

impl Formatter<'_, '_> {
    /// Go's `format`: writes lines `line0..line1`, whose first `widths.len()` columns are
    /// already sized, finding the blocks of the next column among them.
    fn format(&mut self, mut line0: usize, line1: usize) {
        let column = self.widths.len();
        let has_column = |line: &Vec<Cell<'_>>| column + 1 < line.len();
        let mut this = line0;
        while this < line1 {
            if !has_column(&self.lines[this]) {
                this += 1;
                continue;
            }
            // Print the lines before the block, then size the block's column.
            self.write_lines(line0, this);
            line0 = this;
            let mut width = MIN_WIDTH;
            while this < line1 && has_column(&self.lines[this]) {
                width = width.max(self.lines[this][column].width + PADDING);
                this += 1;
            }
            // Format the block's lines with this column's width known.
            self.widths.push(width);
            self.format(line0, this);
            self.widths.pop();
            line0 = this;
        }
        self.write_lines(line0, line1);
    }

    /// Go's `writeLines`: every cell in a sized column is padded, the rest written as is; each
    /// line but the very last one collected ends with a newline.
    fn write_lines(&mut self, line0: usize, line1: usize) {
        for i in line0..line1 {
            for (j, cell) in self.lines[i].iter().enumerate() {
                self.out.push_str(cell.text);
                if let Some(&width) = self.widths.get(j) {
                    let pad = width.saturating_sub(cell.width);
                    self.out.extend(std::iter::repeat_n(' ', pad));
                }
            }
            if i + 1 != self.lines.len() {
                self.out.push('\n');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds tabwriter input from rows of cells: cells are tab-terminated except the last
    /// one of each row, rows are newline-terminated.
    fn input(rows: &[&[&str]]) -> String {
        rows.iter()
            .map(|row| format!("{}\n", row.join("\t")))
            .collect()
    }

    /// Joins expected output lines, each newline-terminated.
    fn lines(lines: &[&str]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    #[test]
    fn empty_and_plain_text() {
        assert_eq!(format_table(""), "");
        assert_eq!(format_table("\n"), "\n");
        assert_eq!(format_table("plain\n\nlines\n"), "plain\n\nlines\n");
        assert_eq!(format_table("no newline"), "no newline");
    }

    #[test]
    fn last_cell_is_not_padded() {
        assert_eq!(
            format_table("a\tbbbbbb\nccc\td\n"),
            "a     bbbbbb\nccc   d\n"
        );
        // A single tab-separated line: only the first cell is padded.
        assert_eq!(format_table("NAME\tMESSAGE\n"), "NAME   MESSAGE\n");
    }

    #[test]
    fn empty_cells_are_padded() {
        assert_eq!(format_table("\t\tx\n"), "      x\n");
        assert_eq!(format_table("a\t\n"), "a   \n");
        // Column 1 is the empty cell of line 1 and "b": width 1 + 3 = 4.
        assert_eq!(
            format_table("a\tb\t\nccc\t\t\n"),
            "a     b   \nccc       \n"
        );
    }

    #[test]
    fn width_counts_runes_not_bytes() {
        // "µµ" is 2 runes but 4 bytes: the width is 2 + 3 = 5; byte counting would give 7
        // ("a      b\nµµ     c\n").
        assert_eq!(format_table("a\tb\nµµ\tc\n"), "a    b\nµµ   c\n");
        assert_eq!(format_table("ÄÖÜ\tx\nab\ty\n"), "ÄÖÜ   x\nab    y\n");
        // Non-ASCII last cells do not matter.
        assert_eq!(format_table("a\t日本語\nbb\tc\n"), "a    日本語\nbb   c\n");
    }

    #[test]
    fn continuation_line_splits_blocks() {
        let got = format_table(&input(&[
            &["NAME", "EST", "MESSAGE"],
            &["a", "?", "first line"],
            &["second line"],
            &["a-much-longer-name", "+10m", ""],
        ]));
        let want = lines(&[
            "NAME   EST   MESSAGE",
            "a      ?     first line",
            "second line",
            "a-much-longer-name   +10m   ",
        ]);
        assert_eq!(got, want);
    }

    #[test]
    fn empty_line_splits_blocks() {
        assert_eq!(format_table("a\tb\n\nlonger\tc\n"), "a   b\n\nlonger   c\n");
    }

    #[test]
    fn nested_column_blocks() {
        // Column 0 spans all three lines; column 1 exists on lines 1 and 3 only, so it forms
        // two separate blocks with their own widths.
        let got = format_table("a\tb\tc\naa\tbbbb\naaa\tbb\tc\n");
        assert_eq!(got, "a     b   c\naa    bbbb\naaa   bb   c\n");
        // A deeper column block ends where a line runs out of cells.
        let got = format_table("a\tb\tc\td\nx\ty\tzzzzz\nx\tyyyy\tz\tw\n");
        assert_eq!(
            got,
            "a   b      c   d\nx   y      zzzzz\nx   yyyy   z   w\n"
        );
    }

    #[test]
    fn form_feed_flushes_and_ends_alignment() {
        assert_eq!(format_table("a\tb\x0cccc\td\n"), "a   b\nccc   d\n");
        // The same input with a newline aligns both lines.
        assert_eq!(format_table("a\tb\nccc\td\n"), "a     b\nccc   d\n");
    }

    #[test]
    fn vertical_tab_terminates_cells() {
        assert_eq!(format_table("a\x0bb\nccc\td\n"), "a     b\nccc   d\n");
    }

    #[test]
    fn unterminated_last_line() {
        assert_eq!(format_table("a\tb\nccc\td"), "a     b\nccc   d");
        // A pending empty cell is not a cell: "c\t" has a single tab-terminated cell, which is
        // the line's last cell, so it is not padded and does not join the block.
        assert_eq!(format_table("a\tb\nc\t"), "a   b\nc");
        // "c\t\t" has cells ["c", ""]: "c" is padded, the empty last cell is not.
        assert_eq!(format_table("a\tb\nc\t\t"), "a   b\nc   ");
    }

    #[test]
    fn other_whitespace_is_text() {
        assert_eq!(format_table("a b\tc\nd\te\n"), "a b   c\nd     e\n");
        assert_eq!(format_table("a\r\tb\n"), "a\r   b\n");
    }

    /// G.48: a health table with the durations of oc's health_test vectors.
    #[test]
    fn health_table() {
        let got = format_table(&input(&[
            &["SINCE", "LEVEL", "IMPACT", "MESSAGE"],
            &[
                "1h",
                "Error",
                "API Availability",
                "Cluster Operator a is degraded",
            ],
            &["5s", "Warning", "Update Speed", "Node b is not ready"],
            &["20s", "Warning", "None", "Something"],
            &["10s", "Info", "None", "Something else"],
            &["now", "Info", "None", "Update is proceeding well"],
        ]));
        let want = lines(&[
            "SINCE   LEVEL     IMPACT             MESSAGE",
            "1h      Error     API Availability   Cluster Operator a is degraded",
            "5s      Warning   Update Speed       Node b is not ready",
            "20s     Warning   None               Something",
            "10s     Info      None               Something else",
            "now     Info      None               Update is proceeding well",
        ]);
        assert_eq!(got, want);
    }

    /// A node table with a multi-line message, as in the OCPBUGS-60768 golden output: the raw
    /// continuation line ends the column blocks, so the rows after it get their own widths.
    #[test]
    fn node_table_with_multi_line_message() {
        let rows: &[&[&str]] = &[
            &[""],
            &["NAME", "ASSESSMENT", "PHASE", "VERSION", "EST", "MESSAGE"],
            &[
                "ip-a",
                "Degraded",
                "Draining",
                "4.19.0",
                "?",
                "failed to drain node: error when evicting pods:\nCannot evict pod as it would violate the pod's disruption budget.",
            ],
            &["ip-bb-long-name", "Outdated", "Pending", "4.19.0", "?", ""],
            &["ip-c", "Outdated", "Pending", "4.19.0", "?", ""],
        ];
        let want = lines(&[
            "",
            "NAME   ASSESSMENT   PHASE      VERSION   EST   MESSAGE",
            "ip-a   Degraded     Draining   4.19.0    ?     failed to drain node: error when evicting pods:",
            "Cannot evict pod as it would violate the pod's disruption budget.",
            "ip-bb-long-name   Outdated   Pending   4.19.0   ?   ",
            "ip-c              Outdated   Pending   4.19.0   ?   ",
        ]);
        assert_eq!(format_table(&input(rows)), want);
    }

    /// The start (in runes) of each column of a table header line such as
    /// `NAME   ASSESSMENT   PHASE`: upper-case cells (`WORKER POOL` has a single space inside)
    /// separated by runs of at least [`PADDING`] spaces; `None` if the line is not one.
    fn header_columns(line: &[char]) -> Option<Vec<usize>> {
        let mut starts = Vec::new();
        let mut i = 0;
        while i < line.len() {
            starts.push(i);
            let mut end = i;
            while end < line.len() && !line[end..].starts_with(&[' '; PADDING]) {
                end += 1;
            }
            let cell = &line[i..end];
            if !cell
                .iter()
                .all(|c| c.is_ascii_uppercase() || matches!(c, ' ' | '.' | '-'))
                || cell.first().is_none_or(|c| !c.is_ascii_uppercase())
            {
                return None;
            }
            i = end;
            while i < line.len() && line[i] == ' ' {
                i += 1;
            }
        }
        (starts.len() >= 2).then_some(starts)
    }

    /// The cells of a table line cut at `starts`, each with its padding removed (the last one
    /// whole), if the line is aligned on them: every cell but the last ends with at least
    /// [`PADDING`] spaces before the next start. `None`: a line of another block (a raw
    /// continuation line of a multi-line message, or the rows aligned after it).
    fn aligned_cells(line: &[char], starts: &[usize]) -> Option<Vec<String>> {
        let last = *starts.last()?;
        if line.len() < last {
            return None;
        }
        let mut cells = Vec::new();
        for pair in starts.windows(2) {
            let (from, to) = (pair[0], pair[1]);
            if !line[to - PADDING..to].iter().all(|c| *c == ' ') {
                return None;
            }
            let cell: String = line[from..to].iter().collect();
            cells.push(cell.trim_end_matches(' ').to_string());
        }
        cells.push(line[last..].iter().collect());
        Some(cells)
    }

    /// Every table of every golden output (oc's own `expected.output` and
    /// `expected.detailed-output` of the captured and differential cases, our hosted outputs)
    /// is cut back into the cells oc wrote (at its header's column starts; lines that are not
    /// aligned on them go in whole, as single cells) and formatted again: the text must come
    /// back byte for byte. Those files are the tables Go's tabwriter wrote, so this checks the
    /// widths, the padding, the trailing spaces of empty last columns and the blocks split by
    /// continuation lines on real outputs, without a copy of them here.
    #[test]
    fn every_table_of_the_golden_outputs_formats_back_to_itself() {
        let mut folders = update_status_testdata::all_oc_cases();
        folders.extend(
            std::fs::read_dir(update_status_testdata::hosted_cases_dir())
                .expect("hosted cases")
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir()),
        );
        let (mut tables, mut aligned_rows, mut other_rows) = (0, 0, 0);
        for folder in folders {
            let mut files: Vec<_> = std::fs::read_dir(&folder)
                .expect("case folder")
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with("expected") && !n.ends_with(".json") && n != "expected"
                    })
                })
                .collect();
            files.sort();
            for file in files {
                let text = std::fs::read_to_string(&file).expect("golden output");
                let all: Vec<&str> = text.lines().collect();
                let mut i = 0;
                while i < all.len() {
                    let header: Vec<char> = all[i].chars().collect();
                    let Some(starts) = header_columns(&header) else {
                        i += 1;
                        continue;
                    };
                    let end = all[i..]
                        .iter()
                        .position(|l| l.is_empty())
                        .map_or(all.len(), |n| i + n);
                    let mut input = String::new();
                    for line in &all[i..end] {
                        let chars: Vec<char> = line.chars().collect();
                        match aligned_cells(&chars, &starts) {
                            Some(cells) => {
                                aligned_rows += 1;
                                input.push_str(&cells.join("\t"));
                            }
                            None => {
                                other_rows += 1;
                                input.push_str(line);
                            }
                        }
                        input.push('\n');
                    }
                    let want = lines(&all[i..end]);
                    assert_eq!(
                        format_table(&input),
                        want,
                        "{}: the table at line {}",
                        file.display(),
                        i + 1
                    );
                    tables += 1;
                    i = end;
                }
            }
        }
        // Not vacuous: the fixtures hold many tables, nearly all of whose lines are cells.
        assert!(tables >= 60, "{tables} tables found in the golden outputs");
        assert!(
            aligned_rows >= 10 * other_rows.max(1) && aligned_rows >= 300,
            "{aligned_rows} aligned rows, {other_rows} others"
        );
    }
}
