package compile

import (
	"cmp"
	"slices"
	"strconv"

	"ramjet.dev/ramjet/match"
)

// warn records a warning about object ("Kind namespace/name") at field.
func (b *builder) warn(reason Reason, object, field, message string) {
	b.warnings = append(b.warnings, Warning{Reason: reason, Object: object, Field: field, Message: message})
}

// conflict records a warning that names the declaration that won.
func (b *builder) conflict(reason Reason, object, field, message, winner string) {
	b.warnings = append(b.warnings, Warning{Reason: reason, Object: object, Field: field, Message: message, Winner: winner})
}

// sortWarnings orders warnings by object, field, reason, message and winner,
// and drops exact repeats, so the list depends only on the objects.
func sortWarnings(ws []Warning) []Warning {
	slices.SortFunc(ws, compareWarnings)
	return slices.Compact(ws)
}

func compareWarnings(a, b match.Warning) int {
	return cmp.Or(
		cmp.Compare(a.Object, b.Object),
		cmp.Compare(a.Field, b.Field),
		cmp.Compare(a.Reason, b.Reason),
		cmp.Compare(a.Message, b.Message),
		cmp.Compare(a.Winner, b.Winner),
	)
}

// Field paths, built without fmt: they are made for every declaration.

func ruleField(i int) string { return "spec.rules[" + strconv.Itoa(i) + "]" }

func pathField(i, j int) string {
	return "spec.rules[" + strconv.Itoa(i) + "].http.paths[" + strconv.Itoa(j) + "]"
}

func tlsField(i int) string { return "spec.tls[" + strconv.Itoa(i) + "]" }

func annotationField(key string) string { return "metadata.annotations[" + key + "]" }
