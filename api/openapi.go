package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// The API contract: openapi.yaml is the OpenAPI 3.1 description of every
// route the server mounts, served as JSON at GET /v1/openapi.json without a
// key. Tests validate every answer they receive against it and check that
// its paths are exactly Routes().

//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPIYAML returns the OpenAPI document as written.
func OpenAPIYAML() []byte { return slices.Clone(openAPIYAML) }

// OpenAPIJSON returns the OpenAPI document as JSON, as GET /v1/openapi.json
// serves it.
var OpenAPIJSON = sync.OnceValues(func() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(openAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	doc, err := jsonValue(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return json.Marshal(doc)
})

// jsonValue turns a decoded YAML value into one encoding/json can write:
// mapping keys become strings (a status code key `200` is the string "200").
func jsonValue(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			v[k] = j
		}
		return v, nil
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(k)] = j
		}
		return out, nil
	case []any:
		for i, e := range v {
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			v[i] = j
		}
		return v, nil
	}
	return v, nil
}

// Route is one mounted route: its method, its path pattern as in the
// OpenAPI document, and the API-key scope it needs ("" for none).
type Route struct {
	Method, Path, Scope string
}

// Routes lists every route the server mounts, in the order mounted.
func (s *Server) Routes() []Route { return slices.Clone(s.table) }

// record adds pattern ("GET /v1/status") to the route table.
func (s *Server) record(pattern, scope string) {
	method, path, _ := strings.Cut(pattern, " ")
	s.table = append(s.table, Route{Method: method, Path: path, Scope: scope})
}

// public mounts h at pattern with no key.
func (s *Server) public(pattern string, h http.Handler) {
	s.record(pattern, "")
	s.mux.Handle(pattern, h)
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	doc, err := OpenAPIJSON()
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeRaw(w, http.StatusOK, doc)
}

// cleanPath reports whether p is already in the form ServeMux cleans paths
// to (no empty, "." or ".." segment; a trailing slash allowed).
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}
