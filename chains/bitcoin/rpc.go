package bitcoin

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/paywatch/paywatch/chains"
)

// ErrTransient marks a failure worth retrying with backoff: the node is
// unreachable, answered HTTP 5xx or 429, or is warming up (-28). Test it with
// errors.Is.
var ErrTransient = errors.New("transient node error")

// ErrUnauthorized is returned when the node rejects the RPC credentials
// (HTTP 401 or 403). Retrying does not help.
var ErrUnauthorized = errors.New("node rejected the RPC credentials")

// RPC error codes paywatch reacts to (Bitcoin Core src/rpc/protocol.h, btcd
// btcjson/jsonrpcerr.go).
const (
	codeMisc             = -1  // btcd: "Block number out of range"
	codeInvalidParameter = -8  // Core: "Block height out of range"
	codeNoSuchTx         = -5  // tx gone from the mempool
	codeInWarmup         = -28 // node still starting
)

// RPCError is a JSON-RPC error object returned by the node.
type RPCError struct {
	// Method is the RPC method that failed.
	Method string
	// Code is the node's error code (-28 warmup, -8 invalid parameter, ...).
	Code int
	// Message is the node's error text.
	Message string
}

// Error implements error.
func (e *RPCError) Error() string {
	return fmt.Sprintf("%s: rpc error %d: %s", e.Method, e.Code, e.Message)
}

// Is makes errors.Is(err, ErrTransient) true for a node in warmup.
func (e *RPCError) Is(target error) bool {
	return target == ErrTransient && e.Code == codeInWarmup
}

// HTTPError is a non-200 HTTP answer that carries no JSON-RPC error object.
type HTTPError struct {
	// Method is the RPC method that was called.
	Method string
	// Status is the HTTP status code.
	Status int
	// Body is the start of the response body.
	Body string
}

// Error implements error.
func (e *HTTPError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("%s: HTTP %d", e.Method, e.Status)
	}
	return fmt.Sprintf("%s: HTTP %d: %s", e.Method, e.Status, e.Body)
}

// Is makes errors.Is(err, ErrTransient) true for 5xx and 429 answers and
// errors.Is(err, ErrUnauthorized) true for 401 and 403.
func (e *HTTPError) Is(target error) bool {
	switch target {
	case ErrTransient:
		return e.Status >= 500 || e.Status == http.StatusTooManyRequests
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
	}
	return false
}

// transientError wraps a transport failure (connection refused, reset,
// timeout) so that errors.Is(err, ErrTransient) holds.
type transientError struct{ err error }

func (e transientError) Error() string        { return e.err.Error() }
func (e transientError) Unwrap() error        { return e.err }
func (e transientError) Is(target error) bool { return target == ErrTransient }

// rpcClient speaks JSON-RPC 1.0 over HTTP POST to one node. Credentials go
// into the Authorization header only, never into a URL that could end up in
// an error message.
type rpcClient struct {
	endpoint   string // URL without user info
	user, pass string
	cookieFile string
	http       *http.Client
	maxBody    int64
	nextID     atomic.Uint64
	bufs       sync.Pool // *bytes.Buffer for response bodies
}

func newRPCClient(rawURL, cookieFile string, hc *http.Client, maxBody int64) (*rpcClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse errors quote the input, which may hold a password.
		return nil, errors.New("URL: not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("URL: scheme must be http or https, got %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("URL: missing host")
	}
	c := &rpcClient{cookieFile: cookieFile, http: hc, maxBody: maxBody}
	if u.User != nil {
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
	}
	u.User = nil
	c.endpoint = u.String()
	if c.user == "" && cookieFile == "" {
		return nil, errors.New("URL: needs user:password or a CookieFile")
	}
	c.bufs.New = func() any { return new(bytes.Buffer) }
	return c, nil
}

