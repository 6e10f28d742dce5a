package daemon_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/console"
	"github.com/paywatch/paywatch/intents"
)

// parsePackage parses the non-test files of the module's package dir.
func parsePackage(t *testing.T, dir string) map[string]*ast.File {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(moduleRoot(t), dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ast.File{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = af
	}
	if len(out) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return out
}

// The payment core does not hand out its store: api and console read the
// database through the narrow Reader each defines (given by the daemon),
// and name *store.Store nowhere but in the assertion that it is one.
func TestLayersReadThroughTheirOwnReaders(t *testing.T) {
	if _, ok := reflect.TypeOf(&intents.Service{}).MethodByName("Store"); ok {
		t.Error("intents.Service has a Store method: the core hands out its store")
	}
	for _, opt := range []reflect.Type{reflect.TypeOf(api.Options{}), reflect.TypeOf(console.Options{})} {
		f, ok := opt.FieldByName("Reader")
		if !ok || f.Type.Kind() != reflect.Interface {
			t.Errorf("%s has no Reader interface field", opt)
		}
	}
	for _, dir := range []string{"api", "console"} {
		for name, f := range parsePackage(t, dir) {
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CallExpr:
					if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Store" && len(x.Args) == 0 {
						t.Errorf("%s/%s calls .Store(): it reaches a store through another package", dir, name)
					}
				case *ast.StarExpr:
					if sel, ok := x.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Store" {
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == "store" && name != "readers.go" {
							t.Errorf("%s/%s names *store.Store: read through the package's Reader", dir, name)
						}
					}
				}
				return true
			})
		}
	}
}

// The core speaks in domain words: intents imports no HTTP package and its
// strings name no route or status; the API maps its errors to both.
func TestCoreSpeaksNoHTTP(t *testing.T) {
	for name, f := range parsePackage(t, "intents") {
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); strings.HasPrefix(p, "net/http") {
				t.Errorf("intents/%s imports %s", name, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, _ := strconv.Unquote(lit.Value)
			for _, http := range []string{"/v1/", "GET /", "POST /", "HTTP "} {
				if strings.Contains(v, http) {
					t.Errorf("intents/%s: string %q speaks HTTP", name, v)
				}
			}
			return true
		})
	}
}
