package compile

// redirects returns the Ingress's ssl-redirect and force-ssl-redirect
// settings (SPEC §11, §12): the annotation when set, else the option for
// ssl-redirect and off for force-ssl-redirect.
func (ing *ingress) redirects(o Options) (sslRedirect, force bool) {
	sslRedirect = !o.DisableSSLRedirect
	if ing.ann.sslRedirect != nil {
		sslRedirect = *ing.ann.sslRedirect
	}
	return sslRedirect, ing.ann.forceSSLRedirect
}

// applyRedirects sets each virtual host's own redirect settings
// (ssl-redirect, force-ssl-redirect, preserve-trailing-slash), used when no
// route matches: from the Ingress that supplies them (the creator, or the
// catch-all's fallback Ingress), else the options. Routes got theirs from
// their own Ingress when declared.
func (b *builder) applyRedirects() {
	for _, v := range b.vhostOrder {
		if v.settingsFrom != nil {
			v.vh.SSLRedirect, v.vh.ForceSSLRedirect = v.settingsFrom.redirects(b.opts)
			v.vh.PreserveTrailingSlash = v.settingsFrom.ann.preserveTrailingSlash
			v.vh.FallbackPolicy = v.settingsFrom.requestPolicy()
		} else {
			v.vh.SSLRedirect = !b.opts.DisableSSLRedirect
		}
	}
}
