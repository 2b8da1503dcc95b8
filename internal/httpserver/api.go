package httpserver

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/pitchtank/pitchtank/internal/pitches"
)

// registerAPIRoutes mounts the JSON API. Every endpoint needs a bearer token.
func (s *server) registerAPIRoutes(r chi.Router) {
	r.Use(s.apiUser, s.cachePages)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.apiError(w, r, pitches.Errorf(pitches.ENOTFOUND, "", "no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		allowed := allowedMethods(r)
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
		}
		writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: errorDetail{Code: "method_not_allowed", Message: r.Method + " is not allowed on " + r.URL.Path}})
	})

	r.Get("/me", s.handleAPIMe)

	r.Get("/rounds", s.handleAPIRounds)
	r.Post("/rounds", s.handleAPICreateRound)
	r.Get("/rounds/{number}", s.handleAPIRound)
	r.Put("/rounds/{number}", s.handleAPIUpdateRound)
	r.Patch("/rounds/{number}", s.handleAPIUpdateRound)
	r.Post("/rounds/{number}/status", s.handleAPIRoundStatus)
	r.Get("/rounds/{number}/standings", s.handleAPIStandings)
	r.Get("/rounds/{number}/pitches", s.handleAPIRoundPitches)
	r.Put("/rounds/{number}/weights", s.handleAPISetWeights)
	r.Get("/rounds/{number}/weights", s.handleAPIWeights)
	r.Put("/rounds/{number}/vote", s.handleAPIVote)
	r.Get("/rounds/{number}/votes", s.handleAPIVotes)
	r.Get("/rounds/{number}/votes/history", s.handleAPIVoteHistory)

	r.Post("/pitches", s.handleAPIFilePitch)
	r.Get("/pitches/{id}", s.handleAPIPitch)
	r.Put("/pitches/{id}", s.handleAPIEditPitch)
	r.Post("/pitches/{id}/withdraw", s.handleAPIWithdraw)
	r.Put("/pitches/{id}/scorecard", s.handleAPIScorecard)
	r.Get("/pitches/{id}/scorecards", s.handleAPIScorecards)
	r.Get("/pitches/{id}/scorecards/history", s.handleAPIScorecardHistory)

	s.registerRunAPIRoutes(r)
	s.registerKernelAPIRoutes(r)

	r.Get("/tokens", s.handleAPITokens)
	r.Post("/tokens", s.handleAPICreateToken)
	r.Delete("/tokens/{id}", s.handleAPIRevokeToken)
}

// roundParam and idParam read path parameters; a malformed one is a 400
// naming the parameter, never a panic or a silent zero.
func roundParam(r *http.Request) (int, error) {
	n, err := strconv.Atoi(chi.URLParam(r, "number"))
	if err != nil || n < 1 {
		return 0, pitches.Errorf(pitches.EBADREQUEST, "number", "round number must be a positive integer")
	}
	return n, nil
}

func idParam(r *http.Request) (int64, error) {
	n, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || n < 1 {
		return 0, pitches.Errorf(pitches.EBADREQUEST, "id", "id must be a positive integer")
	}
	return n, nil
}

func (s *server) handleAPIMe(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, toUserJSON(userFrom(r.Context())))
}

func (s *server) handleAPIRounds(w http.ResponseWriter, r *http.Request) {
	rounds, err := s.svc.Rounds(r.Context())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := make([]roundJSON, 0, len(rounds))
	for i := range rounds {
		out = append(out, toRoundJSON(&rounds[i], false))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) handleAPIRound(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	round, err := s.svc.Round(r.Context(), n)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toRoundJSON(round, true))
}

func (s *server) handleAPICreateRound(w http.ResponseWriter, r *http.Request) {
	in, err := decodeRound(r.Body)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	round, err := s.svc.CreateRound(r.Context(), userFrom(r.Context()), in)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/rounds/"+strconv.Itoa(round.Number))
	writeJSON(w, http.StatusCreated, toRoundJSON(round, true))
}

func (s *server) handleAPIUpdateRound(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	in, err := decodeRound(r.Body)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if in.Number == 0 {
		in.Number = n // the path names the round; the body need not repeat it
	}
	if err := s.checkRoundEdit(r.Context(), userFrom(r.Context()), n, &in); err != nil {
		s.apiError(w, r, err)
		return
	}
	round, err := s.svc.UpdateRound(r.Context(), userFrom(r.Context()), n, in)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toRoundJSON(round, true))
}

func (s *server) handleAPIRoundStatus(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	status, err := decodeStatus(r.Body)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	round, err := s.svc.SetRoundStatus(r.Context(), userFrom(r.Context()), n, status)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toRoundJSON(round, true))
}

func (s *server) handleAPIStandings(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	st, err := s.svc.Standings(r.Context(), userFrom(r.Context()), n)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toStandingsJSON(st))
}

