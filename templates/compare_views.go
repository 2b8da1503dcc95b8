package templates

// CompareView is the compare page: the runs set side by side, per shape.
type CompareView struct {
	Permalink string
	Runs      []CompareRun
	Columns   int // runs with a visible result: the table's figure columns
	Shapes    []CompareShapeRow
	ChartSVG  string
}

// CompareRun is one compared run. Series is its colour class when it has
// a column (a visible result), else empty.
type CompareRun struct {
	ID        int64
	Variant   string
	Baseline  string
	Problem   string
	Suite     string
	Device    string
	Status    string
	PitchID   int64
	Created   string
	Speedup   string
	Hidden    bool
	Reference bool
	Note      string // "reference", "comparable", "not comparable: different device / ...", "results hidden", "no result"
	Series    string
	// MakeReference is this comparison with this run as the reference;
	// empty for the reference and for runs without a visible result.
	MakeReference string
}

// CompareShapeRow is one shape: a cell per run column.
type CompareShapeRow struct {
	Label string
	Cells []CompareCell
}

// CompareCell is one run's figures on a shape; Present is false where the
// run did not measure it.
type CompareCell struct {
	Present     bool
	Time        string
	Speedup     string
	VsReference string
	Incorrect   bool // the shape failed a correctness check
}
