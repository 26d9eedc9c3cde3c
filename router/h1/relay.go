package h1

// Hider reports a backend response field the client is not to get: a
// proxy's policy (its hidden headers), beside the hop-by-hop fields no
// client gets.
type Hider interface {
	Hidden(key string) bool
}

// Relayer is implemented by the server's ResponseWriter, for a proxy that
// passes a backend's response on as it came. Relay(res, hide) is
// res.CopyTo(w.Header(), hide.Hidden), a Content-Type without a value
// when res has none (so none is sniffed), and w.WriteHeader(res.Status),
// with the same head on the wire, but the status line and the fields are
// written straight from res, in the order the backend sent them, without
// going through the header map: as nginx passes a response head on. The
// map is filled from them only if Header is called afterwards, which then
// sees what CopyTo would have left there.
//
// Relay does nothing and reports false unless no status was written yet,
// the header map is empty and res is a final response other than 101
// Switching Protocols.
type Relayer interface {
	Relay(res *Response, hide Hider) bool
}

var _ Relayer = (*response)(nil)

func (w *response) Relay(res *Response, hide Hider) bool {
	if w.wroteHeader || len(w.header) != 0 || res.Status < 200 || res.Status > 999 ||
		w.c.state.Load() == stateHijacked {
		return false
	}
	w.relayed = res.appendForwarded(w.relayed[:0], hide)
	w.relayText = res.text
	w.relaying = true
	// The facts commit decides from, as gather would take them from the
	// map CopyTo fills: the forwarded fields have no Transfer-Encoding,
	// Connection, Trailer or trailer-prefixed name (hop-by-hop, or not a
	// token), and none but the first Content-Length.
	f := &w.rf
	*f = headFacts{}
	ceSeen := false
	for i := range w.relayed {
		fl := &w.relayed[i]
		switch fl.kind {
		case kindLength:
			f.hasCL, f.cl = true, fl.Value
		case kindType:
			f.hasCT = true
		case kindEncoding:
			if !ceSeen {
				ceSeen, f.ce = true, fl.Value
			}
		case kindDate:
			f.hasDate = true
		}
	}
	// A proxy passes a head without a Content-Type without one: nothing
	// is sniffed from the body (a caller's CopyTo sets the field nil).
	f.hasCT = true
	w.noContinue() // as WriteHeader with a final status
	w.wroteHeader, w.status = true, res.Status
	w.declaredLength(f.cl)
	return true
}

// unrelay puts the relayed fields into the header map, as CopyTo would
// have (each name's values in the order they came), for a caller that
// looks at the header after Relay; the head is then written from the map,
// which was empty until now.
func (w *response) unrelay() {
	w.relaying = false
	h := w.header
	for _, f := range w.relayed {
		h[f.Key] = append(h[f.Key], f.Value)
	}
	if _, ok := h["Content-Type"]; !ok {
		h["Content-Type"] = nil // as Relay: none is sniffed
	}
}

// relayedField is a field Relay passes on, and where its line
// "Name: value\r\n" lies in the head's text.
type relayedField struct {
	Field
	kind   fieldKind
	ls, le int32
}

// writeRelayed writes the relayed fields but those excluded: the lines
// Response.read made of them, those that lie one after the other in one
// write. Their names are tokens and their values have neither CR, LF nor
// surrounding whitespace (read refuses or trims them), so the lines are
// written as they are, where writeFields cleans a map's values.
func (w *response) writeRelayed(excluded []string) {
	bw := w.c.bw
	text := w.relayText
	fields := w.relayed
	if len(excluded) == 0 && len(fields) > 0 {
		// As mostly: every field, their lines one after the other.
		whole := true
		for i := 1; i < len(fields) && whole; i++ {
			whole = fields[i].ls == fields[i-1].le
		}
		if whole {
			bw.WriteString(text[fields[0].ls:fields[len(fields)-1].le])
			return
		}
	}
	for i := 0; i < len(fields); i++ {
		if isExcluded(fields[i].Key, excluded) {
			continue
		}
		start, end := fields[i].ls, fields[i].le
		for i+1 < len(fields) && fields[i+1].ls == end && !isExcluded(fields[i+1].Key, excluded) {
			i++
			end = fields[i].le
		}
		bw.WriteString(text[start:end])
	}
}

func isExcluded(k string, excluded []string) bool {
	for _, x := range excluded {
		if x == k {
			return true
		}
	}
	return false
}
