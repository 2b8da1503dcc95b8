package httpserver

import (
	"bytes"
	"fmt"
	"path"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// Syntax highlighting of submitted sources with chroma, server-side: the
// HTML carries classes only (WithClasses), and their colours live in the
// kernel block of web/static/app.css, so the CSP (no inline styles) holds.
// The formatter escapes the source; the result is safe to embed.

// maxHighlightBytes: larger files are shown as plain (escaped) text, since
// highlighting is the slow part of the page.
const maxHighlightBytes = 256 << 10

// formatter renders with classes (prefixed "hl-", as in app.css) and
// numbered lines whose anchors start with anchor (one per file, so that
// several files on a page have distinct ids).
func formatter(anchor string) *chromahtml.Formatter {
	return chromahtml.New(
		chromahtml.WithClasses(true),
		chromahtml.WithLineNumbers(true),
		chromahtml.WithLinkableLineNumbers(true, anchor),
		chromahtml.ClassPrefix("hl-"),
	)
}

// lexerFor picks the lexer by the file's kind: CUDA C++ for sources and
// headers, JSON for the manifest; PTX has no lexer and is shown plain.
func lexerFor(name string) chroma.Lexer {
	var l chroma.Lexer
	switch path.Ext(name) {
	case ".cu", ".cuh":
		l = lexers.Get("cuda")
		if l == nil {
			l = lexers.Get("cpp")
		}
	case ".h", ".hpp", ".inc":
		l = lexers.Get("cpp")
	case ".json":
		l = lexers.Get("json")
	}
	if l == nil {
		l = lexers.Fallback
	}
	return chroma.Coalesce(l)
}

// highlight renders a source file as HTML (classes only); line n's
// anchor is anchor+n.
func highlight(name, anchor string, src []byte) (string, error) {
	if len(src) > maxHighlightBytes {
		return highlightWith(lexers.Fallback, anchor, src)
	}
	return highlightWith(lexerFor(name), anchor, src)
}

func highlightWith(l chroma.Lexer, anchor string, src []byte) (string, error) {
	it, err := l.Tokenise(nil, string(src))
	if err != nil {
		return "", fmt.Errorf("highlight: tokenise: %w", err)
	}
	var buf bytes.Buffer
	if err := formatter(anchor).Format(&buf, styles.Get("github"), it); err != nil {
		return "", fmt.Errorf("highlight: format: %w", err)
	}
	return buf.String(), nil
}
