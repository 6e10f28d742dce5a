// Package devnettest gives tests their real peers: a fresh PostgreSQL
// database per call, on the cluster named by PAYWATCH_TEST_DATABASE_URL or on
// a shared throwaway cluster it starts itself. A missing peer fails the test
// when CI is set and skips it otherwise: a skipped test proves nothing, so CI
// never skips.
package devnettest
