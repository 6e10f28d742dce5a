package reports

import "testing"

func TestSafeCellGuardsAfterLeadingSpace(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                  "plain",
		"":                       "",
		"ORD-1":                  "ORD-1",
		"=1+1":                   "'=1+1",
		" =HYPERLINK(\"x\")":     "' =HYPERLINK(\"x\")",
		"\t=1":                   "'\t=1",
		"\r=1":                   "'\r=1",
		"\n\n+1":                 "'\n\n+1",
		"  -2+3":                 "'  -2+3",
		"@SUM(A1)":               "'@SUM(A1)",
		"\u00a0=1":               "'\u00a0=1",
		"\u200b\ufeff=1":         "'\u200b\ufeff=1",
		"\uff1dHYPERLINK(\"x\")": "'\uff1dHYPERLINK(\"x\")",
		"a =b":                   "a =b",
		"  ok":                   "  ok",
	} {
		if got := safeCell(in); got != want {
			t.Errorf("safeCell(%q) = %q, want %q", in, got, want)
		}
	}
}
