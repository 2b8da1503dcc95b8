package httpserver

import (
	"bytes"
	"html"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// markdown renders user-written markdown (pitch bodies, round rules) to HTML
// that is safe to put in a page, with two gates: goldmark in its default
// safe mode omits raw HTML and dangerous link URLs, and bluemonday's UGC
// policy then drops whatever script, event-handler attribute or javascript:
// URL got through anyway. Nothing reaches a page unsanitized.
type markdown struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

func newMarkdown() *markdown {
	p := bluemonday.UGCPolicy()
	// Fenced code keeps its language class for styling.
	p.AllowAttrs("class").Matching(bluemonday.SpaceSeparatedTokens).OnElements("code")
	return &markdown{
		md:     goldmark.New(goldmark.WithExtensions(extension.GFM)),
		policy: p,
	}
}

// render returns sanitized HTML for src. A rendering failure shows the
// source as escaped text instead of failing the page.
func (m *markdown) render(src string) string {
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(src), &buf); err != nil {
		return "<pre>" + html.EscapeString(src) + "</pre>"
	}
	return m.policy.Sanitize(buf.String())
}
