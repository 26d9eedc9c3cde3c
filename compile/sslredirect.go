package compile

// ssl-redirect, force-ssl-redirect, preserve-trailing-slash and
// use-port-in-redirects: the
// annotations of the plain-HTTP to HTTPS redirect (SPEC §11.1, §12), which
// the router answers (router/sslredirect.go).

func init() {
	registerAnnotations(map[string]annotationSpec{
		"ssl-redirect":            {apply: applySSLRedirect},
		"force-ssl-redirect":      {apply: applyForceSSLRedirect},
		"preserve-trailing-slash": {apply: applyPreserveTrailingSlash},
		"use-port-in-redirects":   {apply: applyUsePortInRedirects},
	})
}

var (
	applySSLRedirect = boolAnnotation(func(v *annotationValues, _ string, on bool) { v.sslRedirect = &on })

	applyForceSSLRedirect = boolAnnotation(func(v *annotationValues, _ string, on bool) { v.forceSSLRedirect = on })

	applyPreserveTrailingSlash = boolAnnotation(func(v *annotationValues, _ string, on bool) { v.preserveTrailingSlash = on })

	applyUsePortInRedirects = boolAnnotation(func(v *annotationValues, _ string, on bool) { v.usePortInRedirects = on })
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
