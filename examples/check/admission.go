package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"ramjet.dev/ramjet/compile"
)

// admissionRefusal is a claimed Ingress that ingress-nginx's validating
// webhook refuses if it is applied again as it is, and why: the verdict
// the controller's webhook gives for the same objects (SPEC §21), from the
// same compile.Reviewer.
type admissionRefusal struct {
	Ingress string `json:"ingress"`
	Refusal string `json:"refusal"`
}

// admissionRefusals reviews every claimed Ingress of snap against the
// others, in namespace/name order. settings are read from the ConfigMap
// the options were given.
func admissionRefusals(snap compile.Snapshot, opts compile.Options, cmData map[string]string) []admissionRefusal {
	r := compile.NewReviewer(snap, opts, compile.ReadAdmissionSettings(cmData))
	var out []admissionRefusal
	for _, ing := range snap.Ingresses {
		if refusal := r.Refusal(ing); refusal != "" {
			out = append(out, admissionRefusal{Ingress: ing.Namespace + "/" + ing.Name, Refusal: refusal})
		}
	}
	slices.SortFunc(out, func(a, b admissionRefusal) int { return strings.Compare(a.Ingress, b.Ingress) })
	return out
}

func writeAdmissionRefusals(w io.Writer, rs []admissionRefusal) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nRefused when applied again (ingress-nginx's validating webhook, and the controller's with --validating-webhook): %d\n", len(rs))
	for _, r := range rs {
		fmt.Fprintf(w, "  %s: %s\n", r.Ingress, r.Refusal)
	}
}
