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
