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
		setHeaders,     // CSP, nosniff, no referrer; no CORS header, ever
	)
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
			if r.Method != http.MethodGet || !s.tokenOK(q.Get("t")) {
				refuse(w, http.StatusUnauthorized, "ctx serve: wrong or old login link; use the one `ctx serve` printed")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.token, Path: "/",
				HttpOnly: true, SameSite: http.SameSiteStrictMode})
			securityHeaders(w)
			http.Redirect(w, r, "/", http.StatusSeeOther)
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
			refuse(w, http.StatusUnauthorized, "ctx serve: not logged in; open the login URL `ctx serve` printed (the token is in serve.json in ctx's runtime folder)")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, how)))
	})
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
			h, ok := strings.CutPrefix(origin, "http://")
			if !ok || !s.hosts[strings.ToLower(h)] {
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
