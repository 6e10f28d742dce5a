package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// storeRoutes mounts the operator's stores API (issue 34 item 3): every
// route needs the operator scope on an every-store key.
func (s *Server) storeRoutes() {
	s.Handle("GET /v1/stores", ScopeOperator, s.instanceOnly(s.listStores))
	s.Handle("POST /v1/stores", ScopeOperator, s.instanceOnly(s.createStore))
	s.Handle("POST /v1/stores/{store}/api-keys", ScopeOperator, s.instanceOnly(s.createStoreKey))
	s.Handle("POST /v1/stores/{store}/api-keys/{name}/rotate", ScopeOperator, s.instanceOnly(s.rotateStoreKey))
	s.Handle("POST /v1/stores/{store}/extended-keys", ScopeOperator, s.instanceOnly(s.addExtendedKey))
}

// listStore is the store a listing reads (the event feed, the finance
// inbox, the webhook state): a store's key, its own; an every-store key,
// the store StoreHeader names, else every store's (""). false means an
// answer was written.
func (s *Server) listStore(w http.ResponseWriter, r *http.Request, key store.APIKey) (string, bool) {
	if key.Store == "" && r.Header.Get(StoreHeader) == "" {
		return "", true
	}
	return s.shopOf(w, r, key)
}

// instanceOnly guards a route of the whole instance (its status, rescans,
// reconciliation, the stores): a store's key is refused, saying only what
// key the route needs.
func (s *Server) instanceOnly(h func(http.ResponseWriter, *http.Request, store.APIKey)) func(http.ResponseWriter, *http.Request, store.APIKey) {
	return func(w http.ResponseWriter, r *http.Request, key store.APIKey) {
		if key.Store != "" {
			writeError(w, http.StatusForbidden, "forbidden", "this route is the whole instance's: it needs an every-store API key (this one belongs to one store)")
			return
		}
		h(w, r, key)
	}
}

// StoreView is one store in the stores API.
type StoreView struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	DisplayName string             `json:"display_name"`
	LogoURL     string             `json:"logo_url"`
	Colour      string             `json:"colour"`
	Languages   []string           `json:"languages"`
	ReturnHosts []string           `json:"return_hosts"`
	Settings    store.ShopSettings `json:"settings"`
	CreatedAt   string             `json:"created_at"`
	// Networks are the instance's enabled networks as this store sees
	// them (GET /v1/stores only).
	Networks []StoreNetworkView `json:"networks,omitempty"`
}

// StoreNetworkView is one network of a store in GET /v1/stores.
type StoreNetworkView struct {
	Network string `json:"network"`
	// Key says whether the store can take payments there: an extended
	// public key (the default store's is networks.<n>.account_key), or for
	// Solana addresses in its pool.
	Key bool `json:"key"`
	// Fingerprint identifies the extended key (never the key itself).
	Fingerprint string `json:"fingerprint,omitempty"`
	// PoolRemaining is the store's Solana pool.
	PoolRemaining *int64 `json:"pool_remaining,omitempty"`
	// Healthy and UnavailableReason are the network's, as GET /v1/status
	// reports them (the instance's scanner serves every store).
	Healthy           bool   `json:"healthy"`
	UnavailableReason string `json:"unavailable_reason,omitempty"`
}

func storeViewOf(sh store.Shop) StoreView {
	return StoreView{ID: sh.ID, Name: sh.Name, DisplayName: sh.DisplayName, LogoURL: sh.LogoURL, Colour: sh.Colour,
		Languages: nonNilStrings(sh.Languages), ReturnHosts: nonNilStrings(sh.ReturnHosts), Settings: sh.Settings,
		CreatedAt: sh.CreatedAt.UTC().Format("2006-01-02T15:04:05Z07:00")}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) listStores(w http.ResponseWriter, r *http.Request, _ store.APIKey) {
	shops, err := s.store.Shops(r.Context())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	keys, err := s.store.ShopKeys(r.Context())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	health := map[string]NetworkStatus{}
	if s.status != nil {
		nets, err := s.status.Networks(r.Context())
		if err != nil {
			s.internal(w, r, err)
			return
		}
		for _, n := range nets {
			health[n.Network] = n
		}
	}
	out := []StoreView{}
	for _, sh := range shops {
		v := storeViewOf(sh)
		v.Networks = []StoreNetworkView{}
		for _, n := range payment.Networks {
			nc := s.cfg.Networks[n]
			if nc == nil || !nc.Enabled {
				continue
			}
			nv := StoreNetworkView{Network: string(n), Healthy: health[string(n)].Healthy, UnavailableReason: health[string(n)].Available}
			switch {
			case n == payment.Solana:
				left, err := s.store.FreeDerived(r.Context(), string(n), store.PoolLane(sh.ID))
				if err != nil {
					s.internal(w, r, err)
					return
				}
				nv.Key, nv.PoolRemaining = left > 0, &left
			case sh.ID == store.DefaultStore:
				if fp, err := addresses.Fingerprint(nc.AccountKey); err == nil {
					nv.Key, nv.Fingerprint = true, fp
				}
			default:
				for _, k := range keys {
					if k.Store == sh.ID && k.Network == string(n) {
						nv.Key, nv.Fingerprint = true, k.Fingerprint
					}
				}
			}
			v.Networks = append(v.Networks, nv)
		}
		out = append(out, v)
	}
	writeJSON(w, 200, map[string]any{"stores": out})
}

