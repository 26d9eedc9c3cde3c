package main

import (
	"log/slog"

	"ramjet.dev/ramjet/compile"
)

// unclaimedNote says how many of the Ingresses read this controller does
// not claim, what they name and the flag that would claim them; "" when
// it claims them all. A controller started with the default class on an
// ingress-nginx cluster otherwise serves 404 to everything, silently.
func unclaimedNote(res *compile.Result) string {
	if res == nil {
		return ""
	}
	return res.Unclaimed.Describe(compile.FlagSpelling)
}

// logUnclaimed logs the note when it differs from prev (the one logged
// last) and returns it: the news once, not at every rebuild.
func logUnclaimed(log *slog.Logger, res *compile.Result, prev string) string {
	note := unclaimedNote(res)
	switch {
	case note == prev:
	case note != "":
		log.Warn("Ingresses not claimed", "read", res.Unclaimed.Read, "claimed", res.Unclaimed.Claimed, "detail", note)
	default:
		log.Info("every Ingress read is claimed", "read", res.Unclaimed.Read)
	}
	return note
}
