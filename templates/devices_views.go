package templates

// VariantDevicesView is one variant on each device it was measured on.
type VariantDevicesView struct {
	Problem, Variant, Suite, Baseline string
	JSONURL, HistoryURL               string
	Rows                              []DeviceRowView
	// Truncated says only the newest runs were read; the sentence says how
	// many.
	Truncated string
}

// DeviceRowView is the variant on one device, suite and baseline.
type DeviceRowView struct {
	Device          string
	Imported        bool
	Suite, Baseline string
	N               int
	Pooled          string // the pooled geomean speedup with its interval
	Range           string // "runs from 1.2x to 1.3x" for two runs or more
	Latest, Best    DeviceRunView
	Shapes          []DeviceShapeTime // the latest run's median variant times
}

// DeviceRunView is one run of a device's row.
type DeviceRunView struct {
	ID            int64
	When, Speedup string
}

// DeviceShapeTime is one shape's median variant time.
type DeviceShapeTime struct {
	Label, Time string
}
