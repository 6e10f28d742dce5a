package bitcoin

import (
	"log/slog"
	"net/http"

	"github.com/paywatch/paywatch/chains"
)

// wsURL is btcd's websocket endpoint: the RPC URL's host at path /ws, with
// ws for http and wss for https ("" for a URL that has none).
func (c *rpcClient) wsURL() string {
	u := chains.WebsocketURL(c.endpoint)
	if u == nil {
		return ""
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = "/ws", "", "", ""
	return u.String()
}

// authHeader is the Basic authorization of the RPC credentials, read again
// for each connection (a restarted node writes a new cookie).
func (c *rpcClient) authHeader() (http.Header, error) {
	user, pass, err := c.credentials()
	if err != nil {
		return nil, err
	}
	r := http.Request{Header: http.Header{}}
	r.SetBasicAuth(user, pass)
	return r.Header, nil
}

// wsFeed is btcd's notifications on its websocket (chains.WSFeed).
func (c *Client) wsFeed() chains.WSFeed {
	return btcdFeed(string(c.network), c.rpc.wsURL(), c.rpc.authHeader, c.log)
}

// btcdFeed subscribes to btcd's notifyblocks and notifynewtransactions and
// wakes on every notification, named by its method (blockconnected,
// blockdisconnected, txaccepted, ...). A node without the websocket
// endpoint (HTTP 404 on the upgrade) is chains.ErrNotifyUnsupported.
func btcdFeed(name, url string, header func() (http.Header, error), log *slog.Logger) chains.WSFeed {
	return chains.WSFeed{
		Name:        name,
		URL:         url,
		Header:      header,
		Unsupported: func(status int) bool { return status == http.StatusNotFound },
		JSONRPC:     "1.0",
		Subscribe: []chains.WSSubscribe{
			{Method: "notifyblocks", Params: []any{}},
			{Method: "notifynewtransactions", Params: []any{false}},
		},
		Parse: func(n chains.WSNotification) string { return n.Method },
		Log:   log,
	}
}
