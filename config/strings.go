package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// checkStrings refuses any string of the config (map keys included) that is
// not valid UTF-8 or holds a control character: an xpub with a NUL or a URL
// with a newline is a broken file or an injection attempt, and must stop the
// start with the field named rather than reach a node, the database or a
// log line. The error names the field, never the value.
func checkStrings(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkStrings(v.Elem(), path)
	case reflect.String:
		return checkConfigText(path, v.String())
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			if f.Anonymous {
				p = path
			}
			if err := checkStrings(v.Field(i), p); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := checkStrings(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			if k.Kind() == reflect.String {
				if err := checkConfigText(path+" key", k.String()); err != nil {
					return err
				}
			}
			if err := checkStrings(v.MapIndex(k), path+"."+fmt.Sprint(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkConfigText(field, s string) error {
	if !utf8.ValidString(s) {
		return invalid(field, "must be valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return invalid(field, "must not contain control characters (found %U)", r)
		}
	}
	return nil
}
