package templates

// AuditView is the admin's audit log page.
type AuditView struct {
	Action, Actor, Target string // the filters as given
	Entries               []AuditRow
	NextPage              string // the next (older) page's address; empty on the last
}

// AuditRow is one entry; Before and After are JSON ("" for none).
type AuditRow struct {
	ID            int64
	At            string
	Actor         string
	Action        string
	Target        string
	Before, After string
}

// WebhooksView is the admin's webhooks page.
type WebhooksView struct {
	Hooks  []WebhookRow
	Events []string // the events a hook may take
	Form   WebhookForm
	Note   string
}

// WebhookRow is one hook with its latest delivery attempts.
type WebhookRow struct {
	ID         int64
	URL        string
	Events     string
	Active     bool
	Created    string
	Deliveries []DeliveryRow
}

// DeliveryRow is one delivery attempt.
type DeliveryRow struct {
	At, Event, EventID string
	Attempt            int
	Status             string // the receiver's HTTP status; "" when none came
	Delivered, Final   bool
	Error              string
	Ms                 int64
}

// WebhookForm is the new-hook form as submitted (never the secret).
type WebhookForm struct {
	URL    string
	Events []string
	Err    *FormError
}

// RegressionsView is the admin's regression thresholds page.
type RegressionsView struct {
	Thresholds []ThresholdRow
	Alerts     []AlertRow
	Form       ThresholdForm
	Note       string
}

// ThresholdRow is one threshold.
type ThresholdRow struct {
	ID          int64
	Scope       string
	BaselineRun int64 // 0 for a zscore threshold
	Percent     string
	Bound       string // "5%", or "z=3 over the last 20 runs"
	Created     string
}

// ThresholdForm is the new-threshold form as submitted.
type ThresholdForm struct {
	Round, Problem, Variant, BaselineRun, Percent string
	Kind, Window, Z                               string // "percent" or "zscore"; a zscore one's window and z
	Err                                           *FormError
}

// AlertRow is one regression alert.
type AlertRow struct {
	ID, RunID, BaselineRun int64
	Scope, Percent         string
	Bound                  string // a zscore alert's "z=3 over its last 20 comparable runs"; "" for a percent one
	Summary                string
	At                     string
	Dismissed              string     // "Dismissed by admin on ...: why"; "" while the alert is active
	Err                    *FormError // the refused dismiss or restore form of this alert
	Reason                 string     // the refused dismiss form's reason, shown again
}

// MemberRegressionsView is /regressions, every member's read-only view of
// the thresholds and the latest alerts (those on runs whose results the
// viewer may see); CanDismiss adds the admins' dismiss and restore forms.
type MemberRegressionsView struct {
	Thresholds []ThresholdRow
	Alerts     []AlertRow
	State      string // the alert filter: all, active or dismissed
	CanDismiss bool
	Note       string
}

// RunTracking is the run page's tracking section: the regression alerts
// the run raised and what it measured with.
type RunTracking struct {
	HistoryURL string // the per-shape history of the run's variant on its device
	DevicesURL string // the run's variant on each device
	Alerts     []AlertRow
	SourceHash string
	AppBuild   string
}

// RunSearch is the /runs page's search beyond the exact filters (kept in
// the URL): its fields as given, and the sortable columns' links.
type RunSearch struct {
	Q, VariantPrefix, Person, Round, From, To string
	Sort, Dir                                 string
	Total                                     string // "12 runs match" when known
	Columns                                   map[string]SortLink
}

// SortLink is a sortable column head: where a click goes, and whether the
// list is sorted by it now ("ascending", "descending", or "" for no).
type SortLink struct {
	Href  string
	State string
}

// PitchesView is the pitch search page.
type PitchesView struct {
	Q, Status, VariantPrefix, Person, Round, From, To string
	Rows                                              []PitchRow
	Total                                             string
	Columns                                           map[string]SortLink
	NextPage, PrevPage                                string
	Err                                               *FormError
}

// PitchRow is one pitch found.
type PitchRow struct {
	ID         int64
	Round      int
	Title      string
	Contestant string
	Status     string
	Variant    string
	Filed      string
}

// ShapeHistoryView is the per-shape history of a variant.
type ShapeHistoryView struct {
	Problem, Variant, Suite, Baseline, Device string
	Shape                                     string // the filter's shape label; "" for every shape
	CSVURL                                    string
	Pitch                                     int64 // a pitch's history across its variants; 0 for a variant's
	JSONURL                                   string
	DevicesURL                                string // the variant on each device; "" for a pitch's history
	Series                                    []HistorySeriesView
	// Truncated says the history shows only the newest runs (the oldest
	// are left out); the sentence says how many.
	Truncated string
}

// HistorySeriesView is one shape on one device.
type HistorySeriesView struct {
	Device, Shape   string
	Suite, Baseline string // the series' measurement: speedups against another baseline or suite are another series
	ChartSVG        string
	Rows            []HistoryPointRow
}

// HistoryPointRow is one run on the series.
type HistoryPointRow struct {
	RunID               int64
	Variant             string
	When, Speedup, Time string
	Source, Build       string
	Changed             bool // the kernel source changed since the row before
}
