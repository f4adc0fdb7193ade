// Package run is the run around the conformance property
// (docs/architecture.md): one run's state over its checks (runState), the
// rounds of a run against a URL and its catalogue of deviations, the
// baseline, the share of each budget kept for shrinking and the share a
// known deviation may spend, parallel properties, sequences in flight
// at once against a URL (concurrent.go) and shards, the
// statistics (Stats), the run folder's reports and replay lines, the
// reproducibility check, and a certification (Certify: the requirements,
// then the property). Package conformance is its public entry; package
// machine runs each drawn sequence.
package run
