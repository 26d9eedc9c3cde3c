package manifest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnnotationsTheAPIServerRefuses: an object whose annotations the API
// server would refuse (over 256 KiB in all, or a key that is not a
// qualified name) is an error naming the field and is not read, as
// kubectl apply is refused; served from a folder, it would route traffic
// no cluster could. Its neighbours are read, and annotations of exactly
// the limit are.
func TestAnnotationsTheAPIServerRefuses(t *testing.T) {
	ingress := func(name, annotations string) string {
		return "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: " + name +
			"\n  namespace: shop\n  annotations:\n" + annotations +
			"spec:\n  defaultBackend: {service: {name: web, port: {number: 80}}}\n"
	}
	const key = "nginx.ingress.kubernetes.io/configuration-snippet"
	fits := strings.Repeat("a", 256<<10-len(key))
	data := ingress("fits", "    "+key+": "+fits+"\n") +
		"---\n" + ingress("big", "    "+key+": "+fits+"a\n") +
		"---\n" + ingress("bad-key", "    nginx.ingress.kubernetes.io/limit rps: \"5\"\n")
	r := NewReader()
	err := r.Decode("in.yaml", []byte(data))
	require.Equal(t, []string{
		`in.yaml document 2 (line 11, Ingress shop/big): metadata.annotations: Too long: may not be more than 262144 bytes: not read, as the API server refuses it`,
		`in.yaml document 3 (line 21, Ingress shop/bad-key): metadata.annotations: Invalid value: "nginx.ingress.kubernetes.io/limit rps": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'): not read, as the API server refuses it`,
	}, loadErrors(err))
	snap, _ := r.Snapshot()
	require.Equal(t, []string{"Ingress shop/fits"}, loadedObjects(snap))
}
