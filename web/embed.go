// Package web holds pitchtank's static assets (CSS and a small script),
// embedded into the binary so it runs from one file.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var files embed.FS

// Static returns the assets rooted at the static directory ("app.css", "app.js").
func Static() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "static" is a constant;
		// the unrooted tree still serves, under static/.
		return files
	}
	return sub
}
