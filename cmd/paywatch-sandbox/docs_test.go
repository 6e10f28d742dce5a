package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet"
)

// docBlock is a ```sh block of a document and the marker before it.
type docBlock struct {
	file    string // relative to the repository root
	line    int    // of the opening fence
	heading string // the nearest heading above it
	marker  string // what follows "run:" or "not run:" in the comment
	run     bool   // "run:" (false: "not run:")
	body    string
}

// docMarker is the comment a ```sh block of the docs is preceded by:
//
//	<!-- run: sandbox -->              TestDocsRunAgainstTheSandbox runs it
//	<!-- run: TestName -->             TestName runs it
//	<!-- not run: why -->              nobody can here (docker compose, 30 minutes, …)
var docMarker = regexp.MustCompile(`^<!-- (run|not run): (.+?) -->$`)

// docFiles are the documents a reader is told to run commands from.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	more, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range more {
		files = append(files, strings.TrimPrefix(filepath.ToSlash(m), "../../"))
	}
	return files
}

// docBlocks returns every ```sh block of the docs. A block without a marker
// fails the test: a reader is told to run it, so a test must, or the doc
// says why none can.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	var out []docBlock
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			t.Fatal(err)
		}
		var prev, heading string
		var cur *docBlock
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for n := 1; sc.Scan(); n++ {
			l := sc.Text()
			switch {
			case cur != nil && strings.HasPrefix(l, "```"):
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				cur.body += l + "\n"
			case strings.HasPrefix(l, "```sh"):
				cur = &docBlock{file: f, line: n, heading: heading}
				m := docMarker.FindStringSubmatch(prev)
				if f == "README.md" && heading == "## Two commands" {
					// Kept exactly as CI and the hook read it: make test is
					// what CI runs, and TestSandboxEndToEnd runs the sandbox
					// make run starts.
					cur.marker = "make test"
				} else if m == nil {
					t.Errorf("%s:%d: a ```sh block (under %q) without <!-- run: … --> or <!-- not run: … --> before it", f, n, heading)
				} else {
					cur.run, cur.marker = m[1] == "run", m[2]
				}
			case strings.HasPrefix(l, "```"):
				// Another language's block: skip to its end.
				for sc.Scan() {
					n++
					if strings.HasPrefix(sc.Text(), "```") {
						break
					}
				}
			case strings.HasPrefix(l, "#"):
				heading = l
			}
			if strings.TrimSpace(l) != "" {
				prev = strings.TrimSpace(l)
			}
		}
		if cur != nil {
			t.Errorf("%s:%d: the ```sh block does not end", f, cur.line)
		}
	}
	return out
}

// Every ```sh block of the README and docs/ is marked, and a block marked
// as run by another test names a test that exists.
func TestDocsCommandBlocksAreMarked(t *testing.T) {
	tests := map[string]bool{}
	re := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			tests[m[1]] = true
		}
	}
	sandbox := 0
	for _, b := range docBlocks(t) {
		switch {
		case !b.run:
		case b.marker == "sandbox":
			sandbox++
		case !tests[b.marker]:
			t.Errorf("%s:%d: marked as run by %s, which is not a test of cmd/paywatch-sandbox", b.file, b.line, b.marker)
		}
	}
	if sandbox == 0 {
		t.Error("no block is marked <!-- run: sandbox -->")
	}
}

// placeholders are what a reader replaces with a value of their own: pi_…
// is the id a curl of the block was answered (only known as the block
// runs, and never inside quotes), <LTC intent address> an LTC intent's
// address the test made (written in, as a reader would, inside quotes).
func placeholders(ltcAddress string) map[string]string {
	return map[string]string{
		"pi_…":                 `"$DOCTEST_INTENT"`,
		"<LTC intent address>": ltcAddress,
	}
}

