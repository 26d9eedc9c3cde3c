package ramjet_test

import (
	"fmt"
	"log"
	"net/http/httptest"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// The README's embedding in one piece, checked by go test: manifests in,
// a table out with its warnings, published to a router, which is asked
// what it does with requests.
func Example() {
	snap, _, err := manifest.Decode("shop.yaml", []byte(`
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: demo}
spec: {ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: api-1, namespace: demo, labels: {kubernetes.io/service-name: api}}
addressType: IPv4
ports: [{port: 8080}]
endpoints: [{addresses: [10.0.0.1]}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: demo}
spec:
  ingressClassName: ramjet
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
      - {path: /web, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`))
	if err != nil {
		log.Fatal(err)
	}
	res := compile.Compile(*snap, compile.Options{})
	for _, w := range res.Warnings {
		fmt.Println(w)
	}
	r := router.New(router.Options{})
	r.Publish(res.Table) // again with every new table; equal digests are a no-op

	for _, target := range []string{"/api/x", "/web/", "/apiary"} {
		d := r.Lookup(httptest.NewRequest("GET", "http://shop.example.com"+target, nil))
		switch {
		case d.Proxied():
			fmt.Printf("%s: proxied to %s (%s)\n", target, d.Backend.ID, d.Declaration)
		default:
			fmt.Printf("%s: %d %s\n", target, d.Status, d.Reason)
		}
	}
	// Output:
	// ServiceNotFound Ingress demo/shop spec.rules[0].http.paths[1].backend.service.name: Service demo/web not found; requests answer 503
	// /api/x: proxied to demo/api:80 (Ingress demo/shop spec.rules[0].http.paths[0])
	// /web/: 503 service-not-found
	// /apiary: 404 no-route
}
