package router

// Decorations are what the router puts on every answer before the request
// steps run, whoever answers: the backend or the router itself. Each is
// declared in its feature's file, its place in answerDecorations, and
// declares the response headers it sets (TestDecorationsDeclared holds that
// no other decoration sets them).
type decoration struct {
	name string
	// headers are the response headers it sets; "*" stands for those a
	// ConfigMap names.
	headers []string
}

// answerDecorations run in order once decide has routed the request. The
// request's span starts first, so that it sees the status the client
// gets; the answer is compressed next, so every header after it goes on the
// compressed answer; the request ID, Server, HSTS and the ConfigMap's
// add-headers follow, the ConfigMap's last, as ingress-nginx's
// more_set_headers applies them over the others.
var answerDecorations = [...]*decoration{
	&decorTrace,        // tracing.go
	&decorCompress,     // gzip.go, brotli.go
	&decorRequestID,    // proxy.go
	&decorServerTokens, // servertokens.go
	&decorHSTS,         // hsts.go
	&decorConfigMap,    // configmap_headers.go
}

// decorate puts decoration dc on the answer to s. As with run, the
// functions are called from a switch so the request state stays on the
// stack.
func (r *Router) decorate(dc *decoration, s *requestState, live *liveSettings) {
	switch dc {
	case &decorTrace:
		if r.tracer != nil {
			r.startSpan(s)
		}
	case &decorCompress:
		if w, gw := compressing(s.w, s.req, live); gw != nil {
			s.w, s.gz = w, gw
		}
	case &decorRequestID:
		if r.returnRequestID {
			if live.headers.noRequestID {
				// nginx's $req_id without generate-request-id: the
				// client's, else none; an ID made here would reach the
				// backend.
				if id := s.req.Header["X-Request-Id"]; len(id) > 0 && id[0] != "" {
					s.id = id[0]
					s.w.Header()["X-Request-Id"] = []string{s.id}
				}
				break
			}
			s.id = requestIDOf(s.req)
			s.w.Header()["X-Request-Id"] = []string{s.id}
		}
	case &decorServerTokens:
		if live.serverTokens != nil {
			s.w.Header()["Server"] = live.serverTokens
		}
	case &decorHSTS:
		s.hsts = r.setHSTS(s.w.Header(), s.req, &s.d)
	case &decorConfigMap:
		if s.cmh = r.cmHeaders.Load(); s.cmh != nil {
			if live.serverTokens == nil {
				s.cmh = s.cmh.withoutServer()
			}
			s.cmh = r.forRequest(s.cmh, s)
			s.cmh.setAdded(s.w.Header())
		}
	default:
		panic("router: decoration " + dc.name + " has no case in decorate")
	}
}