// credentials returns the basic-auth pair: the URL's, else the cookie file's
// "user:password" line (re-read on every call: the node rewrites it when it
// restarts).
func (c *rpcClient) credentials() (string, string, error) {
	if c.user != "" {
		return c.user, c.pass, nil
	}
	b, err := os.ReadFile(c.cookieFile)
	if err != nil {
		return "", "", fmt.Errorf("read RPC cookie: %w", err)
	}
	user, pass, ok := strings.Cut(strings.TrimSpace(string(b)), ":")
	if !ok {
		return "", "", fmt.Errorf("RPC cookie %s: want user:password", c.cookieFile)
	}
	return user, pass, nil
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

type rpcResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// post sends one request and returns the response body in a pooled buffer
// (release it with c.release) together with the HTTP status.
func (c *rpcClient) post(ctx context.Context, method string, params []any) (*bytes.Buffer, int, error) {
	if params == nil {
		params = []any{}
	}
	return c.postBody(ctx, method, rpcRequest{JSONRPC: "1.0", ID: c.nextID.Add(1), Method: method, Params: params})
}

// postBody is post for a request body of any shape (one request, or a
// batch); method names it in errors.
func (c *rpcClient) postBody(ctx context.Context, method string, body any) (*bytes.Buffer, int, error) {
	reqBody, err := json.Marshal(body)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: encode request: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(reqBody))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", method, err)
	}
	user, pass, err := c.credentials()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", method, err)
	}
	req.SetBasicAuth(user, pass)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, fmt.Errorf("%s: %w", method, ctx.Err())
		}
		return nil, 0, fmt.Errorf("%s: %w", method, transientError{err})
	}
	defer resp.Body.Close()
	buf := c.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	if n := resp.ContentLength; n > 0 && n <= c.maxBody {
		buf.Grow(int(n) + 1)
	}
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		c.release(buf)
		if ctx.Err() != nil {
			return nil, 0, fmt.Errorf("%s: %w", method, ctx.Err())
		}
		return nil, 0, fmt.Errorf("%s: read response: %w", method, transientError{err})
	}
	if n > c.maxBody {
		c.release(buf)
		return nil, 0, fmt.Errorf("%w: %s: response larger than %d bytes", chains.ErrInvalidResponse, method, c.maxBody)
	}
	return buf, resp.StatusCode, nil
}

func (c *rpcClient) release(buf *bytes.Buffer) {
	if buf.Cap() <= 64<<20 {
		c.bufs.Put(buf)
	}
}

// envelope parses a JSON-RPC response body. It returns the raw result, or the
// node's error object as *RPCError, or an HTTP or invalid-response error.
func envelope(method string, status int, body []byte) (json.RawMessage, error) {
	var r rpcResponse
	jerr := json.Unmarshal(body, &r)
	if jerr == nil && r.Error != nil {
		return nil, &RPCError{Method: method, Code: r.Error.Code, Message: r.Error.Message}
	}
	if status != http.StatusOK {
		return nil, &HTTPError{Method: method, Status: status, Body: snippet(body)}
	}
	if jerr != nil {
		return nil, fmt.Errorf("%w: %s: %v (body %q)", chains.ErrInvalidResponse, method, jerr, snippet(body))
	}
	if len(r.Result) == 0 || string(r.Result) == "null" {
		return nil, fmt.Errorf("%w: %s: no result and no error", chains.ErrInvalidResponse, method)
	}
	return r.Result, nil
}

func snippet(b []byte) string {
	const max = 200
	s := strings.TrimSpace(string(b[:min(len(b), max)]))
	if len(b) > max {
		s += "..."
	}
	return s
}

// call invokes method and decodes its result into out.
func (c *rpcClient) call(ctx context.Context, method string, out any, params ...any) error {
	buf, status, err := c.post(ctx, method, params)
	if err != nil {
		return err
	}
	defer c.release(buf)
	raw, err := envelope(method, status, buf.Bytes())
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%w: %s: result: %v", chains.ErrInvalidResponse, method, err)
	}
	return nil
}

// batchCall is one call of a JSON-RPC batch: its result is decoded into
// Out.
type batchCall struct {
	Method string
	Params []any
	Out    any
}

