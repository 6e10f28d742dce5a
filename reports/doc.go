// Package reports owns the reconciliation report (one row per transfer and
// totals per method, JSON or CSV) and closed reporting periods. It changes
// when what finance files changes; it only reads what the scanner, the
// intents and finance recorded.
//
// Guarantees:
//   - Per method, total = settled + unresolved + resolved exactly, in base
//     units; a transfer orphaned before it paid anything is listed and
//     counted apart (excluded), and no transfer counts twice.
//   - A reconciliation as of a past time is the same every time it is
//     computed (it reads the history of transfers, intents and node
//     heights); a closed period is served exactly as stored when closed,
//     and is never reopened or changed.
//   - No CSV cell starts a spreadsheet formula.
package reports
