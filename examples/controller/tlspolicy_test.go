package main

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/configmap"
)

// ssl-ciphers without an AES-128-GCM suite still serves HTTP/2, as nginx
// does (net/http's HTTP/2 server refuses to start on such a list, and
// closes every h2 connection), under either HTTP/1 server; so does a list
// of suites HTTP/2 calls prohibited (CBC), which nginx does not check.
func TestHTTP2WithAnySSLCiphers(t *testing.T) {
	for _, ciphers := range []string{"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-AES128-SHA"} {
		s, warns := configmap.Parse("ingress-nginx", "ingress-nginx-controller", map[string]string{"ssl-ciphers": ciphers})
		require.Empty(t, warns)
		o := router.Options{Logger: slog.New(slog.DiscardHandler)}
		o.ApplyConfigMap(s)
		rt := router.New(o)
		for _, value := range []string{http1Ramjet, http1NetHTTP} {
			l, err := listen(config{httpsAddr: "127.0.0.1:0", http1Server: value, routerKeys: s}, rt, nil, new(atomic.Bool), slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			done := make(chan error, len(l.serve))
			for _, serve := range l.serve {
				go func() { done <- serve() }()
			}
			client := &http.Client{Transport: &http.Transport{
				ForceAttemptHTTP2: true,
				TLSClientConfig:   &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12},
			}}
			res, err := client.Get("https://" + l.inst.HTTPSAddr + "/")
			if assert.NoError(t, err, "%s, %s", ciphers, value) {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				assert.Equal(t, 2, res.ProtoMajor, "%s, %s", ciphers, value)
				assert.Equal(t, s.TLS.CipherSuites, []uint16{res.TLS.CipherSuite}, "%s, %s", ciphers, value)
			}
			client.CloseIdleConnections()
			l.close()
		}
	}
}
