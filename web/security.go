package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
)

// Handler is the whole server: the routes behind the security chain. The order is the
// design (AGENTS.md §5.12), outermost first: a request for a foreign Host never meets
// the token check, one without the token never meets the Origin check, and so on.
func (s *Server) Handler() http.Handler {
	return chain(s.routes(),
		s.checkHost,    // 421 unless Host is 127.0.0.1:P, [::1]:P, localhost:P (or --listen's)
		s.authenticate, // 401 without the token (cookie or Bearer); /login sets the cookie
		s.checkOrigin,  // 403 for a foreign Origin on a non-GET request or the event stream
		s.readOnly,     // 403 for any change when serving --read-only
		setHeaders,     // CSP, nosniff, no referrer; no CORS header, ever
	)
}

// readOnly refuses every request that would change something, when the server was
// started --read-only.
func (s *Server) readOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.ReadOnly && r.Method != http.MethodGet && r.Method != http.MethodHead {
			securityHeaders(w)
			writeError(w, http.StatusForbidden, errReadOnly)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// chain wraps h so that the first middleware runs first.
func chain(h http.Handler, mw ...func(http.Handler) http.Handler) http.Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// securityHeaders go on every response, refusals included.
func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

func setHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		next.ServeHTTP(w, r)
	})
}

// refuse answers a request the chain turns away, in plain text.
func refuse(w http.ResponseWriter, code int, msg string) {
	securityHeaders(w)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}

// checkHost serves only the server's own names: a DNS-rebound page reaches this
// server under the attacker's name, which is not in the list (421).
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hosts[strings.ToLower(r.Host)] {
			refuse(w, http.StatusMisdirectedRequest, "ctx serve: unknown host "+strconv.Quote(r.Host)+"; open http://127.0.0.1:"+strconv.Itoa(s.port)+"/")
			return
		}
		next.ServeHTTP(w, r)
	})
}

type authKey struct{}

// authBearer marks a request authenticated by its Authorization header (a script),
// not by the browser's cookie.
const authBearer = "bearer"

// cookieName carries the port: cookies are not told apart by port, and two servers
// (two workspaces) on one machine must not overwrite each other's.
func (s *Server) cookieName() string { return "ctx_token_" + strconv.Itoa(s.port) }

// tokenOK compares in constant time (hashes first, so the length leaks nothing).
func (s *Server) tokenOK(got string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(s.token))
	return got != "" && subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// authenticate requires the token on every request, loopback included. /login?t=TOKEN
// is the only place a token may travel in a URL: it becomes an HttpOnly,
// SameSite=Strict cookie and the browser is sent on to a URL without it.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path == "/login" {
			s.login(w, r)
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/static/style.css" && len(q) == 0 {
			next.ServeHTTP(w, r) // the sign-in page's look: public, as any stylesheet
			return
		}
		// A token in any other URL would end up in history and logs: refused even
		// when the request is otherwise authenticated.
		for _, k := range []string{"t", "token", "access_token"} {
			if q.Has(k) {
				refuse(w, http.StatusUnauthorized, "ctx serve: a token in a URL is accepted only by /login; scripts send Authorization: Bearer")
				return
			}
		}
		how := ""
		if h := r.Header.Get("Authorization"); h != "" {
			if tok, ok := strings.CutPrefix(h, "Bearer "); ok && s.tokenOK(tok) {
				how = authBearer
			}
		} else if c, err := r.Cookie(s.cookieName()); err == nil && s.tokenOK(c.Value) {
			how = "cookie"
		}
		if how == "" {
			if wantsPage(r) {
				s.signIn(w, http.StatusUnauthorized, "")
				return
			}
			refuse(w, http.StatusUnauthorized, "ctx serve: not logged in; open the login URL `ctx serve` printed (the token is in serve.json in ctx's runtime folder)")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, how)))
	})
}

// login takes the token and gives the cookie: from the login URL ctx serve prints
// (GET /login?t=TOKEN), or from the sign-in page's form (POST, the token in the body,
// so it is in no URL at all). The cookie is HttpOnly and SameSite=Strict, and the
// browser is sent on to a URL without the token.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	var tok string
	switch r.Method {
	case http.MethodGet:
		tok = r.URL.Query().Get("t")
	case http.MethodPost:
		// Only the sign-in page's own form: a page of another site cannot sign a
		// browser in (to a server whose token it would have to know anyway).
		if o := r.Header.Get("Origin"); o != "" && !s.ownOrigin(o) {
			refuse(w, http.StatusForbidden, "ctx serve: sign-in from another site ("+o+") refused")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		tok = strings.TrimSpace(r.PostFormValue("token"))
	default:
		refuse(w, http.StatusMethodNotAllowed, "ctx serve: /login takes GET ?t=TOKEN or the sign-in form")
		return
	}
	if !s.tokenOK(tok) {
		if r.Method == http.MethodPost || wantsPage(r) {
			s.signIn(w, http.StatusUnauthorized, "That is not this server's token. It changes each time ctx serve starts.")
			return
		}
		refuse(w, http.StatusUnauthorized, "ctx serve: wrong or old login link; use the one `ctx serve` printed")
		return
	}
	// Through an https --url the cookie travels only over https.
	secure := s.public != nil && s.public.Scheme == "https" && strings.EqualFold(r.Host, s.public.Host)
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.token, Path: "/",
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode})
	securityHeaders(w)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// wantsPage reports whether a request is a browser's for a page (not a script's or
// the API's): it gets the sign-in page instead of a line of text.
func wantsPage(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html") &&
		!strings.HasPrefix(r.URL.Path, "/api/") && r.URL.Path != "/events"
}

// ownOrigin reports whether an Origin is this server's: http:// and one of the hosts
// served, or the --url's own scheme and host.
func (s *Server) ownOrigin(origin string) bool {
	o := strings.ToLower(origin)
	if s.public != nil && strings.EqualFold(o, s.public.Scheme+"://"+s.public.Host) {
		return true
	}
	h, ok := strings.CutPrefix(o, "http://")
	if ok && s.public != nil && s.public.Scheme != "http" && strings.EqualFold(h, s.public.Host) {
		return false // the --url host is reached over https only
	}
	return ok && s.hosts[h]
}

func viaBearer(r *http.Request) bool { return r.Context().Value(authKey{}) == authBearer }

// checkOrigin turns away requests another site's page makes: every non-GET request
// and the event stream must come from the server's own origin. A request without an
// Origin is a script's (Bearer) or the browser's own same-origin GET, which browsers
// mark with Sec-Fetch-Site (a header no page can set). A browser's request that
// changes something also carries the page's CSRF token in X-Ctx-CSRF.
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		safe := r.Method == http.MethodGet || r.Method == http.MethodHead
		if safe && r.URL.Path != "/events" {
			next.ServeHTTP(w, r)
			return
		}
		origin := r.Header.Get("Origin")
		switch {
		case origin != "":
			if !s.ownOrigin(origin) {
				refuse(w, http.StatusForbidden, "ctx serve: request from another site ("+origin+") refused")
				return
			}
		case viaBearer(r):
		case safe && r.Header.Get("Sec-Fetch-Site") == "same-origin":
		default:
			refuse(w, http.StatusForbidden, "ctx serve: request without an Origin refused; scripts send Authorization: Bearer")
			return
		}
		if !safe && !viaBearer(r) && subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Ctx-CSRF")), []byte(s.csrf)) != 1 {
			refuse(w, http.StatusForbidden, "ctx serve: missing or wrong CSRF token; reload the page")
			return
		}
		next.ServeHTTP(w, r)
	})
}
