package kubetest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestLocate(t *testing.T) {
	dir := t.TempDir()
	exe := func(rel string) string {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
		return p
	}
	etcdEnv := exe("env/etcd")
	apiEnv := exe("env/kube-apiserver")
	etcdPath := exe("path/etcd")
	apiCache := exe("cache/kube-apiserver-" + KubeVersion)
	apiHome := exe("home/.cache/ramjet-tools/kube-apiserver-" + KubeVersion)
	etcdHome := exe("home/.cache/ramjet-tools/etcd-" + EtcdVersion)
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, nil, 0o644))

	onPath := func(string) (string, error) { return etcdPath, nil }
	notOnPath := func(string) (string, error) { return "", errors.New("not found") }

	tests := []struct {
		name        string
		env         map[string]string
		lookPath    func(string) (string, error)
		want        binaries
		wantMissing []string
		wantErr     bool
	}{
		{
			name:     "environment wins over PATH and cache",
			env:      map[string]string{EnvEtcd: etcdEnv, EnvAPIServer: apiEnv, EnvToolsCache: filepath.Join(dir, "cache")},
			lookPath: onPath,
			want:     binaries{etcd: etcdEnv, apiserver: apiEnv},
		},
		{
			name:     "PATH and tools cache",
			env:      map[string]string{EnvToolsCache: filepath.Join(dir, "cache")},
			lookPath: onPath,
			want:     binaries{etcd: etcdPath, apiserver: apiCache},
		},
		{
			name:     "cache defaults under HOME",
			env:      map[string]string{"HOME": filepath.Join(dir, "home")},
			lookPath: onPath,
			want:     binaries{etcd: etcdPath, apiserver: apiHome},
		},
		{
			name:     "etcd built into the cache when none is on PATH",
			env:      map[string]string{"HOME": filepath.Join(dir, "home")},
			lookPath: notOnPath,
			want:     binaries{etcd: etcdHome, apiserver: apiHome},
		},
		{
			name:     "nothing installed",
			env:      map[string]string{"HOME": filepath.Join(dir, "nohome")},
			lookPath: notOnPath,
			wantMissing: []string{
				"etcd is not on PATH, not at " + filepath.Join(dir, "nohome/.cache/ramjet-tools/etcd-"+EtcdVersion) + ", and RAMJET_ETCD is unset",
				"kube-apiserver is not at " + filepath.Join(dir, "nohome/.cache/ramjet-tools/kube-apiserver-"+KubeVersion) + " and RAMJET_KUBE_APISERVER is unset",
			},
		},
		{
			name:     "etcd setting points nowhere",
			env:      map[string]string{EnvEtcd: filepath.Join(dir, "absent"), EnvAPIServer: apiEnv},
			lookPath: onPath,
			wantErr:  true,
		},
		{
			name:     "apiserver setting is not executable",
			env:      map[string]string{EnvEtcd: etcdEnv, EnvAPIServer: plain},
			lookPath: onPath,
			wantErr:  true,
		},
		{
			name:     "apiserver setting is a directory",
			env:      map[string]string{EnvEtcd: etcdEnv, EnvAPIServer: dir},
			lookPath: onPath,
			wantErr:  true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			got, missing, err := locate(getenv, tc.lookPath)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(binaries{})); diff != "" {
				t.Errorf("binaries (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMissing, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		name string
		log  string
		n    int
		want string
	}{
		{name: "empty", log: "", n: 3, want: ""},
		{name: "fewer lines than asked", log: "a\nb\n", n: 3, want: "a\nb\n"},
		{name: "last lines only", log: "a\nb\nc\nd\n", n: 2, want: "c\nd\n"},
		{name: "unterminated last line", log: "a\nb\nc", n: 2, want: "b\nc\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.log")
			require.NoError(t, os.WriteFile(path, []byte(tc.log), 0o644))
			p := &process{logPath: path}
			require.Equal(t, tc.want, p.tail(tc.n))
		})
	}
}
