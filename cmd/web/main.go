// Command web is pitchtank's single binary: the web app, its admin CLI and the bench harness.
package main

import "os"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "bench" {
		os.Exit(runBench(os.Args[2:]))
	}
	os.Exit(2)
}
