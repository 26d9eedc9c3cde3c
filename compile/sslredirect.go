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

// applyRedirects sets each virtual host's own location settings, used when
// no route matches: from the Ingress that supplies them (the creator, or the
// catch-all's fallback Ingress), else the options. ingress-nginx applies an
// Ingress's annotations to the default location it creates for it, so the
// fallback gets that Ingress's redirects, request policy, CORS and
// authentication, and outside the catch-all its rewrite (SPEC §6). Routes
// got theirs from their own Ingress when declared.
func (b *builder) applyRedirects() {
	for _, v := range b.vhostOrder {
		if ing := v.settingsFrom; ing != nil {
			v.vh.SSLRedirect, v.vh.ForceSSLRedirect = ing.redirects(b.opts)
			v.vh.PreserveTrailingSlash = ing.ann.preserveTrailingSlash
			v.vh.FallbackPolicy = ing.requestPolicy()
			v.vh.FallbackCORS, v.vh.FallbackAuth = ing.ann.access.cors, ing.ann.access.auth
			if v != b.catchAll {
				v.vh.FallbackRewrite = b.fallbackRewrite(ing)
			}
		} else {
			v.vh.SSLRedirect = !b.opts.DisableSSLRedirect
		}
	}
}
