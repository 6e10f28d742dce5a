package config

import (
	"fmt"
	"net/url"
	"regexp"
)

// Webhook is one event receiver.
type Webhook struct {
	// Name identifies the endpoint in the delivery log.
	Name string `yaml:"name"`
	// URL receives a POST per event.
	URL string `yaml:"url"`
	// SecretEnv names the environment variable holding the signing secret.
	SecretEnv string `yaml:"secret_env"`
	// NextSecretEnv names the variable holding the next secret during a
	// rotation ("" when none): every delivery is then signed with both, so
	// the receiver can switch at its own pace; afterwards the next secret
	// moves to secret_env and this is emptied.
	NextSecretEnv string `yaml:"next_secret_env"`
	// Events filters event types; empty means all.
	Events []string `yaml:"events"`
	// AccountPrefix, when set, sends only the events of accounts starting
	// with it (the binding of that storefront's API key).
	AccountPrefix string `yaml:"account_prefix"`
	// Start is where a newly configured endpoint begins: "beginning" (the
	// default: every event ever recorded) or "now" (only new events).
	Start string `yaml:"start"`
	// Store, when set, sends only the events of that store (a store id,
	// a store declared in the config or created in the database); empty:
	// every store's events (the operator's receiver).
	Store string `yaml:"store"`
}

// webhookStoreID is a store id's form (store.ValidStoreID; config sits
// below package store).
var webhookStoreID = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// validateWebhooks checks each webhook: a unique name, an https URL (http
// only to this host), its secret variables and where it starts.
func (c *Config) validateWebhooks() error {
	seen := map[string]bool{}
	for i, w := range c.Webhooks {
		f := fmt.Sprintf("webhooks[%d]", i)
		if w.Name == "" || seen[w.Name] {
			return invalid(f+".name", "must be set and unique")
		}
		seen[w.Name] = true
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid(f+".url", "must be an https URL (http only to this host)")
		}
		if u.Scheme == "http" && !LoopbackHost(u.Hostname()) {
			return invalid(f+".url", "must be https: events are signed, not encrypted, and http to another host "+
				"shows every payment on the way (http is accepted to this host only: 127.0.0.1, ::1, localhost)")
		}
		if w.SecretEnv == "" {
			return invalid(f+".secret_env", "must name the environment variable holding the signing secret")
		}
		if w.NextSecretEnv == w.SecretEnv {
			return invalid(f+".next_secret_env", "must name another variable than secret_env")
		}
		if w.Start != "" && w.Start != "beginning" && w.Start != "now" {
			return invalid(f+".start", "must be beginning or now")
		}
		if w.Store != "" && !webhookStoreID.MatchString(w.Store) {
			return invalid(f+".store", "must be a store id: 1 to 40 of a-z, 0-9, - and _, starting with a letter or digit")
		}
	}
	return nil
}
