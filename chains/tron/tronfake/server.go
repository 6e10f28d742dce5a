package tronfake

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxMessageSize is java-tron's default node.rpc.maxMessageSize (4 MiB),
// which Util.checkBodySize applies to HTTP bodies.
const maxMessageSize = 4 << 20

// blockLimit is GetBlockByLimitNextServlet.BLOCK_LIMIT_NUM.
const blockLimit = 100

// params is a request's parameters: the POST body or the GET query.
type params struct {
	get   bool
	solid bool // a /walletsolidity call
	query map[string][]string
	body  string
}

type endpoint func(n *Node, p params) (string, error)

var endpoints = map[string]endpoint{
	"/wallet/getnowblock":                          (*Node).getNowBlock,
	"/wallet/getblockbynum":                        (*Node).getBlockByNum,
	"/wallet/getblockbylimitnext":                  (*Node).getBlockByLimitNext,
	"/wallet/gettransactioninfobyblocknum":         (*Node).getInfosByBlockNum,
	"/wallet/gettransactionbyid":                   (*Node).getTransactionByID,
	"/wallet/gettransactioninfobyid":               (*Node).getTransactionInfoByID,
	"/walletsolidity/gettransactionbyid":           solidity((*Node).getTransactionByID),
	"/walletsolidity/gettransactioninfobyid":       solidity((*Node).getTransactionInfoByID),
	"/walletsolidity/getnowblock":                  solidity((*Node).getNowBlock),
	"/walletsolidity/getblockbynum":                solidity((*Node).getBlockByNum),
	"/walletsolidity/getblockbylimitnext":          solidity((*Node).getBlockByLimitNext),
	"/walletsolidity/gettransactioninfobyblocknum": solidity((*Node).getInfosByBlockNum),
}

// solidity marks an endpoint of the solidity API, which sees the chain only
// up to the solidified block.
func solidity(e endpoint) endpoint {
	return func(n *Node, p params) (string, error) {
		p.solid = true
		return e(n, p)
	}
}

// javaError is an exception as Util.printErrorMsg renders it:
// {"Error": "<e.getClass()> : <e.getMessage()>"} with HTTP 200.
type javaError struct {
	class, msg string
}

func (e javaError) Error() string { return "class " + e.class + " : " + e.msg }

// ServeHTTP answers java-tron HTTP API calls: the block and transaction-info
// endpoints of /wallet and /walletsolidity, by GET or POST, with the real
// node's response shapes and its error answers.
func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e, ok := endpoints[r.URL.Path]
	if !ok {
		e, ok = walletEndpoints[r.URL.Path]
	}
	if !ok {
		jettyError(w, r, http.StatusNotFound, "Not Found")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost && r.Method != http.MethodHead {
		jettyError(w, r, http.StatusMethodNotAllowed, "HTTP method "+r.Method+" is not supported by this URL")
		return
	}
	key := r.Header.Get("TRON-PRO-API-KEY")
	n.mu.Lock()
	n.keys[key]++
	want := n.apiKey
	var fail Failure
	if len(n.fails) > 0 {
		fail, n.fails = n.fails[0], n.fails[1:]
	}
	var hook func()
	if hs := n.hooks[r.URL.Path]; len(hs) > 0 {
		hook, n.hooks[r.URL.Path] = hs[0], hs[1:]
	}
	n.mu.Unlock()
	if hook != nil {
		hook()
	}
	if want != "" && key != want {
		writeJSON(w, http.StatusUnauthorized, `{"Error":"ApiKey not exists"}`)
		return
	}
	if fail != "" {
		n.fail(w, r, fail)
		return
	}

	p := params{get: r.Method != http.MethodPost, query: r.URL.Query()}
	if !p.get {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxMessageSize+1))
		if err != nil {
			return
		}
		if len(body) > maxMessageSize {
			writeJSON(w, http.StatusOK, errorBody(javaError{"java.lang.Exception",
				fmt.Sprintf("body size is too big, the limit is %d", maxMessageSize)}))
			return
		}
		p.body = strings.TrimRight(string(body), "\r\n")
	}
	out, err := e(n, p)
	if errors.Is(err, errPostOnly) {
		w.WriteHeader(http.StatusOK)
		return
	}
	if err != nil {
		writeJSON(w, http.StatusOK, errorBody(err))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (n *Node) fail(w http.ResponseWriter, r *http.Request, f Failure) {
	switch f {
	case FailErrorBody:
		writeJSON(w, http.StatusOK, errorBody(javaError{"java.lang.NullPointerException", "null"}))
	case FailBusy:
		writeJSON(w, http.StatusOK, errorBody(javaError{"java.lang.IllegalAccessException", "lack of computing resources"}))
	case FailLite:
		// LiteFnQueryHttpFilter writes bare text with status 200.
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "this API is closed because this node is a lite fullnode")
	case Fail429:
		writeJSON(w, http.StatusTooManyRequests,
			`{"Error":"request rate exceeded the allowed_rps(15), and the query server is suspended for 1s"}`)
	case Fail500:
		jettyError(w, r, http.StatusInternalServerError, "Server Error")
	case FailGarbage:
		writeJSON(w, http.StatusOK, `{"blockID":"0000000001d6f4a09f60c27b","block_header":{"raw_data":{"number":`)
	case FailTimeout:
		// The server notices the client hanging up only once the body is read.
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}
}

