package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// sessionMaxAge is how long a login lasts in the browser: the cookie holds
// an HMAC of the token, so changing the token ends every login at once.
const sessionMaxAge = 30 * 24 * 60 * 60

// sessionValue is the cookie value a login sets for token: an HMAC keyed
// by the token, which does not reveal it and which only the daemon that
// knows the token can make.
func sessionValue(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("streamd web session v1"))
	return hex.EncodeToString(m.Sum(nil))
}

// cookieName is the login cookie's name; over TLS it has the __Host-
// prefix, which browsers accept only from a secure origin, for the whole
// host.
func (s *Server) cookieName() string {
	if s.TLSConfig != nil {
		return "__Host-streamd_session"
	}
	return "streamd_session"
}

// authorized reports whether r carries the token, as a bearer token or as
// the login cookie; always when no token is set. Both are compared in
// constant time.
func (s *Server) authorized(r *http.Request) bool {
	if s.Token == "" {
		return true
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok &&
		subtle.ConstantTimeCompare([]byte(tok), []byte(s.Token)) == 1 {
		return true
	}
	if c, err := r.Cookie(s.cookieName()); err == nil &&
		hmac.Equal([]byte(c.Value), []byte(sessionValue(s.Token))) {
		return true
	}
	return false
}

// guard wraps h so that it answers only authorized requests, unless open;
// it refuses the others with 401 Unauthorized and counts them.
func (s *Server) guard(h http.HandlerFunc, open bool) http.Handler {
	if open {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.authorized(r) {
			h(w, r)
			return
		}
		s.unauthorized.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer realm="streamd"`)
		if strings.HasPrefix(r.URL.Path, "/api/") {
			writeError(w, http.StatusUnauthorized, "Unauthenticated", "missing or wrong bearer token")
			return
		}
		http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
	})
}

// serveLogin serves the login form, or sends the browser to the page when
// there is no token to ask for or it already has the cookie.
func (s *Server) serveLogin(w http.ResponseWriter, r *http.Request) {
	if s.authorized(r) {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s.renderLogin(w, http.StatusOK, "")
}

// refuse answers a page request without the token: 401 Unauthorized with
// the login form, so that a browser can log in.
func (s *Server) refuse(w http.ResponseWriter) {
	s.unauthorized.Add(1)
	s.renderLogin(w, http.StatusUnauthorized, "")
}

// renderLogin serves the form that trades the token for the login cookie.
func (s *Server) renderLogin(w http.ResponseWriter, code int, message string) {
	s.render(w, code, "login.html", struct{ Message string }{message})
}

// login checks the token posted in the form field "token" and sets the
// login cookie: HttpOnly, SameSite=Strict, and Secure over TLS. A wrong
// token is refused with 401, counted and logged (without the token).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "read login form: "+err.Error(), http.StatusBadRequest)
		return
	}
	if s.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("token")), []byte(s.Token)) != 1 {
		s.unauthorized.Add(1)
		s.Logger.Warn("web login refused: wrong token", "remote", r.RemoteAddr)
		s.renderLogin(w, http.StatusUnauthorized, "Wrong token.")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(), Value: sessionValue(s.Token), Path: "/", MaxAge: sessionMaxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.TLSConfig != nil,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout clears the login cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.TLSConfig != nil,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
