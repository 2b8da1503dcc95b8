package httpserver

import "github.com/go-chi/chi/v5"

// Experiment tracking (issue 15): runs compared side by side, the audit
// log, webhooks, regression thresholds and alerts. Its routes
// are mounted from the run routes, one line each, so that the shared route
// lists stay small.

// registerTrackingAPIRoutes mounts the tracking endpoints under /api.
func (s *server) registerTrackingAPIRoutes(r chi.Router) {
	r.Get("/runs/compare", s.handleAPICompareRuns)
	r.Get("/audit", s.handleAPIAudit)
	r.Get("/webhooks", s.handleAPIWebhooks)
	r.Post("/webhooks", s.handleAPICreateWebhook)
	r.Put("/webhooks/{id:[0-9]+}", s.handleAPIUpdateWebhook)
	r.Delete("/webhooks/{id:[0-9]+}", s.handleAPIDeleteWebhook)
	r.Get("/webhooks/{id:[0-9]+}/deliveries", s.handleAPIDeliveries)
	r.Post("/webhooks/{id:[0-9]+}/ping", s.handleAPIPingWebhook)
	r.Get("/thresholds", s.handleAPIThresholds)
	r.Post("/thresholds", s.handleAPICreateThreshold)
	r.Delete("/thresholds/{id:[0-9]+}", s.handleAPIDeleteThreshold)
	r.Get("/regressions", s.handleAPIRegressions)
	r.Post("/regressions/{id:[0-9]+}/dismiss", s.handleAPIDismissAlert)
	r.Post("/regressions/{id:[0-9]+}/undismiss", s.handleAPIUndismissAlert)
	r.Get("/runs/{id:[0-9]+}/regressions", s.handleAPIRunRegressions)
	r.Get("/pitches", s.handleAPIPitchSearch)
	r.Get("/runs/history", s.handleAPIShapeHistory)
	r.Get("/runs/history.csv", s.handleShapeHistoryCSV)
	r.Get("/runs/devices", s.handleAPIVariantDevices)
}

// registerTrackingPageRoutes mounts the tracking pages (logged in).
func (s *server) registerTrackingPageRoutes(r chi.Router) {
	r.Get("/runs/compare", s.handleComparePage)
	r.Get("/pitches", s.handlePitchesPage)
	r.Get("/runs/history", s.handleShapeHistoryPage)
	r.Get("/runs/devices", s.handleVariantDevicesPage)
	// Every member's view of thresholds and alerts; the forms on it are
	// the admins' (the handlers ask).
	r.Get("/regressions", s.handleRegressionsPage)
	r.Post("/regressions/{id:[0-9]+}/dismiss", s.handleDismissAlert)
	r.Post("/regressions/{id:[0-9]+}/undismiss", s.handleUndismissAlert)
	// The page's JSON link: the API's document for the browser's session
	// (the API itself takes only bearer tokens), as /runs.json is.
	r.Get("/runs/history.json", s.handleAPIShapeHistory)
	r.Get("/runs/history.csv", s.handleShapeHistoryCSV)
	r.Get("/runs/devices.json", s.handleAPIVariantDevices)
}

// registerTrackingAdminRoutes mounts the tracking admin pages under /admin
// (requireAdmin is already in place).
func (s *server) registerTrackingAdminRoutes(r chi.Router) {
	r.Get("/audit", s.handleAdminAudit)
	r.Get("/webhooks", s.handleAdminWebhooks)
	r.Post("/webhooks", s.handleAdminCreateWebhook)
	r.Post("/webhooks/{id:[0-9]+}/delete", s.handleAdminDeleteWebhook)
	r.Post("/webhooks/{id:[0-9]+}/ping", s.handleAdminPingWebhook)
	r.Get("/regressions", s.handleAdminRegressions)
	r.Post("/regressions", s.handleAdminCreateThreshold)
	r.Post("/regressions/{id:[0-9]+}/delete", s.handleAdminDeleteThreshold)
}