func errorBody(err error) string {
	return string(mustJSON(map[string]string{"Error": err.Error()}))
}

// writeJSON writes body the way the servlets do: println, so with a newline.
func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, body+"\n")
}

// jettyError writes Jetty's default HTML error page.
func jettyError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	w.Header().Set("Content-Type", "text/html;charset=iso-8859-1")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<html>\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html;charset=ISO-8859-1\"/>\n"+
		"<title>Error %d %s</title>\n</head>\n<body><h2>HTTP ERROR %d %s</h2>\n<table>\n"+
		"<tr><th>URI:</th><td>%s</td></tr>\n<tr><th>STATUS:</th><td>%d</td></tr>\n"+
		"<tr><th>MESSAGE:</th><td>%s</td></tr>\n<tr><th>SERVLET:</th><td>-</td></tr>\n</table>\n"+
		"<hr><a href=\"https://eclipse.org/jetty\">Powered by Jetty:// 9.4.53.v20231009</a><hr/>\n\n</body>\n</html>\n",
		status, http.StatusText(status), status, http.StatusText(status), r.URL.Path, status, msg)
}

// parseBody does what PostParams and JsonFormat.merge do with a POST body:
// fastjson must accept it as an object (visible is read from it), then the
// protobuf merge reads the named int64 fields; unknown fields are ignored, a
// missing field is 0.
func parseBody(body string, fields ...string) (map[string]int64, error) {
	out := make(map[string]int64, len(fields))
	if strings.TrimSpace(body) == "" {
		return nil, javaError{"org.tron.core.services.http.JsonFormat$ParseException", `1:1: Expected "{".`}
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil || dec.More() {
		return nil, javaError{"com.alibaba.fastjson.JSONException", "syntax error, " + fastjsonPos(body)}
	}
	if v, ok := obj["visible"]; ok && v == true {
		return nil, javaError{"tronfake", "visible=true is not implemented by the fake; paywatch never sends it"}
	}
	for _, f := range fields {
		v, ok := obj[f]
		if !ok {
			continue
		}
		num, isNum := v.(json.Number)
		i, err := strconv.ParseInt(string(num), 10, 64)
		if !isNum || err != nil {
			return nil, javaError{"org.tron.core.services.http.JsonFormat$ParseException",
				fmt.Sprintf("1:%d: Couldn't parse integer: For input string: %q", strings.Index(body, f)+len(f)+3, fmt.Sprint(v))}
		}
		out[f] = i
	}
	return out, nil
}

func fastjsonPos(body string) string {
	return fmt.Sprintf("pos %d, line 1, column %d%s", len(body), len(body)+1, body)
}

// queryInt does what Long.parseLong(request.getParameter(name)) does.
func queryInt(q map[string][]string, name string) (int64, error) {
	v, ok := q[name]
	if !ok || len(v) == 0 {
		return 0, javaError{"java.lang.NumberFormatException", "null"}
	}
	i, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return 0, javaError{"java.lang.NumberFormatException", fmt.Sprintf("For input string: %q", v[0])}
	}
	return i, nil
}

