package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
// token is refused with 401, counted and logged (without the token). A
// client address that has used up its wrong tokens (see loginLimiter) is
// answered 429 Too Many Requests with Retry-After, without the token being
// checked; a right token gives its address back all its tries.
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
	client := clientKey(r.RemoteAddr)
	if wait := s.logins.take(client, time.Now()); wait > 0 {
		s.unauthorized.Add(1)
		secs := int((wait + time.Second - 1) / time.Second)
		// Debug: a flood of guesses must not flood the log; the
		// metrics count them.
		s.Logger.Debug("web login refused: too many wrong tokens", "remote", r.RemoteAddr, "retry_after_s", secs)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.renderLogin(w, http.StatusTooManyRequests, "Too many wrong tokens: try again in "+strconv.Itoa(secs)+" s.")
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("token")), []byte(s.Token)) != 1 {
		s.unauthorized.Add(1)
		s.Logger.Warn("web login refused: wrong token", "remote", r.RemoteAddr)
		s.renderLogin(w, http.StatusUnauthorized, "Wrong token.")
		return
	}
	s.logins.forgive(client)
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

// The login rate limit: a client address may post loginBurst wrong
// tokens at once, then one every loginEvery; loginClients addresses are
// tracked at most.
const (
	loginBurst   = 5
	loginEvery   = time.Second
	loginClients = 4096
)

// loginLimiter limits the wrong tokens posted to /login per client
// address: a token bucket of loginBurst tries refilled at one per
// loginEvery, kept as the time its next try is due (the generic cell
// rate algorithm), so that an address's state is one time. An address
// whose bucket is full again is forgotten; when loginClients addresses
// are tracked, a new one first makes the table forget the full buckets,
// then the one that would be full soonest, so its memory stays bounded
// (and an attacker with many addresses gains at most a fresh bucket per
// address). The zero value is ready to use.
type loginLimiter struct {
	mu      sync.Mutex
	due     map[string]time.Time // an address's theoretical time of its next try
	limited atomic.Uint64        // tries refused
}

// take spends one of client's tries at now and returns 0, or, if it has
// none left, spends nothing and returns how long until it has one.
func (l *loginLimiter) take(client string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	due, ok := l.due[client]
	if due.Before(now) {
		due = now
	}
	if wait := due.Sub(now) - (loginBurst-1)*loginEvery; wait > 0 {
		l.limited.Add(1)
		return wait
	}
	if l.due == nil {
		l.due = make(map[string]time.Time)
	}
	if !ok && len(l.due) >= loginClients {
		l.prune(now)
	}
	l.due[client] = due.Add(loginEvery)
	return 0
}

// forgive gives client back all its tries.
func (l *loginLimiter) forgive(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.due, client)
}

// prune forgets the addresses whose buckets are full at now; if none
// are, the one whose bucket is full soonest. l.mu must be held.
func (l *loginLimiter) prune(now time.Time) {
	var soonest string
	var first time.Time
	n := len(l.due)
	for c, due := range l.due {
		if !due.After(now) {
			delete(l.due, c)
		} else if first.IsZero() || due.Before(first) {
			soonest, first = c, due
		}
	}
	if len(l.due) == n {
		delete(l.due, soonest)
	}
}

// clientKey returns the address that the login rate limit counts the
// tries of for a request from remoteAddr: its IP address, or for IPv6 its
// /64 network, which one host commonly has whole.
func clientKey(remoteAddr string) string {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return remoteAddr
	}
	a := ap.Addr().Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.WithZone("").Prefix(64)
	return p.String()
}
