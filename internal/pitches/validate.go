package pitches

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on input sizes. They keep one request from filling the database and
// keep pages readable; the HTTP layer caps request bodies separately.
const (
	MaxTitleChars         = 200
	MaxBodyBytes          = 64 << 10
	MaxRulesBytes         = 64 << 10
	MaxCategoryChars      = 64
	MaxVerdictChars       = 64
	MaxNoteBytes          = 4 << 10
	MaxJustificationBytes = 8 << 10
	MaxVariantChars       = 200
	MaxCriteria           = 12
	MaxCriterionNameChars = 100
	MaxDescriptionBytes   = 4 << 10
	MaxSpeedup            = 1000
	MaxDisplayNameChars   = 100
	MaxLabelChars         = 100
	MinPasswordBytes      = 8
	MaxPasswordBytes      = 72 // bcrypt ignores bytes past 72; refuse rather than silently truncate
	WeightTotal           = 100
	MaxScore              = 10
)

var (
	criterionKeyRe = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)
	variantNameRe  = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	knobRe         = regexp.MustCompile(`^[A-Za-z0-9_.-]+=[A-Za-z0-9_.-]+$`)
	loginRe        = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{1,31}$`)
)

func invalid(field, format string, args ...any) *Error {
	return Errorf(EINVALID, field, format, args...)
}

// checkText enforces the shared rules on free text: valid UTF-8 without
// control characters, and a size cap. Character limits count runes (what a
// person sees); byte limits guard storage.
func checkText(field, s string, maxChars, maxBytes int) *Error {
	if !utf8.ValidString(s) {
		return invalid(field, "must be valid UTF-8 text")
	}
	if i, r := controlChar(s); i >= 0 {
		return invalid(field, "must not contain control characters (found U+%04X at byte %d)", r, i)
	}
	if maxChars > 0 && utf8.RuneCountInString(s) > maxChars {
		return invalid(field, "must be at most %d characters", maxChars)
	}
	if maxBytes > 0 && len(s) > maxBytes {
		return invalid(field, "must be at most %d bytes", maxBytes)
	}
	return nil
}

// controlChar finds the first control character other than tab, newline and
// carriage return: NUL truncates text in C tools and some exports, and
// escape sequences (ESC, CSI in C1) rewrite a terminal that prints a title
// or a note from the CLI, a log or a CSV. Returns -1 when there is none.
func controlChar(s string) (int, rune) {
	for i, r := range s {
		if r == '\t' || r == '\n' || r == '\r' {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return i, r
		}
	}
	return -1, 0
}

func checkRequiredText(field, s string, maxChars, maxBytes int) *Error {
	if err := checkText(field, s, maxChars, maxBytes); err != nil {
		return err
	}
	if strings.TrimSpace(s) == "" {
		return invalid(field, "must not be empty")
	}
	return nil
}

// ValidateRange checks a speedup range; prefix names the field ("claim",
// "estimate"). A speedup is a ratio, so it must be positive and finite; 1000x
// is far past anything a kernel tweak delivers and catches unit mistakes.
func ValidateRange(prefix string, r Range) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{prefix + ".lo", r.Lo}, {prefix + ".hi", r.Hi}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return invalid(f.name, "must be a finite number")
		}
		if f.v <= 0 {
			return invalid(f.name, "must be greater than 0 (a speedup is a ratio; 1 means no change)")
		}
		if f.v > MaxSpeedup {
			return invalid(f.name, "must be at most %d", MaxSpeedup)
		}
	}
	if r.Lo > r.Hi {
		return invalid(prefix+".lo", "must not exceed %s.hi (%g > %g)", prefix, r.Lo, r.Hi)
	}
	return nil
}

// ValidateVariant checks a kernel variant name with optional knob overrides,
// e.g. "baseline?stages=3&tile_m=64". Empty means "no variant yet".
func ValidateVariant(field, v string) error {
	if v == "" {
		return nil
	}
	if err := CheckLine(field, v, 0); err != nil {
		return err
	}
	if len(v) > MaxVariantChars {
		return invalid(field, "must be at most %d characters", MaxVariantChars)
	}
	name, query, hasQuery := strings.Cut(v, "?")
	if hash, ok := strings.CutPrefix(name, KernelVariantPrefix); ok {
		// A submitted kernel, named by its hash (kernels.go).
		if !ValidKernelHash(hash) {
			return invalid(field, "a submitted kernel is named kernel:<hash>, the 64 hex digits of its sha256 (got %q)", name)
		}
	} else if !variantNameRe.MatchString(name) {
		return invalid(field, "name must use only letters, digits, '_', '.' and '-', e.g. baseline?stages=3")
	}
	if hasQuery {
		if query == "" {
			return invalid(field, "knob list after '?' must not be empty")
		}
		for _, kv := range strings.Split(query, "&") {
			if !knobRe.MatchString(kv) {
				return invalid(field, "knob %q must look like knob=value", kv)
			}
		}
	}
	return nil
}

// ValidateCriteria checks a rubric: 1..12 criteria, unique keys, names, and
// integer default weights >= 0 summing to exactly 100 (scoring.md, "Rubrics
// and rounds").
func ValidateCriteria(cs []Criterion) error {
	if len(cs) == 0 {
		return invalid("criteria", "a rubric needs at least one criterion")
	}
	if len(cs) > MaxCriteria {
		return invalid("criteria", "a rubric has at most %d criteria", MaxCriteria)
	}
	seen := make(map[string]bool, len(cs))
	sum := 0
	for i, c := range cs {
		f := fmt.Sprintf("criteria[%d]", i)
		if !criterionKeyRe.MatchString(c.Key) {
			return invalid(f+".key", "must be 1-32 characters of a-z, 0-9 and '_'")
		}
		if seen[c.Key] {
			return invalid(f+".key", "duplicate key %q", c.Key)
		}
		seen[c.Key] = true
		if err := checkRequiredText(f+".name", c.Name, MaxCriterionNameChars, 0); err != nil {
			return err
		}
		if err := checkText(f+".description", c.Description, 0, MaxDescriptionBytes); err != nil {
			return err
		}
		if c.Weight < 0 || c.Weight > WeightTotal {
			return invalid(f+".weight", "must be between 0 and %d", WeightTotal)
		}
		sum += c.Weight
	}
	if sum != WeightTotal {
		return invalid("weights", "default weights must sum to %d, not %d", WeightTotal, sum)
	}
	return nil
}

// MaxMeasurementChars bounds a round measurement's text fields (problem,
// suite, device_class).
const MaxMeasurementChars = 200

// TrimLine trims the spaces around a one-line value, and only spaces: a
// control character at either end (a newline, a tab, U+0085) stays, so
// that CheckLine refuses the value instead of it being cut without a word
// (strings.TrimSpace would store "H100\n" as "H100").
func TrimLine(s string) string { return strings.Trim(s, " ") }

// CheckLine checks a single-line text field (a name, a label, a pattern):
// valid UTF-8, no control character at all (unicode.IsControl: C0 with tab
// and line breaks, DEL, C1), at most maxBytes bytes when maxBytes > 0. The
// error is EINVALID naming field.
func CheckLine(field, s string, maxBytes int) error {
	if !utf8.ValidString(s) {
		return invalid(field, "must be valid UTF-8 text")
	}
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return invalid(field, "must be one line without control characters (found U+%04X at byte %d)", r, i)
	}
	if maxBytes > 0 && len(s) > maxBytes {
		return invalid(field, "must be at most %d characters", maxBytes)
	}
	return nil
}

// ValidateMeasurement checks a round measurement's form (lengths, one line,
// no control characters); whether the problem and suite exist is the
// kernel catalogue's to say.
func ValidateMeasurement(m RoundMeasurement) error {
	for _, f := range []struct{ name, v string }{{"problem", m.Problem}, {"suite", m.Suite}, {"device_class", m.DeviceClass}} {
		if err := CheckLine(f.name, f.v, MaxMeasurementChars); err != nil {
			return err
		}
	}
	if m.Problem == "" && (m.Suite != "" || m.DeviceClass != "" || m.AllowImports) {
		return invalid("problem", "a measurement needs its problem")
	}
	return nil
}

// ValidateRoundBaseline checks a round's baseline against the measurement
// it is stored with. A baseline is a variant of the round's problem, so on a
// round that declares no problem there is nothing to check it against: it
// is refused rather than stored unchecked (the measurement sets both).
// Whether the variant exists is the kernel catalogue's to say
// (runner.CheckMeasurement).
func ValidateRoundBaseline(number int, m RoundMeasurement, baseline string) error {
	if strings.TrimSpace(baseline) != "" && strings.TrimSpace(m.Problem) == "" {
		return invalid("baseline", "round %d declares no problem yet: set its measurement (problem, suite, baseline) instead", number)
	}
	return nil
}

// ValidateRound checks everything a round is created or edited with.
func ValidateRound(in RoundInput) error {
	if in.Number < 1 {
		return invalid("number", "round number must be 1 or more")
	}
	if err := checkRequiredText("title", in.Title, MaxTitleChars, 0); err != nil {
		return err
	}
	if err := checkText("rules", in.Rules, 0, MaxRulesBytes); err != nil {
		return err
	}
	if err := ValidateVariant("baseline", in.Baseline); err != nil {
		return err
	}
	if in.Measurement != nil {
		if err := ValidateMeasurement(*in.Measurement); err != nil {
			return err
		}
	}
	return ValidateCriteria(in.Criteria)
}

// ValidatePitch checks a pitch's fields; the round's state and the re-pitch
// link are checked by the service, which can see them.
func ValidatePitch(in PitchInput) error {
	if in.RoundNumber < 1 {
		return invalid("round", "round number must be 1 or more")
	}
	if err := checkRequiredText("title", in.Title, MaxTitleChars, 0); err != nil {
		return err
	}
	if err := checkText("category", in.Category, MaxCategoryChars, 0); err != nil {
		return err
	}
	if err := checkText("body", in.Body, 0, MaxBodyBytes); err != nil {
		return err
	}
	if err := ValidateRange("claim", in.Claim); err != nil {
		return err
	}
	if err := ValidateVariant("variant", in.Variant); err != nil {
		return err
	}
	if in.RepitchOf < 0 {
		return invalid("repitch_of", "must be a pitch id or 0")
	}
	return nil
}

// ValidScore reports whether s is an allowed criterion score: 0..10 in steps
// of 0.5 (scoring.md: "steps of 0.5 are enough").
func ValidScore(s float64) bool {
	if math.IsNaN(s) || s < 0 || s > MaxScore {
		return false
	}
	return s*2 == math.Trunc(s*2)
}

// sortedUnknown returns the keys of m that are not criteria keys, sorted, so
// that the error for a bad map names the same field every time.
func sortedUnknown[V any](m map[string]V, known map[string]bool) []string {
	var out []string
	for k := range m {
		if !known[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func keySet(cs []Criterion) map[string]bool {
	known := make(map[string]bool, len(cs))
	for _, c := range cs {
		known[c.Key] = true
	}
	return known
}

// ValidateScorecard checks a scorecard against the round's criteria: every
// criterion scored, no unknown keys, scores 0..10 in steps of 0.5.
func ValidateScorecard(criteria []Criterion, in ScorecardInput) error {
	if len(criteria) == 0 {
		return invalid("scores", "the round has no criteria to score")
	}
	known := keySet(criteria)
	if unk := sortedUnknown(in.Scores, known); len(unk) > 0 {
		return invalid("scores."+unk[0], "unknown criterion %q", unk[0])
	}
	for _, c := range criteria {
		s, ok := in.Scores[c.Key]
		if !ok {
			return invalid("scores."+c.Key, "every criterion must be scored; %q is missing", c.Key)
		}
		if !ValidScore(s) {
			return invalid("scores."+c.Key, "must be between 0 and 10 in steps of 0.5")
		}
	}
	if unk := sortedUnknown(in.Notes, known); len(unk) > 0 {
		return invalid("notes."+unk[0], "unknown criterion %q", unk[0])
	}
	for _, c := range criteria {
		if err := checkText("notes."+c.Key, in.Notes[c.Key], 0, MaxNoteBytes); err != nil {
			return err
		}
	}
	if err := ValidateRange("estimate", in.Estimate); err != nil {
		return err
	}
	if err := checkText("verdict", in.Verdict, MaxVerdictChars, 0); err != nil {
		return err
	}
	return nil
}

// ValidateVote checks a vote's fields; whether the pitch is in the round and
// active is the service's job. Errors about the pitch name "pitch", the key
// the vote's JSON and form use (and ActVote's and the store's do too).
func ValidateVote(in VoteInput) error {
	if in.PitchID <= 0 {
		return invalid("pitch", "choose a pitch to vote for")
	}
	if err := checkRequiredText("justification", in.Justification, 0, MaxJustificationBytes); err != nil {
		return err
	}
	return ValidateTerms(in.Terms)
}

// ValidateTerms checks deal terms: a minimum geomean speedup in (0, 100],
// a maximum single-shape regression in [0, 1] and a maximum run-to-run
// variation in (0, 1], as fractions.
func ValidateTerms(t DealTerms) error {
	bad := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
	if v := t.MinGeomean; v != nil && (bad(*v) || *v <= 0 || *v > 100) {
		return invalid("terms.min_geomean", "the minimum geomean speedup must be a number above 0 (e.g. 1.4), at most 100")
	}
	if v := t.MaxRegression; v != nil && (bad(*v) || *v < 0 || *v > 1) {
		return invalid("terms.max_regression", "the maximum single-shape regression is a fraction between 0 and 1 (0.10 = 10%%)")
	}
	if v := t.MaxVariation; v != nil && (bad(*v) || *v <= 0 || *v > 1) {
		return invalid("terms.max_variation", "the maximum run-to-run variation is a fraction above 0, at most 1 (0.05 = 5%%)")
	}
	return nil
}

// ValidatePersonalWeights checks a shark's weights for a round: exactly the
// round's criteria keys, each >= 0, summing to 100 (zeros allowed: the Oracle
// gave pitch quality 0 in round 2).
func ValidatePersonalWeights(criteria []Criterion, w map[string]int) error {
	known := keySet(criteria)
	if unk := sortedUnknown(w, known); len(unk) > 0 {
		return invalid("weights."+unk[0], "unknown criterion %q", unk[0])
	}
	sum := 0
	for _, c := range criteria {
		v, ok := w[c.Key]
		if !ok {
			return invalid("weights."+c.Key, "every criterion needs a weight; %q is missing", c.Key)
		}
		if v < 0 || v > WeightTotal {
			return invalid("weights."+c.Key, "must be between 0 and %d", WeightTotal)
		}
		sum += v
	}
	if sum != WeightTotal {
		return invalid("weights", "weights must sum to %d, not %d", WeightTotal, sum)
	}
	return nil
}

// ValidateLogin: 2-32 characters, lowercase letters, digits, '_', '.', '-',
// starting with a letter or digit, so logins are unambiguous in URLs and logs.
func ValidateLogin(login string) error {
	if !loginRe.MatchString(login) {
		return invalid("login", "must be 2-32 characters of a-z, 0-9, '_', '.', '-', starting with a letter or digit")
	}
	return nil
}

// ValidatePassword: 8-72 bytes (72 is bcrypt's input limit).
func ValidatePassword(pw string) error {
	if len(pw) < MinPasswordBytes {
		return invalid("password", "must be at least %d characters", MinPasswordBytes)
	}
	if len(pw) > MaxPasswordBytes {
		return invalid("password", "must be at most %d bytes", MaxPasswordBytes)
	}
	return nil
}

// ValidateDisplayName: non-empty after trim, at most 100 characters.
func ValidateDisplayName(name string) error {
	if err := checkRequiredText("display_name", name, MaxDisplayNameChars, 0); err != nil {
		return err
	}
	return nil
}

// ValidateRole accepts exactly the four fixed roles.
func ValidateRole(r Role) error {
	switch r {
	case RoleAdmin, RoleShark, RoleContestant, RoleViewer:
		return nil
	}
	return invalid("role", "must be one of admin, shark, contestant, viewer")
}

// ValidateTokenLabel: optional, at most 100 characters.
func ValidateTokenLabel(label string) error {
	if err := checkText("label", label, MaxLabelChars, 0); err != nil {
		return err
	}
	return nil
}