// StoreRequest is the body of POST /v1/stores.
type StoreRequest struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	DisplayName string             `json:"display_name"`
	LogoURL     string             `json:"logo_url"`
	Colour      string             `json:"colour"`
	Languages   []string           `json:"languages"`
	ReturnHosts []string           `json:"return_hosts"`
	Settings    store.ShopSettings `json:"settings"`
}

var (
	colourPattern   = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
	languagePattern = regexp.MustCompile(`^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$`)
	// returnHostPattern is checkout.return_hosts' shape.
	returnHostPattern = regexp.MustCompile(`^((\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(:[0-9]{1,5})?$`)
)

// checkStore checks a store's fields, naming the first bad one.
func checkStore(req StoreRequest) error {
	switch {
	case !store.ValidStoreID(req.ID):
		return badRequest("id must be a store id: 1 to 40 of a-z, 0-9, - and _, starting with a letter or digit")
	case strings.TrimSpace(req.Name) == "" || len(req.Name) > 200:
		return badRequest("name is required: 1 to 200 characters")
	case len(req.DisplayName) > 200:
		return badRequest("display_name must be at most 200 characters")
	case req.Colour != "" && !colourPattern.MatchString(req.Colour):
		return badRequest("colour must be a hex colour like #1a2b3c")
	}
	if req.LogoURL != "" {
		u, err := url.Parse(req.LogoURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
			return badRequest("logo_url must be an https URL without credentials, like https://shop.example.com/logo.png")
		}
	}
	for i, l := range req.Languages {
		if !languagePattern.MatchString(l) {
			return badRequest("languages[%d] must be a language tag like en or pt-BR, not %s", i, quoted(l))
		}
	}
	for i, h := range req.ReturnHosts {
		if !returnHostPattern.MatchString(h) || len(h) > 260 {
			return badRequest("return_hosts[%d] is not a lower-case host[:port] or *.domain, like shop.example.com: %s", i, quoted(h))
		}
	}
	for m, n := range req.Settings.Confirmations {
		if _, ok := payment.LookupMethod(payment.Method(m)); !ok {
			return badRequest("settings.confirmations: %s is not a method (GET /v1/methods lists them)", quoted(m))
		}
		if n < 1 || n > 10000 {
			return badRequest("settings.confirmations.%s must be between 1 and 10000", m)
		}
	}
	if b := req.Settings.ToleranceBPS; b != nil && (*b < 0 || *b > 10000) {
		return badRequest("settings.tolerance_bps must be between 0 and 10000 (basis points of the amount)")
	}
	return nil
}

// createStore creates a store: 201 the store, or 200 the same store again
// for the same body; an id in use with other fields is 409.
func (s *Server) createStore(w http.ResponseWriter, r *http.Request, _ store.APIKey) {
	var req StoreRequest
	if _, ok := s.decode(w, r, &req, false); !ok {
		return
	}
	if err := checkStore(req); err != nil {
		writeEdge(w, err)
		return
	}
	sh := store.Shop{ID: req.ID, Name: req.Name, DisplayName: req.DisplayName, LogoURL: req.LogoURL, Colour: req.Colour,
		Languages: nonNilStrings(req.Languages), ReturnHosts: nonNilStrings(req.ReturnHosts), Settings: req.Settings}
	if old, err := s.store.Shop(r.Context(), req.ID); err == nil {
		if sameShop(old, sh) {
			writeJSON(w, http.StatusOK, storeViewOf(old))
			return
		}
		writeError(w, http.StatusConflict, "conflict", fmt.Sprintf("store %s exists with other fields; a store's id is taken once", quoted(req.ID)))
		return
	} else if !errors.Is(err, store.ErrNotFound) {
		s.internal(w, r, err)
		return
	}
	out, err := s.store.CreateShop(r.Context(), sh, s.now().UTC())
	if errors.Is(err, store.ErrConflict) {
		// Created meanwhile by another request: the same answer as above.
		if old, err := s.store.Shop(r.Context(), req.ID); err == nil && sameShop(old, sh) {
			writeJSON(w, http.StatusOK, storeViewOf(old))
			return
		}
		writeError(w, http.StatusConflict, "conflict", fmt.Sprintf("store %s exists with other fields; a store's id is taken once", quoted(req.ID)))
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, storeViewOf(out))
}

