package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const passing = `
name: no routes
requests:
- host: a.example.com
  path: /
  repeat: 5
  expect: {status: 404, service: null}
- host: ""
  path: /x
  expect: {status: 404}
`

const failing = `
- name: expects a route that does not exist
  requests:
  - host: a.example.com
    path: /missing
    expect: {status: 200}
  - host: a.example.com
    path: /
    expect: {status: 404}
`

func writeCase(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	pass := writeCase(t, dir, "pass.yaml", passing)
	fail := writeCase(t, dir, "fail.yaml", failing)
	bad := writeCase(t, dir, "bad.yaml", "name: x\nrequests: [{host: a, path: /, expect: {stauts: 200}}]\n")

	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // lines that must appear
		lastLine string
		stderr   string
	}{
		{
			name: "all pass", args: []string{pass}, code: 0,
			lastLine: "2 passed, 0 failed",
		},
		{
			name: "a failure is shown with its diff", args: []string{pass, fail}, code: 1,
			stdout: []string{
				`case "expects a route that does not exist" (` + fail + `)`,
				`  requests[0]: GET /missing host="a.example.com"`,
				`    status:  want 200`,
				`             got  404 (no-route)`,
			},
			lastLine: "3 passed, 1 failed",
		},
		{
			name: "glob", args: []string{filepath.Join(dir, "*ass.yaml")}, code: 0,
			lastLine: "2 passed, 0 failed",
		},
		{
			name: "load error names the file", args: []string{pass, bad}, code: 2,
			stderr: bad + `: case "x": unknown key "requests[0].expect.stauts"`,
		},
		{
			name: "missing file", args: []string{filepath.Join(dir, "nope.yaml")}, code: 2,
			stderr: "nope.yaml",
		},
		{name: "no arguments", args: nil, code: 2, stderr: "usage: check [-json] FILE|DIR|GLOB..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			require.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			for _, l := range tt.stdout {
				require.Contains(t, stdout.String(), l+"\n")
			}
			if tt.lastLine != "" {
				lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
				require.Equal(t, tt.lastLine, lines[len(lines)-1])
			}
			if tt.stderr != "" {
				require.Contains(t, stderr.String(), tt.stderr)
			} else {
				require.Empty(t, stderr.String())
			}
		})
	}
}

func TestRunJSON(t *testing.T) {
	dir := t.TempDir()
	writeCase(t, dir, "pass.yaml", passing)
	writeCase(t, dir, "fail.yaml", failing)

	var stdout, stderr bytes.Buffer
	code := run([]string{"-json", dir}, &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Empty(t, stderr.String())

	var doc struct {
		Passed  int `json:"passed"`
		Failed  int `json:"failed"`
		Results []struct {
			File     string `json:"file"`
			Case     string `json:"case"`
			Requests []struct {
				Pass       bool `json:"pass"`
				Mismatches []struct {
					Field, Want, Got string
				} `json:"mismatches"`
				Got struct {
					Status int `json:"status"`
				} `json:"got"`
			} `json:"requests"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &doc))
	require.Equal(t, 3, doc.Passed)
	require.Equal(t, 1, doc.Failed)
	require.Len(t, doc.Results, 2)
	// Directory order: fail.yaml before pass.yaml.
	require.Equal(t, "expects a route that does not exist", doc.Results[0].Case)
	require.Equal(t, filepath.Join(dir, "fail.yaml"), doc.Results[0].File)
	first := doc.Results[0].Requests[0]
	require.False(t, first.Pass)
	require.Equal(t, 404, first.Got.Status)
	require.Len(t, first.Mismatches, 1)
	require.Equal(t, "status", first.Mismatches[0].Field)
	require.True(t, doc.Results[1].Requests[0].Pass)
}