func (p params) ints(fields ...string) (map[string]int64, error) {
	if !p.get {
		return parseBody(p.body, fields...)
	}
	if v := p.query["visible"]; len(v) > 0 && v[0] == "true" {
		return nil, javaError{"tronfake", "visible=true is not implemented by the fake; paywatch never sends it"}
	}
	out := make(map[string]int64, len(fields))
	for _, f := range fields {
		i, err := queryInt(p.query, f)
		if err != nil {
			return nil, err
		}
		out[f] = i
	}
	return out, nil
}

// limit is the highest block number the endpoint may serve.
func (n *Node) limitLocked(solid bool) uint64 {
	if solid {
		return n.solidLocked()
	}
	return n.tipLocked()
}

// getNowBlock ignores its parameters (doPost calls doGet).
func (n *Node) getNowBlock(p params) (string, error) {
	solid := p.solid
	n.mu.Lock()
	defer n.mu.Unlock()
	return string(n.blocks[n.limitLocked(solid)].json), nil
}

func (n *Node) getBlockByNum(p params) (string, error) {
	solid := p.solid
	v, err := p.ints("num")
	if err != nil {
		return "", err
	}
	num := v["num"]
	n.mu.Lock()
	defer n.mu.Unlock()
	if b := n.blocks[uint64(num)]; num >= 0 && b != nil && uint64(num) <= n.limitLocked(solid) {
		return string(b.json), nil
	}
	return "{}", nil
}

func (n *Node) getBlockByLimitNext(p params) (string, error) {
	solid := p.solid
	v, err := p.ints("startNum", "endNum")
	if err != nil {
		return "", err
	}
	start, end := v["startNum"], v["endNum"]
	if !(end > 0 && end > start && end-start <= blockLimit) {
		return "{}", nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var buf bytes.Buffer
	buf.WriteString(`{"block":[`)
	first := true
	for h := max(start, 0); h < end && uint64(h) <= n.limitLocked(solid); h++ {
		b := n.blocks[uint64(h)]
		if b == nil {
			continue
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		buf.Write(bytes.TrimSpace(b.json))
	}
	buf.WriteString("]}")
	return buf.String(), nil
}

func (n *Node) getInfosByBlockNum(p params) (string, error) {
	solid := p.solid
	v, err := p.ints("num")
	if err != nil {
		return "", err
	}
	num := v["num"]
	if num <= 0 {
		return "{}", nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if b := n.blocks[uint64(num)]; b != nil && uint64(num) <= n.limitLocked(solid) {
		return string(b.infos), nil
	}
	return "[]", nil
}

func (n *Node) getTransactionByID(p params) (string, error) {
	return n.byID(p, func(b *block, id string) []byte { return b.txs[id] })
}

func (n *Node) getTransactionInfoByID(p params) (string, error) {
	return n.byID(p, func(b *block, id string) []byte { return b.infoByID[id] })
}

// byID looks up a transaction by its "value" (hex txID): a BytesMessage that
// JsonFormat decodes from hex, so non-hex is a ParseException and an unknown
// id is {}.
func (n *Node) byID(p params, pick func(*block, string) []byte) (string, error) {
	var value string
	if p.get {
		value = strings.Join(p.query["value"], "")
	} else {
		if strings.TrimSpace(p.body) == "" {
			return "", javaError{"org.tron.core.services.http.JsonFormat$ParseException", `1:1: Expected "{".`}
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(p.body), &obj); err != nil || obj == nil {
			return "", javaError{"com.alibaba.fastjson.JSONException", "syntax error, " + fastjsonPos(p.body)}
		}
		if obj["visible"] == true {
			return "", javaError{"tronfake", "visible=true is not implemented by the fake; paywatch never sends it"}
		}
		value, _ = obj["value"].(string)
	}
	if _, err := hex.DecodeString(value); err != nil {
		return "", javaError{"org.tron.core.services.http.JsonFormat$ParseException", "1:10: Couldn't parse bytes: " + err.Error()}
	}
	value = strings.ToLower(value)
	n.mu.Lock()
	defer n.mu.Unlock()
	limit := n.limitLocked(p.solid)
	for h, b := range n.blocks {
		if h > limit {
			continue
		}
		if out := pick(b, value); out != nil {
			return string(out), nil
		}
	}
	return "{}", nil
}