// sameShop reports whether a and b have the same fields (a repeated create).
func sameShop(a, b store.Shop) bool {
	sa, _ := json.Marshal(a.Settings)
	sb, _ := json.Marshal(b.Settings)
	return a.Name == b.Name && a.DisplayName == b.DisplayName && a.LogoURL == b.LogoURL && a.Colour == b.Colour &&
		slices.Equal(nonNilStrings(a.Languages), nonNilStrings(b.Languages)) &&
		slices.Equal(nonNilStrings(a.ReturnHosts), nonNilStrings(b.ReturnHosts)) && string(sa) == string(sb)
}

// pathShop is the existing store of the path; false means a 404 was
// written.
func (s *Server) pathShop(w http.ResponseWriter, r *http.Request) (store.Shop, bool) {
	id := r.PathValue("store")
	if store.ValidStoreID(id) {
		sh, err := s.store.Shop(r.Context(), id)
		if err == nil {
			return sh, true
		}
		if !errors.Is(err, store.ErrNotFound) {
			s.internal(w, r, err)
			return store.Shop{}, false
		}
	}
	writeError(w, http.StatusNotFound, "not_found", "no store "+quoted(id))
	return store.Shop{}, false
}

// StoreKeyRequest is the body of POST /v1/stores/{store}/api-keys.
type StoreKeyRequest struct {
	Name          string   `json:"name"`
	Scopes        []string `json:"scopes"`
	AccountPrefix string   `json:"account_prefix"`
}

// StoreKeyView is a store's new API key: its plaintext is shown once.
type StoreKeyView struct {
	Name          string   `json:"name"`
	Store         string   `json:"store"`
	Scopes        []string `json:"scopes"`
	AccountPrefix string   `json:"account_prefix,omitempty"`
	Key           string   `json:"key"`
	CreatedAt     string   `json:"created_at"`
}

var keyNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,59}$`)

// storeScopes are the scopes a store's key may have.
var storeScopes = []string{ScopeStorefront, ScopeRead, ScopeIntents, ScopeDebit, ScopeFinance, ScopeOperator}

func (s *Server) createStoreKey(w http.ResponseWriter, r *http.Request, _ store.APIKey) {
	sh, ok := s.pathShop(w, r)
	if !ok {
		return
	}
	var req StoreKeyRequest
	if _, ok := s.decode(w, r, &req, false); !ok {
		return
	}
	switch {
	case !keyNamePattern.MatchString(req.Name):
		writeError(w, http.StatusBadRequest, "invalid_request", "name must be 1 to 60 of letters, digits and ._:- (starting with a letter or digit)")
		return
	case len(req.Scopes) == 0:
		writeError(w, http.StatusBadRequest, "invalid_request", "scopes must list at least one of "+strings.Join(storeScopes, ", "))
		return
	case req.AccountPrefix != "" && (len(req.AccountPrefix) > 200 || strings.Trim(req.AccountPrefix, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:/#-") != ""):
		writeError(w, http.StatusBadRequest, "invalid_request", "account_prefix must be 1-200 characters of letters, digits and ._:/#-")
		return
	}
	for i, sc := range req.Scopes {
		if !slices.Contains(storeScopes, sc) || slices.Contains(req.Scopes[:i], sc) {
			writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("scopes[%d] must be one of %s, once: not %s", i, strings.Join(storeScopes, ", "), quoted(sc)))
			return
		}
	}
	plain, k, err := s.store.CreateStoreAPIKey(r.Context(), req.Name, req.Scopes, sh.ID, req.AccountPrefix, s.now().UTC())
	if errors.Is(err, store.ErrConflict) {
		writeError(w, http.StatusConflict, "conflict", fmt.Sprintf("an API key named %s exists (names are unique across the instance); rotate it, or choose another name", quoted(req.Name)))
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, keyViewOf(plain, k))
}

func keyViewOf(plain string, k store.APIKey) StoreKeyView {
	return StoreKeyView{Name: k.Name, Store: k.Store, Scopes: k.Scopes, AccountPrefix: k.AccountPrefix, Key: plain,
		CreatedAt: k.CreatedAt.UTC().Format("2006-01-02T15:04:05Z07:00")}
}

// rotateStoreKey replaces a store's key by a new one with the same name,
// scopes and account prefix, and revokes the old one at once (no grace
// period: this instance refuses the old key at once, another within its
// key cache's 5 s).
func (s *Server) rotateStoreKey(w http.ResponseWriter, r *http.Request, _ store.APIKey) {
	sh, ok := s.pathShop(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	plain, k, err := s.store.RotateStoreAPIKey(r.Context(), sh.ID, name, s.now().UTC())
	s.keys.forget(sh.ID, name)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("store %s has no active API key named %s", quoted(sh.ID), quoted(name)))
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, keyViewOf(plain, k))
}

// ExtendedKeyRequest is the body of POST /v1/stores/{store}/extended-keys.
type ExtendedKeyRequest struct {
	Network    string `json:"network"`
	AccountKey string `json:"account_key"`
}

// ExtendedKeyView is a store's extended key as the API shows it: its
// fingerprint, never the key.
type ExtendedKeyView struct {
	Store       string `json:"store"`
	Network     string `json:"network"`
	Fingerprint string `json:"fingerprint"`
	// TakesEffect says when creations of the store on the network may use
	// it: a running daemon reads the stores' keys every few seconds.
	TakesEffect string `json:"takes_effect"`
}

// ExtendedKeyTakesEffect is what the API promises of a key it added: the
// daemon reads the stores' keys every 5 seconds (daemon.StoresReloadEvery).
const ExtendedKeyTakesEffect = "within 5 s: the daemon reads the stores' keys every 5 s"

// addExtendedKey records a store's extended public key for a network,
// checked as the daemon checks networks.<n>.account_key: public
// (watch-only), of the network and its chain, account level. A key any
// other store (or the instance's config, the default store's) uses is
// refused: one key, one store. The same key again is 200.
func (s *Server) addExtendedKey(w http.ResponseWriter, r *http.Request, _ store.APIKey) {
	sh, ok := s.pathShop(w, r)
	if !ok {
		return
	}
	var req ExtendedKeyRequest
	if _, ok := s.decode(w, r, &req, false); !ok {
		return
	}
	n := payment.Network(req.Network)
	nc := s.cfg.Networks[n]
	switch {
	case !n.Valid():
		writeError(w, http.StatusBadRequest, "invalid_request", "network must be one of "+networkList()+", not "+quoted(req.Network))
		return
	case n == payment.Solana:
		writeError(w, http.StatusBadRequest, "invalid_request", "network: Solana has no public derivation: import the store's pool with `paywatch pool import --store`")
		return
	case nc == nil || !nc.Enabled:
		writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("network: %s is not enabled on this instance", n))
		return
	case sh.ID == store.DefaultStore:
		writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("the default store's key is networks.%s.account_key in the config file", n))
		return
	case strings.TrimSpace(req.AccountKey) == "":
		writeError(w, http.StatusBadRequest, "invalid_request", "account_key is required: the account-level extended public key (xpub)")
		return
	}
	key := strings.TrimSpace(req.AccountKey)
	if err := config.CheckAccountKey(n, nc.Chain, "account_key", key); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if _, err := addresses.NewDeriver(n, key, nc.Chain); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "account_key: "+err.Error())
		return
	}
	fp, err := addresses.Fingerprint(key)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "account_key: "+err.Error())
		return
	}
	for _, other := range payment.Networks {
		if oc := s.cfg.Networks[other]; oc != nil && oc.AccountKey != "" {
			if ofp, err := addresses.Fingerprint(oc.AccountKey); err == nil && ofp == fp {
				writeError(w, http.StatusConflict, "conflict", "account_key is the instance's own (networks."+string(other)+".account_key, the default store's): one key, one store")
				return
			}
		}
	}
	keys, err := s.store.ShopKeys(r.Context())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	view := ExtendedKeyView{Store: sh.ID, Network: string(n), Fingerprint: fp, TakesEffect: ExtendedKeyTakesEffect}
	for _, k := range keys {
		switch {
		case k.Store == sh.ID && k.Network == string(n) && k.Fingerprint == fp:
			writeJSON(w, http.StatusOK, view)
			return
		case k.Store == sh.ID && k.Network == string(n):
			writeError(w, http.StatusConflict, "conflict", fmt.Sprintf("store %s has an extended key for %s (fingerprint %s); it is kept: addresses derived from it would change owner",
				quoted(sh.ID), n, k.Fingerprint))
			return
		case k.Fingerprint == fp:
			writeError(w, http.StatusConflict, "conflict", fmt.Sprintf("account_key is another store's (store %s): one key, one store", quoted(k.Store)))
			return
		}
	}
	err = s.store.AddShopKey(r.Context(), store.ShopKey{Store: sh.ID, Network: string(n), AccountKey: key, Fingerprint: fp}, s.now().UTC())
	if errors.Is(err, store.ErrConflict) {
		writeError(w, http.StatusConflict, "conflict", "account_key or the store's key for "+string(n)+" was added meanwhile; list the stores and retry")
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, view)
}

func networkList() string {
	var ns []string
	for _, n := range payment.Networks {
		ns = append(ns, string(n))
	}
	return strings.Join(ns, ", ")
}
