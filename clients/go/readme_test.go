package lockd_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"lockd.dev/go/lockd/internal/lockdtest"
)

// The README's example, as written: its Go block is built as a program of its own against this
// module and run against a fresh lockd; what it prints must be the README's text block.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	must(t, err)
	program := fenced(t, string(readme), "```go\n")
	want := fenced(t, string(readme), "On a fresh database it prints:\n\n```text\n")

	module, err := filepath.Abs(".")
	must(t, err)
	dir := t.TempDir()
	goMod := "module readme.example\n\ngo 1.19\n\nrequire lockd.dev/go/lockd v0.0.0\n\nreplace lockd.dev/go/lockd => " + module + "\n"
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644))
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.Command(goTool, "build", "-o", filepath.Join(dir, "example"), ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the README's example: %v\n%s", err, out)
	}

	eachBackend(t, func(t *testing.T, backend string) {
		server := lockdtest.Start(t, lockdtest.NewDatabase(t, backend))
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		run := exec.CommandContext(ctx, filepath.Join(dir, "example"))
		run.Env = append(os.Environ(), "LOCKD_URL="+server.URL, "LOCKD_API_KEY=")
		out, err := run.CombinedOutput()
		if err != nil {
			t.Fatalf("the README's example: %v\n%s", err, out)
		}
		if string(out) != want {
			t.Fatalf("the README's example printed\n%s\nthe README shows\n%s", out, want)
		}
	})
}

// fenced is the text of the first code block that starts with opening, up to its closing fence.
func fenced(t *testing.T, text, opening string) string {
	t.Helper()
	start := strings.Index(text, opening)
	if start < 0 {
		t.Fatalf("README.md has no block opened by %q", opening)
	}
	body := text[start+len(opening):]
	end := strings.Index(body, "```\n")
	if end < 0 {
		t.Fatalf("README.md: the block opened by %q is not closed", opening)
	}
	return body[:end]
}