func (s *server) handleAPIRoundPitches(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if _, err := s.svc.Round(r.Context(), n); err != nil {
		s.apiError(w, r, err) // 404 for a round that does not exist, not an empty list
		return
	}
	ps, err := s.svc.Pitches(r.Context(), n)
	if err == nil {
		ps, err = pagePitches(w, r, ps)
	}
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := make([]pitchJSON, 0, len(ps))
	for i := range ps {
		out = append(out, toPitchJSON(&ps[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) handleAPISetWeights(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	weights, err := decodeWeights(r.Body)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	u := userFrom(r.Context())
	if err := s.svc.SetPersonalWeights(r.Context(), u, n, weights); err != nil {
		s.apiError(w, r, err)
		return
	}
	// The same resource as GET: answer as GET does.
	s.serveWeights(w, r, u, n)
}

func (s *server) handleAPIWeights(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	s.serveWeights(w, r, userFrom(r.Context()), n)
}

// serveWeights answers u's weights in round n: their own ("personal":
// true), else the round's defaults.
func (s *server) serveWeights(w http.ResponseWriter, r *http.Request, u *pitches.User, n int) {
	round, err := s.svc.Round(r.Context(), n)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	got, err := s.svc.PersonalWeights(r.Context(), u.ID, n)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	personal := got != nil
	if !personal {
		got = defaultWeights(round)
	}
	writeJSON(w, http.StatusOK, map[string]any{"round": n, "weights": got, "personal": personal})
}

func defaultWeights(round *pitches.Round) map[string]int {
	w := make(map[string]int, len(round.Criteria))
	for _, c := range round.Criteria {
		w[c.Key] = c.Weight
	}
	return w
}

func (s *server) handleAPIVote(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	in, err := decodeVote(r.Body)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	v, err := s.svc.CastVote(r.Context(), userFrom(r.Context()), n, in)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toVoteJSON(v))
}

func (s *server) handleAPIVotes(w http.ResponseWriter, r *http.Request) {
	n, err := roundParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	vs, err := s.svc.VisibleVotes(r.Context(), userFrom(r.Context()), n)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := make([]voteJSON, 0, len(vs))
	for i := range vs {
		out = append(out, toVoteJSON(&vs[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) handleAPIFilePitch(w http.ResponseWriter, r *http.Request) {
	in, err := decodePitch(r.Body)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	p, err := s.filePitch(r.Context(), userFrom(r.Context()), in)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/pitches/"+strconv.FormatInt(p.ID, 10))
	writeJSON(w, http.StatusCreated, toPitchJSON(p))
}

func (s *server) handleAPIPitch(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	p, err := s.svc.Pitch(r.Context(), id)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	cards, hidden, err := s.svc.VisibleScorecards(r.Context(), userFrom(r.Context()), id)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := pitchDetailJSON{pitchJSON: toPitchJSON(p), Scorecards: make([]scorecardJSON, 0, len(cards)), HiddenScorecards: hidden}
	for i := range cards {
		out.Scorecards = append(out.Scorecards, toScorecardJSON(&cards[i]))
	}
	if err := s.markChanged(r.Context(), id, out.Scorecards); err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) handleAPIEditPitch(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	in, err := decodePitch(r.Body)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	p, err := s.editPitch(r.Context(), userFrom(r.Context()), id, in)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toPitchJSON(p))
}

func (s *server) handleAPIWithdraw(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if err := decodeEmpty(r.Body); err != nil {
		s.apiError(w, r, err)
		return
	}
	p, err := s.svc.WithdrawPitch(r.Context(), userFrom(r.Context()), id)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toPitchJSON(p))
}

func (s *server) handleAPIScorecard(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	in, err := decodeScorecard(r.Body)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	c, err := s.svc.SubmitScorecard(r.Context(), userFrom(r.Context()), id, in)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := []scorecardJSON{toScorecardJSON(c)}
	if err := s.markChanged(r.Context(), id, out); err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out[0])
}

func (s *server) handleAPIScorecards(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	cards, hidden, err := s.svc.VisibleScorecards(r.Context(), userFrom(r.Context()), id)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := make([]scorecardJSON, 0, len(cards))
	for i := range cards {
		out = append(out, toScorecardJSON(&cards[i]))
	}
	if err := s.markChanged(r.Context(), id, out); err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"scorecards": out, "hidden": hidden})
}

func (s *server) handleAPITokens(w http.ResponseWriter, r *http.Request) {
	toks, err := s.svc.Tokens(r.Context(), userFrom(r.Context()).ID)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := make([]tokenJSON, 0, len(toks))
	for i := range toks {
		out = append(out, toTokenJSON(&toks[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) handleAPICreateToken(w http.ResponseWriter, r *http.Request) {
	var q tokenRequest
	if err := decodeJSON(r.Body, &q); err != nil {
		s.apiError(w, r, err)
		return
	}
	secret, tok, err := s.svc.CreateToken(r.Context(), userFrom(r.Context()).ID, q.Label)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := toTokenJSON(tok)
	out.Secret = secret
	writeJSON(w, http.StatusCreated, out)
}

func (s *server) handleAPIRevokeToken(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if err := decodeEmpty(r.Body); err != nil {
		s.apiError(w, r, err)
		return
	}
	if err := s.svc.RevokeToken(r.Context(), userFrom(r.Context()), id); err != nil {
		s.apiError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// allowedMethods lists the methods the router serves on r's path, for a
// 405's Allow header (RFC 9110 requires it): chi calls a custom
// MethodNotAllowed handler without setting it. The route context's Routes
// is the top router here, so the whole URL path is matched (chi follows the
// /api mount).
func allowedMethods(r *http.Request) []string {
	rctx := chi.RouteContext(r.Context())
	if rctx == nil || rctx.Routes == nil {
		return nil
	}
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if rctx.Routes.Match(chi.NewRouteContext(), m, r.URL.Path) {
			out = append(out, m)
		}
	}
	return out
}