// The docs' command blocks a reader is told to run (those marked
// <!-- run: sandbox -->, the README's first payment among them) run as
// written against a real sandbox, from a directory laid out as the
// repository is after `make run` (.paywatch/ and bin/paywatch-sandbox), so
// a doc that drifts from the commands fails `make test` (issue 36, docs
// that stand alone and run). A placeholder such as pi_… is the id of the
// intent the block's own curl created (or, before it creates one, of an
// intent of the method the placeholder names).
func TestDocsRunAgainstTheSandbox(t *testing.T) {
	var run []docBlock
	flow := false
	for _, b := range docBlocks(t) {
		if b.run && b.marker == "sandbox" {
			run = append(run, b)
			if b.file == "README.md" && b.heading == "### The flow" {
				flow = true
			}
		}
	}
	if !flow {
		t.Fatal(`the README's first payment ("### The flow") is not marked <!-- run: sandbox -->`)
	}
	needSandboxPeers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := sandboxDir(t)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "bin", "paywatch-sandbox"), "github.com/paywatch/paywatch/cmd/paywatch-sandbox").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/paywatch-sandbox: %v\n%s", err, out)
	}
	port, err := devnet.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dev := startDevWith(t, ctx, devOptions{Dir: filepath.Join(dir, devDir), Listen: fmt.Sprintf("127.0.0.1:%d", port)})
	ltc := createIntent(t, ctx, dev.env, "LTC", "5.00")

	// The shell the blocks run in: curl records the id of an intent it
	// is answered, which is what a reader copies into the next command.
	const prelude = `DOCTEST_INTENT=
curl() {
	command curl "$@" >"$DOCTEST_DIR/answer" || return
	cat "$DOCTEST_DIR/answer"; echo
	id=$(sed -n 's/^{"id":"\(pi_[^"]*\)".*/\1/p' "$DOCTEST_DIR/answer")
	if [ -n "$id" ] && [ -z "$DOCTEST_INTENT" ]; then DOCTEST_INTENT=$id; fi
}
`
	var ltcPayments []string
	txidRe := regexp.MustCompile(`(?m)^\{"result":"([0-9a-f]{64})"`)
	for _, b := range run {
		t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) {
			body := b.body
			for p, v := range placeholders(ltc.Address) {
				body = strings.ReplaceAll(body, p, v)
			}
			if strings.Contains(body, "…") && !onlyInComments(body, "…") {
				t.Fatalf("a placeholder the test does not know:\n%s", body)
			}
			tmp := t.TempDir()
			cmd := exec.CommandContext(ctx, "sh", "-e", "-c", prelude+body+"\necho \"DOCTEST_INTENT=$DOCTEST_INTENT\"\n")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "DOCTEST_DIR="+tmp)
			out, err := cmd.CombinedOutput()
			t.Logf("%s:%d (%s):\n%s", b.file, b.line, b.heading, out)
			if err != nil {
				t.Fatalf("the block failed: %v", err)
			}
			if strings.Contains(b.body, "<LTC intent address>") {
				m := txidRe.FindAllStringSubmatch(string(out), -1)
				if len(m) == 0 {
					t.Fatalf("the block pays <LTC intent address>, but printed no txid")
				}
				ltcPayments = append(ltcPayments, m[len(m)-1][1])
			}
			if b.heading != "### The flow" {
				return
			}
			// The README's first payment: an intent created as its comment
			// shows, paid by paywatch-sandbox pay, and read back paid.
			var answers []string
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, `{"id":"pi_`) {
					answers = append(answers, l)
				}
			}
			if len(answers) != 2 {
				t.Fatalf("the block's two curls answered %d intents, want 2", len(answers))
			}
			var created struct{ ID, Address, Status, Method string }
			first := answers[0]
			if err := json.Unmarshal([]byte(first), &created); err != nil {
				t.Fatalf("the first curl's answer %q: %v", first, err)
			}
			if created.Status != "awaiting_payment" || created.Method != "BTC" || !strings.HasPrefix(created.Address, "bcrt1") {
				t.Errorf("created %+v, want a BTC intent awaiting_payment at a bcrt1 address, as the README shows", created)
			}
			var page struct {
				URL string `json:"payment_page_url"`
			}
			_ = json.Unmarshal([]byte(first), &page)
			if !strings.HasPrefix(page.URL, dev.env[envURL]+"/pay/") {
				t.Errorf("payment_page_url %q, want %s/pay/…", page.URL, dev.env[envURL])
			}
			if !strings.Contains(string(out), "DOCTEST_INTENT="+created.ID+"\n") {
				t.Fatalf("the block's pi_… was not the intent it created (%s)", created.ID)
			}
			last := answers[1]
			var read intentState
			if err := json.Unmarshal([]byte(last), &read); err != nil {
				t.Fatalf("the last curl's answer %q: %v", last, err)
			}
			if read.ID != created.ID || read.Status != "paid" {
				t.Errorf("the last curl read %s %s, want %s paid", read.ID, read.Status, created.ID)
			}
		})
	}
	// The LTC intent a block paid (sendtoaddress) has the payment, as
	// litecoind's wallet says.
	for _, txid := range ltcPayments {
		var tx struct {
			Details []struct {
				Address  string
				Category string
				Amount   float64
			}
		}
		if err := ltcCall(ctx, dev.env[envLitecoin], "gettransaction", &tx, txid); err != nil {
			t.Fatalf("gettransaction %s: %v", txid, err)
		}
		sent := false
		for _, d := range tx.Details {
			sent = sent || d.Address == ltc.Address && d.Category == "send"
		}
		if !sent {
			t.Errorf("the block's transaction %s does not pay the LTC intent's %s: %+v", txid, ltc.Address, tx)
		}
	}
}

// ltcCall calls litecoind's JSON-RPC at url.
func ltcCall(ctx context.Context, url, method string, out any, params ...any) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "1.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var a struct {
		Result json.RawMessage
		Error  *struct {
			Code    int
			Message string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return fmt.Errorf("%s: %s: %w", method, resp.Status, err)
	}
	if a.Error != nil {
		return fmt.Errorf("%s: %d %s", method, a.Error.Code, a.Error.Message)
	}
	return json.Unmarshal(a.Result, out)
}

// onlyInComments reports whether every occurrence of s in the shell text
// body is in a # comment.
func onlyInComments(body, s string) bool {
	for _, l := range strings.Split(body, "\n") {
		code := l
		if i := strings.Index(l, "#"); i >= 0 {
			code = l[:i]
		}
		if strings.Contains(code, s) {
			return false
		}
	}
	return true
}

// githubAnchors returns the anchors GitHub gives the headings of a
// Markdown document (code blocks left out; a repeated heading gets -1, -2).
func githubAnchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	drop := regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		a := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// Every relative link and image of the README and docs/ names a file of
// the repository, and a #fragment a heading of its document, so moving a
// section cannot leave a link behind (issue 36, docs that stand alone).
func TestDocsLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := filepath.Join("../..", f)
			if file != "" {
				path = filepath.Join("../..", filepath.Dir(f), file)
			}
			doc, err := os.ReadFile(path)
			if err != nil {
				if st, serr := os.Stat(path); serr == nil && st.IsDir() && frag == "" {
					continue
				}
				t.Errorf("%s: link %s: %v", f, target, err)
				continue
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !githubAnchors(string(doc))[frag] {
				t.Errorf("%s: link %s: no such heading in %s", f, target, strings.TrimPrefix(filepath.ToSlash(path), "../../"))
			}
		}
	}
}
