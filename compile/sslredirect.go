package compile

// ssl-redirect, force-ssl-redirect and preserve-trailing-slash: the
// annotations of the plain-HTTP to HTTPS redirect (SPEC §11.1, §12), which
// the router answers (router/sslredirect.go).

func init() {
	registerAnnotations(map[string]annotationSpec{
		"ssl-redirect":            {apply: applySSLRedirect},
		"force-ssl-redirect":      {apply: applyForceSSLRedirect},
		"preserve-trailing-slash": {apply: applyPreserveTrailingSlash},
	})
}

var (
	applySSLRedirect = boolAnnotation(func(v *annotationValues, _ string, on bool) { v.sslRedirect = &on })

	applyForceSSLRedirect = boolAnnotation(func(v *annotationValues, _ string, on bool) { v.forceSSLRedirect = on })

	applyPreserveTrailingSlash = boolAnnotation(func(v *annotationValues, _ string, on bool) { v.preserveTrailingSlash = on })
)

// redirects returns the Ingress's ssl-redirect and force-ssl-redirect
// settings (SPEC §11.1, §12): the annotation when set, else the option for
// ssl-redirect and off for force-ssl-redirect.
func (ing *ingress) redirects(o Options) (sslRedirect, force bool) {
	sslRedirect = !o.DisableSSLRedirect
	if ing.ann.sslRedirect != nil {
		sslRedirect = *ing.ann.sslRedirect
	}
	return sslRedirect, ing.ann.forceSSLRedirect
}
