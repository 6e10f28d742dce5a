package config

// Database tunes how paywatch behaves when its PostgreSQL server goes away
// (docs/operating.md, Operations: PostgreSQL failover). Zero values take the defaults
// in brackets; connect_timeout and statement_timeout in database_url win.
type Database struct {
	// ConnectTimeout bounds each host's connection attempt [5s].
	ConnectTimeout Duration `yaml:"connect_timeout"`
	// StatementTimeout is the server's statement_timeout [30s].
	StatementTimeout Duration `yaml:"statement_timeout"`
	// Keepalive is the TCP keepalive idle time and interval [5s].
	Keepalive Duration `yaml:"keepalive"`
	// ProbeInterval and ProbeTimeout: how often the server is checked and
	// how long a check may take before it is declared lost and every
	// connection closed [1s, 3s].
	ProbeInterval Duration `yaml:"probe_interval"`
	ProbeTimeout  Duration `yaml:"probe_timeout"`
	// RetryFor is how long a write waits for a new primary before the API
	// answers 503 database_unavailable [15s].
	RetryFor Duration `yaml:"retry_for"`
}
