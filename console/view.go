package console

import (
	"fmt"
	"html/template"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/reports"
)

// funcs are the templates' helpers: formatting only, no decisions.
var funcs = template.FuncMap{
	"utc": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return v.UTC().Format("2006-01-02 15:04:05") + "Z"
		case *time.Time:
			if v == nil {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04:05") + "Z"
		}
		return ""
	},
	"iso": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return v.UTC().Format(time.RFC3339)
		case *time.Time:
			if v == nil {
				return ""
			}
			return v.UTC().Format(time.RFC3339)
		}
		return ""
	},
	"age":   age,
	"short": short,
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	"usd":    usd,
	"label":  func(s any) string { return strings.ReplaceAll(text(s), "_", " ") },
	"itoa":   itoa,
	"add":    func(a, b int) int { return a + b },
	"escape": func(s string) string { return template.URLQueryEscaper(s) },
	"has": func(m map[string]bool, k string) bool {
		return m[k]
	},
	"chartOf": func(m map[string]chart, k string) chart { return m[k] },
	"list":    func(s ...string) []string { return s },
	"sym":     symbol,
}

// symbol names an asset of a network as people do (BTC, USDT), not as it
// is stored ("native").
func symbol(network, asset string) string {
	if m, ok := payment.MethodFor(payment.Network(network), payment.Asset(asset)); ok {
		return m.Symbol
	}
	return asset
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// age says how long ago t was, in the largest sensible unit.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// short elides the middle of a long id (the full value is in the title).
func short(s string) string {
	if len(s) <= 20 {
		return s
	}
	return s[:10] + "…" + s[len(s)-8:]
}

// chart is a server-rendered SVG: bars and lines in viewBox units.
type chart struct {
	Width, Height int
	Bars          []bar
	Lines         []line
	Labels        []chartLabel
	Points        string
	Empty         string
}

type bar struct {
	X, Y, W, H int
	Class      string
	Title      string
}

type line struct{ X1, Y1, X2, Y2 int }

type chartLabel struct {
	X, Y   int
	Text   string
	Anchor string
}

// reconChart draws one horizontal stacked bar per method: the shares of
// settled, unresolved and resolved in its total (methods have different
// units, so each bar is its own 100 %).
func reconChart(ts []reports.MethodTotals) chart {
	const left, width, rowH = 110, 560, 26
	ch := chart{Width: left + width + 10, Height: 30 + rowH*len(ts)}
	if len(ts) == 0 {
		ch.Height, ch.Empty = 40, "no transfers in this range"
		return ch
	}
	for i, t := range ts {
		y := 10 + i*rowH
		ch.Labels = append(ch.Labels, chartLabel{X: left - 8, Y: y + 15, Text: t.Method, Anchor: "end"})
		total, ok := new(big.Int).SetString(t.Total, 10)
		if !ok || total.Sign() == 0 {
			ch.Labels = append(ch.Labels, chartLabel{X: left + 4, Y: y + 15, Text: "nothing received", Anchor: "start"})
			continue
		}
		x := left
		parts := []struct{ v, amount, class string }{{t.Settled, t.SettledAmount, "settled"}, {t.Unresolved, t.UnresolvedAmount, "unresolved"}, {t.Resolved, t.ResolvedAmount, "resolved"}}
		for j, p := range parts {
			v, _ := new(big.Int).SetString(p.v, 10)
			if v == nil {
				continue
			}
			w := int(new(big.Int).Div(new(big.Int).Mul(v, big.NewInt(width)), total).Int64())
			if j == len(parts)-1 {
				// The last part takes the rounding remainder when it has any value.
				if v.Sign() > 0 {
					w = left + width - x
				}
			}
			if w <= 0 {
				continue
			}
			ch.Bars = append(ch.Bars, bar{X: x, Y: y, W: w, H: rowH - 8, Class: p.class, Title: p.class + " " + p.amount + " " + t.Method})
			x += w
		}
	}
	ch.Labels = append(ch.Labels, chartLabel{X: left, Y: ch.Height - 4, Text: "0 %", Anchor: "start"},
		chartLabel{X: left + width, Y: ch.Height - 4, Text: "100 % of received", Anchor: "end"})
	return ch
}

// lagChart draws a network's lag in blocks over the last span as a
// polyline (newest on the right).
func lagChart(network string, samples []lagSample, now time.Time, span time.Duration) chart {
	const w, h, left, bottom = 300, 60, 4, 14
	ch := chart{Width: w, Height: h}
	if len(samples) == 0 {
		ch.Empty = network + ": no samples yet"
		return ch
	}
	var max int64 = 1
	for _, s := range samples {
		if s.LagBlocks > max {
			max = s.LagBlocks
		}
	}
	var pts []string
	for _, s := range samples {
		x := left + int(float64(w-2*left)*(1-now.Sub(s.At).Seconds()/span.Seconds()))
		y := (h - bottom) - int(float64(h-bottom-4)*float64(s.LagBlocks)/float64(max))
		pts = append(pts, fmt.Sprintf("%d,%d", x, y))
	}
	ch.Points = strings.Join(pts, " ")
	ch.Lines = []line{{left, h - bottom, w - left, h - bottom}}
	ch.Labels = []chartLabel{{X: left, Y: 10, Text: network, Anchor: "start"},
		{X: left, Y: h - 2, Text: "−1 h", Anchor: "start"}, {X: w - left, Y: h - 2, Text: "now", Anchor: "end"},
		{X: w - left, Y: 10, Text: "max " + itoa(max) + " blocks", Anchor: "end"}}
	return ch
}

// text is a template argument of a string kind (a status, a classification:
// named string types of package payment) as a string.
func text(v any) string {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
		return rv.String()
	}
	return fmt.Sprint(v)
}
