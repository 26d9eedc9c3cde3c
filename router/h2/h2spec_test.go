package h2

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestH2Spec runs h2spec (github.com/summerwind/h2spec), from
// $RAMJET_H2SPEC or PATH, against the server over TLS on loopback: every
// test must pass.
func TestH2Spec(t *testing.T) {
	bin := os.Getenv("RAMJET_H2SPEC") // .ci/run installs it and says where
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("h2spec"); err != nil {
			msg := "h2spec is not installed: .ci/run installs it (go install github.com/summerwind/h2spec/cmd/h2spec@v2.2.1+incompatible)"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "hello\n")
	})}
	addr, stop := serveTLS(t, s)
	defer stop()
	host, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command(bin, "-t", "-k", "-h", host, "-p", port, "-o", "5")
	out, err := cmd.CombinedOutput()
	if os.Getenv("H2SPEC_VERBOSE") != "" || err != nil {
		t.Logf("%s", out)
	}
	if err != nil {
		t.Fatalf("h2spec: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Log(lines[len(lines)-1])
}
