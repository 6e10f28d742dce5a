package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/store"
)

// Stores (issue 34). A clerk signs in with a key of one store, or with an
// every-store key (the operator's):
//
//   - a store's key sees and touches its store only: every list is that
//     store's, and another store's intent, payable, transfer, account or
//     webhook endpoint is "not found" with the very words of one that does
//     not exist;
//   - an every-store key sees every store, each row naming its store, and
//     narrows a list with ?store=; what needs one store (an account's
//     balance, a payable, the reconciliation and its closes) is the
//     ?store= it names, else the default store. A decision acts in the
//     store of the transfer decided on (the core never moves value between
//     stores).
//
// The instance's own pages (networks, their rescans and reconciles) are an
// every-store key's: they show the whole instance (node endpoints, the
// reconciler's findings, which name any store's addresses), so a store's
// key is refused them, and its navigation does not offer them.

// storeParam is the query (and form) parameter naming a store.
const storeParam = "store"

// ownStore is the store the session's key belongs to ("": every store).
func (s *session) ownStore() string {
	if s == nil {
		return ""
	}
	return s.key.Store
}

// sees reports whether the session may see the things of shop.
func (s *session) sees(shop string) bool { return s != nil && s.key.Sees(shop) }

// listStore is the store a list shows: the key's own, or the ?store= an
// every-store key chose ("": every store). false means a refusal was
// written.
func (c *Console) listStore(w http.ResponseWriter, r *http.Request, s *session) (string, bool) {
	if own := s.ownStore(); own != "" {
		return own, true
	}
	asked := strings.TrimSpace(r.URL.Query().Get(storeParam))
	if asked != "" && !store.ValidStoreID(asked) {
		c.render(w, r, http.StatusBadRequest, "error", s, "Refused", errorData{Message: "store must be a store id: 1 to 40 of a-z, 0-9, - and _"})
		return "", false
	}
	return asked, true
}

// actStore is the one store a page about one store's books acts in: the
// key's own, or the ?store= an every-store key named, else the default
// store. false means a refusal was written.
func (c *Console) actStore(w http.ResponseWriter, r *http.Request, s *session) (string, bool) {
	shop, ok := c.listStore(w, r, s)
	return store.StoreOr(shop), ok
}

// notFoundIntent answers an intent the session may not see exactly as one
// that does not exist (the service's words).
func notFoundIntent(id string) error { return intents.Fail(intents.NotFound, "no intent %q", id) }

// storeQuery is "store=<shop>" for an every-store key's links to a thing
// of shop, "" for a store's key (its links never name a store) and on an
// instance of one store.
func storeQuery(s *session, shop string) string {
	if s.ownStore() != "" || !s.stores {
		return ""
	}
	return url.Values{storeParam: {store.StoreOr(shop)}}.Encode()
}

// withStore adds ?store= (or &store=) to href for an every-store key.
func withStore(s *session, href, shop string) string {
	q := storeQuery(s, shop)
	if q == "" {
		return href
	}
	if strings.Contains(href, "?") {
		return href + "&" + q
	}
	return href + "?" + q
}

// StoreLabel is what the header says of the signed-in key's store.
func (p page) StoreLabel() string {
	if p.Session == nil {
		return ""
	}
	if own := p.Session.ownStore(); own != "" {
		return "store " + own
	}
	if p.Session.stores {
		return "every store"
	}
	return "" // one store's instance: nothing to say
}

// AllStores reports whether the signed-in key is an every-store key: its
// pages show a store column and a store filter.
func (p page) AllStores() bool {
	return p.Session != nil && p.Session.ownStore() == "" && p.Session.stores
}

// Instance reports whether the signed-in key may open the instance's own
// pages (networks): an every-store key with the operator scope.
func (p page) Instance() bool { return p.Session.ownStore() == "" && p.Can(ScopeOperator) }
