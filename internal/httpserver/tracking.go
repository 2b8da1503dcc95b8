package httpserver

import "github.com/go-chi/chi/v5"

// Experiment tracking (issue 15): runs compared side by side, the audit
// log. Its routes
// are mounted from the run routes, one line each, so that the shared route
// lists stay small.

// registerTrackingAPIRoutes mounts the tracking endpoints under /api.
func (s *server) registerTrackingAPIRoutes(r chi.Router) {
	r.Get("/runs/compare", s.handleAPICompareRuns)
	r.Get("/audit", s.handleAPIAudit)
}

// registerTrackingPageRoutes mounts the tracking pages (logged in).
func (s *server) registerTrackingPageRoutes(r chi.Router) {
	r.Get("/runs/compare", s.handleComparePage)
}

// registerTrackingAdminRoutes mounts the tracking admin pages under /admin
// (requireAdmin is already in place).
func (s *server) registerTrackingAdminRoutes(r chi.Router) {
	r.Get("/audit", s.handleAdminAudit)
}
