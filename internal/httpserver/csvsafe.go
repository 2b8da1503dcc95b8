package httpserver

import (
	"encoding/csv"
	"io"
	"strconv"
)

// csvWriter is encoding/csv's writer with every cell neutralised against
// spreadsheet formula injection (OWASP "CSV injection"): a pitch title, a
// variant, a note or a label is typed by someone else, and a cell starting
// with =, +, -, @, a tab or a carriage return is run as a formula by Excel,
// LibreOffice and Sheets when the export is opened. Such a cell gets a
// leading apostrophe, which spreadsheets show as text. Cells that are plain
// numbers ("-0.5", "+3") are left alone: they are data, not formulas.
type csvWriter struct{ *csv.Writer }

func newCSVWriter(w io.Writer) csvWriter { return csvWriter{csv.NewWriter(w)} }

func (w csvWriter) Write(record []string) error {
	safe := make([]string, len(record))
	for i, c := range record {
		safe[i] = csvCell(c)
	}
	return w.Writer.Write(safe)
}

func csvCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if s[0] == '+' || s[0] == '-' {
			if _, err := strconv.ParseFloat(s, 64); err == nil {
				return s
			}
		}
		return "'" + s
	}
	return s
}
