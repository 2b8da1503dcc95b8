package pitches

import (
	"strings"
	"testing"
)

// Who may upload a pitch's kernel: its contestant (whatever their role) or
// an admin, while the round is pitching and the pitch active.
func TestCanUploadKernel(t *testing.T) {
	admin := &User{ID: 1, Role: RoleAdmin}
	shark := &User{ID: 2, Role: RoleShark}
	owner := &User{ID: 3, Role: RoleContestant}
	other := &User{ID: 4, Role: RoleContestant}
	viewer := &User{ID: 5, Role: RoleViewer}
	users := []*User{nil, admin, shark, owner, other, viewer}
	round := func(s RoundStatus) *Round { return &Round{Number: 1, Status: s} }
	pitch := &Pitch{ID: 10, RoundNumber: 1, ContestantID: owner.ID, Status: PitchActive}
	withdrawn := &Pitch{ID: 11, RoundNumber: 1, ContestantID: owner.ID, Status: PitchWithdrawn}
	sharkPitch := &Pitch{ID: 12, RoundNumber: 1, ContestantID: shark.ID, Status: PitchActive}
	const ok, U, F, C = "", EUNAUTHORIZED, EFORBIDDEN, ECONFLICT
	cases := []struct {
		name   string
		target Target
		want   [6]string // anon, admin, shark, owner, other, viewer
	}{
		{"pitching", Target{Round: round(RoundPitching), Pitch: pitch}, [6]string{U, ok, F, ok, F, F}},
		{"judging", Target{Round: round(RoundJudging), Pitch: pitch}, [6]string{U, C, F, C, F, F}},
		{"closed", Target{Round: round(RoundClosed), Pitch: pitch}, [6]string{U, C, F, C, F, F}},
		{"withdrawn", Target{Round: round(RoundPitching), Pitch: withdrawn}, [6]string{U, C, F, C, F, F}},
		{"a shark's own pitch", Target{Round: round(RoundPitching), Pitch: sharkPitch}, [6]string{U, ok, ok, F, F, F}},
	}
	for _, c := range cases {
		for i, u := range users {
			if got := ErrorCode(Can(u, ActUploadKernel, c.target)); got != c.want[i] {
				t.Errorf("%s, user %d: %q, want %q", c.name, i, got, c.want[i])
			}
		}
	}
	if ErrorCode(Can(owner, ActUploadKernel, Target{Round: round(RoundPitching)})) != EINTERNAL {
		t.Errorf("a check without its pitch is not reported")
	}
}

// Who sees a submission's source: sharks and admins always, its author
// (uploader or the carrying pitch's contestant) always, everyone once a
// round that carried it closed.
func TestCanSeeKernelSource(t *testing.T) {
	admin := &User{ID: 1, Role: RoleAdmin}
	shark := &User{ID: 2, Role: RoleShark}
	author := &User{ID: 3, Role: RoleContestant}
	other := &User{ID: 4, Role: RoleContestant}
	viewer := &User{ID: 5, Role: RoleViewer}
	uploader := &User{ID: 6, Role: RoleContestant} // stored the submission first
	users := []*User{nil, admin, shark, author, other, viewer, uploader}
	use := func(s RoundStatus) KernelUse {
		return KernelUse{PitchID: 10, RoundNumber: 1, RoundStatus: s, ContestantID: author.ID, UploadedBy: author.ID}
	}
	cases := []struct {
		name string
		uses []KernelUse
		want [7]bool // anon, admin, shark, author, other, viewer, creator
	}{
		{"pitching", []KernelUse{use(RoundPitching)}, [7]bool{false, true, true, true, false, false, true}},
		{"judging", []KernelUse{use(RoundJudging)}, [7]bool{false, true, true, true, false, false, true}},
		{"closed", []KernelUse{use(RoundClosed)}, [7]bool{true, true, true, true, true, true, true}},
		{"one round closed of two", []KernelUse{use(RoundJudging), use(RoundClosed)}, [7]bool{true, true, true, true, true, true, true}},
		{"not carried by any pitch", nil, [7]bool{false, true, true, false, false, false, true}},
	}
	for _, c := range cases {
		for i, u := range users {
			if got := CanSeeKernelSource(u, uploader.ID, c.uses); got != c.want[i] {
				t.Errorf("%s, user %d: %v, want %v", c.name, i, got, c.want[i])
			}
		}
	}
	err := KernelSourceHidden(other, []KernelUse{use(RoundJudging)})
	if ErrorCode(err) != EFORBIDDEN || !strings.Contains(ErrorMessage(err), "once round 1 closes") {
		t.Errorf("hidden message: %v", err)
	}
	if ErrorCode(KernelSourceHidden(nil, nil)) != EUNAUTHORIZED {
		t.Errorf("anonymous: not asked to log in")
	}
}

func TestValidateKernelFiles(t *testing.T) {
	ok := map[string][]byte{"manifest.json": []byte("{}"), "k.cu": []byte("x"), "tile.cuh": []byte("x")}
	if err := ValidateKernelFiles(ok); err != nil {
		t.Fatalf("valid files: %v", err)
	}
	cases := []struct {
		name  string
		files map[string][]byte
		field string
	}{
		{"none", map[string][]byte{}, "files"},
		{"dot-dot", map[string][]byte{"manifest.json": []byte("{}"), "..": []byte("x")}, "files..."},
		{"dir", map[string][]byte{"manifest.json": []byte("{}"), "src/k.cu": []byte("x")}, "files.src/k.cu"},
		{"backslash", map[string][]byte{"manifest.json": []byte("{}"), `..\k.cu`: []byte("x")}, `files...\k.cu`},
		{"hidden", map[string][]byte{"manifest.json": []byte("{}"), ".k.cu": []byte("x")}, "files..k.cu"},
		{"kind", map[string][]byte{"manifest.json": []byte("{}"), "k.so": []byte("x")}, "files.k.so"},
		{"empty", map[string][]byte{"manifest.json": []byte("{}"), "k.cu": nil}, "files.k.cu"},
		{"no manifest", map[string][]byte{"k.cu": []byte("x")}, "files.manifest.json"},
		{"too big", map[string][]byte{"manifest.json": make([]byte, MaxKernelBytes+1)}, "files"},
	}
	for _, c := range cases {
		err := ValidateKernelFiles(c.files)
		if ErrorCode(err) != EINVALID || ErrorField(err) != c.field {
			t.Errorf("%s: %v, want invalid on %q", c.name, err, c.field)
		}
	}
	for _, v := range []string{"kernel:" + strings.Repeat("a", 64), "kernel:" + strings.Repeat("0", 64) + "?unroll=2"} {
		if err := ValidateVariant("variant", v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, v := range []string{"kernel:abc", "kernel:" + strings.Repeat("A", 64)} {
		if err := ValidateVariant("variant", v); ErrorCode(err) != EINVALID {
			t.Errorf("%s: %v, want invalid", v, err)
		}
	}
}