// callBatch invokes calls in one HTTP request (a JSON-RPC batch, which
// Bitcoin Core and Litecoin Core answer with an array) and decodes each
// result into its Out. The first call that failed is the error, as call
// would have returned it.
func (c *rpcClient) callBatch(ctx context.Context, calls []batchCall) error {
	reqs := make([]rpcRequest, len(calls))
	names := make([]string, len(calls))
	first := c.nextID.Add(uint64(len(calls))) - uint64(len(calls)) + 1
	for i, cl := range calls {
		params := cl.Params
		if params == nil {
			params = []any{}
		}
		reqs[i] = rpcRequest{JSONRPC: "1.0", ID: first + uint64(i), Method: cl.Method, Params: params}
		names[i] = cl.Method
	}
	what := strings.Join(names, "+")
	buf, status, err := c.postBody(ctx, what, reqs)
	if err != nil {
		return err
	}
	defer c.release(buf)
	var answers []struct {
		ID uint64 `json:"id"`
		rpcResponse
	}
	if jerr := json.Unmarshal(buf.Bytes(), &answers); jerr != nil {
		// A node that refuses the batch as a whole answers one object.
		_, err := envelope(what, status, buf.Bytes())
		if err == nil {
			err = fmt.Errorf("%w: %s: batch answer: %v (body %q)", chains.ErrInvalidResponse, what, jerr, snippet(buf.Bytes()))
		}
		return err
	}
	byID := make(map[uint64]int, len(answers))
	for i, a := range answers {
		byID[a.ID] = i
	}
	for i, cl := range calls {
		j, ok := byID[first+uint64(i)]
		if !ok {
			return fmt.Errorf("%w: %s: the batch answer lacks call %d", chains.ErrInvalidResponse, what, i+1)
		}
		a := answers[j]
		if a.Error != nil {
			return &RPCError{Method: cl.Method, Code: a.Error.Code, Message: a.Error.Message}
		}
		if status != http.StatusOK {
			return &HTTPError{Method: cl.Method, Status: status, Body: snippet(buf.Bytes())}
		}
		if len(a.Result) == 0 || string(a.Result) == "null" {
			return fmt.Errorf("%w: %s: no result and no error", chains.ErrInvalidResponse, cl.Method)
		}
		if err := json.Unmarshal(a.Result, cl.Out); err != nil {
			return fmt.Errorf("%w: %s: result: %v", chains.ErrInvalidResponse, cl.Method, err)
		}
	}
	return nil
}

var resultKey = []byte(`"result":"`)

// callHex invokes a method whose result is one hex string (getblock <h> 0,
// getrawtransaction <txid> 0) and hex-decodes it into dst[:0], growing dst as
// needed. A multi-megabyte block is not run through the JSON decoder: the hex
// string is located directly (hex digits need no escaping) and the rest of
// the envelope, with the string blanked out, is parsed normally.
func (c *rpcClient) callHex(ctx context.Context, method string, dst []byte, params ...any) ([]byte, error) {
	buf, status, err := c.post(ctx, method, params)
	if err != nil {
		return dst, err
	}
	defer c.release(buf)
	body := buf.Bytes()
	var hexStr []byte
	if status == http.StatusOK {
		if i := bytes.Index(body, resultKey); i >= 0 && topLevelKey(body, i) {
			start := i + len(resultKey)
			if end := bytes.IndexByte(body[start:], '"'); end >= 0 {
				hexStr = body[start : start+end]
				// The envelope without the payload: `"result":""`.
				rest := make([]byte, 0, len(body)-len(hexStr))
				rest = append(append(rest, body[:start]...), body[start+end:]...)
				var env rpcResponse
				if err := json.Unmarshal(rest, &env); err != nil {
					return dst, fmt.Errorf("%w: %s: %v (body %q)", chains.ErrInvalidResponse, method, err, snippet(body))
				}
				if env.Error != nil {
					return dst, &RPCError{Method: method, Code: env.Error.Code, Message: env.Error.Message}
				}
				if string(env.Result) != `""` {
					// The string found was not the top-level result (a
					// nested "result" key came first): decode it all.
					hexStr = nil
				}
			}
		}
	}
	if hexStr == nil {
		raw, err := envelope(method, status, body)
		if err != nil {
			return dst, err
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return dst, fmt.Errorf("%w: %s: result is not a string: %v", chains.ErrInvalidResponse, method, err)
		}
		hexStr = []byte(s)
	}
	if len(hexStr)%2 != 0 {
		return dst, fmt.Errorf("%w: %s: odd-length hex (%d digits)", chains.ErrInvalidResponse, method, len(hexStr))
	}
	n := len(hexStr) / 2
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	if _, err := hex.Decode(dst, hexStr); err != nil {
		return dst[:0], fmt.Errorf("%w: %s: %v", chains.ErrInvalidResponse, method, err)
	}
	return dst, nil
}

// topLevelKey reports whether the key starting at body[i] (a '"' outside
// any string) is a key of the top-level object: one '{' open, no '[', and
// i not inside a string. A nested object's "result" must not be taken for
// the answer's, even when the answer's own result is an empty string.
func topLevelKey(body []byte, i int) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range body[:i] {
		switch {
		case inString && escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case inString && b == '"':
			inString = false
		case inString:
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
		case b == '}' || b == ']':
			depth--
		}
	}
	return !inString && depth == 1
}

// heightParam formats a height for getblockhash.
func heightParam(h chains.Height) json.Number { return json.Number(strconv.FormatInt(int64(h), 10)) }
