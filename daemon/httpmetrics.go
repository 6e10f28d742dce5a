package daemon

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// latencyBuckets fit seconds-scale work: from a millisecond API answer to
// a minute-long confirmation wait (seconds).
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// httpMetrics counts and times the API's answers per route (the mux
// pattern, e.g. "POST /v1/intents"; "other" for no route), so a 5xx rate
// and per-route latency can be alerted on and graphed.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg *prometheus.Registry) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paywatch_http_requests_total",
			Help: "HTTP answers of the API listener, by route and status code."}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "paywatch_http_request_duration_seconds",
			Help: "Time to answer an HTTP request of the API listener, by route (long-polls and live pages last as long as they wait).", Buckets: latencyBuckets},
			[]string{"route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush keeps streaming answers (live pages) streaming.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wrap measures h. The route is read after h ran: the muxes set
// r.Pattern on the request they route.
func (m *httpMetrics) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" || route == "/" {
			route = "other"
		}
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		m.requests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		m.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}
